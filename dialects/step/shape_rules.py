"""Shape rules of the step operators (seed appendix tables 2-6), one function per op kind.

A rule takes the operator and the stream types of its operands and returns,
for every result, the inferred `ResultShape`: the dims (sympy, outermost
first) and the element type when the table determines it (`None` keeps the
written element, e.g. the tile shape of a `linear_offchip_load`).

Where a table introduces a new dimension the rule asks `fresh(key, base,
ragged)` for a fresh symbol and lists it in `ResultShape.fresh`; a fresh
dimension agrees with any written dimension (the written one names it):

| op | fresh dims |
|---|---|
| `partition`, `parallelize` | the outer dim of result i, regular (`B_i`, seed Fig. 3) |
| `reassemble` | the concatenated dim, ragged (`?B_sel`, seed Fig. 4) |
| `flat_map` | the `rank + 1` dims each element expands to, ragged |
| `cache_read_addr_gen`, `filter_last_tile` | the per-request length, ragged |

Closed-form dims: `eager_merge` sums the inputs' outer dims, `reshape` splits
`D` into `ceiling(D/S), S`, `flatten` multiplies, `promote` adds `Min(1, D)`
(= `1 if D > 0 else 0` for a non-negative integer `D`).

A rule raises `ShapeError` when the operands contradict each other (e.g. the
two inputs of `zip` differ in a dimension).

Example:

```python
from steplus.dialects.step.shape_rules import rule_for
shapes = rule_for(op)(op, [v.type for v in op.operands], fresh)
shapes[0].dims      # [ceiling(B/16), 16]
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy
from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, Operation

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as sr
from steplus.dialects.step.dims import rename_symbols, to_expr
from steplus.dialects.step.types import (
    BufferType,
    RaggedSymbol,
    SelectorType,
    StreamType,
    TupleType,
)
from steplus.utils.attrs import int_of, ints_of

Dims = list[sympy.Expr]
Fresh = Callable[[str, str, bool], sympy.Symbol]
"""`fresh(key, base, ragged)`: a fresh symbol, stable per (operator, key)."""

PLACEHOLDER = sympy.Symbol("_", integer=True, nonnegative=True)
"""A written dimension `_` asks step-infer-shapes to fill it in."""


class ShapeError(Exception):
    """The operands of an operator contradict its shape rule."""


@dataclass
class ResultShape:
    """The inferred shape of one result."""

    dims: Dims
    element: Attribute | None = None
    fresh: set[sympy.Symbol] = field(default_factory=set[sympy.Symbol])


Rule = Callable[[Operation, Sequence[StreamType], Fresh], list[ResultShape]]


def _sym(d: int | sympy.Expr) -> sympy.Expr:
    return to_expr(d)


_SAMPLES = ((1009, 37), (2, 3))
"""(first value, step): dims are non-negative integers; the symbols of a
difference take these distinct values in turn (large ones tell `ceiling(B/16)`
from `Min(1, B)`, small ones catch the rest)."""


def equal_dims(a: sympy.Expr, b: sympy.Expr) -> bool:
    """True if two dims are the same expression for every value of the symbols.

    Cheap first: structural equality, then `expand`; a difference that is
    non-zero at some sample point is unequal (no `simplify`, which dominated
    step-dynamic-tiling); only a difference that vanishes at every sample
    and does not expand to 0 goes to `simplify`. Memoized up to the names of
    the symbols: the per-expert comparisons of a MoE graph (`ceiling(B_3/16)`
    against `ceiling(B_3/16)*1`, ...) are decided once."""
    a, b = to_expr(a), to_expr(b)
    if a == b:
        return True
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: (s.name, type(s).__name__))
    if not symbols:
        return _equal_dims(a, b)
    renaming = {s: _canonical_symbol(i, type(s), tuple(sorted(s.assumptions0.items())))
                for i, s in enumerate(symbols)}
    return _equal_dims(rename_symbols(a, renaming), rename_symbols(b, renaming))


@functools.lru_cache(maxsize=1024)
def _canonical_symbol(index: int, cls: type, assumptions: tuple) -> sympy.Symbol:
    """The `index`-th stand-in symbol, of a class and assumptions."""
    return cls(f"_dim{index}", **dict(assumptions))


@functools.lru_cache(maxsize=8192)
def _equal_dims(a: sympy.Expr, b: sympy.Expr) -> bool:
    diff = a - b
    if diff == 0 or sympy.expand(diff) == 0:
        return True
    if _nonzero_somewhere(diff):
        return False
    return sympy.simplify(diff) == 0


@functools.lru_cache(maxsize=4096)
def promoted_dim(d: sympy.Expr) -> sympy.Expr:
    """`Min(1, d)`, the outer dim `step.promote` adds (1 if d > 0 else 0).

    A plain dimension symbol (a non-negative integer, not known positive)
    leaves nothing to evaluate, so the Min is built without sympy's costly
    argument comparison; other dims are evaluated (`Min(1, B + 1)` is 1)."""
    d = to_expr(d)
    if d.is_Symbol and d.is_nonnegative and d.is_positive is not True:
        return sympy.Min(1, d, evaluate=False)
    return sympy.Min(1, d)


def _nonzero_somewhere(diff: sympy.Expr) -> bool:
    syms = sorted(diff.free_symbols, key=lambda s: s.name)
    for first, step in _SAMPLES:
        value = diff.xreplace({s: sympy.Integer(first + step * i) for i, s in enumerate(syms)})
        if value.is_Number and value != 0:
            return True
    return False


def has_placeholder(e: sympy.Expr | Attribute) -> bool:
    if isinstance(e, StreamType | BufferType):
        return any(has_placeholder(d) for d in e.dims) or has_placeholder(e.element)
    if isinstance(e, TupleType):
        return any(has_placeholder(x) for x in e.elements.data)
    if isinstance(e, Attribute):
        return False
    e = to_expr(e)
    if e.is_Atom:  # a number or a symbol: no traversal
        return e == PLACEHOLDER
    return _has_placeholder(e)


@functools.lru_cache(maxsize=8192)
def _has_placeholder(e: sympy.Expr) -> bool:
    return PLACEHOLDER in e.free_symbols


def _same(op: Operation, a: Dims, b: Dims, what_a: str, what_b: str) -> None:
    """Operand dims that must agree; a contradiction names the dimension."""
    for i, (x, y) in enumerate(zip(a, b)):
        if has_placeholder(x) or has_placeholder(y):
            continue
        if not equal_dims(x, y):
            raise ShapeError(
                f"dimension {i} of {what_a} is {sympy.sstr(x)} but dimension {i} of "
                f"{what_b} is {sympy.sstr(y)}"
            )


def _base(dims: Dims, default: str) -> str:
    """The name fresh symbols derive from: the single outer symbol, if any."""
    if len(dims) == 1 and isinstance(dims[0], sympy.Symbol) and dims[0] != PLACEHOLDER:
        return dims[0].name
    return default


# -- table 2: off-chip memory ----------------------------------------------------


def linear_offchip_load(op: so.LinearOffChipLoadOp, ins, fresh) -> list[ResultShape]:
    outer = ins[0].dims if ins else []
    return [ResultShape([*outer, *map(_sym, ints_of(op.tiled_out_shape))])]


def random_offchip_load(op, ins, fresh) -> list[ResultShape]:
    return [ResultShape(ins[0].dims)]


def random_offchip_store(op, ins, fresh) -> list[ResultShape]:
    waddr, wdata = ins
    _same(op, wdata.dims, waddr.dims, "wdata", "waddr")
    return [ResultShape(waddr.dims, i1)]


# -- table 3: on-chip memory -----------------------------------------------------


def bufferize(op: so.BufferizeOp, ins, fresh) -> list[ResultShape]:
    s, b = ins[0], int_of(op.rank)
    if not 0 < b <= s.rank:
        raise ShapeError(f"rank {b} must be in 1..{s.rank}")
    outer, inner = s.dims[: s.rank - b], s.dims[s.rank - b :]
    return [ResultShape(outer, BufferType(inner, s.element))]


def streamify(op: so.StreamifyOp, ins, fresh) -> list[ResultShape]:
    data, ref = ins
    buf = data.element
    if not isinstance(buf, BufferType):
        raise ShapeError("input elements must be buffers")
    _same(op, ref.dims[: data.rank], data.dims, "ref", "input")
    shape = [_sym(v) for v in ints_of(op.out_shape)]
    if not all(d.is_Integer for d in buf.dims):
        # A dynamically sized buffer is read linearly: the viewed tensor is the buffer.
        shape = buf.dims
    return [ResultShape([*ref.dims, *shape], buf.element)]


# -- table 4: higher-order -------------------------------------------------------


def _yielded(region) -> Attribute | None:
    last = region.block.last_op
    if isinstance(last, so.YieldOp) and len(last.values) == 1:
        return last.values[0].type
    return None


def map_(op: so.MapOp, ins, fresh) -> list[ResultShape]:
    return [ResultShape(ins[0].dims, _yielded(op.body))]


def accum(op: so.AccumOp, ins, fresh) -> list[ResultShape]:
    s, b = ins[0], int_of(op.rank)
    if not 0 <= b <= s.rank:
        raise ShapeError(f"rank {b} must be in 0..{s.rank}")
    return [ResultShape(s.dims[: s.rank - b], _yielded(op.update))]


def scan(op: so.ScanOp, ins, fresh) -> list[ResultShape]:
    return [ResultShape(ins[0].dims, _yielded(op.update))]


def flat_map(op: so.FlatMapOp, ins, fresh) -> list[ResultShape]:
    s, b = ins[0], int_of(op.rank)
    new = [fresh(f"d{k}", "F", True) for k in range(b + 1)]
    return [ResultShape([*s.dims[:-1], *new], _yielded(op.body), set(new))]


# -- table 5: routing and merging ------------------------------------------------


def partition(op: sr.PartitionOp, ins, fresh) -> list[ResultShape]:
    data, sel = ins
    if sel.rank > data.rank:
        raise ShapeError(f"sel has {sel.rank} dims, more than the input's {data.rank}")
    _same(op, sel.dims, data.dims[: sel.rank], "sel", "input")
    base = _base(sel.dims, "P")
    out = []
    for i in range(len(op.outputs)):
        b = fresh(f"out{i}", f"{base}_{i}", False)
        out.append(ResultShape([b, *data.dims[sel.rank :]], data.element, {b}))
    return out


def _check_inputs(op: Operation, ins: Sequence[StreamType]) -> None:
    for i, s in enumerate(ins[1:], start=1):
        if s.rank != ins[0].rank:
            raise ShapeError(f"input #{i} has {s.rank} dims, input #0 has {ins[0].rank}")
        _same(op, s.dims[1:], ins[0].dims[1:], f"input #{i} (inner)", "input #0 (inner)")


def reassemble(op: sr.ReassembleOp, ins, fresh) -> list[ResultShape]:
    *data, sel = ins
    _check_inputs(op, data)
    b = fresh("sel", f"{_base(sel.dims, 'R')}_sel", True)
    return [ResultShape([*sel.dims, b, *data[0].dims[1:]], data[0].element, {b})]


def eager_merge(op: sr.EagerMergeOp, ins, fresh) -> list[ResultShape]:
    _check_inputs(op, ins)
    total = sympy.Add(*(s.dims[0] for s in ins))
    return [
        ResultShape([total, *ins[0].dims[1:]], ins[0].element),
        ResultShape([total], SelectorType(len(ins))),
    ]


def parallelize(op: sr.ParallelizeOp, ins, fresh) -> list[ResultShape]:
    s = ins[0]
    base = _base(s.dims[:1], "P")
    out = []
    for i in range(len(op.outputs)):
        b = fresh(f"out{i}", f"{base}_{i}", False)
        out.append(ResultShape([b, *s.dims[1:]], s.element, {b}))
    return out


def broadcast(op: sr.BroadcastOp, ins, fresh) -> list[ResultShape]:
    return [ResultShape(ins[0].dims, ins[0].element) for _ in op.outputs]


# -- table 6: shape --------------------------------------------------------------


def flatten(op: sr.FlattenOp, ins, fresh) -> list[ResultShape]:
    s = ins[0]
    lo, hi, n = int_of(op.min), int_of(op.max), s.rank
    if not 0 <= lo <= hi < n:
        raise ShapeError(f"need 0 <= min <= max < {n}, got min={lo} max={hi}")
    d = s.dims
    merged = sympy.Mul(*d[n - 1 - hi : n - lo])
    return [ResultShape([*d[: n - 1 - hi], merged, *d[n - lo :]], s.element)]


def reshape(op: sr.ReshapeOp, ins, fresh) -> list[ResultShape]:
    s = ins[0]
    b, size, n = int_of(op.split_dim), int_of(op.chunk_size), s.rank
    if not 0 <= b < n or size < 1:
        raise ShapeError(f"split_dim {b} must be in 0..{n - 1} and chunk_size positive")
    d = s.dims[n - 1 - b]
    dims = [*s.dims[: n - 1 - b], _chunks(d, size), _sym(size), *s.dims[n - b :]]
    return [ResultShape(dims, s.element), ResultShape(list(dims), i1)]


def _chunks(d: sympy.Expr, size: int) -> sympy.Expr:
    """`ceiling(d/size)`. For a symbol, sympy's evaluation (costly: it asks the
    assumptions whether `d/size` is an integer) depends only on the symbol's
    class and assumptions, so it runs once per kind of symbol and size and the
    result is renamed back."""
    d = to_expr(d)
    if not d.is_Symbol:
        return sympy.ceiling(d / size)
    stand_in = _canonical_symbol(0, type(d), tuple(sorted(d.assumptions0.items())))
    return rename_symbols(_ceiling_of(stand_in, size), {stand_in: d})


@functools.lru_cache(maxsize=256)
def _ceiling_of(symbol: sympy.Symbol, size: int) -> sympy.Expr:
    return sympy.ceiling(symbol / size)


def promote(op: sr.PromoteOp, ins, fresh) -> list[ResultShape]:
    s = ins[0]
    outer = s.dims[0] if s.rank else _sym(1)
    return [ResultShape([promoted_dim(outer), *s.dims], s.element)]


def expand(op: sr.ExpandOp, ins, fresh) -> list[ResultShape]:
    data, ref = ins
    b = int_of(op.rank)
    if data.rank != ref.rank:
        raise ShapeError(f"input has {data.rank} dims, ref has {ref.rank}")
    for i in range(data.rank - b, data.rank):
        d = data.dims[i]
        if not has_placeholder(d) and not equal_dims(d, 1):
            raise ShapeError(f"dimension {i} of input must be 1 to expand, got {sympy.sstr(d)}")
    _same(op, data.dims[: data.rank - b], ref.dims[: ref.rank - b], "input", "ref")
    return [ResultShape(ref.dims, data.element)]


def _is_ragged(d: sympy.Expr) -> bool:
    return any(isinstance(x, RaggedSymbol) for x in to_expr(d).free_symbols)


def zip_(op: sr.ZipOp, ins, fresh) -> list[ResultShape]:
    """Same dims on both sides; a ragged dim (data-dependent, e.g. the rows a
    flat_map produced) cannot be compared statically and takes the other
    side's dim (the MoE's routing weights zipped with the expert's rows)."""
    a, b = ins
    if a.rank != b.rank:
        raise ShapeError(f"lhs has {a.rank} dims, rhs has {b.rank}")
    regular = [(x, y) for x, y in zip(a.dims, b.dims) if not (_is_ragged(x) or _is_ragged(y))]
    _same(op, [y for _, y in regular], [x for x, _ in regular], "rhs", "lhs")
    dims = [y if _is_ragged(x) and not _is_ragged(y) else x for x, y in zip(a.dims, b.dims)]
    return [ResultShape(dims, TupleType([a.element, b.element]))]


