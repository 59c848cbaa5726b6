"""`step-metrics`: symbolic off-chip traffic, on-chip memory, FLOPs and operational intensity.

Per operator and per `step.graph` (seed §4.1; the artifact's conventions of
the reference-workload spec §5). Stream types come from `step-infer-shapes`'
rules (`infer_graph`, without rewriting), so `_` dims are fine here too.

Off-chip traffic (bytes), both modes:

| op | bytes |
|---|---|
| `linear_offchip_load`, `random_offchip_load` | `#elements(result) x |tile|` |
| `linear_offchip_store` | `#elements(input) x |input element|` |
| `random_offchip_store` | `#elements(wdata) x |tile|` |
| everything else | 0 |

On-chip memory (bytes). An operator that receives no element (its first
input stream is empty once the symbols are bound, e.g. the pipeline of an
expert no token was routed to) is idle and allocates nothing — the artifact's
Qwen driver subtracts exactly those (reference spec §5.5); for Mixtral every
expert receives tokens in the shipped traces. `onchip="artifact"` (default;
what the reference numbers use: no double buffering, matmul maps count 0):

| op | bytes |
|---|---|
| off-chip loads | one tile `|result element|` |
| `random_offchip_store` | `|tile| x buffer_depth` (default depth 1) |
| `linear_offchip_store` | `|input element|` |
| `accum`, `scan` | `|result element|` (the accumulator) |
| `repeat`, `expand` | `|result element|` |
| `bufferize` | `||buffer|| x |input element|` |
| `regroup` | one block: the exchanged dim and the dims inside it `x |input element|` |

`onchip="paper"` (seed §4.1): off-chip memory operators `x 2` (double
buffering); bufferize `|in| + ||buffer|| x |in| x 2`; regroup two blocks; a `map` whose function
is a matmul `16 x in_tile_cols x nb + |weight tile|`, an `accum` with a
matmul that plus `|result tile|`; other accum/scan/expand/repeat
`|result element|`. Both modes add each library function's `onchip_bytes`.

FLOPs: per element, the sum of the library FLOPs of the `step.apply`s of the
map / flat_map body or the accum / scan update region, times the number of
input elements. Padded FLOPs are the part due to padding (reference spec
§5.4): the FLOPs minus the FLOPs of the real elements, i.e. with each
`step.reshape`'s chunk count `ceiling(d/S)` taken as `d/S` -- in a symbolic
graph by replacing every `ceiling(x)` by `x`; in a graph whose types were
rewritten with numbers (`step-specialize{rewrite=true}`: `[1, 16]` for 5
tokens in tiles of 16) by propagating the unpadded counts (`5/16`) from each
padding reshape through the shape rules.

`flops_artifact` (graph total only) is the artifact's FLOP formula of §5.4
next to the graph's own count: for every SiLU-gated product
`mul(silu(x W_g), x W_u)` (a SwiGLU expert) `b F (14 D + 1)`, where `b F` is
the number of scalars of the product (padding rows included) and `D` the
contraction dim of the gate matmul -- three matmuls `2 b D F` each, the
`b F` product and the SiLU written `8 b D F`. It is `n/a` for a graph without
such a product. The graph's own count differs: it counts SiLU at the
library's `8` per element, the matmul accumulations' adds, the weight-scale
`mul` and the final sum.

Sizes: a tile is `rows x cols x bytes(scalar)`; a dynamic tile dim `?` is a
symbol named after the value that makes the tile (`%acc0` -> `acc0_rows`)
and carried through the graph and the function bodies (`tile_shapes`); a selector is
`ceil(N/8)` bytes, an i1 1 byte, a buffer reference 8 bytes, a tuple the sum.
The number of elements of a stream is the product of its dims; when a dim
below the outermost is ragged (`[B, ?L, 4]`) the outer dims down to it are
replaced by one symbol `sum_L` (their total count), seed §4.1.

The pass reports, per graph, a table of the operators with a non-zero metric
and the totals on stderr (or as text/JSON/CSV to the file `out=` names; see
`reports.py`; stdout carries only the IR); `bind="B=64,C=3"` substitutes symbols (by name,
ragged or not) first. With `annotate=true` it also attaches the metrics as
`step.metrics` dictionary attributes (strings) to those operators and the
graph (the graph's with `flops_artifact` when it has one); otherwise the IR
is unchanged.

From Python: `compute_metrics(graph_op, onchip="artifact") -> GraphMetrics`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, Region, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import dim_symbols, evaluate_bound, to_expr
from steplus.dialects.step.functions import get_function
from steplus.dialects.semantics.fusion import fused_add_calls
from steplus.dialects.step.types import (
    BufferType,
    RaggedSymbol,
    StreamType,
    TileType,
    dim_to_text,
)
from steplus.passes.step.bindings import graph_bindings, parse_bind_attr, parse_bindings  # noqa: F401
from steplus.dialects.step.inference import infer_graph
from steplus.passes.step.reports import (
    emit_report,
    format_metrics,
    format_table,  # noqa: F401 (re-exported: the text report)
    metric_text,
    report_format,
)
from steplus.dialects.step.shape_rules import ShapeError, new_symbol, rule_for
from steplus.passes.step.tile_shapes import Shape, TileShapes

ZERO = sympy.Integer(0)
MODES = ("artifact", "paper")
MATMULS = ("matmul", "matmul_t")


@dataclass
class OpMetrics:
    """The metrics of one operator (sympy expressions, bytes and FLOPs)."""

    op: Operation
    label: str
    offchip: sympy.Expr = ZERO
    onchip: sympy.Expr = ZERO
    flops: sympy.Expr = ZERO
    padded_flops: sympy.Expr = ZERO
    fused_flops: sympy.Expr = ZERO
    """The part of `flops` the fabric's PCUs fuse into a matmul's
    multiply-adds (see `fused_adds`), so `step-run` does not execute it."""
    flops_artifact: sympy.Expr | None = None
    """The artifact's formula (§5.4) for the expert whose SiLU-gated product
    this operator computes; None for every other operator."""
    fires: sympy.Expr = sympy.Integer(1)
    """How many elements the operator receives (its first input stream's
    cardinality; 1 for a source). An operator that receives nothing is idle
    and allocates no on-chip memory."""

    def is_zero(self) -> bool:
        return all(e == 0 for e in (self.offchip, self.onchip, self.flops))


@dataclass
class GraphMetrics:
    """Per-operator metrics of a graph and their totals."""

    name: str
    ops: list[OpMetrics] = field(default_factory=list[OpMetrics])

    def _sum(self, attr: str) -> sympy.Expr:
        return sympy.Add(*(getattr(m, attr) for m in self.ops))

    @property
    def offchip(self) -> sympy.Expr:
        return self._sum("offchip")

    @property
    def onchip(self) -> sympy.Expr:
        return self._sum("onchip")

    @property
    def flops(self) -> sympy.Expr:
        return self._sum("flops")

    @property
    def padded_flops(self) -> sympy.Expr:
        return self._sum("padded_flops")

    @property
    def fused_flops(self) -> sympy.Expr:
        """The accumulator adds the fabric fuses into the matmuls (`fused_adds`)."""
        return self._sum("fused_flops")

    @property
    def executed_flops(self) -> sympy.Expr:
        """The FLOPs the simulated fabric executes (`step-run`'s `FLOPs executed`)."""
        return self.flops - self.fused_flops

    @property
    def flops_artifact(self) -> sympy.Expr | None:
        """The artifact's FLOP formula (§5.4) summed over the SwiGLU experts
        of the graph; None if it has none."""
        terms = [m.flops_artifact for m in self.ops if m.flops_artifact is not None]
        return sympy.Add(*terms) if terms else None

    @property
    def operational_intensity(self) -> sympy.Expr | None:
        """FLOPs per off-chip byte (None without off-chip traffic)."""
        traffic = self.offchip
        return None if traffic == 0 else reduce_ratio(self.flops / traffic)

    def bind(self, values: dict[str, int]) -> GraphMetrics:
        """The metrics with the named symbols replaced by values."""

        def sub(e: sympy.Expr) -> sympy.Expr:
            syms = dim_symbols(e)
            m = {s: values[s.name] for s in syms if s.name in values}
            if not m:
                return e
            if len(m) == len(syms):  # all bound: the integer, exactly, without sympy's subs
                v = evaluate_bound(to_expr(e), m)
                if v is not None:
                    return sympy.Integer(v)
            return cast(sympy.Expr, to_expr(e).subs(cast(dict[Any, Any], m)))

        def one(m: OpMetrics) -> OpMetrics:
            fires = sub(m.fires)
            onchip = ZERO if fires == 0 else sub(m.onchip)
            art = None if m.flops_artifact is None else sub(m.flops_artifact)
            return OpMetrics(m.op, m.label, sub(m.offchip), onchip, sub(m.flops),
                             sub(m.padded_flops), sub(m.fused_flops), art, fires)

        return GraphMetrics(self.name, [one(m) for m in self.ops])


CANCEL_MAX_SYMBOLS = 8
"""`reduce_ratio` looks for a polynomial gcd only up to this many symbols."""


def reduce_ratio(ratio: sympy.Expr) -> sympy.Expr:
    """`ratio` with common factors cancelled, without `sympy.simplify`.

    `gcd_terms` takes out the common monomial and numeric content (linear in
    the size of the expression); a polynomial gcd (`cancel`) only runs on
    ratios of few symbols, where it is cheap. The result equals `ratio` for
    every value of the symbols (simplify took minutes on a 128-expert graph).
    """
    ratio = cast(sympy.Expr, sympy.gcd_terms(ratio))
    if len(ratio.free_symbols) <= CANCEL_MAX_SYMBOLS:
        ratio = sympy.factor_terms(sympy.cancel(ratio))
    return ratio


# -- sizes ---------------------------------------------------------------------------

def cardinality(dims: list[sympy.Expr]) -> sympy.Expr:
    """The number of elements of a stream with these dims (seed §4.1 for raggedness)."""
    if all(getattr(d, "is_Integer", False) for d in dims):  # bound: the product, no Mul
        n = 1
        for d in dims:
            n *= int(d)
        return sympy.Integer(n)
    ragged = [i for i, d in enumerate(dims)
              if any(isinstance(s, RaggedSymbol) for s in to_expr(d).free_symbols)]
    j = ragged[-1] if ragged else 0
    if j == 0:
        return sympy.Mul(*dims)
    name = re.sub(r"[^A-Za-z0-9_]+", "_", dim_to_text(dims[j]).replace("?", "")).strip("_")
    total = new_symbol(f"sum_{name}", False)
    return total * sympy.Mul(*dims[j + 1 :])


# -- per operator ------------------------------------------------------------------


FunctionOp = so.MapOp | so.FlatMapOp | so.AccumOp | so.ScanOp
"""The higher-order ops whose region calls library functions."""


def _function_region(op: FunctionOp) -> Region:
    if isinstance(op, so.MapOp | so.FlatMapOp):
        return op.body
    return op.update


def _int_shapes(shapes: list[Shape]) -> list[tuple[int, int]]:
    """Tile shapes for the library's shape/cost rules, written for ints: symbolic
    dims go through them as numbers do (max() of two symbols raises TypeError,
    which the callers handle)."""
    return cast(list[tuple[int, int]], shapes)


def _apply_flops(apply: so.ApplyOp, shapes: TileShapes) -> sympy.Expr:
    fn = get_function(apply.fn.data)
    if fn is None:
        return ZERO
    args = [s for a in apply.args for s in shapes.of(a)]
    try:
        return to_expr(fn.flops(_int_shapes(args)))
    except TypeError:
        # Broadcasting on symbolic tiles: one FLOP per output element.
        return sympy.Add(*(r * c for r, c in shapes.of(apply.result)))


def fused_adds(region: Region) -> list[so.ApplyOp]:
    """The applies of an accum/scan update region the fabric fuses into a
    matmul's multiply-adds: each `add` that takes the accumulator (the region's
    last argument) when the region also applies something else (`acc + a @ b`).
    The rule is `dialects/semantics/fusion.py`'s, which the simulator's
    `Kernel.free_calls` (runtime/fabric/contexts/compute.py) uses too;
    test_metrics checks that `GraphMetrics.executed_flops` equals `step-run`'s count."""
    if not region.blocks or not region.block.args:
        return []
    applies = [a for a in region.block.ops if isinstance(a, so.ApplyOp)]
    fused = fused_add_calls([(a.fn.data, a.args) for a in applies], region.block.args[-1])
    return [applies[i] for i in fused]


def _region_costs(region: Region, shapes: TileShapes, paper: bool, with_out: bool):
    flops, onchip = ZERO, ZERO
    for a in region.walk():
        if not isinstance(a, so.ApplyOp):
            continue
        flops += _apply_flops(a, shapes)
        fn = get_function(a.fn.data)
        args = [s for x in a.args for s in shapes.of(x)]
        tiles = [x for x in a.args if isinstance(x.type, TileType)]
        scalar = cast(TileType, tiles[0].type).bytes_per_scalar() if tiles else 0
        if fn is not None and tiles:
            onchip += to_expr(fn.onchip_bytes(_int_shapes(args), scalar))
        if paper and a.fn.data in MATMULS and len(tiles) == 2:
            (_, cols), = shapes.of(tiles[0])
            onchip += 16 * cols * scalar + shapes.nbytes(tiles[1])
            if with_out:
                onchip += shapes.nbytes(a.result)
    return flops, onchip


def _has_matmul(region: Region) -> bool:
    return any(isinstance(a, so.ApplyOp) and a.fn.data in MATMULS for a in region.walk())


def op_metrics(op: Operation, index: int, types: dict, shapes: TileShapes,
               onchip_mode: str = "artifact",
               unpadded: dict[SSAValue, list[sympy.Expr]] | None = None) -> OpMetrics:
    """The metrics of one operator given the graph's stream types and tile
    shapes (`unpadded`: the real element counts' dims, see `unpadded_dims`)."""
    paper = onchip_mode == "paper"
    real = None
    m = OpMetrics(op, _label(op, index))

    def t(v) -> StreamType:
        return types.get(v, v.type)

    if isinstance(op, so.LinearOffChipLoadOp | so.RandomOffChipLoadOp):
        tile = shapes.nbytes(op.output)
        m.offchip = cardinality(t(op.output).dims) * tile
        m.onchip = tile * (2 if paper else 1)
    elif isinstance(op, so.LinearOffChipStoreOp):
        el = shapes.nbytes(op.input)
        m.offchip = cardinality(t(op.input).dims) * el
        m.onchip = el * (2 if paper else 1)
    elif isinstance(op, so.RandomOffChipStoreOp):
        tile = shapes.nbytes(op.wdata)
        m.offchip = cardinality(t(op.wdata).dims) * tile
        depth = op.buffer_depth.value.data if op.buffer_depth is not None else 1
        m.onchip = tile * (2 if paper else depth)
    elif isinstance(op, so.BufferizeOp):
        el = shapes.nbytes(op.input)
        buf = t(op.output).element
        n = sympy.Mul(*buf.dims) if isinstance(buf, BufferType) else ZERO
        m.onchip = el + n * el * 2 if paper else n * el
    elif isinstance(op, sr.RepeatOp | sr.ExpandOp):
        m.onchip = shapes.nbytes(op.output)
    elif isinstance(op, sr.RegroupOp):  # one block: the exchanged dim and the dims inside it
        dims = t(op.input).dims
        block = sympy.Mul(*dims[len(dims) - 1 - op.dim.value.data:]) * shapes.nbytes(op.input)
        m.onchip = block * (2 if paper else 1)
    if isinstance(op, FunctionOp):
        region = _function_region(op)
        is_acc = isinstance(op, so.AccumOp | so.ScanOp)
        flops, extra = _region_costs(region, shapes, paper, with_out=is_acc)
        m.flops = flops * cardinality(t(op.input).dims)
        if is_acc:
            fused = sympy.Add(*(_apply_flops(a, shapes) for a in fused_adds(region)))
            m.fused_flops = fused * cardinality(t(op.input).dims)
        if unpadded is not None and op.input in unpadded:
            real = flops * cardinality(unpadded[op.input])
        if is_acc and not (paper and _has_matmul(region)):
            extra += shapes.nbytes(op.output)
        m.onchip = m.onchip + extra
    streams = [o for o in op.operands if isinstance(t(o), StreamType)]
    m.fires = cardinality(t(streams[0]).dims) if streams else sympy.Integer(1)
    if m.fires == 0:
        m.onchip = ZERO
    if m.flops != 0:
        real = (m.flops if real is None else real).replace(sympy.ceiling, lambda x: x)
        m.padded_flops = sympy.expand(m.flops - real)
    return m


# -- padding in graphs with numeric types ---------------------------------------------


class _Dims:
    """What the shape rules read of a stream type, with any dims (`5/16`)."""

    __slots__ = ("dims", "element", "rank")

    def __init__(self, dims: list[sympy.Expr], element) -> None:
        self.dims, self.element, self.rank = dims, element, len(dims)


def _padding_reshapes(ops: list[Operation], types: dict) -> bool:
    """True if some `step.reshape` pads a numeric dim (`ceiling(5/16)` = 1)."""
    for op in ops:
        if isinstance(op, sr.ReshapeOp) and op.input in types:
            dims = types[op.input].dims
            b, size = op.split_dim.value.data, op.chunk_size.value.data
            if 0 <= b < len(dims) and size > 0:
                d = dims[len(dims) - 1 - b]
                if d.is_Integer and int(d) % size:
                    return True
    return False


def unpadded_dims(graph: GraphOp, types: dict) -> dict[SSAValue, list[sympy.Expr]] | None:
    """The dims of every stream counting real elements only, if padding hides
    in numeric dims (None otherwise: `ceiling` marks the padding).

    A padding `step.reshape` of `d` elements into chunks of `S` has
    `d/S` real chunks instead of `ceiling(d/S)`; the shape rules carry that
    count downstream (one forward sweep; a value whose producer comes later, a
    feedback edge, keeps its type's dims). Dims a rule makes fresh (a
    partition's outputs, a flat_map's rows) are real counts already: the
    type's dims are kept. A `zip` takes the real count of a padded side (the
    full side's elements are paired with padding). An operator whose rule
    rejects the fractional counts keeps its types' dims."""
    ops = list(graph.body.block.ops)
    if not _padding_reshapes(ops, types):
        return None
    real: dict[SSAValue, list[sympy.Expr]] = {}

    def dims_of(v: SSAValue) -> _Dims:
        st: StreamType = types[v] if v in types else cast(StreamType, v.type)
        dims = real.get(v)
        return _Dims(dims if dims is not None else st.dims, st.element)

    dummy = iter(range(1 << 62))

    def fresh(key: str, base: str, ragged: bool) -> sympy.Symbol:
        return new_symbol(f"_unpadded{next(dummy)}", ragged)

    for op in ops:
        if isinstance(op, sr.ZipOp):
            # pairs a padded stream with a full one (token chunks with their
            # weight tiles): the real pairs are the padded side's
            out = types.get(op.output, op.output.type).dims
            for side in (op.rhs, op.lhs):
                if side in real:
                    written = types.get(side, side.type).dims
                    out = [x if x != w else o for x, w, o in zip(real[side], written, out)]
            real[op.output] = out
            continue
        rule = rule_for(op)
        if rule is None:
            continue
        ins = [dims_of(o) for o in op.operands if isinstance(types.get(o, o.type), StreamType)]
        try:
            shapes = rule(op, ins, fresh)  # type: ignore[arg-type]
        except (ShapeError, TypeError, ValueError):
            continue
        if isinstance(op, sr.ReshapeOp):
            s = ins[0]
            b, size = op.split_dim.value.data, op.chunk_size.value.data
            k = s.rank - 1 - b
            for shape in shapes:
                shape.dims[k] = s.dims[k] / size
        for r, shape in zip(op.results, shapes):
            written = types.get(r, r.type)
            if not isinstance(written, StreamType) or len(written.dims) != len(shape.dims):
                continue
            real[r] = [w if d in shape.fresh else d for w, d in zip(written.dims, shape.dims)]
    return real


def _label(op: Operation, index: int) -> str:
    names = [r.name_hint for r in op.results if r.name_hint]
    return f"%{names[0]} {op.name}" if names else f"#{index} {op.name}"


def compute_metrics(graph: GraphOp, onchip: str = "artifact") -> GraphMetrics:
    """Symbolic metrics of every operator of `graph` (see the module docstring)."""
    if onchip not in MODES:
        raise ValueError(f"onchip mode must be one of {MODES}, got {onchip!r}")
    types = infer_graph(graph)
    shapes = TileShapes(graph)
    ops = list(graph.body.block.ops)
    unpadded = unpadded_dims(graph, types)
    metrics = [op_metrics(op, i, types, shapes, onchip, unpadded) for i, op in enumerate(ops)]
    by_op = {m.op: m for m in metrics}
    for op in ops:
        art = artifact_expert_flops(op, types, shapes)
        if art is not None:
            by_op[op].flops_artifact = art
    return GraphMetrics(graph.sym_name.data, metrics)


# -- the artifact's FLOP formula (reference spec §5.4) ---------------------------------


def _producer(v: SSAValue) -> Operation | None:
    """The operator a stream comes from, through broadcasts."""
    while True:
        owner = v.owner
        if isinstance(owner, sr.BroadcastOp):
            v = owner.input
            continue
        return owner if isinstance(owner, Operation) else None


def _applies(op: Operation | None, names: tuple[str, ...]) -> so.ApplyOp | None:
    if not isinstance(op, FunctionOp):
        return None
    region = _function_region(op)
    return next((a for a in region.walk() if isinstance(a, so.ApplyOp) and a.fn.data in names),
                None)


def artifact_expert_flops(op: Operation, types: dict, shapes: TileShapes) -> sympy.Expr | None:
    """`b F (14 D + 1)` if `op` is the SiLU-gated product of a SwiGLU expert
    (a `map` applying `mul` to a zip of a matmul's result and a `silu` of
    another matmul's result); None otherwise. `b F` = the scalars of the
    product (its elements x tile size), `D` = the gate matmul's contraction."""
    if not isinstance(op, so.MapOp) or _applies(op, ("mul",)) is None:
        return None
    z = _producer(op.input)
    if not isinstance(z, sr.ZipOp):
        return None
    for gated in (z.lhs, z.rhs):
        silu = _producer(gated)
        if _applies(silu, ("silu",)) is None or not isinstance(silu, so.MapOp):
            continue
        mm = _applies(_producer(silu.input), MATMULS)
        if mm is None or not mm.args:
            continue
        lhs = shapes.of(mm.args[0])
        if len(lhs) != 1:
            continue
        _, d = lhs[0]
        scalars = sum((r * c for r, c in shapes.of(op.output)), ZERO)
        n = cardinality(types.get(op.output, op.output.type).dims)
        return sympy.expand(n * scalars * (14 * d + 1))
    return None


# -- the pass ----------------------------------------------------------------------


def _annotation(items: dict[str, sympy.Expr | None]) -> DictionaryAttr:
    return DictionaryAttr({k: StringAttr(metric_text(v)) for k, v in items.items()})


@dataclass(frozen=True)
class StepMetricsPass(ModulePass):
    """Report symbolic off-chip traffic, on-chip memory, FLOPs and operational intensity per op and graph.

    Options: `bind="B=64,C=3"` substitutes symbols; `onchip=artifact|paper`
    picks the on-chip conventions (reference spec §5.2 / seed §4.1);
    `annotate=true` attaches `step.metrics` attributes (else IR unchanged);
    `out="m.json"` writes the report to a file instead of stderr (quote it);
    `format=text|json|csv` picks its format (default: from the extension of
    `out`, `.json`/`.csv`, else text). The IR alone goes to stdout.

    Example: `step-opt g.mlir -p 'step-metrics{bind="B=64"}'` on

    ```mlir
    step.graph @g {
    ^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
      %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
      step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[B, 2], !step.tile<16x64xf32>>
    }
    ```

    prints on stderr `%x step.linear_offchip_load  524288  4096  0  0` (64 x 2
    tiles of 16x64 f32) and `total offchip_bytes = 1048576`;
    `step-metrics{bind="B=64" out="m.json"}` writes the same numbers as JSON.
    """

    name = "step-metrics"

    bind: str = ""
    """Symbol values to substitute, `NAME=INTEGER,...` (e.g. `B=64,C=3`)."""
    onchip: str = "artifact"
    """On-chip memory convention: `artifact` (reference spec §5.2) or `paper` (seed §4.1).
    One of: artifact, paper."""
    annotate: bool = False
    """Attach the numbers to each op as `step.metrics` attributes (else the IR is unchanged)."""
    out: str = ""
    """Write the report to this file instead of stderr."""
    format: str = ""
    """Report format; empty: from the extension of `out` (`.json`, `.csv`), else text.
    One of: text, json, csv."""

    def __post_init__(self) -> None:
        # Bad options are command-line errors (step-opt: one line, exit 2).
        try:
            parse_bindings(self.bind)
            report_format(self.format, self.out)
        except ValueError as e:
            raise ValueError(f"step-metrics: {e}") from None
        if self.onchip not in MODES:
            raise ValueError(
                f"step-metrics: onchip must be one of {', '.join(MODES)}, got '{self.onchip}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        values = parse_bindings(self.bind)
        reports: list[GraphMetrics] = []
        for graph in list(op.walk()):
            if not isinstance(graph, GraphOp):
                continue
            bound = {**graph_bindings(graph), **values}  # recorded by step-specialize
            gm = compute_metrics(graph, self.onchip).bind(bound)
            reports.append(gm)
            if self.annotate:
                _annotate(graph, gm)
        if reports or self.out:
            text = format_metrics(reports, report_format(self.format, self.out))
            emit_report(self.name, self.out, text)


def _annotate(graph: GraphOp, gm: GraphMetrics) -> None:
    """Attach `step.metrics` attributes to the non-zero operators and the graph."""
    for m in gm.ops:
        if not m.is_zero():
            m.op.attributes["step.metrics"] = _annotation({
                "offchip_bytes": m.offchip, "onchip_bytes": m.onchip,
                "flops": m.flops, "padded_flops": m.padded_flops})
    totals = {"offchip_bytes": gm.offchip, "onchip_bytes": gm.onchip,
              "flops": gm.flops, "padded_flops": gm.padded_flops}
    if gm.flops_artifact is not None:
        totals["flops_artifact"] = gm.flops_artifact
    graph.attributes["step.metrics"] = _annotation(
        {**totals, "operational_intensity": gm.operational_intensity})
