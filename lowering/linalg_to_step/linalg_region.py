"""The linalg function of a dense region: the forms torch-mlir emits, for `convert-linalg-to-step`.

`region_func(region, fname, produced)` builds a `glue.regions` group of ATen
nodes as one `func.func` on tensors (IR built with `linalg_build.LinalgFunc`,
no text parsed back): every tensor on its folded 2-D view
(`glue.fold`), the region's inputs as arguments (an input another part
computed, `produced`, as f32: parts store f32), each op in torch-mlir's form —
`linalg.transpose` + `linalg.matmul` for `nn.Linear`, element-wise
`linalg.generic`s whose bodies `body.py` maps onto the step library, row
reductions into a fill (LayerNorm, RMSNorm, softmax, mean) — and its outputs
returned. Inputs no node computes are `Derived` (a BatchNorm's per-row scale and
shift, computed from the running statistics when the part runs) or `Expanded`
(a broadcast operand a move part materializes first).

Example: the region `{linear, gelu}` of `fc1 -> GELU` gives a function of
`(x, weight, bias)` with a transpose, a matmul into a zero fill, the bias add
and the GELU generic, returning the GELU's value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import MatmulOp
from xdsl.ir import SSAValue

from steplus.lowering.linalg_to_step.aten import _shape
from steplus.lowering.linalg_to_step.glue import (
    ADDMM, BATCH_NORM, BINARY, COMPARE, MATMUL, NORM, REDUCE, ROW_OPS, SOFTMAX, UNARY, VIEWS,
    _expanded,
    _inputs, _is_tensor, _name, bcast, data_users, element, expand_rows, fill_value, fold,
    norm_dims, per_row, per_row_column, static, expand_column, HARD,
    ANY_ALL, CASTS, COMPARE_T, LOGICAL, WHERE, is_view,
)
from steplus.lowering.linalg_to_step.linalg_build import LinalgFunc, Scalar, tensor_type


@dataclass
class RegionFunc:
    """A region built as a linalg function: its module, inputs and outputs (nodes)."""

    module: ModuleOp
    inputs: list
    outputs: list
    flat: bool  # some tensor of rank > 2 is computed on as its folded 2-D view
    # inputs no node computes (a BatchNorm's per-row scale): name -> f(values by node name)
    derive: dict = field(default_factory=dict)
    # broadcast operands a move part materializes before the region runs
    expands: list = field(default_factory=list)
    # creation ops of one value (torch.zeros, full) read as scalars: computed by no one
    folded: set = field(default_factory=set)


def _t(shape, el: str) -> str:
    """The MLIR spelling of a tensor type (for messages)."""
    return str(tensor_type(shape, el))


def stored_f32(node, produced: set | frozenset) -> bool:
    """Whether `node` (through views) is a lowered part's result: stored as f32."""
    for _ in range(64):
        if node in produced:
            return True
        if _name(node) not in VIEWS:
            return False
        node = node.args[0]
    return False


# an operand of an element-wise op: a tensor (value, folded 2-D shape, element) or a
# scalar f32 constant
Tensor = tuple[SSAValue, tuple[int, int], str]
Lines = Callable[[Scalar, list[SSAValue]], SSAValue]


def _binary(op: str) -> Lines:
    return lambda s, a: s.apply(op, a[0], a[1])


