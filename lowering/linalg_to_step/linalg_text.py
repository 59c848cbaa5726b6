"""The linalg text of a dense region: the forms torch-mlir emits, for `convert-linalg-to-step`.

`region_text(region, fname, produced)` writes a `glue.regions` group of ATen
nodes as one `func.func` on tensors: every tensor on its folded 2-D view
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
from dataclasses import dataclass, field

import numpy as np

from steplus.lowering.linalg_to_step.aten import _shape
from steplus.lowering.linalg_to_step.glue import (
    BATCH_NORM, BINARY, MATMUL, NORM, REDUCE, ROW_OPS, SOFTMAX, UNARY, VIEWS, _expanded,
    _inputs, _is_tensor, _name, bcast, data_users, element, expand_rows, fill_value, fold,
    norm_dims, static,
)


@dataclass
class Text:
    """A region written as a linalg function: its text, inputs and outputs (nodes)."""

    text: str
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
    return f"tensor<{'x'.join(map(str, shape))}x{el}>"


def _f(v: float) -> str:
    return f"{float(np.float32(v)):.17e}"  # torch rounds a scalar to the tensor's f32


def stored_f32(node, produced: set | frozenset) -> bool:
    """Whether `node` (through views) is a lowered part's result: stored as f32."""
    for _ in range(64):
        if node in produced:
            return True
        if _name(node) not in VIEWS:
            return False
        node = node.args[0]
    return False


