"""The function library of the step higher-order ops (map, accum, scan, flat_map).

Inside the region of a higher-order op, `step.apply "name"(%a, %b)` calls a
library function on tiles. Each function declares

- `flops(in_shapes)`: its FLOP count for input tiles of the given shapes
  (reference spec §3.1), or a fixed cycle cost for the helpers;
- `numpy(*arrays)`: its semantics on numpy arrays (the element-wise arithmetic is the op-semantics
  registry's, `dialects/semantics/domain.py`'s `UNARY` / `BINARY` tables: one meaning of `exp`
  or `div` for step functions, tensor ops and `arith` ops alike);
- `out_shape(in_shapes)`: the shape of the output tile;
- `onchip_bytes(in_shapes, nbytes)`: the on-chip memory it needs beyond its
  operands (0 for element-wise functions).

A frontend adds a function with `register_function(StepFunction(...))`.

Parametric functions are families named `family[param]`: `mul_scalar[0.125]`
multiplies by 0.125, `row_topk_index[8]` gives the indices of a row's 8
largest values (`register_family`; the parameter is read with `float()` or
`int()`, never evaluated). `convert-linalg-to-step` uses them for the scalar
constants and the MoE router of torch programs.

Example:

```python
from steplus.dialects.step.functions import get_function
mm = get_function("matmul")
mm.flops([(64, 256), (256, 128)])   # 2*64*256*128
mm.numpy(a, b)                       # a @ b
```
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from steplus.dialects.semantics.domain import BINARY, COMPARE, UNARY

Shape = tuple[int, int]


@dataclass(frozen=True)
class StepFunction:
    """A tile function usable in `step.apply`."""

    name: str
    arity: int
    flops: Callable[[Sequence[Shape]], int]
    numpy: Callable[..., np.ndarray]
    out_shape: Callable[[Sequence[Shape]], Shape]
    onchip_bytes: Callable[[Sequence[Shape], int], int] = lambda shapes, nb: 0
    fixed_cycles: int | None = None
    summary: str = ""


def _bcast(shapes: Sequence[Shape]) -> Shape:
    (r1, c1), (r2, c2) = shapes
    return (_larger(r1, r2), _larger(c1, c2))


def _larger(a: int, b: int) -> int:
    """`max(a, b)`; equal dims (the same symbol on both sides, for a symbolic
    shape) are answered without a comparison, which on sympy symbols goes
    through the assumptions system (most of the tile-shape analysis's time)."""
    return a if a == b else max(a, b)


def _elems(s: Shape) -> int:
    return s[0] * s[1]


def _join_first(acc: np.ndarray, t: np.ndarray) -> np.ndarray:
    """`join_tiles` on one tile: the tile written at the accumulator's top left.

    The position of the k-th physical tile is its index in the group, which
    the fabric's join context counts (`JoinTilesCtx`); as a function on two
    arrays this is the first placement, as `retile_streamify` gives the first row."""
    out = np.array(acc, dtype=np.result_type(acc, t), copy=True)
    out[: t.shape[0], : t.shape[1]] = t
    return out


KV_TILES_PER_REQUEST = 1_000_000
"""KV-cache address stride of one request, in tiles (as the fabric's CacheReadAddrGen)."""

_LIBRARY: dict[str, StepFunction] = {}


def register_function(fn: StepFunction) -> None:
    """Add (or replace) a library function."""
    _LIBRARY[fn.name] = fn


def get_function(name: str) -> StepFunction | None:
    """The function called `name`: a registered one, or a member of a family
    (`mul_scalar[0.5]`); None if there is none."""
    f = _LIBRARY.get(name)
    return f if f is not None else _member(name)


def all_functions() -> dict[str, StepFunction]:
    return dict(_LIBRARY)


for _fn in [
    StepFunction("matmul", 2, lambda s: 2 * s[0][0] * s[0][1] * s[1][1],
                 lambda a, b: a @ b, lambda s: (s[0][0], s[1][1]),
                 summary="[m,k] x [k,n] -> [m,n]"),
    StepFunction("matmul_t", 2, lambda s: 2 * s[0][0] * s[0][1] * s[1][0],
                 lambda a, b: a @ b.T, lambda s: (s[0][0], s[1][0]),
                 summary="[m,k] x [n,k]^T -> [m,n] (weight transposed)"),
    StepFunction("add", 2, lambda s: _elems(_bcast(s)), BINARY["add"], _bcast,
                 summary="element-wise add with row/column broadcast"),
    StepFunction("mul", 2, lambda s: _elems(_bcast(s)), BINARY["mul"], _bcast,
                 summary="element-wise multiply with broadcast"),
    StepFunction("div", 2, lambda s: _elems(_bcast(s)), BINARY["div"], _bcast,
                 summary="element-wise divide with broadcast"),
    StepFunction("exp", 1, lambda s: 4 * _elems(s[0]), UNARY["exp"], lambda s: s[0],
                 summary="element-wise exponential (4 FLOPs per element)"),
    StepFunction("silu", 1, lambda s: 8 * _elems(s[0]),
                 lambda a: BINARY["div"](a, 1.0 + UNARY["exp"](UNARY["neg"](a))), lambda s: s[0],
                 summary="x * sigmoid(x) (8 FLOPs per element)"),
    StepFunction("row_sum", 1, lambda s: _elems(s[0]),
                 lambda a: a.sum(axis=1, keepdims=True), lambda s: (s[0][0], 1),
                 summary="row-wise sum -> [rows, 1]"),
    StepFunction("row_max", 1, lambda s: _elems(s[0]),
                 lambda a: a.max(axis=1, keepdims=True), lambda s: (s[0][0], 1),
                 summary="row-wise max -> [rows, 1]"),
    StepFunction("retile_row", 2, lambda s: 0,
                 lambda acc, a: np.concatenate([acc, a], axis=0),
                 lambda s: (s[0][0], s[1][1]),
                 summary="stack row tiles into the accumulator (its rows: the capacity)"),
    StepFunction("retile_streamify", 1, lambda s: 0, lambda a: a[:1], lambda s: (1, s[0][1]),
                 summary="split a tile into 1-row tiles (flat_map function)"),
    StepFunction("zero", 0, lambda s: 0, lambda: np.zeros((1, 1)), lambda s: (1, 1),
                 summary="zero tile (init function)"),
    StepFunction("set_offset", 2, lambda s: 0, lambda a, b: a[:int(np.ravel(b)[0])],
                 lambda s: s[0], fixed_cycles=1,
                 summary="keep the first `offset` rows of a KV tile (its fill level; "
                         "the tile type keeps its capacity), fixed 1 cycle"),
    StepFunction("row_append", 2, lambda s: 0,
                 lambda a, b: np.concatenate([a, b], axis=0),
                 lambda s: s[0], fixed_cycles=1,
                 summary="append a row after the valid rows of a KV tile (set_offset's "
                         "fill level; the tile type is the capacity), fixed 1 cycle"),
    StepFunction("cache_write_addr", 2, lambda s: 0,
                 lambda idx, n: idx * KV_TILES_PER_REQUEST + n - 1, lambda s: (1, 1),
                 fixed_cycles=1,
                 summary="(request index, length in tiles) -> address of the request's "
                         "last KV tile (the write-back), fixed 1 cycle"),
    StepFunction("signal_all_read", 2, lambda s: 0, lambda acc, a: acc + 1, lambda s: s[0],
                 fixed_cycles=1,
                 summary="accum function: a 1x1 signal counting the tiles read "
                         "(emitted when a request's tiles are all read), fixed 1 cycle"),
    # Hierarchical tiling (step-hierarchical-tiling, seed appendix A.2).
    StepFunction("split_tiles", 2, lambda s: 0,
                 lambda a, like: a[:like.shape[0], :like.shape[1]],
                 lambda s: s[1],
                 summary="flat_map function: split a tile into the tiles shaped like the "
                         "2nd operand (a `zero` tile), row-major; rank 2: [rows/r, cols/c], "
                         "rank 1: one dim of rows/r x cols/c; 0 FLOPs"),
    StepFunction("join_tiles", 2, lambda s: 0, _join_first,
                 lambda s: s[0],
                 summary="accum function (rank 1 or 2): place the incoming physical tiles "
                         "row-major into the logical accumulator (split_tiles' inverse); "
                         "0 FLOPs"),
    StepFunction("matmul_acc", 3, lambda s: 2 * s[1][0] * s[1][1] * s[2][1],
                 lambda acc, a, b: acc + a @ b, lambda s: (s[1][0], s[2][1]),
                 summary="acc + [m,k] x [k,n]: a matmul accumulating into its output "
                         "tile (2mkn FLOPs: the multiply-adds)"),
    StepFunction("matmul_t_acc", 3, lambda s: 2 * s[1][0] * s[1][1] * s[2][0],
                 lambda acc, a, b: acc + a @ b.T, lambda s: (s[1][0], s[2][0]),
                 summary="acc + [m,k] x [n,k]^T: matmul_t accumulating into its output "
                         "tile (2mkn FLOPs)"),
]:
    register_function(_fn)


# -- element-wise functions, reductions and routing of lowered tensor programs -------------
# (convert-linalg-to-step: torch's RMSNorm, softmax, residual adds and MoE routers)


register_function(StepFunction(
    "transpose", 1, lambda s: 0, lambda a: np.asarray(a).T, lambda s: (s[0][1], s[0][0]),
    summary="[rows, cols] -> [cols, rows]: a tile transposed on chip (a channels-last "
            "permute of an image plane); no FLOPs"))


def _block_transpose(e: int) -> StepFunction:
    """`block_transpose[e]`: an `[A, C*e]` tile read as `[A, C, e]` -> `[C, A*e]` (the
    `[A, C]` matrix of e-element blocks transposed: a head split `[S, H, D] -> [H, S, D]`)."""
    def shape(s: Sequence[Shape]) -> Shape:
        r, c = s[0]
        if c % e:
            raise ValueError(f"block_transpose[{e}]: {c} columns are no whole blocks of {e}")
        return (c // e, r * e)

    def f(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        A, C = a.shape[0], a.shape[1] // e
        return a.reshape(A, C, e).transpose(1, 0, 2).reshape(C, A * e)

    return StepFunction("block_transpose", 1, lambda s: 0, f, shape)


def _rsqrt(a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):  # 1/sqrt(0) = inf, as torch
        return UNARY["rsqrt"](a)


def _one(s: Sequence[Shape]) -> Shape:
    return s[0]


_SQRT1_2 = 0.7071067811865476


_erf = UNARY["erf"]  # math.erf per element, in float64 (numpy has no erf; exact to double)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):  # exp(-x) = inf for x << 0: sigmoid 0
        return UNARY["sigmoid"](np.asarray(a, dtype=np.float64))  # tiles: in float64


for _fn in [
    StepFunction("sub", 2, lambda s: _elems(_bcast(s)), BINARY["sub"], _bcast,
                 summary="element-wise subtract with broadcast"),
    StepFunction("max", 2, lambda s: _elems(_bcast(s)), BINARY["max"], _bcast,
                 summary="element-wise maximum with broadcast (the combine of a row-max accum)"),
    StepFunction("neg", 1, lambda s: _elems(s[0]), UNARY["neg"], _one,
                 summary="element-wise negation, 1 FLOP per element"),
    StepFunction("square", 1, lambda s: _elems(s[0]), np.square, _one,
                 summary="x * x (torch's x.pow(2)), 1 FLOP per element"),
    StepFunction("rsqrt", 1, lambda s: 4 * _elems(s[0]), _rsqrt, _one,
                 summary="1 / sqrt(x), 4 FLOPs per element (as exp)"),
    StepFunction("neg_inf", 0, lambda s: 0, lambda: np.full((1, 1), -np.inf), lambda s: (1, 1),
                 summary="init function: a -inf tile (the identity of max)"),
    # activations of real models (torch's GELU, tanh, sigmoid, ReLU6 = min(max(x, 0), 6))
    StepFunction("min", 2, lambda s: _elems(_bcast(s)), BINARY["min"], _bcast,
                 summary="element-wise minimum with broadcast"),
    StepFunction("erf", 1, lambda s: 8 * _elems(s[0]), _erf, _one,
                 summary="element-wise error function, 8 FLOPs per element (a polynomial)"),
    StepFunction("tanh", 1, lambda s: 4 * _elems(s[0]), UNARY["tanh"], _one,
                 summary="element-wise tanh, 4 FLOPs per element (as exp)"),
    StepFunction("sigmoid", 1, lambda s: 6 * _elems(s[0]), _sigmoid, _one,
                 summary="1 / (1 + exp(-x)), 6 FLOPs per element"),
    StepFunction("gelu", 1, lambda s: 12 * _elems(s[0]),
                 lambda a: 0.5 * a * (1.0 + _erf(a * _SQRT1_2)), _one,
                 summary="torch's exact GELU x * (1 + erf(x / sqrt(2))) / 2, 12 FLOPs per "
                         "element"),
]:
    register_function(_fn)


# -- parametric families -----------------------------------------------------------------
MAX_INT_PARAM = 1 << 20
_MEMBER = re.compile(r"^([a-z_][a-z0-9_]*)\[([-+0-9.eE]{1,32}|-?inf)\]$")


@dataclass(frozen=True)
class FunctionFamily:
    """Library functions with one parameter, named `name[param]`.

    `kind` is `float` (finite values; also `inf`/`-inf` when `infinite`: a fill that is
    copied, never computed with) or `int` (1..2^20); `make(value)` builds
    the member (its name is replaced by the member's). Example:
    `get_function("add_scalar[1e-06]").numpy(np.zeros((2, 2)))` is a tile of 1e-6."""

    name: str
    kind: type
    make: Callable[..., StepFunction]
    """Builds the member from its parameter (an int or a float, as `kind` says)."""
    summary: str = ""
    infinite: bool = False
    """`[inf]`/`[-inf]` members exist (`where_then[-inf]`: torch's `float('-inf')` fill)."""


_FAMILIES: dict[str, FunctionFamily] = {}


def register_family(family: FunctionFamily) -> None:
    """Add (or replace) a parametric family."""
    _FAMILIES[family.name] = family
    _member.cache_clear()


def all_families() -> dict[str, FunctionFamily]:
    return dict(_FAMILIES)


def member_name(family: str, value: float | int) -> str:
    """The name of a family member: `member_name("mul_scalar", 0.5)` -> `"mul_scalar[0.5]"`
    (floats as Python's shortest round-trip repr)."""
    return f"{family}[{value!r}]"


@lru_cache(maxsize=1024)
def _member(name: str) -> StepFunction | None:
    m = _MEMBER.match(name)
    fam = _FAMILIES.get(m.group(1)) if m else None
    if fam is None or m is None:
        return None
    try:
        value = fam.kind(m.group(2))  # float() / int(): never an evaluation
    except ValueError:
        return None
    if fam.kind is float and not math.isfinite(value) and not (
            fam.infinite and math.isinf(value)):
        return None
    if fam.kind is int and not 1 <= value <= MAX_INT_PARAM:
        return None
    return replace(fam.make(value), name=name)


def _scalar(name: str, op: Callable, text: str) -> FunctionFamily:
    def make(c: float) -> StepFunction:
        return StepFunction(name, 1, lambda s: _elems(s[0]), lambda a: op(a, c), _one,
                            summary=text.replace("c", repr(c)))
    return FunctionFamily(name, float, make, f"{text}, 1 FLOP per element")


def _topk(a: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k largest values of each row, largest first (torch.topk's order; ties: the
    lower index first), and their column indices."""
    if k > a.shape[1]:
        raise ValueError(f"top-{k} of a row of {a.shape[1]} values")
    idx = np.argsort(-a, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(a, idx, axis=1), idx


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _row_topk_softmax(k: int) -> StepFunction:
    return StepFunction("row_topk_softmax", 1, lambda s: s[0][0] * (k * s[0][1] + 7 * k),
                        lambda a: _softmax(_topk(a, k)[0]), lambda s: (s[0][0], k))


def _row_softmax_topk(k: int) -> StepFunction:
    def f(a: np.ndarray) -> np.ndarray:
        w = _topk(_softmax(a), k)[0]
        return w / w.sum(axis=1, keepdims=True)
    return StepFunction("row_softmax_topk", 1, lambda s: s[0][0] * ((7 + k) * s[0][1] + 2 * k),
                        f, lambda s: (s[0][0], k))


def _row_softmax_topk_raw(k: int) -> StepFunction:
    return StepFunction("row_softmax_topk_raw", 1, lambda s: s[0][0] * (7 + k) * s[0][1],
                        lambda a: _topk(_softmax(a), k)[0], lambda s: (s[0][0], k))


def _depthwise_same(k: int) -> StepFunction:
    """`depthwise_same[k]`: one channel's image tile `[H, W]` convolved (cross-correlated,
    as torch) with its `[1, k*k]` kernel, zero-padded by `(k - 1) / 2` on each side: the
    `[H, W]` output of `nn.Conv2d(C, C, k, padding=k // 2, groups=C)` (k odd)."""
    p = (k - 1) // 2

    def f(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        H, W = x.shape
        xp = np.pad(x, p)
        kern = np.asarray(w).reshape(k, k)
        out = np.zeros((H, W), dtype=np.result_type(x, kern))
        for a in range(k):
            for b in range(k):
                out = out + xp[a:a + H, b:b + W] * kern[a, b]
        return out

    def shape(s: Sequence[Shape]) -> Shape:
        if k % 2 == 0 or tuple(s[1]) != (1, k * k):
            raise ValueError(f"depthwise_same[{k}]: an odd kernel, its [1, {k * k}] weights")
        return s[0]

    return StepFunction("depthwise_same", 2, lambda s: 2 * k * k * s[0][0] * s[0][1], f, shape,
                        onchip_bytes=lambda s, nb: (s[0][0] + 2 * p) * (s[0][1] + 2 * p) * nb)


def _split_rows(w: int) -> StepFunction:
    """`split_rows[w]`: each row of the tile cut into `w`-wide pieces, stacked in row-major
    order (`[r, c] -> [r c / w, w]`, numpy's `reshape(-1, w)`): the same row-major tensor
    in narrower rows, as a decode step's `[batch, heads x head_dim]` projection output
    is read as rows of (batch, head); no FLOPs."""

    def shape(s: Sequence[Shape]) -> Shape:
        r, c = s[0]
        if r == -1 or c == -1:  # a dynamic tile: the rule cannot check it
            return (-1, w)
        return (r * c // w, w) if c % w == 0 else (r, 0)  # 0: no such tile

    return StepFunction("split_rows", 1, lambda s: 0,
                        lambda a: np.asarray(a).reshape(-1, w), shape)


def _rotate_half(w: int) -> StepFunction:
    """`rotate_half[w]`: each group of `w` columns `[x1 | x2]` (halves of `w / 2`) of the
    tile becomes `[-x2 | x1]` (transformers' `rotate_half`, RoPE's `cat((-x2, x1), -1)`):
    a permutation of the tile's columns and a sign change of half of them."""

    def shape(s: Sequence[Shape]) -> Shape:
        r, c = s[0]
        if c == -1:  # a dynamic width: the rule cannot check it
            return (r, c)
        return (r, c) if w % 2 == 0 and c % w == 0 else (r, 0)  # 0: no such tile

    def f(a: np.ndarray) -> np.ndarray:
        g = np.asarray(a).reshape(a.shape[0], a.shape[1] // w, w)
        h = w // 2
        return np.concatenate([UNARY["neg"](g[..., h:]), g[..., :h]], axis=-1).reshape(a.shape)

    return StepFunction("rotate_half", 1, lambda s: s[0][0] * s[0][1] // 2, f, shape)


def _row_topk_index(k: int) -> StepFunction:
    return StepFunction("row_topk_index", 1, lambda s: s[0][0] * k * s[0][1],
                        lambda a: _topk(a, k)[1].astype(np.float64), lambda s: (s[0][0], k))


# -- compares: a 0/1 mask in the tile's dtype (torch's `x == 0`, `x > t` then `.float()`) --
COMPARES = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
"""Library name -> relation (`dialects/semantics/domain.COMPARE`'s keys)."""


def _mask(rel: str) -> Callable[..., np.ndarray]:
    """`a REL b` as 1 where it holds and 0 elsewhere, in `a`'s dtype (a tile's: f32)."""
    def f(a: np.ndarray, b) -> np.ndarray:
        a = np.asarray(a)
        return np.asarray(COMPARE[rel](a, b)).astype(a.dtype)
    return f


for _name, _rel in COMPARES.items():
    register_function(StepFunction(
        _name, 2, lambda s: _elems(_bcast(s)), _mask(_rel), _bcast,
        summary=f"1 where x {_rel} y else 0 (a 0/1 mask in the tile dtype), with row/column "
                "broadcast; 1 FLOP per element"))

def _where(m: np.ndarray, a, b) -> np.ndarray:
    """torch.where on a mask tile: `a` where `m` is not 0, else `b` (broadcast)."""
    return np.where(np.asarray(m) != 0, a, b)


def _where_scalar(name: str, then: bool) -> FunctionFamily:
    def make(c: float) -> StepFunction:
        def f(m: np.ndarray, x: np.ndarray) -> np.ndarray:
            x = np.asarray(x)  # the tile's dtype kept (numpy would widen bf16 with c)
            return (_where(m, c, x) if then else _where(m, x, c)).astype(x.dtype, copy=False)
        text = f"{c!r} where m != 0 else x" if then else f"x where m != 0 else {c!r}"
        return StepFunction(name, 2, lambda s: _elems(_bcast(s)), f, _bcast, summary=text)
    text = ("(m, x) -> c where m != 0 else x (x.masked_fill(m, c); torch.where(m, a, b) is "
            "where_else[0.0](m, a) + where_then[0.0](m, b))" if then else
            "(m, x) -> x where m != 0 else c (torch.where(m, x, c))")
    return FunctionFamily(name, float, make, f"{text}, with row/column broadcast; c may be "
                                             "inf or -inf (copied, exact in every float dtype); "
                                             "1 FLOP per element", infinite=True)


for _fam in [
    _where_scalar("where_then", True),
    _where_scalar("where_else", False),
    *(_scalar(f"{name}_scalar", _mask(rel), f"1 where x {rel} c else 0")
      for name, rel in COMPARES.items()),
    _scalar("add_scalar", BINARY["add"], "x + c"),
    _scalar("sub_scalar", BINARY["sub"], "x - c"),
    _scalar("mul_scalar", BINARY["mul"], "x * c"),
    _scalar("div_scalar", BINARY["div"], "x / c"),
    _scalar("rsub_scalar", lambda a, c: BINARY["sub"](c, a), "c - x"),
    _scalar("rdiv_scalar", lambda a, c: BINARY["div"](c, a), "c / x"),
    _scalar("max_scalar", BINARY["max"], "max(x, c)"),
    _scalar("min_scalar", BINARY["min"], "min(x, c)"),
    FunctionFamily("row_topk_softmax", int, _row_topk_softmax,
                   "[rows, cols] -> [rows, k]: softmax over each row's k largest values, "
                   "largest first (Mixtral's router: topk then softmax); k*cols + 7k FLOPs "
                   "per row"),
    FunctionFamily("row_softmax_topk", int, _row_softmax_topk,
                   "[rows, cols] -> [rows, k]: the k largest of each row's softmax, "
                   "renormalized to sum 1 (Qwen3's router); (7+k)*cols + 2k FLOPs per row"),
    FunctionFamily("row_softmax_topk_raw", int, _row_softmax_topk_raw,
                   "[rows, cols] -> [rows, k]: the k largest of each row's softmax, largest "
                   "first, not renormalized (Qwen2-MoE's norm_topk_prob=False); (7+k)*cols FLOPs "
                   "per row"),
    FunctionFamily("block_transpose", int, _block_transpose,
                   "[A, C*k] -> [C, A*k]: the [A, C] matrix of k-element blocks transposed on "
                   "chip (a head split [S, H, D] -> [H, S, D] with k = D); no FLOPs"),
    FunctionFamily("depthwise_same", int, _depthwise_same,
                   "(x [H, W], w [1, k*k]) -> [H, W]: one channel's image convolved with its "
                   "k x k kernel, zero padding (k - 1) / 2 (a depthwise nn.Conv2d, padding "
                   "k // 2, k odd); 2*k*k*H*W FLOPs, the padded image on chip"),
    FunctionFamily("rotate_half", int, _rotate_half,
                   "[rows, cols] -> [rows, cols]: each group of k columns [x1 | x2] becomes "
                   "[-x2 | x1] (RoPE's rotate_half; cols a multiple of k, k even, else no "
                   "tile); a column permutation, 1 FLOP per negated element (R*C/2)"),
    FunctionFamily("split_rows", int, _split_rows,
                   "[rows, cols] -> [rows*cols/k, k]: each row cut into k-wide pieces, "
                   "stacked row-major (numpy's reshape(-1, k); cols a multiple of k, else no "
                   "tile); no FLOPs"),
    FunctionFamily("row_topk_index", int, _row_topk_index,
                   "[rows, cols] -> [rows, k]: the column indices of each row's k largest "
                   "values, largest first (torch.topk's indices); k*cols FLOPs per row"),
]:
    register_family(_fam)
