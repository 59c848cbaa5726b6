"""`step-hierarchical-tiling{tile=RxC}`: logical tiles -> physical compute tiles.

Seed §4.3 and appendix A.2 (Fig. 12): a STeP graph describes its data in
logical tiles (the off-chip / on-chip transfer size, e.g. 64x256); a fabric
computes on smaller physical tiles (16x16 BFloat16 in the paper's HDL
validation). The pass rewrites the compute operators so that every
`step.apply` works on physical tiles, with STeP operators and shapes only:

- `split_tiles` (a `step.flat_map`) turns each logical `R x C` tile into the
  stream of its physical `r x c` tiles, row-major: rank 2 gives the new dims
  `[R/r, C/c]`, rank 1 one dim `[R/r * C/c]`;
- `join_tiles` (a `step.accum` of rank 1 or 2) puts them back together.

Element-wise maps (`add`, `mul`, `div`, `exp`, `silu` on operands of one
tile shape): each operand is split (rank 2), the map runs on physical tiles,
the result is joined:

```text
%y = step.map %x {silu} : [N] 32x32 -> [N] 32x32
// becomes
%y_in0 = step.flat_map %x {rank = 2} {split_tiles}  : [N] 32x32 -> [N, 2, 2] 16x16
%y_phys = step.map %y_in0 {silu}                    : [N, 2, 2] 16x16
%y = step.accum %y_phys {rank = 2} {join_tiles}    : [N, 2, 2] 16x16 -> [N] 32x32
```

Matmuls (Fig. 12's A x B^T map node), a `step.map` of `matmul` / `matmul_t`
or a `step.accum` whose update is `add(acc, matmul(a, b))`, with A `M x K`,
B `K x N` (`N x K` for `matmul_t`) and a square physical tile `t x t`,
I = M/t, J = N/t, Kp = K/t:

- A: split into row panels `t x K` ([I]), `repeat` J times ([I, J]), split
  each panel into `t x t` tiles ([I, J, Kp]);
- B: `repeat` the logical tile I times ([I]), split into column panels
  `K x t` (row panels `t x K` for `matmul_t`) ([I, J]), split each into
  `t x t` tiles ([I, J, Kp]);
- zip, and a rank-1 `step.accum` of `matmul_acc` (`acc + a @ b`;
  `matmul_t_acc` for B^T) over Kp: the [I, J] physical output tiles;
- `join_tiles` (rank 2) into the logical `M x N` tile. A map ends there; an
  accum keeps its outer `add` on logical tiles (its init unchanged).

A split of a join of the same tiles (the map after a map) is bypassed.
Loads, stores and routing are untouched, so off-chip traffic is unchanged;
FLOPs are unchanged (a physical `matmul_acc` counts `2 t^3`, the logical
matmul's `2MKN` in I*J*Kp pieces; split/join count 0). On-chip memory grows by
the repeat and join buffers.

An operator whose tiles the physical size does not divide, that has dynamic
tiles, broadcasts, or computes something else (`row_sum`, ...) is left alone
with a remark; a graph with nothing to tile gets a remark.

Example: `step-opt examples/step/swiglu_tm32_tn128.mlir -p 'step-hierarchical-tiling{tile=16x16}'`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.functions import get_function
from steplus.dialects.step.types import StreamType, TileType, TupleType
from steplus.utils.diagnostics import NotApplicable, emit
from steplus.utils.attrs import i64_attr

ELEMENTWISE = ("add", "mul", "div", "exp", "silu")
MATMUL_ACC = {"matmul": "matmul_acc", "matmul_t": "matmul_t_acc"}
NAME = "step-hierarchical-tiling"


MAX_TILE = 1 << 16
"""The largest physical tile dimension `tile=RxC` accepts."""


def parse_tile(text: str) -> tuple[int, int]:
    """`"16x16"` -> (16, 16); ValueError otherwise (also past MAX_TILE)."""
    m = re.fullmatch(r"\s*(\d{1,6})\s*x\s*(\d{1,6})\s*", text, re.ASCII)
    if not m or not all(1 <= int(g) <= MAX_TILE for g in m.groups()):
        raise ValueError(f"{NAME}: tile must be RxC with integers in [1, {MAX_TILE}] "
                         f"(e.g. 16x16), got '{text[:40]}'")
    return int(m.group(1)), int(m.group(2))


# -- building blocks ------------------------------------------------------------------


def _apply(fn: str, args: Sequence[SSAValue], result: TileType) -> so.ApplyOp:
    return so.ApplyOp.create(operands=list(args), result_types=[result],
                             properties={"fn": StringAttr(fn)})


def _region(arg_types: Sequence[Attribute],
            body: Callable[[list[SSAValue]], list[so.ApplyOp]]) -> Region:
    """A function region: `body(args)` makes the applies, the last one is yielded."""
    block = Block(arg_types=list(arg_types))
    applies = body(list(block.args))
    builder = Builder(InsertPoint.at_end(block))
    for a in applies:
        builder.insert(a)
    builder.insert(so.YieldOp.create(operands=[applies[-1].result]))
    return Region(block)


def _zero_region(t: TileType) -> Region:
    return _region([], lambda _: [_apply("zero", [], t)])


def _stream(v: SSAValue) -> StreamType:
    t = v.type
    assert isinstance(t, StreamType)
    return t


def _tile(v: SSAValue) -> TileType | None:
    el = _stream(v).element
    return el if isinstance(el, TileType) else None


def _shape(t: TileType) -> tuple[int, int]:
    return t.rows.data, t.cols.data


class _Builder:
    """Inserts new operators before `anchor`, naming their results after `hint`."""

    def __init__(self, anchor: Operation, hint: str):
        self.anchor, self.hint = anchor, hint
        block = anchor.parent_block()
        assert block is not None
        self.block = block

    def _add(self, op: Operation, suffix: str | None) -> SSAValue:
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        res = op.results[0]
        res.name_hint = self.hint if suffix is None else f"{self.hint}_{suffix}"
        return res

    def split(self, v: SSAValue, like: TileType, rank: int, suffix: str) -> SSAValue:
        """flat_map split_tiles: each tile -> its `like`-shaped tiles ([R/r, C/c] or one dim)."""
        t = _stream(v)
        el = t.element
        assert isinstance(el, TileType)
        gi, gj = el.rows.data // like.rows.data, el.cols.data // like.cols.data
        new = [gi, gj] if rank == 2 else [gi * gj]

        def body(args: list[SSAValue]) -> list[so.ApplyOp]:
            zero = _apply("zero", [], like)  # the physical shape (`split_tiles`' 2nd operand)
            return [zero, _apply("split_tiles", [args[0], zero.result], like)]

        op = so.FlatMapOp.create(operands=[v],
                                 result_types=[StreamType([*t.shape.data, *new], like)],
                                 properties={"rank": i64_attr(rank)},
                                 regions=[_region([el], body)])
        return self._add(op, suffix)

    def repeat(self, v: SSAValue, count: int, suffix: str) -> SSAValue:
        t = _stream(v)
        op = sr.RepeatOp.create(operands=[v],
                                result_types=[StreamType([*t.shape.data, count], t.element)],
                                properties={"count": i64_attr(count)})
        return self._add(op, suffix)

    def zip(self, a: SSAValue, b: SSAValue) -> SSAValue:
        out = StreamType(_stream(a).shape.data, TupleType([_stream(a).element, _stream(b).element]))
        op = sr.ZipOp.create(operands=[a, b], result_types=[out])
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def accum(self, v: SSAValue, rank: int, acc: TileType, update: Region, init: Region,
              suffix: str | None) -> SSAValue:
        t = _stream(v)
        op = so.AccumOp.create(operands=[v],
                               result_types=[StreamType(t.shape.data[: t.rank - rank], acc)],
                               properties={"rank": i64_attr(rank)}, regions=[update, init])
        return self._add(op, suffix)

    def join(self, v: SSAValue, logical: TileType, rank: int, suffix: str | None) -> SSAValue:
        """accum join_tiles: the physical tiles of the `rank` inner dims -> one logical tile."""
        phys = _stream(v).element
        update = _region([phys, logical],
                         lambda a: [_apply("join_tiles", [a[1], a[0]], logical)])
        return self.accum(v, rank, logical, update, _zero_region(logical), suffix)

    def map(self, v: SSAValue, region: Region, result: Attribute, suffix: str) -> SSAValue:
        op = so.MapOp.create(operands=[v],
                             result_types=[StreamType(_stream(v).shape.data, result)],
                             regions=[region])
        return self._add(op, suffix)


# -- recognising what to tile ---------------------------------------------------------


class PlanKind(Enum):
    """What a tiling plan rewrites."""

    MATMUL = "matmul"
    ELEMENTWISE = "elementwise"


@dataclass
class _Plan:
    kind: PlanKind
    op: Operation
    leaves: list[SSAValue]
    fn: str = ""  # matmul / matmul_t
    acc_first: bool = True  # add(acc, p) rather than add(p, acc)


def _applies(region: Region) -> list[so.ApplyOp]:
    return [o for o in region.block.ops if isinstance(o, so.ApplyOp)]


def _computes(region: Region) -> bool:
    """The region applies a function with FLOPs (not a retile / signal helper)."""
    for a in _applies(region):
        f = get_function(a.fn.data)
        if f is not None and f.arity and f.fixed_cycles is None and f.flops([(1, 1)] * f.arity):
            return True
    return False


def _leaves(v: SSAValue) -> list[SSAValue]:
    owner = v.owner
    if isinstance(owner, sr.ZipOp):
        return [owner.lhs, owner.rhs]
    return [v]


def _matmul_update(acc: so.AccumOp) -> tuple[str, bool] | None:
    """(matmul fn, acc first) if the update is exactly `add(acc, matmul(a, b))`."""
    block = acc.update.block
    ops = list(block.ops)
    if len(ops) != 3 or len(block.args) != 3:
        return None
    mm, add, y = ops
    a, b, c = block.args
    if not (isinstance(mm, so.ApplyOp) and isinstance(add, so.ApplyOp)
            and isinstance(y, so.YieldOp)) or mm.fn.data not in MATMUL_ACC:
        return None
    if list(mm.args) != [a, b] or add.fn.data != "add" or list(y.values) != [add.result]:
        return None
    if list(add.args) == [c, mm.result]:
        return mm.fn.data, True
    if list(add.args) == [mm.result, c]:
        return mm.fn.data, False
    return None


def _matmul_map(m: so.MapOp) -> str | None:
    block = m.body.block
    ops = list(block.ops)
    if len(ops) != 2 or len(block.args) != 2:
        return None
    mm, y = ops
    if isinstance(mm, so.ApplyOp) and mm.fn.data in MATMUL_ACC and list(mm.args) == list(
            block.args) and isinstance(y, so.YieldOp) and list(y.values) == [mm.result]:
        return mm.fn.data
    return None


def _plan(op: Operation, r: int, c: int) -> _Plan | None:
    """What to do with `op`: a plan, or None (not compute, or already physical);
    `NotApplicable` says why a compute op stays on logical tiles (a remark)."""
    if not isinstance(op, so.MapOp | so.AccumOp):
        return None
    region = op.body if isinstance(op, so.MapOp) else op.update
    if not _computes(region):
        return None
    leaves = _leaves(op.input)
    tiles = [_tile(v) if isinstance(v.type, StreamType) else None for v in leaves]
    if any(t is None or not t.is_static for t in tiles):
        raise NotApplicable("its operands are not statically shaped tiles")
    shapes = [_shape(t) for t in tiles if t is not None]
    fn = _matmul_map(op) if isinstance(op, so.MapOp) else None
    mm = _matmul_update(op) if isinstance(op, so.AccumOp) else None
    if fn is not None or mm is not None:
        fn = fn or mm[0]  # type: ignore[index]
        (m, k), (b0, b1) = shapes
        n = b0 if fn == "matmul_t" else b1
        if r != c:
            raise NotApplicable(f"a matmul needs a square physical tile, got {r}x{c}")
        if (m, k, n) == (r, r, r):
            return None  # already physical
        if m % r or k % r or n % r:
            raise NotApplicable(f"the {r}x{c} physical tile does not divide its {m}x{k} by "
                       f"{b0}x{b1} {fn}")
        return _Plan(PlanKind.MATMUL, op, leaves, fn, mm[1] if mm else True)
    if isinstance(op, so.AccumOp):
        names = sorted({a.fn.data for a in _applies(region)})
        raise NotApplicable(f"an accum of {', '.join(names)} reduces logical tiles (only a matmul "
                   "accumulation is tiled)")
    bad = sorted({a.fn.data for a in _applies(region)} - set(ELEMENTWISE))
    if bad and bad[0] in MATMUL_ACC:
        raise NotApplicable(f"its '{bad[0]}' is not the whole body (matmul(a, b), or add(acc, matmul(a, "
                   "b)) in an accum)")
    if bad:
        raise NotApplicable(f"'{bad[0]}' is not element-wise or a matmul")
    res = _stream(op.output).element
    if len(set(shapes)) != 1 or not isinstance(res, TileType) or _shape(res) != shapes[0]:
        raise NotApplicable("its operands broadcast (tiles of different shapes)")
    (rows, cols), = set(shapes)
    if (rows, cols) == (r, c):
        return None
    if rows % r or cols % c:
        raise NotApplicable(f"the {r}x{c} physical tile does not divide its {rows}x{cols} tiles")
    return _Plan(PlanKind.ELEMENTWISE, op, leaves)


# -- the rewrites ----------------------------------------------------------------------


def _hint(op: Operation) -> str:
    return op.results[0].name_hint or op.name.removeprefix("step.")


def _replace(op: Operation, new: SSAValue) -> None:
    old_input = op.operands[0]
    Rewriter.replace_op(op, [], [new])
    owner = old_input.owner
    if isinstance(owner, sr.ZipOp) and not list(owner.output.uses):
        Rewriter.erase_op(owner)


def _tile_elementwise(p: _Plan, r: int, c: int) -> None:
    op = p.op
    assert isinstance(op, so.MapOp)
    b = _Builder(op, _hint(op))
    tiles = [_tile(v) for v in p.leaves]
    phys_in = [TileType(r, c, t.scalar) for t in tiles if t is not None]
    parts = [b.split(v, t, 2, f"in{i}") for i, (v, t) in enumerate(zip(p.leaves, phys_in))]
    x = parts[0] if len(parts) == 1 else b.zip(parts[0], parts[1])
    # the body on physical tiles: the same applies, each result r x c
    old = op.body.block
    block = Block(arg_types=phys_in)
    body = Builder(InsertPoint.at_end(block))
    values: dict[SSAValue, SSAValue] = dict(zip(old.args, block.args))
    for a in old.ops:
        if isinstance(a, so.ApplyOp):
            t = a.result.type
            assert isinstance(t, TileType)
            new = _apply(a.fn.data, [values[x_] for x_ in a.args], TileType(r, c, t.scalar))
            body.insert(new)
            values[a.result] = new.result
        elif isinstance(a, so.YieldOp):
            body.insert(so.YieldOp.create(operands=[values[v] for v in a.values]))
    logical = _stream(op.output).element
    assert isinstance(logical, TileType)
    y = b.map(x, Region(block), TileType(r, c, logical.scalar), "phys")
    _replace(op, b.join(y, logical, 2, None))


def _tile_matmul(p: _Plan, t: int) -> None:
    op = p.op
    assert isinstance(op, so.MapOp | so.AccumOp)
    hint = _hint(op)
    b = _Builder(op, hint)
    a_v, b_v = p.leaves
    ta, tb = _tile(a_v), _tile(b_v)
    assert ta is not None and tb is not None
    (m, k), (b0, b1) = _shape(ta), _shape(tb)
    n = b0 if p.fn == "matmul_t" else b1
    i_n, j_n = m // t, n // t
    # A: [I] row panels, repeated over J, each split over Kp
    a_rows = b.split(a_v, TileType(t, k, ta.scalar), 1, "a_rows")
    a_rep = b.repeat(a_rows, j_n, "a_rep")
    a_phys = b.split(a_rep, TileType(t, t, ta.scalar), 1, "a_phys")
    # B: the logical tile repeated over I, [J] panels, each split over Kp
    b_rep = b.repeat(b_v, i_n, "b_rep")
    panel = TileType(k, t, tb.scalar) if p.fn == "matmul" else TileType(t, k, tb.scalar)
    b_panels = b.split(b_rep, panel, 1, "b_cols" if p.fn == "matmul" else "b_rows")
    b_phys = b.split(b_panels, TileType(t, t, tb.scalar), 1, "b_phys")
    pairs = b.zip(a_phys, b_phys)
    logical = _stream(op.output).element
    assert isinstance(logical, TileType)
    acc_t = TileType(t, t, logical.scalar)
    pa, pb = TileType(t, t, ta.scalar), TileType(t, t, tb.scalar)
    update = _region([pa, pb, acc_t],
                     lambda x: [_apply(MATMUL_ACC[p.fn], [x[2], x[0], x[1]], acc_t)])
    prods = b.accum(pairs, 1, acc_t, update, _zero_region(acc_t), "phys")
    out_t = TileType(m, n, logical.scalar)
    if isinstance(op, so.MapOp):
        _replace(op, b.join(prods, out_t, 2, None))
        return
    assert isinstance(op, so.AccumOp)
    joined = b.join(prods, out_t, 2, "join")

    def add(x: list[SSAValue]) -> list[so.ApplyOp]:
        args = [x[1], x[0]] if p.acc_first else [x[0], x[1]]
        return [_apply("add", args, logical)]

    init = op.init.clone()
    outer = b.accum(joined, op.rank.value.data, logical, _region([out_t, logical], add), init,
                    None)
    _replace(op, outer)


def _is_join(op: Operation | None) -> bool:
    return isinstance(op, so.AccumOp) and [a.fn.data for a in _applies(op.update)] == [
        "join_tiles"]


def _is_split(op: Operation) -> bool:
    return isinstance(op, so.FlatMapOp) and [a.fn.data for a in _applies(op.body)] == [
        "zero", "split_tiles"]


class BypassSplitOfJoin(RewritePattern):
    """split(join(x)) with the same tiles and rank 2 is x.

    A `split_tiles` flat_map of rank 2 whose input is a rank-2 `join_tiles`
    accum of the same physical tiles (two tiled operators back to back) reads
    `x` instead; the join goes when nothing else reads it.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.FlatMapOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), GraphOp) or not _is_split(op) \
                or op.rank.value.data != 2:
            return
        join = op.input.owner
        if not isinstance(join, so.AccumOp) or not _is_join(join) or join.rank.value.data != 2 \
                or join.input.type != op.output.type:
            return
        rewriter.replace(op, [], [join.input])
        if not list(join.output.uses):
            rewriter.erase(join)


