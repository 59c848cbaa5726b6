"""`step-dynamic-tiling`: static tiling of a dynamically sized dimension -> dynamic tiles.

The STeP paper's first optimization (seed §5.2, reference spec §8.2): a
stream whose length is only known at run time (the tokens routed to one MoE
expert, `[B_e]`) is cut by `step.reshape` into chunks of a static `tile_N`,
zero-padded, and each chunk is stacked by a `retile_row` accumulator into one
`tile_N x D` tile:

```text
%rs, %pad = step.reshape %p {split_dim = 0 : i64, chunk_size = 16 : i64} : ...
step.consume %pad : ...
%acc = step.accum %rs {rank = 1 : i64} : !step.stream<["ceiling(B_0/16)", 16], !step.tile<1x4096xbf16>> -> !step.stream<["ceiling(B_0/16)"], !step.tile<16x4096xf32>> update { retile_row } init { zero }
```

The pass replaces the chunking by `step.promote` (one group per expert, none
when it received nothing) and the accumulator by one of a dynamic number of
rows, so each expert gets exactly one `?x4096` tile holding its tokens:

```text
%pr = step.promote %p : (!step.stream<[B_0], ...>) -> !step.stream<["Min(1, B_0)", B_0], ...>
%acc = step.accum %pr {rank = 1 : i64} : ... -> !step.stream<["Min(1, B_0)"], !step.tile<?x4096xf32>> ...
```

and re-derives the types of everything downstream: the stream dims by the
shape rules, the tiles through the function library (a `16x4096` by `4096x64`
matmul becomes `?x64`; an accumulator that had the tile's static rows gets its
dynamic rows). Graphs without the pattern are left untouched, with a remark
saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.functions import get_function
from steplus.dialects.step.types import StreamType, TileType, TupleType
from steplus.utils.diagnostics import emit
from steplus.dialects.step.shape_rules import Fresh, ShapeError, promoted_dim, rule_for

_NO_FRESH = cast(Fresh, lambda key, base, ragged: None)
"""Fresh dims are not made here: a None dim keeps the one already written."""


def _stream(v: SSAValue) -> StreamType:
    """A verified step operand's type (the ops' operand definitions do not name it)."""
    return cast(StreamType, v.type)


def _uses_retile_row(acc: so.AccumOp) -> bool:
    return any(isinstance(a, so.ApplyOp) and a.fn.data == "retile_row" for a in acc.update.walk())


def static_tiling_of(op: Operation) -> sr.ReshapeOp | None:
    """The reshape whose chunks of tile_N the retile_row accumulator `op` stacks, if any."""
    if not isinstance(op, so.AccumOp) or not isinstance(op.parent_op(), GraphOp):
        return None
    if not _uses_retile_row(op):
        return None
    rs = op.input.owner
    if not isinstance(rs, sr.ReshapeOp) or op.rank.value.data != 1:
        return None
    if rs.split_dim.value.data != 0 or len(list(rs.output.uses)) != 1:
        return None
    if not all(isinstance(u.operation, sr.ConsumeOp) for u in rs.padding.uses):
        return None
    return rs


# -- type re-derivation ------------------------------------------------------------


def _tile_of(fn: str, args: list[Attribute], scalar: Attribute, old: TileType) -> TileType:
    f = get_function(fn)
    tiles = [a for a in args if isinstance(a, TileType)]
    if f is None or not tiles or f.arity != len(tiles):
        return old
    if fn == "retile_row":  # the accumulator's rows (its capacity)
        return TileType(tiles[0].rows.data, tiles[0].cols.data, scalar)
    rows, cols = f.out_shape([(t.rows.data, t.cols.data) for t in tiles])
    return TileType(rows, cols, scalar)


def _set_type(v: SSAValue, t: Attribute, rw: PatternRewriter | None = None) -> SSAValue:
    """Retype `v` (through the pattern rewriter when there is one, so the walker hears of it)."""
    if v.type == t:
        return v
    if rw is not None:
        return rw.replace_value_with_new_type(v, t)
    return Rewriter.replace_value_with_new_type(v, t)


def _retype_block(block: Block, arg_types: list[Attribute],
                  rw: PatternRewriter | None = None) -> Attribute | None:
    """Set the block's argument types, recompute its applies; the yielded type."""
    for arg, t in zip(list(block.args), arg_types):
        _set_type(arg, t, rw)
    for op in block.ops:
        if isinstance(op, so.ApplyOp):
            old = op.result.type
            assert isinstance(old, TileType)
            new = _tile_of(op.fn.data, [a.type for a in op.args], old.scalar, old)
            _set_type(op.result, new, rw)
        elif isinstance(op, so.YieldOp):
            return op.values[0].type if op.values else None
    return None


def _elements(el: Attribute) -> list[Attribute]:
    return list(el.elements.data) if isinstance(el, TupleType) else [el]


