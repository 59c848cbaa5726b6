"""The rest of a `torch.export` graph -> linalg functions -> `convert-linalg-to-step` graphs.

After the MoE and attention recognizers (`aten.py`), the remaining ATen ops
that linalg on tensors expresses are grouped into regions and each region is
written as a linalg-on-tensors function (the forms torch-mlir emits) and
lowered by `convert-linalg-to-step`. The ops (floating tensors of any rank,
computed on their folded 2-D view `[prod(leading dims), last dim]`: a view of
row-major memory):

- projections: `aten.linear` (`nn.Linear`: the `[out, in]` weight argument
  read transposed through a `linalg.transpose`, the bias a row broadcast),
  `matmul`/`mm` by a 2-D weight argument; the weights are the program's
  placeholders: `nn.Parameter`s are off-chip tensors, their values carried by
  the exported program (`step_run_linalg.run_exported` binds them);
- element-wise `add/sub/mul/div` (tensors of the same shape, a row `[N]` /
  `[1, .., N]`, a column `[.., 1]`, or a scalar), `rsqrt`, `exp`, `neg`,
  `tanh`, `sigmoid`, `silu`, `relu` (`max_scalar[0.0]`), `hardtanh`/ReLU6
  (`max_scalar` then `min_scalar`), `gelu` (exact: the library's `gelu`;
  `approximate="tanh"`: its formula), `pow(x, 2)`;
- row ops over the last dim: `mean`/`sum` with `keepdim`, `softmax`
  (row max, `exp(x - max)`, row sum, divide), `layer_norm` (mean, centred
  variance, `rsqrt(var + eps)`, weight, bias) and `rms_norm` (eps default:
  the dtype's epsilon, as torch); a row must be one tile (option dense's N);
- views that keep the last dim (`view`, `reshape`, `flatten`, `unsqueeze`)
  are the same folded tensor: they join a region and move no data.

What is not listed (a convolution, an integer tensor, a softmax over another
dim, a batch broadcast `[S, D]` + `[B, S, D]`) is not lowerable: it stays in
torch and `aten.py`'s remark names it. Regions:

- a value joins its consumer's region when that consumer is its only user
  (RMSNorm's chain, a projection and its residual add); a value with several
  users is a region's result, stored, and read back by every user (so no
  on-chip row buffer is needed and regions never depend on each other in a
  cycle); projections that share their left operand share a region (q/k/v);
- an element-wise op of one tensor (and scalars) on a view of a region value
  joins that region, applied before the view (it commutes with the reshape:
  `(h @ w_q).view(B, H, 1, D) * c` scales the projection's tiles);
- every tensor of rank > 2 is its folded 2-D view (`[B, H, 1, D]` ->
  `[B*H, D]`), a 1-D tensor one row.

The MoE router (`router_part`): the logits matmul and a row function of the
step library (`row_softmax_topk[k]` for Qwen3's softmax-then-top-k,
`row_topk_softmax[k]` for Mixtral's top-k-then-softmax) and the indices
(`row_topk_index[k]`), both stored; one tile spans the E columns of a row.

Example: the small Qwen decoder layer gives regions `{pow, mean, add, rsqrt,
mul, mul_1}` (RMSNorm), `{matmul, view, mul_2, matmul_1, matmul_2}` (q/k/v,
q scaled by 1/sqrt(d)), `{matmul_3, add_1}` (output projection + residual),
a second RMSNorm, and `{add_3}` (the last residual).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from steplus.lowering.linalg_to_step.aten import _shape

UNARY = {"aten.rsqrt.default": "math.rsqrt", "aten.exp.default": "math.exp",
         "aten.neg.default": "arith.negf", "aten.tanh.default": "math.tanh"}
BINARY = {"aten.add.Tensor": "arith.addf", "aten.sub.Tensor": "arith.subf",
          "aten.mul.Tensor": "arith.mulf", "aten.div.Tensor": "arith.divf"}
MATMUL = ("aten.matmul.default", "aten.mm.default", "aten.linear.default")
REDUCE = ("aten.mean.dim", "aten.sum.dim_IntList")
ACTIVATION = ("aten.silu.default", "aten.relu.default", "aten.hardtanh.default",
              "aten.gelu.default", "aten.sigmoid.default")
NORM = ("aten.layer_norm.default", "aten.rms_norm.default")
SOFTMAX = ("aten.softmax.int", "aten._softmax.default")
OTHER = ("aten.pow.Tensor_Scalar", *ACTIVATION)
ROW_OPS = NORM + SOFTMAX  # reduce each row inside the op: a row must be one tile
VIEWS = ("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
         "aten.unsqueeze.default", "aten.squeeze.dim", "aten.flatten.using_ints",
         "aten.clone.default", "aten.contiguous.default", "aten.dropout.default",
         "aten.to.dtype", "aten._to_copy.default")  # casts: only to the same dtype
BATCH_NORM = "aten.batch_norm.default"
# in-place ops of a value nothing else reads: their out-of-place op (the exported
# graph's users read the in-place node's result)
INPLACE = {"aten.relu_.default": "aten.relu.default",
           "aten.hardtanh_.default": "aten.hardtanh.default",
           "aten.add_.Tensor": "aten.add.Tensor", "aten.mul_.Tensor": "aten.mul.Tensor",
           "aten.sub_.Tensor": "aten.sub.Tensor", "aten.div_.Tensor": "aten.div.Tensor"}
FLOATS = {"torch.float32": "f32", "torch.bfloat16": "bf16", "torch.float16": "f16"}


def _raw_name(node) -> str:
    t = node.target
    return getattr(t, "__name__", "") if callable(t) and not hasattr(t, "_schema") else str(t)


def _name(node) -> str:
    """The ATen op of a node; an in-place op whose mutated tensor nothing else reads
    (computed, not an input) is its out-of-place op."""
    name = _raw_name(node)
    if name in INPLACE:
        x = node.args[0] if node.args else None
        if x is not None and getattr(x, "op", None) == "call_function" and len(x.users) == 1:
            return INPLACE[name]
    return name


def _inputs(n) -> list:
    """The tensor nodes a region reads for `n` (a BatchNorm reads x; its statistics
    and affine parameters are folded into derived per-row scale and shift)."""
    return [n.args[0]] if _name(n) == BATCH_NORM else list(n.all_input_nodes)


def _dtype(node) -> str:
    return str(getattr((getattr(node, "meta", {}) or {}).get("val"), "dtype", ""))


def element(node) -> str:
    """The MLIR element type of a node's tensor (bf16/f16 kept, else f32)."""
    return FLOATS.get(_dtype(node), "f32")


