# pyright: strict
"""The meaning of `linalg.generic` on static tensors (what frontends emit), over any value domain.

Indexing maps must be projections of the loop dimensions (each result a `dN`, or `0` for a size-1
axis, as torch-mlir and IREE emit for elementwise, broadcast and reduction generics).  The body is
evaluated once on whole arrays broadcast to the iteration domain (float arrays for step-run,
object arrays of terms for isel-verify).  Reduction loops need a body of the form
`yield combine(f(ins), out)` with `combine` one of `arith.addf`, `mulf`, `maximumf`, `minimumf`,
`andi`, `ori`, `addi` (`out` used only there): `f` is evaluated on the domain, reduced over the
reduction loops and combined with the init (an unused result of a several-result reduction, like
torch-mlir's argmax beside a max, is not computed).  Bodies may use `linalg.index`,
`tensor.extract` of a captured tensor (an embedding lookup; indices are clamped to the tensor, the
frontend's `cf.assert` range checks are not trapped), integer `arith` ops and casts.

Example::

    outs = eval_generic(NumpyDomain(), op, [a, b, init])   # one array per result
"""

# pyright: strict

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import arith, cf, tensor
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, SSAValue

from steplus.dialects.semantics.arith import ArithSemantics
from steplus.dialects.semantics.domain import Domain
from steplus.dialects.semantics.registry import SemanticsError
from steplus.utils.layouts import map_dims

# reduction combiner -> (domain reduction kind, domain combine kind)
_REDUCE: dict[type[Operation], tuple[str, str]] = {
    arith.AddfOp: ("sum", "add"), arith.MulfOp: ("prod", "mul"), arith.MaximumfOp: ("max", "max"),
    arith.MinimumfOp: ("min", "min"), arith.AndIOp: ("all", "and"), arith.OrIOp: ("any", "or"),
    arith.AddiOp: ("sum", "add")}


def _domain(op: linalg.GenericOp, operands: list[Any], dims: list[list[int]]) -> list[int]:
    size: list[int | None] = [None] * len(op.iterator_types.data)
    for v, ds in zip(operands, dims):
        for ax, d in enumerate(ds):
            if d >= 0:
                size[d] = np.shape(v)[ax]
    if None in size:
        raise SemanticsError("linalg.generic: a loop dimension is not indexed by any operand")
    return [int(s) for s in size if s is not None]


def _on_domain(x: Any, ds: list[int], n: int) -> np.ndarray:
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


class _Body:
    """Evaluates a generic's body ops on whole arrays over the iteration domain `size`: the
    `arith` / `math` ops through `sem` (their one meaning, `arith.py`), the body-only ops here."""

    def __init__(self, sem: ArithSemantics, size: list[int], env: dict[Any, Any]):
        self.sem, self.d, self.size, self.env = sem, sem.d, size, env

    def run(self, block: Block) -> list[Any]:
        for bop in block.ops:
            if isinstance(bop, linalg.YieldOp):
                return [self.env[v] for v in bop.operands]
            self.one(bop)
        raise SemanticsError("linalg.generic: body without linalg.yield")

    def value(self, block: Block, value: SSAValue) -> Any:
        """Evaluate the body ops needed for `value` (everything before the combiner)."""
        for bop in block.ops:
            if isinstance(bop, linalg.YieldOp) or value in self.env:
                break
            if any(v not in self.env for v in bop.operands):
                continue
            self.one(bop)
        if value not in self.env:
            raise SemanticsError("linalg.generic: reduction value depends on the accumulator")
        return self.env[value]

    def one(self, bop: Operation) -> None:
        d = self.d
        if isinstance(bop, cf.AssertOp):  # a frontend's runtime check; not trapped
            return
        if isinstance(bop, linalg.IndexOp):
            k = int(bop.dim.value.data)
            shape = [1] * len(self.size)
            shape[k] = self.size[k]
            self.env[bop.results[0]] = np.arange(self.size[k], dtype=np.int64).reshape(shape)
            return
        try:
            a = [self.env[v] for v in bop.operands]
        except KeyError:
            raise SemanticsError("linalg.generic: body uses a value it cannot evaluate") from None
        if isinstance(bop, tensor.ExtractOp):
            t = np.asarray(a[0])
            idx = tuple(np.clip(np.asarray(i, np.int64), 0, t.shape[k] - 1) for k, i in enumerate(a[1:]))
            r = t[idx] if idx else t[()]
        elif isinstance(bop, arith.ConstantOp):  # a scalar of the domain (not a tensor constant)
            if not isinstance(bop.value, IntegerAttr | FloatAttr):
                raise SemanticsError("linalg.generic: a tensor constant in the body")
            r = d.scalar(bop.value.value.data)
        elif ArithSemantics.supports(bop):
            r = self.sem.apply(bop, a)[0]
        else:
            raise SemanticsError(f"linalg.generic: no {d.name} semantics for '{bop.name}' in the body")
        self.env[bop.results[0]] = r