def hierarchical_tile(graph: GraphOp, r: int, c: int) -> int:
    """Rewrite `graph` onto `r x c` physical tiles; returns the number of operators tiled."""
    plans: list[_Plan] = []
    for op in list(graph.body.block.ops):
        try:
            plan = _plan(op, r, c)
        except NotApplicable as why:
            emit(op, "remark", f"{NAME}: left on logical tiles: {why}")
            continue
        if plan is not None:
            plans.append(plan)
    for p in plans:
        assert isinstance(p.op, so.MapOp | so.AccumOp)
        p.leaves = _leaves(p.op.input)  # an operand may be an earlier rewrite's result
        if p.kind is PlanKind.MATMUL:
            _tile_matmul(p, r)
        else:
            _tile_elementwise(p, r, c)
    if plans:
        PatternRewriteWalker(BypassSplitOfJoin(), apply_recursively=False).rewrite_region(
            graph.body)
    return len(plans)


@dataclass(frozen=True)
class StepHierarchicalTilingPass(ModulePass):
    """Split logical tiles into physical compute tiles (split_tiles / join_tiles, Fig. 12).

    Option `tile=RxC` (default 16x16): the physical tile. Element-wise maps
    run on the `R x C` tiles of their operands; matmul maps and matmul
    accumulations (`add(acc, matmul(a, b))`, also `matmul_t`, square tile)
    become a `matmul_acc` accumulation over physical tiles, joined into the
    logical tile (see the module docstring). Traffic and FLOPs are unchanged.

    Example: `step-opt g.mlir -p 'step-hierarchical-tiling{tile=16x16}'` on

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[4], !step.tile<32x32xf32>>):
      %y = step.map %x : !step.stream<[4], !step.tile<32x32xf32>> -> !step.stream<[4], !step.tile<32x32xf32>> {
      ^bb0(%t: !step.tile<32x32xf32>):
        %s = step.apply "silu"(%t) : (!step.tile<32x32xf32>) -> !step.tile<32x32xf32>
        step.yield %s : !step.tile<32x32xf32>
      }
    }
    ```

    gives `%y_in0 = step.flat_map %x {rank = 2 : i64}` (split_tiles, `[4, 2, 2]`
    of 16x16), `%y_phys = step.map %y_in0` (silu on 16x16) and
    `%y = step.accum %y_phys {rank = 2 : i64}` (join_tiles, back to `[4]` of 32x32).
    """

    name = NAME

    tile: str = "16x16"
    """The physical compute tile, `RxC`."""

    def __post_init__(self) -> None:
        parse_tile(self.tile)  # ValueError: a one-line usage error

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        r, c = parse_tile(self.tile)
        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            if not hierarchical_tile(graph, r, c):
                emit(graph, "remark", f"{NAME}: nothing to tile: no element-wise or matmul "
                                      f"map/accum on tiles larger than {r}x{c} that it divides")
                continue
            from steplus.dialects.step.inference import infer_graph

            infer_graph(graph)  # the new types are consistent