def repeat(op: sr.RepeatOp, ins, fresh) -> list[ResultShape]:
    return [ResultShape([*ins[0].dims, _sym(int_of(op.count))], ins[0].element)]


# -- generators --------------------------------------------------------------------


def select_gen(op: sg.SelectGenOp, ins, fresh) -> list[ResultShape]:
    written = op.output.type
    assert isinstance(written, StreamType)
    if op.values is None or written.rank != 1:
        return [ResultShape(written.dims)]  # a source: its written dims are the input
    rows = len(ints_of(op.values)) // int_of(op.choices)
    return [ResultShape([_sym(rows)], SelectorType(int_of(op.choices)))]


def metadata_gen(op: sg.MetadataGenOp, ins, fresh) -> list[ResultShape]:
    return [ResultShape([_sym(len(ints_of(op.values)))])]


def expert_addr_gen(op: sg.ExpertAddrGenOp, ins, fresh) -> list[ResultShape]:
    return [ResultShape([*ins[0].dims, _sym(int_of(op.tiles_per_expert))])]


def cache_read_addr_gen(op: sg.CacheReadAddrGenOp, ins, fresh) -> list[ResultShape]:
    idx, n = ins
    _same(op, n.dims, idx.dims, "seq_len", "idx")
    length = fresh("len", "L", True)
    return [ResultShape([*idx.dims, length], fresh=({length}))]