def _element_of(op: Operation, index: int, old: StreamType,
                rw: PatternRewriter | None = None) -> Attribute:
    """The element type of result `index` of `op` given its (retyped) operands."""
    if isinstance(op, so.MapOp | so.FlatMapOp):
        y = _retype_block(op.body.block, _elements(_stream(op.input).element), rw)
        return y if y is not None else old.element
    if isinstance(op, so.AccumOp | so.ScanOp):
        acc = old.element
        ins = _elements(_stream(op.input).element)
        _retype_block(op.update.block, [*ins, acc], rw)
        if isinstance(acc, TileType):
            # An accumulator combined with a dynamically shaped tile (acc +
            # a ?x4096 matmul) becomes dynamic in that dim too.
            acc_arg = op.update.block.args[-1]
            others = [a.type for x in op.update.walk() if isinstance(x, so.ApplyOp)
                      and acc_arg in x.args for a in x.args
                      if a is not acc_arg and isinstance(a.type, TileType)]
            rows = -1 if any(t.rows.data < 0 for t in others) else acc.rows.data
            cols = -1 if any(t.cols.data < 0 for t in others) else acc.cols.data
            if (rows, cols) != (acc.rows.data, acc.cols.data):
                acc = TileType(rows, cols, acc.scalar)
                _retype_block(op.update.block, [*ins, acc], rw)
        zero = op.init.block.first_op
        if isinstance(zero, so.ApplyOp):
            _set_type(zero.result, acc, rw)
        return acc
    if isinstance(op, sr.ZipOp):
        return TupleType([_stream(op.lhs).element, _stream(op.rhs).element])
    if isinstance(op, so.LinearOffChipLoadOp | so.RandomOffChipLoadOp | sg.SelectGenOp
                  | sg.MetadataGenOp | sg.ExpertAddrGenOp | sg.CacheReadAddrGenOp
                  | sg.FilterLastTileOp | sr.EagerMergeOp) and not (
                      isinstance(op, sr.EagerMergeOp) and index == 0):
        return old.element
    if isinstance(op, sr.ReshapeOp) and index == 1:
        return old.element
    streams = [t for o in op.operands if isinstance(t := o.type, StreamType)]
    return streams[0].element if streams else old.element


def refresh(op: Operation, rw: PatternRewriter | None = None) -> list[SSAValue]:
    """Re-derive `op`'s result types from its operands; the results that changed."""
    rule = rule_for(op)
    changed: list[SSAValue] = []
    shapes = None
    if rule is not None:
        try:
            shapes = rule(op, [_stream(o) for o in op.operands], _NO_FRESH)
        except ShapeError:
            return []  # operands mid-update (a zip's other side comes next)
    for i, r in enumerate(list(op.results)):
        old = r.type
        if not isinstance(old, StreamType):
            continue
        dims = list(old.dims)
        if shapes is not None:
            new_dims = shapes[i].dims
            dims = [o if n is None or (isinstance(n, sympy.Symbol) and n in shapes[i].fresh)
                    else n for n, o in zip(new_dims, old.dims)] if len(new_dims) == len(dims) \
                else [d for d in new_dims if d is not None]
        new = StreamType(dims, _element_of(op, i, old, rw))
        if new != old:
            changed.append(_set_type(op.results[i], new, rw))
    return changed


def _propagate(values: list[SSAValue], rw: PatternRewriter | None = None) -> None:
    work = list(values)
    budget = 100_000  # types only ever settle; a feedback loop cannot spin forever
    while work and budget:
        budget -= 1
        v = work.pop(0)
        for use in list(v.uses):
            user = use.operation
            while user is not None and not isinstance(user.parent_op(), GraphOp):
                user = user.parent_op()  # a use inside a region: the op owning it
            if user is not None:
                work.extend(refresh(user, rw))


class DynamicTilePattern(RewritePattern):
    """One static tiling (reshape + retile_row accumulator) -> promote + a dynamic accumulator.

    Matches a `step.accum` of rank 1 whose update applies `retile_row` to the
    chunks of a `step.reshape {split_dim = 0}` whose padding is only consumed;
    inserts a `step.promote` of the reshape's input before it, feeds the
    accumulator from it with `?xD` tiles, erases the reshape and its padding
    consumers, and re-derives the types downstream (all through the rewriter).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.AccumOp, rewriter: PatternRewriter) -> None:
        rs = static_tiling_of(op)
        if rs is None:
            return
        src = rs.input
        t = src.type
        assert isinstance(t, StreamType)
        promote = rewriter.insert(sr.PromoteOp.create(
            operands=[src], result_types=[StreamType([promoted_dim(t.dims[0]), *t.dims], t.element)]),
            InsertPoint.before(rs))
        if rs.output.name_hint:
            promote.output.name_hint = rs.output.name_hint
        op.operands = [promote.output]
        rewriter.notify_op_modified(op)
        old_el = op.output.type.element
        assert isinstance(old_el, TileType)
        dyn = TileType(-1, old_el.cols.data, old_el.scalar)
        _set_type(op.output, StreamType([promoted_dim(t.dims[0])], dyn), rewriter)
        _retype_block(op.update.block, [*_elements(t.element), dyn], rewriter)
        zero = op.init.block.first_op
        if isinstance(zero, so.ApplyOp):
            _set_type(zero.result, dyn, rewriter)
        for use in list(rs.padding.uses):
            rewriter.erase(use.operation)
        rewriter.erase(rs)
        _propagate([op.output], rewriter)


@dataclass(frozen=True)
class StepDynamicTilingPass(ModulePass):
    """Turn static tiling of a dynamic dimension (Reshape + padding) into dynamic tiles.

    Example: `step-opt examples/step/moe_mixtral_tn16.mlir -p step-dynamic-tiling`
    replaces each expert's `step.reshape {chunk_size = 16}` + retile_row
    `step.accum` (`ceiling(B_e/16)` tiles of `16x4096`) by `step.promote` + an
    accumulator of one `?x4096` tile per expert (`Min(1, B_e)` tiles), and
    re-derives every type downstream — the graph `moe_mixtral_dyn.mlir` is.
    """

    name = "step-dynamic-tiling"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from steplus.dialects.step.inference import infer_graph

        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            if not any(static_tiling_of(o) is not None for o in graph.body.block.ops):
                emit(graph, "remark", "step-dynamic-tiling: nothing to do: no retile_row "
                                      "accumulator over a step.reshape whose padding is dropped")
                continue
            PatternRewriteWalker(DynamicTilePattern(), apply_recursively=False).rewrite_region(
                graph.body)
            infer_graph(graph)  # the re-derived types are consistent