class _Writer:
    """The body of a region's linalg function: values by name, their folded 2-D shapes
    and element types; each method appends torch-mlir's form of one computation."""

    def __init__(self):
        self.body = ["  %zero = arith.constant 0.000000e+00 : f32"]
        self.consts: dict[str, str] = {}

    def fresh(self, prefix: str) -> str:
        return f"%{prefix}{len(self.body)}"

    def const(self, v: float) -> str:
        text = "0xFF800000" if v == -math.inf else _f(v)
        if text not in self.consts:
            self.consts[text] = f"%c{len(self.consts)}"
            self.body.append(f"  {self.consts[text]} = arith.constant {text} : f32")
        return self.consts[text]

    def fill(self, shape, value: float = 0.0) -> str:
        e, z, ot = self.fresh("e"), self.fresh("z"), _t(shape, "f32")
        self.body.append(f"  {e} = tensor.empty() : {ot}")
        c = "%zero" if value == 0.0 else self.const(value)
        self.body.append(f"  {z} = linalg.fill ins({c} : f32) outs({e} : {ot}) -> {ot}")
        return z

    def generic(self, ins: list, out_shape, lines_of) -> str:
        """An element-wise generic over `ins` (`(value, shape, element)` tensors or
        scalar constant names) into `out_shape` (2-D); `lines_of(names)` gives the body
        lines computing `%y` from the block's names for `ins` (in order)."""
        r = self.fresh("v")
        ts = [a for a in ins if not isinstance(a, str)]
        maps = []
        for _v, s, e in ts:
            k = bcast(s, out_shape)
            if k is None:
                raise ValueError(f"a {_t(s, e)} operand does not broadcast to "
                                 f"{_t(out_shape, 'f32')}")
            m = {"full": "d0, d1", "row": "d1" if len(s) == 1 else "0, d1", "col": "d0, 0"}[k]
            maps.append(f"affine_map<(d0, d1) -> ({m})>")
        maps.append("affine_map<(d0, d1) -> (d0, d1)>")
        ot = _t(out_shape, "f32")
        e = self.fresh("e")
        self.body.append(f"  {e} = tensor.empty() : {ot}")
        blk = [f"%i{k}: {el}" for k, (_v, _s, el) in enumerate(ts)] + ["%o: f32"]
        lines, names = [], []
        k = 0
        for a in ins:
            if isinstance(a, str):
                names.append(a)
                continue
            x, el = f"%i{k}", a[2]
            if el != "f32":
                lines.append(f"    {x}e = arith.extf {x} : {el} to f32")
                x = f"{x}e"
            names.append(x)
            k += 1
        lines += lines_of(names)
        self.body.append(
            f"  {r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins({', '.join(v for v, _s, _e in ts)} : "
            f"{', '.join(_t(s, el) for _v, s, el in ts)}) outs({e} : {ot}) {{")
        self.body.append(f"  ^bb0({', '.join(blk)}):")
        self.body.extend(lines)
        self.body.append("    linalg.yield %y : f32")
        self.body.append(f"  }} -> {ot}")
        return r

    def unary(self, x: tuple, lines_of) -> str:
        return self.generic([x], x[1], lines_of)

    def row_reduce(self, x: tuple, kind: str = "sum") -> str:
        """A row sum (`addf` from 0) or max (`maximumf` from -inf): `[M, 1]` f32."""
        v, (M, N), el = x
        z = self.fill((M, 1), 0.0 if kind == "sum" else -math.inf)
        r, ct = self.fresh("v"), _t((M, 1), "f32")
        ext = [f"    %ie = arith.extf %in : {el} to f32"] if el != "f32" else []
        nm = "%ie" if ext else "%in"
        op = "arith.addf" if kind == "sum" else "arith.maximumf"
        self.body += [f"  {r} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> "
                      f"(d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = "
                      f"[\"parallel\", \"reduction\"]}} ins({v} : {_t((M, N), el)}) "
                      f"outs({z} : {ct}) {{",
                      f"  ^bb0(%in: {el}, %o: f32):", *ext,
                      f"    %y = {op} {nm}, %o : f32", "    linalg.yield %y : f32",
                      f"  }} -> {ct}"]
        return r

    def matmul(self, x: tuple, w: tuple, transposed: bool) -> str:
        """x [M, K] times the weight argument (`transposed`: w is [N, K], torch's
        `nn.Linear` layout, read through a `linalg.transpose`)."""
        (M, _K), (wv, ws, wel) = x[1], w
        if transposed:
            tt = _t((ws[1], ws[0]), wel)
            e, wt = self.fresh("e"), self.fresh("wt")
            self.body += [f"  {e} = tensor.empty() : {tt}",
                          f"  {wt} = linalg.transpose ins({wv} : {_t(ws, wel)}) outs({e} : "
                          f"{tt}) permutation = [1, 0]"]
            wv, ws = wt, (ws[1], ws[0])
        ot = _t((M, ws[1]), "f32")
        z, r = self.fill((M, ws[1])), self.fresh("v")
        self.body.append(f"  {r} = linalg.matmul ins({x[0]}, {wv} : {_t(x[1], x[2])}, "
                         f"{_t(ws, wel)}) outs({z} : {ot}) -> {ot}")
        return r


def _binary(op: str):
    return lambda a: [f"    %y = {op} {a[0]}, {a[1]} : f32"]


def _gelu(approximate: str, w: _Writer):
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        c0, c1, h, one = (w.const(math.sqrt(2 / math.pi)), w.const(0.044715), w.const(0.5),
                          w.const(1.0))
        return lambda a: [f"    %t0 = arith.mulf {a[0]}, {a[0]} : f32",
                          f"    %t1 = arith.mulf %t0, {a[0]} : f32",
                          f"    %t2 = arith.mulf %t1, {c1} : f32",
                          f"    %t3 = arith.addf {a[0]}, %t2 : f32",
                          f"    %t4 = arith.mulf %t3, {c0} : f32",
                          "    %t5 = math.tanh %t4 : f32",
                          f"    %t6 = arith.addf %t5, {one} : f32",
                          f"    %t7 = arith.mulf {a[0]}, {h} : f32",
                          "    %y = arith.mulf %t7, %t6 : f32"]
    c, h, one = w.const(0.7071067811865476), w.const(0.5), w.const(1.0)
    return lambda a: [f"    %t0 = arith.mulf {a[0]}, {h} : f32",
                      f"    %t1 = arith.mulf {a[0]}, {c} : f32",
                      "    %t2 = math.erf %t1 : f32",
                      f"    %t3 = arith.addf %t2, {one} : f32",
                      "    %y = arith.mulf %t0, %t3 : f32"]