class RegionOps:
    """The body of a region's linalg function: each method appends torch-mlir's form of
    one computation on folded 2-D f32 tensors (`Tensor`s) and returns its value."""

    def __init__(self, fn: LinalgFunc):
        self.fn = fn
        self.zero = fn.const(0.0)
        self.consts: dict[str, SSAValue] = {}

    def const(self, v: float) -> SSAValue:
        """The f32 constant `v` (rounded as torch rounds a scalar to an f32 tensor), one
        per value."""
        x = -math.inf if v == -math.inf else float(np.float32(v))
        key = repr(x)
        if key not in self.consts:
            self.consts[key] = self.fn.const(x)
        return self.consts[key]

    def fill(self, shape, value: float = 0.0) -> SSAValue:
        e = self.fn.empty(shape)
        return self.fn.fill(self.zero if value == 0.0 else self.const(value), e)

    def generic(self, ins: list, out_shape, lines_of: Lines) -> SSAValue:
        """An element-wise generic over `ins` (`Tensor`s or scalar constants) into
        `out_shape` (2-D); `lines_of(scalar, values)` builds the body from the block's
        values for `ins` (in order; a bf16/f16 element widened to f32 first)."""
        maps = []
        for _v, s, e in (a for a in ins if isinstance(a, tuple)):
            k = bcast(s, out_shape)
            if k is None:
                raise ValueError(f"a {_t(s, e)} operand does not broadcast to "
                                 f"{_t(out_shape, 'f32')}")
            maps.append({"full": "d0, d1", "row": "d1" if len(s) == 1 else "0, d1",
                         "col": "d0, 0"}[k])

        def body(s: Scalar, args) -> SSAValue:
            names, k = [], 0
            for a in ins:
                if not isinstance(a, tuple):
                    names.append(a)
                    continue
                names.append(s.extf(args[k]) if a[2] != "f32" else args[k])
                k += 1
            return lines_of(s, names)

        tensors = [a[0] for a in ins if isinstance(a, tuple)]
        return self.fn.generic(tensors, self.fn.empty(out_shape), [*maps, "d0, d1"], "pp", body)

    def unary(self, x: Tensor, lines_of: Lines) -> SSAValue:
        return self.generic([x], x[1], lines_of)

    def row_reduce(self, x: Tensor, kind: str = "sum") -> SSAValue:
        """A row sum (`addf` from 0) or max (`maximumf` from -inf): `[M, 1]` f32."""
        v, (M, _N), el = x
        z = self.fill((M, 1), 0.0 if kind == "sum" else -math.inf)
        op = "arith.addf" if kind == "sum" else "arith.maximumf"

        def body(s: Scalar, a) -> SSAValue:
            return s.apply(op, s.extf(a[0]) if el != "f32" else a[0], a[1])
        return self.fn.generic([v], z, ["d0, d1", "d0, 0"], "pr", body)

    def matmul(self, x: Tensor, w: Tensor, transposed: bool) -> SSAValue:
        """x [M, K] times the weight argument (`transposed`: w is [N, K], torch's
        `nn.Linear` layout, read through a `linalg.transpose`)."""
        (M, _K), (wv, ws, _wel) = x[1], w
        if transposed:
            wv, ws = self.fn.transpose(wv, (1, 0)), (ws[1], ws[0])
        return self.fn.named(MatmulOp, [x[0], wv], self.fill((M, ws[1])))


def _gelu(approximate: str, w: RegionOps) -> Lines:
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        c0, c1, h, one = (w.const(math.sqrt(2 / math.pi)), w.const(0.044715), w.const(0.5),
                          w.const(1.0))

        def tanh_form(s: Scalar, a) -> SSAValue:
            x = a[0]
            t3 = s.add(x, s.mul(s.mul(s.mul(x, x), x), c1))
            t6 = s.add(s.tanh(s.mul(t3, c0)), one)
            return s.mul(s.mul(x, h), t6)
        return tanh_form
    c, h, one = w.const(0.7071067811865476), w.const(0.5), w.const(1.0)

    def erf_form(s: Scalar, a) -> SSAValue:
        t0 = s.mul(a[0], h)
        return s.mul(t0, s.add(s.erf(s.mul(a[0], c)), one))
    return erf_form


def _hard(swish: bool, w: RegionOps) -> Lines:
    """Hardsigmoid `min(max(x + 3, 0), 6) / 6` (torch's formula), times x for Hardswish."""
    c3, c6 = w.const(3.0), w.const(6.0)

    def body(s: Scalar, a) -> SSAValue:
        h = s.div(s.min(s.max(s.add(a[0], c3), w.zero), c6), c6)
        return s.mul(a[0], h) if swish else h
    return body


def _norm(n, x: Tensor, w: RegionOps, arg) -> SSAValue:
    """LayerNorm (mean, centred variance, affine) or RMSNorm over the last dim, the
    way torch's decompositions compute them."""
    name, args = _name(n), list(n.args)
    M, N = x[1]
    d, two = w.const(float(N)), w.const(2.0)

    def square(s: Scalar, a) -> SSAValue:
        return s.powf(a[0], two)

    weight = args[2] if len(args) > 2 else None
    if name == "aten.layer_norm.default":
        bias = args[3] if len(args) > 3 else None
        eps = args[4] if len(args) > 4 else 1e-5
        mean = w.unary((w.row_reduce(x), (M, 1), "f32"), lambda s, a: s.div(a[0], d))
        xc = (w.generic([x, (mean, (M, 1), "f32")], (M, N), _binary("arith.subf")), (M, N), "f32")
        sq = (w.unary(xc, square), (M, N), "f32")
        centred = xc
    else:
        bias = None
        eps = args[3] if len(args) > 3 and args[3] is not None else float(
            np.finfo({"bf16": np.float32, "f16": np.float16}.get(x[2], np.float32)).eps)
        sq = (w.unary(x, square), (M, N), "f32")
        centred = x
    e = w.const(float(eps))
    rstd = w.unary((w.row_reduce(sq), (M, 1), "f32"),
                   lambda s, a: s.rsqrt(s.add(s.div(a[0], d), e)))
    y = w.generic([centred, (rstd, (M, 1), "f32")], (M, N), _binary("arith.mulf"))
    for p, op in ((weight, "arith.mulf"), (bias, "arith.addf")):
        if p is not None:
            y = w.generic([(y, (M, N), "f32"), arg(p)], (M, N), _binary(op))
    return y