def eval_generic(d: Domain, op: linalg.GenericOp, operands: list[Any], outer: dict[Any, Any] | None = None,
                 sem: ArithSemantics | None = None) -> list[Any]:
    """Evaluate `op` (a linalg.generic) on operands (inputs then inits) in domain `d`;
    `outer` maps values defined outside the body (captured scalars and tensors) to their values;
    `sem` evaluates the body's `arith` / `math` ops (default: `ArithSemantics(d)`)."""
    if sem is None:
        sem = ArithSemantics(d)
    try:
        dims = map_dims(op)
    except ValueError as e:
        raise SemanticsError(str(e)) from None
    n = len(op.iterator_types.data)
    size = _domain(op, operands, dims)
    red = [k for k, it in enumerate(op.iterator_types.data) if str(it.data.value) == "reduction"]
    block = op.body.block
    n_in = len(op.inputs)
    env = dict(outer or {})
    env |= {arg: d.to_float(_on_domain(v, ds, n))
            for arg, v, ds in zip(block.args[:n_in], operands[:n_in], dims[:n_in])}
    outs: list[Any] = []
    if not red:
        for arg, v, ds in zip(block.args[n_in:], operands[n_in:], dims[n_in:]):
            env[arg] = _on_domain(v, ds, n)
        for v, ds, init in zip(_Body(sem, size, env).run(block), dims[n_in:], operands[n_in:]):
            full = np.broadcast_to(v, size)
            ds = [k for k in ds if k >= 0]
            out = d.to_float(np.ascontiguousarray(np.transpose(full, ds)))
            outs.append(out.reshape(np.shape(init)))
        return outs
    yield_op = block.last_op
    if not isinstance(yield_op, linalg.YieldOp):
        raise SemanticsError("linalg.generic: body without linalg.yield")
    for k, (arg, init, ds) in enumerate(zip(block.args[n_in:], operands[n_in:], dims[n_in:])):
        if len(op.results) > 1 and not any(True for _ in op.results[k].uses):  # the unused argmax of a max
            outs.append(np.zeros(np.shape(init), np.asarray(init).dtype))
            continue
        comb = yield_op.operands[k].owner
        if not isinstance(comb, Operation) or type(comb) not in _REDUCE or arg not in comb.operands:
            raise SemanticsError("linalg.generic: reduction body must be yield(combine(f(ins), out))")
        other = comb.operands[1] if comb.operands[0] is arg else comb.operands[0]
        env2 = dict(env)
        env2[comb.results[0]] = None
        full = np.broadcast_to(_Body(sem, size, env2).value(block, other), size)
        reduce_kind, combine_kind = _REDUCE[type(comb)]
        r = d.reduce(reduce_kind, full, tuple(red))
        keep = [k for k in range(n) if k not in red]
        ds = [k for k in ds if k >= 0]
        r = np.transpose(r, [keep.index(k) for k in ds]) if ds else r
        r = np.reshape(r, np.shape(init))
        outs.append(d.to_float(d.binary(combine_kind, d.to_float(init), r)))
    return outs
