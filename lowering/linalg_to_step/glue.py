"""The rest of a `torch.export` graph -> linalg functions -> `convert-linalg-to-step` graphs.

After the MoE and attention recognizers (`aten.py`), the remaining ATen ops
that linalg on tensors expresses are grouped into regions (`regions`) and each
region is built as a linalg-on-tensors function (`linalg_region.region_func`:
the forms torch-mlir emits) and lowered by `convert-linalg-to-step`. The ops (floating tensors of any rank,
computed on their folded 2-D view `[prod(leading dims), last dim]`: a view of
row-major memory):

- projections: `aten.linear` (`nn.Linear`: the `[out, in]` weight argument
  read transposed through a `linalg.transpose`, the bias a row broadcast),
  `matmul`/`mm` by a 2-D weight argument, `addmm(bias, x, w)` (GPT-2's
  `Conv1D`: the `[in, out]` weight as it lies); the weights are the program's
  placeholders: `nn.Parameter`s are off-chip tensors, their values carried by
  the exported program (`step_run_linalg.run_exported` binds them);
- element-wise `add/sub/mul/div` (tensors of the same shape, a row `[N]` /
  `[1, .., N]`, a column `[.., 1]`, one value per folded row — a `[C, 1, 1]`
  parameter or a computed `[N, C, 1, 1]` over NCHW: `expand_column` — or a
  scalar), `rsub` (`1.0 - x`), `rsqrt`, `exp`, `neg`,
  `tanh`, `sigmoid`, `silu`, `relu` (`max_scalar[0.0]`), `hardtanh`/ReLU6
  (`max_scalar` then `min_scalar`), `hardsigmoid`/`hardswish` (torch's
  `relu6(x + 3) / 6` formula), `gelu` (exact: the library's `gelu`;
  `approximate="tanh"`: its formula), `pow(x, 2)`, `pow(x, 3)` (`x * x * x`),
  a compare with a number cast to f32 (`(x > c).float()`, `(y == 1).to(x.dtype)`:
  `arith.cmpf` + `arith.uitofp`, the library's `gt_scalar[c]`, ...; the compare read
  by those casts only, which are views of it);
- row ops over the last dim: `mean`/`sum` with `keepdim`, `softmax`
  (row max, `exp(x - max)`, row sum, divide), `layer_norm` (mean, centred
  variance, `rsqrt(var + eps)`, weight, bias) and `rms_norm` (eps default:
  the dtype's epsilon, as torch); a row must be one tile (option dense's N);
- views that keep the last dim (`view`, `reshape`, `flatten`, `unsqueeze`)
  are the same folded tensor: they join a region and move no data; so is the
  `to(float32)` of an integer user input (BERT's 0/1 mask), read as f32;
- a tensor of one value (`torch.zeros`, `zeros_like`, `full`: `FILLS`) read
  by an element-wise op is a scalar of it (`add_scalar[0.0]`), computed by
  no one; a LayerNorm/RMSNorm over several trailing dims is a region of its
  own, folded `[.., prod(dims)]`.

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
  `[B*H, D]`), a 1-D tensor one row;
- a region never reads, through an op left to torch, a value it computes itself
  (`_acyclic`: the nodes that would are a later region).

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

import functools
import math
import re
from typing import Any, TypeGuard

import numpy as np

from steplus.lowering.linalg_to_step.aten import _shape

HARD = ("aten.hardsigmoid.default", "aten.hardswish.default")  # relu6(x + 3) / 6 (x * ..)
UNARY = {"aten.rsqrt.default": "math.rsqrt", "aten.exp.default": "math.exp",
         "aten.neg.default": "arith.negf", "aten.tanh.default": "math.tanh"}
BINARY = {"aten.add.Tensor": "arith.addf", "aten.sub.Tensor": "arith.subf",
          "aten.mul.Tensor": "arith.mulf", "aten.div.Tensor": "arith.divf"}
MATMUL = ("aten.matmul.default", "aten.mm.default", "aten.linear.default",
          "aten.addmm.default")
ADDMM = "aten.addmm.default"  # GPT-2's Conv1D: addmm(bias, x, w) with an [in, out] weight
REDUCE = ("aten.mean.dim", "aten.sum.dim_IntList")
ACTIVATION = ("aten.silu.default", "aten.relu.default", "aten.hardtanh.default",
              "aten.gelu.default", "aten.sigmoid.default", *HARD)
NORM = ("aten.layer_norm.default", "aten.rms_norm.default")
SOFTMAX = ("aten.softmax.int", "aten._softmax.default")
OTHER = ("aten.pow.Tensor_Scalar", "aten.rsub.Scalar", *ACTIVATION)
POWERS = (2, 3)  # x.pow(2) (a square), x.pow(3) (gelu_new's cube: x * x * x)
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
           "aten.hardswish_.default": "aten.hardswish.default",
           "aten.hardsigmoid_.default": "aten.hardsigmoid.default",
           "aten.add_.Tensor": "aten.add.Tensor", "aten.mul_.Tensor": "aten.mul.Tensor",
           "aten.sub_.Tensor": "aten.sub.Tensor", "aten.div_.Tensor": "aten.div.Tensor",
           "aten.bitwise_or_.Tensor": "aten.bitwise_or.Tensor",
           "aten.bitwise_and_.Tensor": "aten.bitwise_and.Tensor",
           "aten.masked_fill_.Scalar": "aten.masked_fill.Scalar",
           "aten.__ior__.Tensor": "aten.__or__.Tensor",
           "aten.__iand__.Tensor": "aten.__and__.Tensor"}
FLOATS = {"torch.float32": "f32", "torch.bfloat16": "bf16", "torch.float16": "f16"}
# a compare of a float tensor with a number, read as a 0/1 f32 mask: arith.cmpf's predicate
COMPARE = {"aten.eq.Scalar": "oeq", "aten.ne.Scalar": "une", "aten.lt.Scalar": "olt",
           "aten.le.Scalar": "ole", "aten.gt.Scalar": "ogt", "aten.ge.Scalar": "oge"}
CASTS = ("aten.to.dtype", "aten._to_copy.default")
# boolean tensors (masks) a region holds as 0/1 floats: compares of two tensors, the logical
# ops, torch.where / masked_fill on them, `.bool()` of a float tensor, any/all over the last dim
COMPARE_T = {"aten.eq.Tensor": "oeq", "aten.ne.Tensor": "une", "aten.lt.Tensor": "olt",
             "aten.le.Tensor": "ole", "aten.gt.Tensor": "ogt", "aten.ge.Tensor": "oge"}
LOGICAL = {"aten.__and__.Tensor": "and", "aten.bitwise_and.Tensor": "and",
           "aten.logical_and.default": "and", "aten.__or__.Tensor": "or",
           "aten.bitwise_or.Tensor": "or", "aten.logical_or.default": "or",
           "aten.__xor__.Tensor": "xor", "aten.bitwise_xor.Tensor": "xor",
           "aten.logical_xor.default": "xor", "aten.bitwise_not.default": "not",
           "aten.logical_not.default": "not"}
WHERE = ("aten.where.self", "aten.where.ScalarOther", "aten.where.ScalarSelf",
         "aten.masked_fill.Scalar")
ANY_ALL = ("aten.any.dim", "aten.all.dim")
BOOL = "torch.bool"
ASSERT = "aten._assert_tensor_metadata.default"  # export's dtype check: reads no values


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


# creation ops of a tensor of one value: (position of the value in args, or the value)
FILLS = {"aten.zeros.default": 0.0, "aten.zeros_like.default": 0.0,
         "aten.new_zeros.default": 0.0, "aten.ones.default": 1.0,
         "aten.ones_like.default": 1.0, "aten.new_ones.default": 1.0,
         "aten.full.default": 1, "aten.full_like.default": 1, "aten.new_full.default": 2}


def fill_value(n) -> float | None:
    """The value of a floating-point tensor every element of which is one constant
    (`torch.zeros`, `zeros_like`, `full(shape, c)`, ... : torch's zero initial states),
    or None."""
    if getattr(n, "op", None) != "call_function" or _raw_name(n) not in FILLS:
        return None
    if not _float_tensor(n):
        return None
    at = FILLS[_raw_name(n)]
    if isinstance(at, float):
        return at
    v = n.args[at] if len(n.args) > at else None
    return float(v) if _scalar(v) else None


def _is_tensor(x) -> bool:
    return hasattr(x, "op") and _shape(x) is not None


def _float_tensor(x) -> bool:
    s = _shape(x) if hasattr(x, "op") else None
    return s is not None and len(s) >= 1 and 0 not in s and (_dtype(x) in FLOATS
                                                             or float_mask(x) or is_mask(x))


@functools.lru_cache(maxsize=4096)
def is_mask(x) -> bool:
    """`x` is a boolean tensor a region holds as a 0/1 float: a user input or buffer, or a
    mask op (`mask_op`) of lowerable operands."""
    if not hasattr(x, "op") or _dtype(x) != BOOL:
        return False
    s = _shape(x)
    if s is None or not s or 0 in s:
        return False
    return x.op == "placeholder" or (x.op == "call_function" and mask_op(x))


def _operand(a, out) -> bool:
    """A tensor operand of a mask op or a `where`: float or a mask, broadcast as the folded
    view expresses it (full, a row, a column)."""
    return _float_tensor(a) and bcast(static(a), out) is not None


def mask_op(n) -> bool:
    """`n` computes a mask from lowerable operands (the module doc's boolean ops)."""
    try:
        return _mask_op(n)
    except (TypeError, ValueError, AttributeError, IndexError):
        return False


def _mask_op(n) -> bool:
    name, args, out = _name(n), list(n.args), _shape(n)
    if n.kwargs and name not in CASTS or out is None:
        return False
    if name in COMPARE:
        return float_mask(n) or (len(args) == 2 and _scalar(args[1]) and _operand(args[0], out)
                                 and static(args[0]) == out)
    if name in COMPARE_T or name in LOGICAL:
        k = 1 if LOGICAL.get(name) == "not" else 2
        return len(args) == k and all(_is_tensor(a) and _operand(a, out) for a in args) \
            and (name in COMPARE_T or all(is_mask(a) for a in args)) \
            and any(static(a) == out for a in args)
    if name in CASTS:  # `.bool()` of a float tensor: x != 0; of a mask: a view
        return (set(n.kwargs) <= {"dtype"} and len(args) >= 1 and _float_tensor(args[0])
                and static(args[0]) == out and _dtype(n) == BOOL)
    if name in VIEWS:  # a view of a mask that keeps the last dim
        src = args[0] if args else None
        return (is_mask(src) and len(out) >= 2 and len(static(src)) >= 2
                and static(src)[-1] == out[-1] and name != "aten.dropout.default")
    if name in ANY_ALL:
        return (len(args) == 3 and is_mask(args[0]) and _last(args[1] if isinstance(
            args[1], (list, tuple)) else [args[1]], len(out)) and args[2] is True)
    return False


def bool_cast(n) -> bool:
    """`n` casts a float tensor to bool (`.bool()`: x != 0): computes, not a view."""
    return (_name(n) in CASTS and _dtype(n) == BOOL and bool(n.args)
            and _dtype(n.args[0]) != BOOL)


def is_view(n) -> bool:
    """A view in a region (VIEWS; a cast only of the same dtype or a mask's to a float)."""
    return _name(n) in VIEWS and not bool_cast(n)


def float_mask(n) -> bool:
    """`n` is `x REL c` (COMPARE) of a float tensor with a finite number, read only by casts
    to float32 (`(x > c).float()`, `.to(x.dtype)`): the region computes it as the 0/1 f32
    mask (the library's `gt_scalar[c]`, ...), the casts are views of it."""
    if getattr(n, "op", None) != "call_function" or _raw_name(n) not in COMPARE \
            or len(n.args) != 2 or n.kwargs or not n.users:
        return False
    x, c = n.args
    return (_scalar(c) and hasattr(x, "op") and _dtype(x) in FLOATS and _shape(x) == _shape(n)
            and all(_raw_name(u) in CASTS and _dtype(u) == "torch.float32"
                    and set(u.kwargs) <= {"dtype"} for u in n.users
                    if _raw_name(u) != "aten._assert_tensor_metadata.default"))


def _scalar(x) -> TypeGuard[int | float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _fill(c, scalars: list) -> bool:
    """`c` is an infinite fill of a `where` with one tensor branch (`masked_fill(m,
    float('-inf'))`): the library's `where_then[-inf]` copies it (two constants are
    `b + (a - b) m`, which an infinity makes NaN)."""
    return isinstance(c, float) and math.isinf(c) and len(scalars) == 1


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


def expand_column(s, out) -> np.ndarray | None:
    """For a tensor of last dim 1 whose one value per row of the folded `out` is a function
    of the leading dims only, which `bcast` does not express (`[C, 1, 1]` or `[N, C, 1, 1]`
    over an NCHW `[N, C, H, W]`: the value of channel c for the rows `(n, c, h)`): the
    element of `s` each folded row reads; None otherwise."""
    s, out = tuple(s), tuple(out)
    if not s or not out or s[-1] != 1 or out[-1] == 1 or len(s) > len(out) or bcast(s, out):
        return None
    padded = (1,) * (len(out) - len(s)) + s
    if any(a not in (1, b) for a, b in zip(padded, out)):
        return None
    idx = np.arange(int(np.prod(s))).reshape(padded)
    return np.broadcast_to(idx, out[:-1] + (1,)).reshape(-1)


def per_row(a, out) -> bool:
    """`a` is a parameter read as `expand_column` says (ConvNeXt's layer scale `[C, 1, 1]`
    times NCHW): bound as a `[rows, 1]` column (`Derived`). A computed one (the SE block's
    `[N, C, 1, 1]` scale) is materialized by a move part instead (`_expanded`)."""
    s = tuple(static(a))
    return _weight(a, len(s)) and expand_column(s, out) is not None


def per_row_column(a, out):
    """values -> the `[rows, 1]` column of `per_row` parameter `a` over `out`."""
    s, out = tuple(static(a)), tuple(out)
    padded = (1,) * (len(out) - len(s)) + s
    name = a.name

    def f(values) -> np.ndarray:
        v = np.asarray(values[name], np.float64).reshape(padded)
        return np.broadcast_to(v, out[:-1] + (1,)).reshape(-1, 1)
    return f


def int_input_as_float(n) -> bool:
    """`n` casts an integer tensor computed by no op (a user input, through views) to f32:
    the region reads that input as f32 (exact for |values| < 2**24: a 0/1 mask)."""
    src = n.args[0] if n.args else None
    if not hasattr(src, "op") or _dtype(n) != "torch.float32" or set(n.kwargs) - {"dtype"}:
        return False
    if _dtype(src) not in ("torch.int64", "torch.int32", "torch.int16", "torch.int8",
                           "torch.uint8", "torch.bool"):
        return False
    s = _shape(src)
    if s is None or not s or 0 in s or _shape(n) != s or len(s) < 2:
        return False
    node: Any = src
    for _ in range(64):
        if node.op == "placeholder":
            return True
        if _raw_name(node) not in VIEWS or not node.args or not hasattr(node.args[0], "op"):
            return False
        node = node.args[0]
    return False


def _expanded(n, a) -> bool:
    """`a` is an operand of the binary op `n` that a move part broadcasts first."""
    if not ((_raw_name(n) in BINARY or _name(n) in BINARY) and _is_tensor(a)):
        return False
    return expand_rows(static(a), static(n)) is not None or (
        a.op != "placeholder" and expand_column(static(a), static(n)) is not None)


def _last(dims, rank: int) -> bool:
    return list(dims) in ([-1], [rank - 1])


def _weight(w, rank: int = 2) -> bool:
    """A function argument (a parameter or an input) of `rank` dims: read from memory."""
    return _float_tensor(w) and w.op == "placeholder" and len(static(w)) == rank


def keeps_rows(n) -> bool:
    """A view that keeps the last dim: the same folded 2-D tensor."""
    src = n.args[0] if n.args else None
    return (_name(n) in VIEWS and _float_tensor(n) and hasattr(src, "op") and _float_tensor(src)
            and static(src)[-1] == static(n)[-1])


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
    if _dtype(n) == BOOL:
        return _mask_lowerable(n)
    if name in WHERE:  # torch.where(m, a, b), where(m, a, c), where(m, c, b), masked_fill
        args = list(n.args)
        a = args if name != "aten.masked_fill.Scalar" else [args[1], args[2], args[0]]
        m, tensors = a[0], [t for t in a[1:] if _is_tensor(t)]
        scalars = [t for t in a[1:] if not _is_tensor(t)]
        return (len(a) == 3 and not n.kwargs and is_mask(m) and _operand(m, out)
                and all(_operand(t, out) for t in tensors) and all(_scalar(c) or _fill(c, scalars) for c in scalars)
                and len(tensors) == 3 - 1 - len(scalars) and len(tensors) >= 1
                and any(static(t) == out for t in [m, *tensors]))
    if name in VIEWS:
        if name == "aten.dropout.default" and not (len(n.args) == 3 and n.args[2] is False):
            return False  # dropout in training draws random numbers: not lowered
        if name in ("aten.to.dtype", "aten._to_copy.default") and (
                _dtype(n) != _dtype(n.args[0]) or set(n.kwargs) - {"dtype"}):
            # a cast that changes the element type is not a view; but an integer input
            # cast to f32 (BERT's 0/1 attention mask) is that input read as f32, and a
            # compare's cast to f32 is the 0/1 mask the region computes
            return int_input_as_float(n) or float_mask(n.args[0]) or (
                is_mask(n.args[0]) and static(n.args[0]) == out)
        return keeps_rows(n) and len(out) >= 2 and len(static(n.args[0])) >= 2
    if n.kwargs and not (name == "aten.gelu.default" and set(n.kwargs) == {"approximate"}):
        return False
    args = list(n.args)
    x = args[0] if args else None
    if name == ADDMM:  # addmm(bias, x, w): x [M, K] by the [K, N] weight, plus the bias row
        return (len(args) == 3 and _float_tensor(args[1]) and len(static(args[1])) == 2
                and _weight(args[2]) and _weight(args[0], 1)
                and static(args[0])[0] == static(args[2])[1])
    if not _float_tensor(x):
        return False
    rank = len(static(x))
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
    if name in COMPARE:
        return float_mask(n)
    if name == "aten.pow.Tensor_Scalar":
        return len(args) == 2 and args[1] in POWERS
    if name == "aten.rsub.Scalar":  # c - x (`1.0 - mask`)
        return len(args) == 2 and _scalar(args[1])
    if name in NORM:
        d = list(args[1])
        w = args[2] if len(args) > 2 else None
        # over the last len(d) dims (`nn.LayerNorm([S, D])`): a region of its own whose
        # rows are the normalized dims flattened (see `norm_dims`)
        ok = (1 <= len(d) < len(out) or d == [out[-1]]) and d == list(out[-len(d):]) and \
            (w is None or _weight(w, len(d)) and list(static(w)) == d)
        if name == "aten.layer_norm.default":
            b = args[3] if len(args) > 3 else None
            return ok and (b is None or _weight(b, len(d)) and list(static(b)) == d) and \
                (len(args) < 5 or _scalar(args[4]))
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
        if any(_is_tensor(a) and fill_value(a) is not None for a in args):
            # `x + torch.zeros(...)`: the fill is a scalar; x must have the output's shape
            return any(_is_tensor(a) and fill_value(a) is None and _shape(a) == out
                       and _float_tensor(a) for a in args)
        for a in args:
            if _is_tensor(a):
                if not _float_tensor(a) or (bcast(_shape(a), out) is None
                                            and expand_rows(_shape(a), out) is None
                                            and expand_column(_shape(a), out) is None):
                    return False
            elif not _scalar(a):
                return False
        return True
    return False


@functools.lru_cache(maxsize=4096)  # masks reading masks: each node's readers checked once
def _mask_lowerable(n) -> bool:
    """A mask op every reader of which is lowered too (torch would get it as a 0/1 float);
    export's `_assert_tensor_metadata` reads only its dtype."""
    return mask_op(n) and all(_raw_name(u) == ASSERT or _lowerable(u) for u in n.users)


def norm_dims(n) -> int:
    """How many trailing dims a LayerNorm/RMSNorm node normalizes over (1 for other
    nodes): more than one makes it a region of its own, folded `[.., prod(dims)]`."""
    if _name(n) not in NORM or len(n.args) < 2:
        return 1
    try:
        return max(1, len(list(n.args[1])))
    except TypeError:
        return 1


def data_users(n) -> list:
    """The users of `n` that read its values (`zeros_like(n)` reads only its shape; export's
    `_assert_tensor_metadata`, which it puts before a cast, only its dtype: a value read by
    a cast and that check joins the cast's region, as one read by the cast alone)."""
    return [u for u in n.users if fill_value(u) is None and _raw_name(u) != ASSERT]


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
            lhs = n.args[1] if _name(n) == ADDMM else n.args[0]
            if lhs in by_lhs:
                parent[find(n)] = find(by_lhs[lhs])
            else:
                by_lhs[lhs] = n
            continue  # the left operand is read from memory, never joined
        for a in n.all_input_nodes:
            if norm_dims(n) > 1 or a in inset and norm_dims(a) > 1:
                continue  # a norm over several dims is a region alone (its own folding)
            if a in inset and len(data_users(a)) == 1 and not _expanded(n, a) \
                    and not _computed_column(n, a):
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
    views = set(transparent) | {n for n in cand if is_view(n)}
    out = []
    for g in (h for g0 in groups.values() for h1 in _acyclic(sorted(g0, key=order.__getitem__))
              for h in _column_split(h1)):
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


def _computed_column(n, a) -> bool:
    """`a` is a column `[.., 1]` that `n` broadcasts over its columns and that no row
    reduction gives (Qwen2-MoE's `sigmoid(shared_expert_gate(x))`, a projection to one
    column): a region reads such a column from memory, so it is another region's result."""
    try:
        if _name(n) not in BINARY and _name(n) not in WHERE and _name(n) not in COMPARE_T:
            return False
        if bcast(static(a), static(n)) != "col":
            return False
    except (ValueError, TypeError):
        return False
    node = a
    for _ in range(64):  # back through the element-wise ops of the column's shape
        name = _name(node)
        if name in REDUCE or name in ANY_ALL:
            return False
        if name in MATMUL or getattr(node, "op", None) != "call_function":
            return True
        same = [i for i in node.all_input_nodes if _shape(i) == _shape(node)]
        if not same:
            return True
        node = same[0]
    return True


def _column_split(g: list) -> list[list]:
    """`g` (graph order) with the nodes that read a column it computes (`_computed_column`:
    projections sharing their input put the one-column gate in the region of the tensor it
    scales), and the nodes of `g` reading those, in a later region (checked again)."""
    for _ in range(len(g)):
        gs = set(g)
        later: set = set()
        for n in g:
            if any(a in later or a in gs and _computed_column(n, a) for a in n.all_input_nodes):
                later.add(n)
        first = [n for n in g if n not in later]
        if not later or not first:
            return [g]
        return [first, *_column_split([n for n in g if n in later])]
    return [g]


def _acyclic(g: list) -> list[list]:
    """`g` (in graph order) as regions none of which reads, through an op outside it, a
    value it computes itself (projections sharing an input: gelu_new's `x.pow(3)` stays in
    torch between `wi_0(x)` and the product with `wi_1(x)`); the nodes reading such a
    value, and the nodes of `g` reading them, go to a later region (checked again)."""
    for _ in range(len(g)):
        gs = set(g)
        # the nodes outside g downstream of g (a fill reads only a shape: not through it)
        reached: set = set()
        todo = [u for n in g for u in n.users if u not in gs]
        while todo:
            u = todo.pop()
            if u in reached or u in gs or fill_value(u) is not None:
                continue
            reached.add(u)
            todo.extend(u.users)
        later: set = set()
        for n in g:
            if any(a in later or a in reached for a in n.all_input_nodes):
                later.add(n)
        if not later:
            return [g]
        first = [n for n in g if n not in later]
        if not first:
            return [g]  # cannot happen in a DAG: a first node reads no node of g
        return [first, *_acyclic([n for n in g if n in later])]
    return [g]


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


_TILE = re.compile(r"^(\d+)x(\d+)(?:x(\d+))?$")


def router_tile(tile: str, experts: int) -> str:
    """The dense tile with N = the experts (a row function needs whole rows)."""
    m = _TILE.match(tile.split(";")[0])
    if not m:
        raise ValueError(f"dense: tile '{tile}' is not MxN[xK]")
    return f"{m.group(1)}x{experts}" + (f"x{m.group(3)}" if m.group(3) else "")