def _logical(kind: str, xs: list, out, w: RegionOps) -> SSAValue:
    """A logical op on 0/1 masks (`&`, `|`, `^`, `~`) as arithmetic on the floats."""
    if kind == "not":
        one = w.const(1.0)
        return w.unary(xs[0], lambda s, a: s.sub(one, a[0]))
    body = {"and": _binary("arith.mulf"), "or": _binary("arith.maximumf"),
            "xor": lambda s, a: s.mask("une", a[0], a[1])}[kind]
    return w.generic(xs, out, body)


def row_softmax(x: Tensor, w: RegionOps) -> SSAValue:
    """exp(x - max) / sum over the last dim (torch's decomposition)."""
    M, N = x[1]
    m = (w.row_reduce(x, "max"), (M, 1), "f32")
    e = (w.generic([x, m], (M, N), lambda s, a: s.exp(s.sub(a[0], a[1]))), (M, N), "f32")
    total = (w.row_reduce(e), (M, 1), "f32")
    return w.generic([e, total], (M, N), _binary("arith.divf"))


@dataclass(eq=False)
class Derived:
    """A region input no graph node computes: `fn(values by node name)` gives it."""

    name: str
    shape: tuple[int, int]
    fn: object
    node: object = None


@dataclass(eq=False)
class Expanded(Derived):
    """A broadcast operand (`src` read at `rows`, whole rows of its last dim), written
    by a move part before the region runs (`fn` None: no runner computation)."""

    src: object = None
    rows: object = None


def _batch_norm(n) -> list[Derived]:
    """Eval-mode BatchNorm folded: `y = x * scale + shift` with `scale = w / sqrt(var +
    eps)` and `shift = b - mean * scale` per channel (dim 1), as a column of the folded
    view (`[N, C, H, W]` -> one value per row `(n, c, h)`) or, for `[N, C]`, a row."""
    x, w, b, mean, var = n.args[:5]
    eps = float(n.args[7])
    shape = static(x)
    N, C = shape[0], shape[1]
    inner = int(np.prod(shape[2:-1])) if len(shape) > 2 else 1
    names = [a.name if a is not None else None for a in (w, b, mean, var)]

    def per_channel(values, which: str) -> np.ndarray:
        wv, bv, mv, vv = (np.asarray(values[k], np.float64) if k else np.zeros(0)
                          for k in names)
        scale = (wv if names[0] else 1.0) / np.sqrt(vv + eps)
        if which == "scale":
            return scale
        return (bv if names[1] else 0.0) - mv * scale

    def column(which: str):
        def f(values):
            c = per_channel(values, which)
            if len(shape) == 2:
                return c.reshape(1, C)
            return np.repeat(np.tile(c, N), inner).reshape(-1, 1)
        return f

    col = (1, C) if len(shape) == 2 else (N * C * inner, 1)
    return [Derived(f"{n.name}:{which}", col, column(which), n) for which in ("scale", "shift")]