def filter_last_tile(op: sg.FilterLastTileOp, ins, fresh) -> list[ResultShape]:
    length = fresh("len", "L", True)
    return [ResultShape([*ins[0].dims, length], SelectorType(2), {length})]


RULES: dict[type[Operation], Rule] = {
    so.LinearOffChipLoadOp: linear_offchip_load,
    so.RandomOffChipLoadOp: random_offchip_load,
    so.RandomOffChipStoreOp: random_offchip_store,
    so.BufferizeOp: bufferize,
    so.StreamifyOp: streamify,
    so.MapOp: map_,
    so.AccumOp: accum,
    so.ScanOp: scan,
    so.FlatMapOp: flat_map,
    sr.PartitionOp: partition,
    sr.ReassembleOp: reassemble,
    sr.EagerMergeOp: eager_merge,
    sr.ParallelizeOp: parallelize,
    sr.BroadcastOp: broadcast,
    sr.FlattenOp: flatten,
    sr.ReshapeOp: reshape,
    sr.PromoteOp: promote,
    sr.ExpandOp: expand,
    sr.ZipOp: zip_,
    sr.RepeatOp: repeat,
    sg.SelectGenOp: select_gen,
    sg.MetadataGenOp: metadata_gen,
    sg.ExpertAddrGenOp: expert_addr_gen,
    sg.CacheReadAddrGenOp: cache_read_addr_gen,
    sg.FilterLastTileOp: filter_last_tile,
}
"""Op class -> shape rule. Ops without results (stores, consume) have none."""


def rule_for(op: Operation) -> Rule | None:
    return RULES.get(type(op))


def new_symbol(name: str, ragged: bool) -> sympy.Symbol:
    """A dimension symbol with the assumptions `parse_dim_text` gives it."""
    cls = RaggedSymbol if ragged else sympy.Symbol
    return cls(name, integer=True, nonnegative=True)
