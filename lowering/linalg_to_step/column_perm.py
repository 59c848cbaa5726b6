"""In-tile column permutations: RoPE's `rotate_half` as an on-chip tile map, not a gather.

transformers' `rotate_half(x)` is `cat((-x[..., d/2:], x[..., :d/2]), -1)`: two
slices of the last dim, a negation and a cat. `move.py` would lower each slice and
the cat as element gathers through memory (`1 x 1` tiles: a random load per
element). When every input of a `cat` along the last dim is a slice of that dim of
one tensor `x` (step 1, constant bounds), or the negation of one, and each slice and
negation is used only there, the cat's output column `j` is column `p(j)` of `x`
times a sign `s(j)`: a signed permutation of the columns inside one row. When that
permutation is `rotate_half` of the whole last dim `D` (`s = -1` on the first half,
`p(j) = j + D/2` there, `j - D/2` on the second), the chain is one part (role
"move") that loads `x` as row tiles holding the whole last dim (`R x D`), maps the
library function `rotate_half[D]` over them (`dialects/step/functions.py`: its shape
rule, `R*D/2` FLOPs, numpy semantics) and stores its result as `R x tn` column
tiles (`flat_map split_tiles` when `tn < D`) walking `[rows / R, D / tn]`: the walk
the dense lowering of an element-wise consumer reads with the same `tile=MxN` option,
so the SN40L layer graph (`examples/workloads/sn40l_route.py`) connects it to that
consumer on chip.
Other signed permutations stay gathers (`move.py`).

Example: `rotate_half` of a `[2, 4, 1, 8]` tensor with `dense="tile=8x4"` is one part:
a load of `[1]` tiles of `8x8`, `step.map rotate_half[8]`, a split into `[1, 2]` tiles
of `8x4`, a store; the slices and the negation are inside it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, StringAttr, f32, i64
from xdsl.ir import Block, Region

from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import Graph
from steplus.dialects.step.functions import member_name
from steplus.dialects.step.types import StreamType, TileType
from steplus.lowering.linalg_to_step import glue
from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.conv import glue_dtype
from steplus.lowering.linalg_to_step.emit import Layout, Lowered
from steplus.lowering.linalg_to_step.move import MAX_ELEMENTS
from steplus.lowering.linalg_to_step.options import layout

CAT = "aten.cat.default"
SLICE = "aten.slice.Tensor"
NEG = "aten.neg.default"
MAX_ROW_TILE = 1 << 12
"""The largest row count of a tile this lowering builds (the dense option's `M` is
clamped to it)."""


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _only_user(n, user) -> bool:
    return list(getattr(n, "users", {})) == [user]


def _signed_slice(a, cat):
    """`(x, start, stop, sign)` when `a` is `x[..., start:stop]` or its negation, used only
    by `cat` (the negation's slice only by the negation); else None."""
    sign = 1
    if getattr(a, "op", None) == "call_function" and name_of(a) == NEG and not a.kwargs:
        if not _only_user(a, cat):
            return None
        a, sign, cat = a.args[0], -1, a
    if getattr(a, "op", None) != "call_function" or name_of(a) != SLICE or a.kwargs:
        return None
    args = list(a.args) + [None] * (5 - len(a.args))
    x, dim, start, stop, step = args[:5]
    if not glue._float_tensor(x) or not _only_user(a, cat):
        return None
    r = len(glue.static(x))
    D = glue.static(x)[-1] if r else 0
    if not _int(dim) or dim % max(r, 1) != r - 1 or step not in (None, 1):
        return None
    if not all(v is None or _int(v) for v in (start, stop)):
        return None
    lo, hi, _ = slice(start, stop).indices(D)
    return x, lo, max(lo, hi), sign


def signed_permutation(n) -> tuple[object, np.ndarray, np.ndarray] | str:
    """`(x, p, s)`: `n` (a `cat` along the last dim of signed slices of one tensor `x`'s
    last dim) is `x[..., p] * s`; or why not."""
    if getattr(n, "op", None) != "call_function" or name_of(n) != CAT or n.kwargs:
        return "not a cat"
    xs = n.args[0] if n.args and isinstance(n.args[0], (list, tuple)) else []
    dim = n.args[1] if len(n.args) > 1 else 0
    parts = [_signed_slice(a, n) for a in xs]
    if not parts or any(p is None for p in parts):
        return "an input is not a slice of the last dim used only here"
    srcs = {id(p[0]) for p in parts if p is not None}
    if len(srcs) != 1:
        return "the slices are of different tensors"
    x = parts[0][0]  # type: ignore[index]
    shape = glue.static(x)
    if not shape or not _int(dim) or dim % len(shape) != len(shape) - 1:
        return "not a cat along the last dim"
    if 0 in shape:
        return "an empty tensor"
    if int(np.prod(shape)) > MAX_ELEMENTS:
        return f"more than {MAX_ELEMENTS} elements"
    p = np.concatenate([np.arange(lo, hi) for _, lo, hi, _ in parts])  # type: ignore[misc]
    s = np.concatenate([np.full(hi - lo, sg) for _, lo, hi, sg in parts])  # type: ignore[misc]
    if len(p) != shape[-1] or tuple(glue.static(n)) != tuple(shape):
        return "the cat is not as wide as the tensor"
    return x, p, s


def rotate_half_width(p: np.ndarray, s: np.ndarray) -> int | None:
    """`D` when `(p, s)` is `rotate_half` of `D = len(p)` columns (`[-x2 | x1]`), else None."""
    D = len(p)
    if D < 2 or D % 2:
        return None
    h = D // 2
    want_p = np.concatenate([np.arange(h, D), np.arange(h)])
    want_s = np.concatenate([-np.ones(h), np.ones(h)])
    return D if np.array_equal(p, want_p) and np.array_equal(s, want_s) else None


def read(n) -> tuple[object, int] | str:
    """`(x, D)` of a `rotate_half` chain ending at the cat `n`, or why not."""
    got = signed_permutation(n)
    if isinstance(got, str):
        return got
    x, p, s = got
    D = rotate_half_width(p, s)
    if D is None:
        return "a column permutation other than rotate_half"
    return x, D


def is_rotate_half(n) -> bool:
    """The cat `n` ends a `rotate_half` chain this module lowers."""
    return getattr(n, "op", None) == "call_function" and name_of(n) == CAT \
        and not isinstance(read(n), str)


def _row_tile(rows: int, tile_m: int) -> int:
    """The row count of a tile: `tile_m` (at most `MAX_ROW_TILE`) if it divides `rows`,
    all rows if fewer, else the largest divisor of `rows` below it."""
    m = max(1, min(tile_m, MAX_ROW_TILE))
    if m >= rows:
        return rows
    return next(d for d in range(m, 0, -1) if rows % d == 0)


def _split(g: Graph, s, rows: int, tn: int):
    """`flat_map split_tiles` of each `rows x D` tile into `rows x tn` tiles (one new dim)."""
    el = s.element
    assert isinstance(el, TileType)
    like = TileType(rows, tn, el.scalar)
    block = Block(arg_types=[el])
    zero = so.ApplyOp.create(result_types=[like], properties={"fn": StringAttr("zero")})
    cut = so.ApplyOp.create(operands=[block.args[0], zero.results[0]], result_types=[like],
                            properties={"fn": StringAttr("split_tiles")})
    block.add_ops([zero, cut, so.YieldOp.create(operands=[cut.results[0]])])
    dims = [*s.dims, el.cols.data // tn]
    op = so.FlatMapOp.create(operands=[s.value], result_types=[StreamType(dims, like)],
                             regions=[Region(block)], properties={"rank": IntegerAttr(1, i64)})
    return g.emit(op, ["cols"])[0].with_dims(dims)  # static: D / tn tiles per row tile


def rotate_part(n, geometry: tuple[object, int], fname: str, tile_m: int,
                tile_n: int) -> LoweredPart:
    """The part of the chain ending at `n` (see the module doc)."""
    x, D = geometry
    shape = glue.static(x)
    rows = int(np.prod(shape[:-1]))
    R = _row_tile(rows, tile_m)
    tn = tile_n if 0 < tile_n < D and D % tile_n == 0 else D
    el = glue.element(x) if getattr(x, "op", None) == "placeholder" else "f32"
    dtype = f32 if el == "f32" else glue_dtype(el)
    nb = 2 if el in ("bf16", "f16") else 4
    addr = layout({"arg0": rows * D * nb, "result0": rows * D * 4}, {})
    g = Graph(fname)
    walk = [rows // R] if tn < D else [rows // R, 1]  # the consumer's [M/R, D/tn] either way
    t = g.load((R, D), dtype, walk, base_addr=addr["arg0"], name="arg0")
    y = t.map(member_name("rotate_half", D), dtype=f32, name="rot")
    if tn < D:
        y = _split(g, y, R, tn)
    y.store(base_addr=addr["result0"])
    lowered = Lowered(g, addr, [Layout(R, tn, rows // R, D // tn)], [tuple(shape)],
                      [(0, (rows, D))])
    inside = {n}
    for a in n.args[0]:
        inside.add(a)
        if name_of(a) == NEG:
            inside.add(a.args[0])
    return LoweredPart("dense", g.module(), None, {"arg0": str(getattr(x, "name"))}, rows,
                       outputs=[n.name],
                       lowered=lowered, role="move", out_shapes=[tuple(shape)],
                       covered=inside)