def region_func(region: list, fname: str, produced: set | frozenset = frozenset()) -> RegionFunc:
    """The linalg-on-tensors function of a region (torch-mlir's forms) on the folded 2-D
    views of its tensors; an input that another lowered part computes (`produced`,
    through views) is read as f32."""
    inset = set(region)
    # a tensor of one value (torch.zeros(...), full) an element-wise op reads: a scalar
    folded = {a for n in region if _name(n) in BINARY for a in n.args
              if _is_tensor(a) and fill_value(a) is not None}
    inputs: list = []
    for n in region:
        for a in _inputs(n):
            if a not in inset and a not in inputs and not (a in folded and _name(n) in BINARY):
                inputs.append(a)
    derived = [d for n in region if _name(n) == BATCH_NORM for d in _batch_norm(n)]
    expands: dict = {}  # (node, operand) -> the broadcast operand a move part writes
    for n in region:
        if _name(n) in BINARY:
            for a in n.args:
                if _is_tensor(a) and a not in folded and _expanded(n, a):
                    rows = expand_rows(static(a), static(n))
                    shape = fold(static(n))
                    if rows is None:  # one value per row (a per-channel scale): a column
                        rows, shape = expand_column(static(a), static(n)), (shape[0], 1)
                    expands[(n, a)] = Expanded(f"{n.name}:expand{len(expands)}",
                                               shape, None, src=a, rows=rows)
    cols: dict = {}  # (node, operand) -> a parameter bound as one value per row (`per_row`)
    for n in region:
        if _name(n) in BINARY:
            for a in n.args:
                if _is_tensor(a) and a not in folded and (n, a) not in expands \
                        and per_row(a, static(n)):
                    cols[(n, a)] = Derived(f"{n.name}:rows{len(cols)}",
                                           (fold(static(n))[0], 1),
                                           per_row_column(a, static(n)), n)
    inputs = [a for a in inputs if any(a in _inputs(n) and (n, a) not in expands
                                       and (n, a) not in cols for n in region)]
    derived += list(expands.values()) + list(cols.values())
    outputs = [n for n in region if any(u not in inset for u in data_users(n))]
    views = {n for n in region if is_view(n)}
    shapes: dict = {n: fold(_shape(n)) for n in [*region, *inputs]}
    shapes |= {d: d.shape for d in derived}
    for n in region:  # a view in a region is its source; its element-wise user keeps that shape
        if n in views:
            shapes[n] = shapes[n.args[0]]
        elif _name(n) not in MATMUL + ROW_OPS + ANY_ALL and any(
                a in views and _shape(a) == _shape(n) for a in n.all_input_nodes):
            # (a view of its full shape: a broadcast operand, `x + m.any(-1, True).float()`,
            # does not give the result's shape)
            shapes[n] = shapes[next(a for a in n.all_input_nodes
                                    if a in views and _shape(a) == _shape(n))]
    k = max(norm_dims(n) for n in region)
    if k > 1:  # a norm over its last k dims, alone: rows of prod(those dims)
        for m in [*region, *inputs]:
            sh = static(m)
            shapes[m] = (int(np.prod(sh[:-k])), int(np.prod(sh[-k:])))
    flat = any(len(static(n)) > 2 for n in [*region, *inputs])
    el: dict = {}
    for a in inputs:
        el[a] = "f32" if stored_f32(a, produced) else element(a)
    for d in derived:
        el[d] = "f32"
    fn = LinalgFunc(fname, [tensor_type(shapes[a], el[a]) for a in [*inputs, *derived]])
    val: dict = dict(zip([*inputs, *derived], fn.args))
    w = RegionOps(fn)

    def arg(a) -> Tensor:
        return (val[a], shapes[a], el[a])

    for n in region:
        name, out = _name(n), shapes[n]
        if n in views:
            val[n], el[n] = val[n.args[0]], el[n.args[0]]
            continue
        a0 = n.args[0] if n.args else None
        if name in ("aten.matmul.default", "aten.mm.default"):
            r = w.matmul(arg(a0), arg(n.args[1]), transposed=False)
        elif name == ADDMM:  # addmm(bias, x, w): GPT-2's Conv1D, the weight [in, out]
            r = w.matmul(arg(n.args[1]), arg(n.args[2]), transposed=False)
            r = w.generic([(r, out, "f32"), arg(n.args[0])], out, _binary("arith.addf"))
        elif name == "aten.linear.default":
            r = w.matmul(arg(a0), arg(n.args[1]), transposed=True)
            if len(n.args) > 2 and n.args[2] is not None:
                r = w.generic([(r, out, "f32"), arg(n.args[2])], out, _binary("arith.addf"))
        elif name in REDUCE:
            r = w.row_reduce(arg(a0))
            if name == "aten.mean.dim":
                c = w.const(shapes[a0][1])
                r = w.unary((r, out, "f32"), lambda s, a, c=c: s.div(a[0], c))
        elif name == BATCH_NORM:
            scale, shift = (d for d in derived if d.node is n)
            r = w.generic([arg(a0), arg(scale), arg(shift)], out,
                          lambda s, a: s.add(s.mul(a[0], a[1]), a[2]))
        elif name in NORM:
            r = _norm(n, arg(a0), w, arg)
        elif name in SOFTMAX:
            r = row_softmax(arg(a0), w)
        elif name == "aten.pow.Tensor_Scalar" and n.args[1] == 3:  # x * x * x
            r = w.unary(arg(a0), lambda s, a: s.mul(s.mul(a[0], a[0]), a[0]))
        elif name == "aten.pow.Tensor_Scalar":
            c = w.const(2.0)
            r = w.unary(arg(a0), lambda s, a, c=c: s.powf(a[0], c))
        elif name in COMPARE:  # (x REL c).float(): 1.0 where it holds, else 0.0
            c = w.const(n.args[1])
            r = w.unary(arg(a0), lambda s, a, c=c, p=COMPARE[name]: s.mask(p, a[0], c))
        elif name in COMPARE_T:  # (a REL b): a 0/1 mask, the operands broadcast
            r = w.generic([arg(a0), arg(n.args[1])], out,
                          lambda s, a, p=COMPARE_T[name]: s.mask(p, a[0], a[1]))
        elif name in LOGICAL:  # on 0/1 masks: and = a * b, or = max, xor = a != b, not = 1 - a
            r = _logical(LOGICAL[name], [arg(a) for a in n.args], out, w)
        elif name in CASTS:  # `.bool()` of a float tensor: x != 0
            r = w.unary(arg(a0), lambda s, a: s.mask("une", a[0], w.zero))
        elif name in ANY_ALL:  # a row max of the mask (all: 1 - max(1 - m))
            m = arg(a0)
            if name == "aten.all.dim":
                one = w.const(1.0)
                m = (w.unary(m, lambda s, a, one=one: s.sub(one, a[0])), m[1], "f32")
            r = w.row_reduce(m, "max")
            if name == "aten.all.dim":
                r = w.unary((r, out, "f32"), lambda s, a, one=one: s.sub(one, a[0]))
        elif name in WHERE:  # torch.where on a mask: arith.select of its `!= 0`
            a = list(n.args) if name != "aten.masked_fill.Scalar" else \
                [n.args[1], n.args[2], n.args[0]]
            ins = [arg(t) if _is_tensor(t) else w.const(t) for t in a]
            r = w.generic(ins, out, lambda s, v: s.where(v[0], v[1], v[2]))
        elif name == "aten.rsub.Scalar":  # c - x
            c = w.const(n.args[1])
            r = w.unary(arg(a0), lambda s, a, c=c: s.sub(c, a[0]))
        elif name in UNARY:
            r = w.unary(arg(a0), lambda s, a, op=UNARY[name]: s.apply(op, a[0]))
        elif name in ("aten.silu.default", "aten.sigmoid.default"):
            one = w.const(1.0)  # x / (1 + exp(-x)), 1 / (1 + exp(-x))
            silu = name == "aten.silu.default"
            r = w.unary(arg(a0), lambda s, a, one=one, silu=silu: s.div(
                a[0] if silu else one, s.add(s.exp(s.neg(a[0])), one)))
        elif name == "aten.relu.default":
            r = w.unary(arg(a0), lambda s, a: s.max(a[0], w.zero))
        elif name == "aten.hardtanh.default":
            lo, hi = w.const(n.args[1]), w.const(n.args[2])
            r = w.unary(arg(a0), lambda s, a, lo=lo, hi=hi: s.min(s.max(a[0], lo), hi))
        elif name in HARD:
            r = w.unary(arg(a0), _hard(name == "aten.hardswish.default", w))
        elif name == "aten.gelu.default":
            r = w.unary(arg(a0), _gelu(n.kwargs.get("approximate", "none"), w))
        else:  # binary
            ins = [w.const(fill_value(a) or 0.0) if a in folded else
                   arg(cols.get((n, a)) or expands.get((n, a), a)) if _is_tensor(a)
                   else w.const(a)
                   for a in n.args]
            r = w.generic(ins, out, _binary(BINARY[name]))
        val[n], el[n] = r, "f32"
    module = fn.module([val[o] for o in outputs])
    return RegionFunc(module, [*inputs, *derived], outputs, flat,
                      {d.name: d.fn for d in derived if d.fn is not None},
                      [d for d in derived if isinstance(d, Expanded)],
                      {a for a in folded if all(u in inset for u in a.users)})