def _norm(n, x: tuple, w: _Writer, arg) -> str:
    """LayerNorm (mean, centred variance, affine) or RMSNorm over the last dim, the
    way torch's decompositions compute them."""
    name, args = _name(n), list(n.args)
    M, N = x[1]
    d, two = w.const(float(N)), w.const(2.0)

    def square(a):
        return [f"    %y = math.powf {a[0]}, {two} : f32"]

    weight = args[2] if len(args) > 2 else None
    if name == "aten.layer_norm.default":
        bias = args[3] if len(args) > 3 else None
        eps = args[4] if len(args) > 4 else 1e-5
        mean = w.unary((w.row_reduce(x), (M, 1), "f32"), lambda a: [
            f"    %y = arith.divf {a[0]}, {d} : f32"])
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
    rstd = w.unary((w.row_reduce(sq), (M, 1), "f32"), lambda a: [
        f"    %t0 = arith.divf {a[0]}, {d} : f32", f"    %t1 = arith.addf %t0, {e} : f32",
        "    %y = math.rsqrt %t1 : f32"])
    y = w.generic([centred, (rstd, (M, 1), "f32")], (M, N), _binary("arith.mulf"))
    for p, op in ((weight, "arith.mulf"), (bias, "arith.addf")):
        if p is not None:
            y = w.generic([(y, (M, N), "f32"), arg(p)], (M, N), _binary(op))
    return y


def _softmax(x: tuple, w: _Writer) -> str:
    """exp(x - max) / sum over the last dim (torch's decomposition)."""
    M, N = x[1]
    m = (w.row_reduce(x, "max"), (M, 1), "f32")
    e = (w.generic([x, m], (M, N), lambda a: [f"    %t0 = arith.subf {a[0]}, {a[1]} : f32",
                                               "    %y = math.exp %t0 : f32"]), (M, N), "f32")
    s = (w.row_reduce(e), (M, 1), "f32")
    return w.generic([e, s], (M, N), _binary("arith.divf"))


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