def _is_tensor(x) -> bool:
    return hasattr(x, "op") and _shape(x) is not None


def _float_tensor(x) -> bool:
    s = _shape(x) if hasattr(x, "op") else None
    return s is not None and len(s) >= 1 and 0 not in s and _dtype(x) in FLOATS


def _scalar(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def static(node) -> tuple[int, ...]:
    """A node's static shape (the lowerable nodes have one)."""
    s = _shape(node)
    if s is None:
        raise ValueError(f"{getattr(node, 'name', node)} has no static shape")
    return s


def fold(shape) -> tuple[int, int]:
    """A tensor shape as the 2-D row-major view the regions compute on: leading dims
    folded into the rows (`[B, S, D]` -> `[B*S, D]`), a 1-D tensor one row."""
    shape = tuple(shape)
    if len(shape) == 1:
        return (1, shape[0])
    return (int(np.prod(shape[:-1])), shape[-1])


def bcast(s, out) -> str | None:
    """How a tensor of shape `s` broadcasts over `out` in the folded view: "full",
    "row" (one row for every row: `[N]`, `[1, .., 1, N]`), "col" (one value per row:
    `[.., 1]`), or None (another broadcast, e.g. over the batch only)."""
    s, out = tuple(s), tuple(out)
    if s == out:
        return "full"
    if s and out and s[-1] == out[-1] and int(np.prod(s[:-1])) == 1:
        return "row"
    if len(s) == len(out) and s[-1] == 1 and s[:-1] == out[:-1]:
        return "col"
    return None


def expand_rows(s, out) -> np.ndarray | None:
    """For a broadcast `bcast` does not express whose last dim is whole (`[S, D]` over
    `[B, S, D]`, `[B, 1, D]` over `[B, S, D]`): the row of `s` each row of the folded
    `out` reads (a move part materializes it); None otherwise."""
    s, out = tuple(s), tuple(out)
    if not s or not out or s[-1] != out[-1] or len(s) > len(out) or bcast(s, out):
        return None
    padded = (1,) * (len(out) - len(s)) + s
    if any(a not in (1, b) for a, b in zip(padded, out)):
        return None
    rows = np.arange(int(np.prod(s[:-1]))).reshape(padded[:-1])
    return np.broadcast_to(rows, out[:-1]).reshape(-1)


def _expanded(n, a) -> bool:
    """`a` is an operand of the binary op `n` that a move part broadcasts first."""
    return (_raw_name(n) in BINARY or _name(n) in BINARY) and _is_tensor(a) and \
        expand_rows(static(a), static(n)) is not None


def _last(dims, rank: int) -> bool:
    return list(dims) in ([-1], [rank - 1])


def _weight(w, rank: int = 2) -> bool:
    """A function argument (a parameter or an input) of `rank` dims: read from memory."""
    return _float_tensor(w) and w.op == "placeholder" and len(_shape(w)) == rank


def keeps_rows(n) -> bool:
    """A view that keeps the last dim: the same folded 2-D tensor."""
    src = n.args[0] if n.args else None
    return (_name(n) in VIEWS and _float_tensor(n) and hasattr(src, "op") and _float_tensor(src)
            and _shape(src)[-1] == _shape(n)[-1])


def lowerable(n) -> bool:
    """An ATen node this module writes as linalg (see the module doc)."""
    try:
        return _lowerable(n)
    except (TypeError, ValueError, AttributeError, IndexError):  # an argument form not foreseen
        return False


def _lowerable(n) -> bool:
    if getattr(n, "op", None) != "call_function":
        return False
    name, out = _name(n), _shape(n)
    if out is None or not out or 0 in out or not _float_tensor(n):
        return False
    if name in VIEWS:
        if name == "aten.dropout.default" and not (len(n.args) == 3 and n.args[2] is False):
            return False  # dropout in training draws random numbers: not lowered
        if name in ("aten.to.dtype", "aten._to_copy.default") and (
                _dtype(n) != _dtype(n.args[0]) or set(n.kwargs) - {"dtype"}):
            return False  # a cast that changes the element type is not a view
        return keeps_rows(n) and len(out) >= 2 and len(_shape(n.args[0])) >= 2
    if n.kwargs and not (name == "aten.gelu.default" and set(n.kwargs) == {"approximate"}):
        return False
    args = list(n.args)
    x = args[0] if args else None
    if not _float_tensor(x):
        return False
    rank = len(_shape(x))
    if name in ("aten.matmul.default", "aten.mm.default"):
        return len(args) == 2 and rank >= 2 and _weight(args[1])
    if name == "aten.linear.default":
        b = args[2] if len(args) > 2 else None
        return (len(args) in (2, 3) and rank >= 1 and _weight(args[1])
                and (b is None or _weight(b, 1)))
    if name == BATCH_NORM:  # eval mode: running statistics, folded (see `_batch_norm`)
        C = out[1] if rank >= 2 else -1
        return (len(args) >= 8 and args[5] is False and rank >= 2 and _scalar(args[7])
                and all(a is None or _weight(a, 1) and _shape(a) == (C,) for a in args[1:3])
                and all(_weight(a, 1) and _shape(a) == (C,) for a in args[3:5]))
    if name in REDUCE:
        return len(args) == 3 and rank >= 2 and _last(args[1], rank) and args[2] is True
    if name == "aten.pow.Tensor_Scalar":
        return args[1] == 2
    if name in NORM:
        d = list(args[1])
        w = args[2] if len(args) > 2 else None
        ok = d == [out[-1]] and (w is None or _weight(w, 1))
        if name == "aten.layer_norm.default":
            b = args[3] if len(args) > 3 else None
            return ok and (b is None or _weight(b, 1)) and (len(args) < 5 or _scalar(args[4]))
        return ok and (len(args) < 4 or args[3] is None or _scalar(args[3]))
    if name in SOFTMAX:
        return rank >= 1 and args[1] in (-1, rank - 1) and (len(args) < 3 or args[2] is False)
    if name == "aten.hardtanh.default":
        return len(args) == 3 and _scalar(args[1]) and _scalar(args[2]) and args[1] <= args[2]
    if name == "aten.gelu.default":
        return len(args) == 1 and n.kwargs.get("approximate", "none") in ("none", "tanh")
    if name in UNARY or name in ACTIVATION:
        return len(args) == 1
    if name in BINARY:
        if len(args) != 2 or not any(_is_tensor(a) for a in args):
            return False
        for a in args:
            if _is_tensor(a):
                if not _float_tensor(a) or (bcast(_shape(a), out) is None
                                            and expand_rows(_shape(a), out) is None):
                    return False
            elif not _scalar(a):
                return False
        return True
    return False


def regions(nodes, covered: set) -> list[list]:
    """Lowerable, uncovered nodes grouped as the module doc says (graph order)."""
    cand = [n for n in nodes if n not in covered and lowerable(n)]
    inset = set(cand)
    parent = {n: n for n in cand}

    def find(n):
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    by_lhs: dict = {}
    transparent: dict = {}  # a view inside a region -> its element-wise user
    for n in cand:
        if _name(n) in MATMUL:
            lhs = n.args[0]
            if lhs in by_lhs:
                parent[find(n)] = find(by_lhs[lhs])
            else:
                by_lhs[lhs] = n
            continue  # the left operand is read from memory, never joined
        for a in n.all_input_nodes:
            if a in inset and len(a.users) == 1 and not _expanded(n, a):
                parent[find(a)] = find(n)
            elif _through_view(n, a, inset):  # x.view(..) * c: the scale on x, then the view
                parent[find(a.args[0])] = find(n)
                transparent[a] = n
    groups: dict = {}
    for n in cand:
        groups.setdefault(find(n), []).append(n)
    for v, n in transparent.items():
        groups[find(n)].append(v)
    order = {n: i for i, n in enumerate(nodes)}
    views = set(transparent) | {n for n in cand if _name(n) in VIEWS}
    out = []
    for g in groups.values():
        if all(n in views for n in g):  # views alone move no data: they stay in torch
            continue
        gs = set(g)
        # a view that outputs the region's input unchanged is no computation: it stays out
        while True:
            bad = [n for n in g if n in views and n.args[0] not in gs
                   and any(u not in gs for u in n.users)]
            if not bad:
                break
            g = [n for n in g if n not in bad]
            gs = set(g)
        if any(n not in views for n in g):
            out.append(sorted(g, key=order.__getitem__))
    return out


def _hoistable(n) -> bool:
    """An element-wise op of one tensor (and scalars): it commutes with a reshape."""
    name = _name(n)
    tensors = [a for a in n.args if _is_tensor(a)]
    return (name in UNARY or name in OTHER or name in BINARY) and len(tensors) == 1


def _through_view(n, a, inset: set) -> bool:
    """`a` is a view whose only user is `n`, of a region value whose only user is `a`."""
    return (_name(a) in VIEWS and a not in inset and len(a.users) == 1 and _hoistable(n)
            and a.args and a.args[0] in inset and len(a.args[0].users) == 1
            and _name(a.args[0]) not in REDUCE + ROW_OPS)


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


def _t(shape, el: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{el}>"


def _f(v: float) -> str:
    return f"{float(np.float32(v)):.17e}"  # torch rounds a scalar to the tensor's f32


def stored_f32(node, produced: set) -> bool:
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


def region_text(region: list, fname: str, produced: set = frozenset()) -> Text:
    """The linalg-on-tensors function of a region (torch-mlir's forms) on the folded 2-D
    views of its tensors; an input that another lowered part computes (`produced`,
    through views) is read as f32."""
    inset = set(region)
    inputs: list = []
    for n in region:
        for a in _inputs(n):
            if a not in inset and a not in inputs:
                inputs.append(a)
    derived = [d for n in region if _name(n) == BATCH_NORM for d in _batch_norm(n)]
    expands: dict = {}  # (node, operand) -> the broadcast operand a move part writes
    for n in region:
        if _name(n) in BINARY:
            for a in n.args:
                if _is_tensor(a) and _expanded(n, a):
                    rows = expand_rows(static(a), static(n))
                    expands[(n, a)] = Expanded(f"{n.name}:expand{len(expands)}",
                                               fold(static(n)), None, src=a, rows=rows)
    inputs = [a for a in inputs if any(a in _inputs(n) and (n, a) not in expands
                                       for n in region)]
    derived += list(expands.values())
    outputs = [n for n in region if any(u not in inset for u in n.users)]
    views = {n for n in region if _name(n) in VIEWS}
    shapes: dict = {n: fold(_shape(n)) for n in [*region, *inputs]}
    shapes |= {d: d.shape for d in derived}
    for n in region:  # a view in a region is its source; its element-wise user keeps that shape
        if n in views:
            shapes[n] = shapes[n.args[0]]
        elif any(a in views for a in n.all_input_nodes) and _name(n) not in MATMUL + ROW_OPS:
            shapes[n] = shapes[next(a for a in n.all_input_nodes if a in views)]
    flat = any(len(_shape(n)) > 2 for n in [*region, *inputs])
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
            ins = [arg(expands.get((n, a), a)) if _is_tensor(a) else w.const(a)
                   for a in n.args]
            r = w.generic(ins, out, _binary(BINARY[name]))
        val[n], el[n] = r, "f32"
    rets = ", ".join(val[o] for o in outputs)
    rtypes = ", ".join(_t(shapes[o], "f32") for o in outputs)
    text = (f"func.func @{fname}({', '.join(args)}) -> ({rtypes}) {{\n" + "\n".join(w.body)
            + f"\n  return {rets} : {rtypes}\n}}\n")
    return Text(text, [*inputs, *derived], outputs, flat,
                {d.name: d.fn for d in derived if d.fn is not None},
                [d for d in derived if isinstance(d, Expanded)])


_TILE = re.compile(r"^(\d+)x(\d+)(?:x(\d+))?$")


def router_tile(tile: str, experts: int) -> str:
    """The dense tile with N = the experts (a row function needs whole rows)."""
    m = _TILE.match(tile.split(";")[0])
    if not m:
        raise ValueError(f"dense: tile '{tile}' is not MxN[xK]")
    return f"{m.group(1)}x{experts}" + (f"x{m.group(3)}" if m.group(3) else "")
