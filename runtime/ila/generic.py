"""numpy semantics of `linalg.generic` on static tensors (what frontends emit).

Indexing maps must be projections of the loop dimensions (each result a
`dN`, or `0` for a size-1 axis, as torch-mlir and IREE emit for elementwise, broadcast and reduction
generics).  The body is evaluated once on whole arrays broadcast to the
iteration domain.  Reduction loops need a body of the form
`yield combine(f(ins), out)` with `combine` one of `arith.addf`, `mulf`,
`maximumf`, `minimumf` (`out` used only there): `f` is evaluated on the
domain, reduced over the reduction loops and combined with the init (an unused
result of a several-result reduction, like torch-mlir's argmax beside a max,
is not computed).  Bodies may use `linalg.index`, `tensor.extract` of a captured
tensor (an embedding lookup; indices are clamped to the tensor, the frontend's
`cf.assert` range checks are not trapped), integer `arith` ops and casts.

Example::

    y = eval_generic(op, [a, b, init])   # one numpy array per result
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.ila.core import IlaError

_BIN = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    "arith.maximumf": np.maximum, "arith.minimumf": np.minimum, "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
}
def _erf(x):
    import math

    return np.vectorize(math.erf, otypes=[np.float32])(x)


_UN = {"arith.negf": np.negative, "math.exp": np.exp, "math.tanh": np.tanh, "math.sqrt": np.sqrt,
       "math.rsqrt": lambda x: 1 / np.sqrt(x), "math.absf": np.abs, "math.log": np.log, "math.erf": _erf,
       "math.floor": np.floor, "math.ceil": np.ceil, "math.cos": np.cos, "math.sin": np.sin,
       "arith.truncf": lambda x: np.asarray(x, np.float32), "arith.extf": lambda x: np.asarray(x, np.float32),
       "arith.sitofp": lambda x: np.asarray(x, np.float32), "arith.uitofp": lambda x: np.asarray(x, np.float32),
       "arith.fptosi": lambda x: np.trunc(x).astype(np.int64), "arith.index_cast": lambda x: np.asarray(x, np.int64),
       "arith.extsi": lambda x: np.asarray(x, np.int64), "arith.trunci": lambda x: np.asarray(x, np.int64)}
_INT_BIN = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply, "arith.andi": np.logical_and,
            "arith.ori": np.logical_or, "arith.xori": np.logical_xor, "math.powf": np.power,
            "math.fpowi": lambda x, n: np.power(x, np.asarray(n, np.float32)),
            "arith.divsi": np.floor_divide, "arith.maxsi": np.maximum, "arith.minsi": np.minimum}
_CMPI = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
         "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}
_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
# the domain (loop sizes) of the generic being evaluated, for linalg.index
_DOMAIN = "__domain__"
_CMP = {"ogt": np.greater, "ugt": np.greater, "oge": np.greater_equal, "uge": np.greater_equal,
        "olt": np.less, "ult": np.less, "ole": np.less_equal, "ule": np.less_equal,
        "oeq": np.equal, "ueq": np.equal, "one": np.not_equal, "une": np.not_equal}
_REDUCE = {"arith.addf": np.sum, "arith.mulf": np.prod, "arith.maximumf": np.max, "arith.minimumf": np.min,
           "arith.andi": np.all, "arith.ori": np.any, "arith.addi": np.sum}
_COMBINE = {"arith.andi": np.logical_and, "arith.ori": np.logical_or, "arith.addi": np.add}


def map_dims(op) -> list[list[int]]:
    """Loop dimensions read by each operand's indexing map (projections only)."""
    out = []
    for m in op.indexing_maps.data:
        dims = []
        for r in m.data.results:
            if type(r).__name__ == "AffineConstantExpr" and r.value == 0:
                dims.append(-1)  # a size-1 axis read at 0 (broadcast)
                continue
            if type(r).__name__ != "AffineDimExpr":
                raise IlaError(f"linalg.generic: indexing map {m.data} is not a projection")
            dims.append(r.position)
        out.append(dims)
    return out


def _domain(op, operands, dims):
    n = len(op.iterator_types.data)
    size = [None] * n
    for v, ds in zip(operands, dims):
        for ax, d in enumerate(ds):
            if d >= 0:
                size[d] = np.shape(v)[ax]
    if None in size:
        raise IlaError("linalg.generic: a loop dimension is not indexed by any operand")
    return size


def _on_domain(x, ds, n):
    """View operand x (indexed by loop dims ds) broadcastable over an n-D domain."""
    if -1 in ds:  # drop the size-1 axes read at constant 0
        x = np.asarray(x)[tuple(0 if d < 0 else slice(None) for d in ds)]
        ds = [d for d in ds if d >= 0]
    order = sorted(range(len(ds)), key=lambda a: ds[a])
    x = np.transpose(np.asarray(x), order) if order else np.asarray(x)
    shape = [1] * n
    for a in order:
        shape[ds[a]] = np.shape(x)[order.index(a)]
    return x.reshape(shape)


