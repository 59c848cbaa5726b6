"""The function library of the step higher-order ops (map, accum, scan, flat_map).

Inside the region of a higher-order op, `step.apply "name"(%a, %b)` calls a
library function on tiles. Each function declares

- `flops(in_shapes)`: its FLOP count for input tiles of the given shapes
  (reference spec §3.1), or a fixed cycle cost for the helpers;
- `numpy(*arrays)`: its semantics on numpy arrays;
- `out_shape(in_shapes)`: the shape of the output tile;
- `onchip_bytes(in_shapes, nbytes)`: the on-chip memory it needs beyond its
  operands (0 for element-wise functions).

A frontend adds a function with `register_function(StepFunction(...))`.

Example:

```python
from steplus.dialects.step.functions import get_function
mm = get_function("matmul")
mm.flops([(64, 256), (256, 128)])   # 2*64*256*128
mm.numpy(a, b)                       # a @ b
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

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
    return (max(r1, r2), max(c1, c2))


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
    return _LIBRARY.get(name)


def all_functions() -> dict[str, StepFunction]:
    return dict(_LIBRARY)


for _fn in [
    StepFunction("matmul", 2, lambda s: 2 * s[0][0] * s[0][1] * s[1][1],
                 lambda a, b: a @ b, lambda s: (s[0][0], s[1][1]),
                 summary="[m,k] x [k,n] -> [m,n]"),
    StepFunction("matmul_t", 2, lambda s: 2 * s[0][0] * s[0][1] * s[1][0],
                 lambda a, b: a @ b.T, lambda s: (s[0][0], s[1][0]),
                 summary="[m,k] x [n,k]^T -> [m,n] (weight transposed)"),
    StepFunction("add", 2, lambda s: _elems(_bcast(s)), np.add, _bcast,
                 summary="element-wise add with row/column broadcast"),
    StepFunction("mul", 2, lambda s: _elems(_bcast(s)), np.multiply, _bcast,
                 summary="element-wise multiply with broadcast"),
    StepFunction("div", 2, lambda s: _elems(_bcast(s)), np.divide, _bcast,
                 summary="element-wise divide with broadcast"),
    StepFunction("exp", 1, lambda s: 4 * _elems(s[0]), np.exp, lambda s: s[0],
                 summary="element-wise exponential (4 FLOPs per element)"),
    StepFunction("silu", 1, lambda s: 8 * _elems(s[0]),
                 lambda a: a / (1.0 + np.exp(-a)), lambda s: s[0],
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
