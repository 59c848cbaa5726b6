"""Symbolic tile shapes for the step metrics: where a dynamic tile dim (`?`) comes from.

A tile type only says that a dim is dynamic (`!step.tile<?x4096xbf16>`). To
count FLOPs and bytes of such tiles, `TileShapes` gives every tile value a
symbolic `(rows, cols)` and carries it along the graph:

- an operator that makes tiles (a load, an `accum`/`scan` accumulator, a
  graph argument) gives a dynamic dim a symbol named after its result,
  `<name>_rows` / `<name>_cols` (`%acc0` -> `acc0_rows`), bindable like any
  other symbol;
- operators that move elements without changing them (broadcast, repeat,
  flatten, reshape, partition, reassemble, eager_merge, parallelize, expand,
  promote) pass the shape on; `zip` pairs them up;
- inside a `map` / `flat_map` body or an `accum` / `scan` update, each
  `step.apply` computes its output shape with the library function's
  `out_shape` (a matmul of `acc0_rows x 4096` by `4096 x 64` is
  `acc0_rows x 64`), and the yielded shape is the result's.

Static dims written in a type always win over the propagated ones.

Example:

```python
shapes = TileShapes(graph)
shapes.of(op.results[0])        # [(acc0_rows, 64)]: one entry per tile of the element
shapes.nbytes(op.results[0])    # 128*acc0_rows for bf16
```
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import sympy
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import dim_symbols, to_expr
from steplus.dialects.step.functions import get_function
from steplus.dialects.step.types import (
    BufferType,
    SelectorType,
    StreamType,
    TileType,
    TupleType,
)
from steplus.dialects.step.shape_rules import equal_dims, new_symbol
from steplus.utils.gc_pause import gc_paused

Shape = tuple[sympy.Expr, sympy.Expr]

_PASS_THROUGH = (
    sr.BroadcastOp, sr.RepeatOp, sr.FlattenOp, sr.ReshapeOp, sr.PartitionOp,
    sr.ReassembleOp, sr.EagerMergeOp, sr.ParallelizeOp, sr.ExpandOp, sr.PromoteOp,
)


def _tiles(el: Attribute) -> list[TileType]:
    if isinstance(el, StreamType):
        el = el.element
    if isinstance(el, TileType):
        return [el]
    if isinstance(el, TupleType):
        return [t for e in el.elements.data for t in _tiles(e)]
    return []


class TileShapes:
    """Symbolic tile shapes of every tile-carrying value of a graph."""

    @gc_paused  # allocation-heavy on a large heap (utils.gc_pause)
    def __init__(self, graph: GraphOp, upstream_of: Sequence[Operation] | None = None):
        """The shapes of the whole graph, or with `upstream_of` only of those
        operators and the ones they read from (in graph order: the same shapes,
        but an unnamed value's symbol `t<n>` counts only the values visited, see
        `counted`: a shape without those symbols is the whole-graph analysis's)."""
        self.known: dict[SSAValue, list[Shape]] = {}
        self._counter = 0
        self.counted: set[sympy.Symbol] = set()
        """The symbols named by counting unnamed values (`t<n>_rows`)."""
        ops: Iterable[Operation] = graph.body.block.ops
        if upstream_of is not None:
            need = _upstream(graph, upstream_of)
            ops = [op for op in ops if op in need]
        for op in ops:
            self._visit(op)

    # -- queries -----------------------------------------------------------------
    def of(self, v: SSAValue) -> list[Shape]:
        """One (rows, cols) per tile of the value's element (or of the tile value)."""
        if v not in self.known:
            self.known[v] = self._from_type(v)
        return self.known[v]

    def nbytes(self, v: SSAValue) -> sympy.Expr:
        """The size in bytes of one element of the value."""
        return self.element_bytes(v.type, self.of(v))

    @staticmethod
    def element_bytes(t: Attribute, shapes: list[Shape]) -> sympy.Expr:
        el = t.element if isinstance(t, StreamType) else t
        tiles = _tiles(el)
        total = sympy.Integer(0)
        for tile, (r, c) in zip(tiles, shapes):
            total += r * c * tile.bytes_per_scalar()
        return total + _other_bytes(el)

    # -- propagation -------------------------------------------------------------
    def _name(self, v: SSAValue) -> str:
        if v.name_hint:
            return v.name_hint
        self._counter += 1
        return f"t{self._counter}"

    def _from_type(self, v: SSAValue, like: list[Shape] | None = None) -> list[Shape]:
        tiles = _tiles(v.type)
        name = None
        out = []
        for k, tile in enumerate(tiles):
            rows, cols = tile.rows.data, tile.cols.data
            if rows >= 0 and cols >= 0:  # static: the common case
                out.append((_integer(rows), _integer(cols)))
                continue
            dims = []
            for j, (d, what) in enumerate(((rows, "rows"), (cols, "cols"))):
                if d >= 0:
                    dims.append(_integer(d))
                elif like is not None and k < len(like):
                    dims.append(like[k][j])
                else:
                    name = name or self._name(v)
                    suffix = f"{k}_" if len(tiles) > 1 else ""
                    sym = new_symbol(f"{name}_{suffix}{what}", False)
                    if not v.name_hint:  # `t<n>`: named by counting
                        self.counted.add(sym)
                    dims.append(sym)
            out.append((dims[0], dims[1]))
        return out

    def _set(self, v: SSAValue, like: list[Shape] | None) -> None:
        """The value's shapes: its static dims, the rest from `like` (or fresh)."""
        self.known[v] = self._from_type(v, like)

    def _visit(self, op) -> None:
        if isinstance(op, _PASS_THROUGH):
            src = self.of(op.operands[0])
            for r in op.results:
                if isinstance(r.type, StreamType) and _tiles(r.type):
                    self._set(r, src)
        elif isinstance(op, sr.ZipOp):
            self._set(op.output, self.of(op.lhs) + self.of(op.rhs))
        elif isinstance(op, so.MapOp | so.FlatMapOp):
            yielded = self._region(op.body.block, self.of(op.input))
            self._set(op.output, yielded)
        elif isinstance(op, so.AccumOp | so.ScanOp):
            self._set(op.output, None)
            acc = self.of(op.output)
            ins = self.of(op.input)
            yielded = self._region(op.update.block, ins + acc)
            fixed = _least_fixed_point(acc, yielded)
            if fixed is not None:
                self._set(op.output, fixed)
                fixed = self.of(op.output)
                self._region(op.update.block, ins + fixed)
            self._region(op.init.block, [])
        else:
            for r in op.results:
                self.of(r)

    def _region(self, block: Block, arg_shapes: list[Shape]) -> list[Shape] | None:
        for arg, shape in zip(block.args, arg_shapes):
            self._set(arg, [shape])
        yielded = None
        for a in block.ops:
            if isinstance(a, so.ApplyOp):
                self._set(a.result, self._apply_shape(a))
            elif isinstance(a, so.YieldOp) and a.values:
                yielded = [s for v in a.values for s in self.of(v)]
        return yielded

    def _apply_shape(self, a: so.ApplyOp) -> list[Shape] | None:
        fn = get_function(a.fn.data)
        shapes = [s for x in a.args for s in self.of(x)]
        if fn is None or len(shapes) != fn.arity or fn.arity == 0:
            return None
        # the library's shape rules are written for ints: static dims go in as
        # ints (sympy's Integer comparisons in max() cost more than the rest of
        # the analysis), symbolic dims as they are, except max() of two
        # symbols (below)
        ints = [(int(r) if r.is_Integer else r, int(c) if c.is_Integer else c)
                for r, c in shapes]
        try:
            r, c = fn.out_shape(cast(list[tuple[int, int]], ints))
        except TypeError:  # max() of symbols: broadcasting two dynamic tiles
            (r1, c1), (r2, c2) = shapes[0], shapes[1]
            r, c = _max(r1, r2), _max(c1, c2)
        return [(to_expr(r), to_expr(c))]


def _upstream(graph: GraphOp, ops: Sequence[Operation]) -> set[Operation]:
    """`ops` and every operator of `graph` they read from, transitively (through
    the operands of the ops inside their regions too)."""
    block = graph.body.block
    need: set[Operation] = set()
    stack = list(ops)
    while stack:
        op = stack.pop()
        if op in need:
            continue
        need.add(op)
        for inner in op.walk():
            for v in inner.operands:
                owner = v.owner
                if isinstance(owner, Operation) and owner.parent_block() is block:
                    stack.append(owner)
    return need


@functools.lru_cache(maxsize=4096)
def _integer(n: int) -> sympy.Integer:
    """`sympy.Integer(n)`, memoized (static tile dims: a few distinct values)."""
    return sympy.Integer(n)


def _subs(d: object, values: Mapping[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
    """`d` (a tile dim) with `values` substituted. The keys are symbols and no
    value names a key (`_least_fixed_point`), so the simultaneous `xreplace`
    gives what `subs` gives, without `subs`' sympification of every key and
    value (most of the analysis's first run)."""
    return cast(sympy.Expr, to_expr(d).xreplace(cast(dict[Any, Any], values)))


def _max(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """`Max(a, b)`; two different dimension symbols (non-negative, not known
    zero) leave nothing to evaluate, so it is built without sympy's costly
    pairwise comparison (the same expression: Max orders its arguments)."""
    a, b = to_expr(a), to_expr(b)
    if (a.is_Symbol and b.is_Symbol and a != b and a.is_nonnegative and b.is_nonnegative
            and a.is_zero is not True and b.is_zero is not True):
        return sympy.Max(a, b, evaluate=False)
    return sympy.Max(a, b)


def _least_fixed_point(acc: list[Shape], yielded: list[Shape] | None) -> list[Shape] | None:
    """The accumulator shape the update keeps, if its own symbols drop out.

    Starting the accumulator's dynamic dims at 0: `Max(a, X)` gives `a`, and
    `a` is kept by the update, so the accumulator is `a` rows. A growing
    accumulator (`X + 1`, RetileRow) has no fixed point and keeps its symbol.
    """
    own = {s for shape in acc for d in shape for s in dim_symbols(d)}
    if not own or yielded is None or len(yielded) != len(acc):
        return None
    zero: dict[sympy.Symbol, sympy.Expr] = {s: sympy.Integer(0) for s in own}
    cand = [(_subs(r, zero), _subs(c, zero)) for r, c in yielded]
    if any(d == 0 or own & dim_symbols(d) for shape in cand for d in shape):
        return None
    back = {s: v for (x, y), (cr, cc) in zip(acc, cand) for s, v in ((x, cr), (y, cc))
            if isinstance(s, sympy.Symbol)}
    again = [(_subs(r, back), _subs(c, back)) for r, c in yielded]
    if any(not equal_dims(a, b) for s1, s2 in zip(again, cand) for a, b in zip(s1, s2)):
        return None
    return cand


def _other_bytes(el: Attribute) -> sympy.Expr:
    if isinstance(el, TupleType):
        return sympy.Add(*(_other_bytes(e) for e in el.elements.data))
    if isinstance(el, SelectorType):
        return sympy.Integer(-(-el.choices.data // 8))
    if isinstance(el, BufferType):
        return sympy.Integer(8)
    if isinstance(el, IntegerType):
        return sympy.Integer(max(1, el.width.data // 8))
    return sympy.Integer(0)