def _eval_body(block, env):
    for bop in block.ops:
        if bop.name == "linalg.yield":
            return [env[v] for v in bop.operands]
        _eval_body_one(bop, env)
    raise IlaError("linalg.generic: body without linalg.yield")


def _pred(op) -> str:
    names = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
             "une", "uno", "true"]
    return names[op.predicate.value.data]


def eval_generic(op, operands, outer=None) -> list[np.ndarray]:
    """Evaluate `op` (a linalg.generic) on numpy operands (inputs then inits);
    `outer` maps values defined outside the body (captured scalars) to numbers."""
    dims = map_dims(op)
    n = len(op.iterator_types.data)
    size = _domain(op, operands, dims)
    red = [d for d, it in enumerate(op.iterator_types.data) if str(it.data.value) == "reduction"]
    block = op.body.block
    n_in = len(op.inputs)
    env = dict(outer or {})
    env[_DOMAIN] = size
    env |= {arg: _on_domain(v, ds, n).astype(np.float32)
           for arg, v, ds in zip(block.args[:n_in], operands[:n_in], dims[:n_in])}
    outs = []
    if not red:
        for arg, v, ds in zip(block.args[n_in:], operands[n_in:], dims[n_in:]):
            env[arg] = _on_domain(v, ds, n)
        for v, ds, init in zip(_eval_body(block, env), dims[n_in:], operands[n_in:]):
            full = np.broadcast_to(v, size)
            ds = [d for d in ds if d >= 0]
            out = np.ascontiguousarray(np.transpose(full, ds)).astype(np.float32)
            outs.append(out.reshape(np.shape(init)))
        return outs
    yield_op = block.last_op
    for k, (arg, init, ds) in enumerate(zip(block.args[n_in:], operands[n_in:], dims[n_in:])):
        if len(op.results) > 1 and not any(True for _ in op.results[k].uses):  # e.g. the unused argmax of a max-with-index
            outs.append(np.zeros(np.shape(init), np.asarray(init).dtype))
            continue
        comb = yield_op.operands[k].owner
        if comb.name not in _REDUCE or arg not in comb.operands:
            raise IlaError("linalg.generic: reduction body must be yield(combine(f(ins), out))")
        other = comb.operands[1] if comb.operands[0] is arg else comb.operands[0]
        env2 = dict(env)
        env2[comb.results[0]] = None
        body_vals = _eval_body_value(block, env2, other)
        full = np.broadcast_to(body_vals, size)
        r = _REDUCE[comb.name](full, axis=tuple(red))
        keep = [d for d in range(n) if d not in red]
        ds = [d for d in ds if d >= 0]
        r = np.transpose(r, [keep.index(d) for d in ds]) if ds else r
        r = r.reshape(np.shape(init))
        outs.append({**_BIN, **_COMBINE}[comb.name](np.asarray(init, np.float32), r).astype(np.float32))
    return outs


def _eval_body_value(block, env, value):
    """Evaluate the body ops needed for `value` (everything before the combiner)."""
    for bop in block.ops:
        if bop.name == "linalg.yield" or value in env:
            break
        if any(v not in env for v in bop.operands):
            continue
        _eval_body_one(bop, env)
    if value not in env:
        raise IlaError("linalg.generic: reduction value depends on the accumulator")
    return env[value]


def _eval_body_one(bop, env):
    name = bop.name
    if name == "cf.assert":  # a frontend's runtime check; step-run does not trap
        return
    if name == "linalg.index":
        size = env[_DOMAIN]
        d = int(bop.dim.value.data)
        shape = [1] * len(size)
        shape[d] = size[d]
        env[bop.results[0]] = np.arange(size[d], dtype=np.int64).reshape(shape)
        return
    a = [env[v] for v in bop.operands]
    if name == "tensor.extract":
        t = np.asarray(a[0])
        idx = tuple(np.clip(np.asarray(i, np.int64), 0, t.shape[k] - 1) for k, i in enumerate(a[1:]))
        env[bop.results[0]] = t[idx] if idx else t[()]
        return
    if name in _INT_BIN:
        r = _INT_BIN[name](a[0], a[1])
    elif name == "arith.cmpi":
        r = _CMPI[_CMPI_NAMES[bop.predicate.value.data]](a[0], a[1])
    elif name in _BIN:
        r = _BIN[name](a[0], a[1])
    elif name in _UN:
        r = _UN[name](a[0])
    elif name == "arith.cmpf":
        r = _CMP[_pred(bop)](a[0], a[1])
    elif name == "arith.select":
        r = np.where(a[0], a[1], a[2])
    elif name == "arith.constant":
        v = bop.value.value.data
        r = np.float32(v) if isinstance(v, float) else np.int64(v)
    else:
        raise IlaError(f"linalg.generic: no numpy semantics for '{name}' in the body")
    env[bop.results[0]] = r