def region_text(region: list, fname: str, produced: set | frozenset = frozenset()) -> Text:
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
                    expands[(n, a)] = Expanded(f"{n.name}:expand{len(expands)}",
                                               fold(static(n)), None, src=a, rows=rows)
    inputs = [a for a in inputs if any(a in _inputs(n) and (n, a) not in expands
                                       for n in region)]
    derived += list(expands.values())
    outputs = [n for n in region if any(u not in inset for u in data_users(n))]
    views = {n for n in region if _name(n) in VIEWS}
    shapes: dict = {n: fold(_shape(n)) for n in [*region, *inputs]}
    shapes |= {d: d.shape for d in derived}
    for n in region:  # a view in a region is its source; its element-wise user keeps that shape
        if n in views:
            shapes[n] = shapes[n.args[0]]
        elif any(a in views for a in n.all_input_nodes) and _name(n) not in MATMUL + ROW_OPS:
            shapes[n] = shapes[next(a for a in n.all_input_nodes if a in views)]
    k = max(norm_dims(n) for n in region)
    if k > 1:  # a norm over its last k dims, alone: rows of prod(those dims)
        for m in [*region, *inputs]:
            sh = static(m)
            shapes[m] = (int(np.prod(sh[:-k])), int(np.prod(sh[-k:])))
    flat = any(len(static(n)) > 2 for n in [*region, *inputs])
    val: dict = {}
    el: dict = {}
    args = []
    for i, a in enumerate(inputs):
        val[a], el[a] = f"%a{i}", "f32" if stored_f32(a, produced) else element(a)
        args.append(f"%a{i}: {_t(shapes[a], el[a])}")
    for i, d in enumerate(derived, len(inputs)):
        val[d], el[d] = f"%a{i}", "f32"
        args.append(f"%a{i}: {_t(d.shape, 'f32')}")
    w = _Writer()

    def arg(a) -> tuple:
        return (val[a], shapes[a], el[a])

    for n in region:
        name, out = _name(n), shapes[n]
        if n in views:
            val[n], el[n] = val[n.args[0]], el[n.args[0]]
            continue
        a0 = n.args[0] if n.args else None
        if name in ("aten.matmul.default", "aten.mm.default"):
            r = w.matmul(arg(a0), arg(n.args[1]), transposed=False)
        elif name == "aten.linear.default":
            r = w.matmul(arg(a0), arg(n.args[1]), transposed=True)
            if len(n.args) > 2 and n.args[2] is not None:
                r = w.generic([(r, out, "f32"), arg(n.args[2])], out, _binary("arith.addf"))
        elif name in REDUCE:
            r = w.row_reduce(arg(a0))
            if name == "aten.mean.dim":
                c = w.const(shapes[a0][1])
                r = w.unary((r, out, "f32"), lambda a, c=c: [f"    %y = arith.divf {a[0]}, {c} : f32"])
        elif name == BATCH_NORM:
            scale, shift = (d for d in derived if d.node is n)
            r = w.generic([arg(a0), arg(scale), arg(shift)], out, lambda a: [
                f"    %t0 = arith.mulf {a[0]}, {a[1]} : f32",
                f"    %y = arith.addf %t0, {a[2]} : f32"])
        elif name in NORM:
            r = _norm(n, arg(a0), w, arg)
        elif name in SOFTMAX:
            r = _softmax(arg(a0), w)
        elif name == "aten.pow.Tensor_Scalar":
            c = w.const(2.0)
            r = w.unary(arg(a0), lambda a, c=c: [f"    %y = math.powf {a[0]}, {c} : f32"])
        elif name in UNARY:
            r = w.unary(arg(a0), lambda a, op=UNARY[name]: [f"    %y = {op} {a[0]} : f32"])
        elif name == "aten.silu.default":
            one = w.const(1.0)
            r = w.unary(arg(a0), lambda a, one=one: [
                f"    %n = arith.negf {a[0]} : f32", "    %x = math.exp %n : f32",
                f"    %d = arith.addf %x, {one} : f32", f"    %y = arith.divf {a[0]}, %d : f32"])
        elif name == "aten.sigmoid.default":
            one = w.const(1.0)
            r = w.unary(arg(a0), lambda a, one=one: [
                f"    %n = arith.negf {a[0]} : f32", "    %x = math.exp %n : f32",
                f"    %d = arith.addf %x, {one} : f32", f"    %y = arith.divf {one}, %d : f32"])
        elif name == "aten.relu.default":
            r = w.unary(arg(a0), lambda a: [f"    %y = arith.maximumf {a[0]}, %zero : f32"])
        elif name == "aten.hardtanh.default":
            lo, hi = w.const(n.args[1]), w.const(n.args[2])
            r = w.unary(arg(a0), lambda a, lo=lo, hi=hi: [
                f"    %t0 = arith.maximumf {a[0]}, {lo} : f32",
                f"    %y = arith.minimumf %t0, {hi} : f32"])
        elif name == "aten.gelu.default":
            r = w.unary(arg(a0), _gelu(n.kwargs.get("approximate", "none"), w))
        else:  # binary
            ins = [w.const(fill_value(a) or 0.0) if a in folded else
                   arg(expands.get((n, a), a)) if _is_tensor(a) else w.const(a)
                   for a in n.args]
            r = w.generic(ins, out, _binary(BINARY[name]))
        val[n], el[n] = r, "f32"
    rets = ", ".join(val[o] for o in outputs)
    rtypes = ", ".join(_t(shapes[o], "f32") for o in outputs)
    text = (f"func.func @{fname}({', '.join(args)}) -> ({rtypes}) {{\n" + "\n".join(w.body)
            + f"\n  return {rets} : {rtypes}\n}}\n")
    return Text(text, [*inputs, *derived], outputs, flat,
                {d.name: d.fn for d in derived if d.fn is not None},
                [d for d in derived if isinstance(d, Expanded)],
                {a for a in folded if all(u in inset for u in a.users)})
