"""`step-specialize`: bind the symbols of step graphs to numbers or to a trace.

- `bind="B=64,C=3"` binds symbols by name.
- `routing="trace.npz"` binds an MoE expert-routing trace (reference spec
  §6.1): `B` is its batch; every `step.partition` whose selector comes from a
  `step.select_gen` over `E` choices gets the trace's token counts per
  expert `c_0 .. c_{E-1}` as the outer dims of its outputs (in order); a
  `step.select_gen` without values gets the trace's selectors (multi-hot
  `[B, E]` for a `[B]` stream, one-hot `[B, K, E]` for a `[B, K]` stream)
  when the types are rewritten (`rewrite=true`).
- `kv="lengths.npy"` binds a KV-length trace (§6.2): `B` is its batch; a
  `step.metadata_gen` is left as written.

The bindings are recorded in the graph's `step.bind` attribute (a dictionary,
`{B = 64 : i64, B_0 = 13 : i64}`; `bindings.set_graph_bindings`), which
`step-metrics` applies after computing the symbolic metrics (so padding is
still visible: `ceiling(B_3/16)` tiles for `B_3` tokens). They include the
dynamic tile dims the bound values determine — the rows a `retile_row`
accumulator stacks up (`acc3_rows` = 13 for an expert with 13 tokens under
dynamic tiling) — and, for a routing trace, the ragged group of a
`step.reassemble` gathering each token's experts (K). With
`rewrite=true` every stream type is rewritten with the values too
(`!step.stream<[B_3], ...>` becomes `!step.stream<[13], ...>`).

Example:

```
step-opt examples/step/moe_mixtral_dyn.mlir -p 'step-specialize{routing="examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz"},step-metrics'
```
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from steplus.dialects.step import GraphOp
from steplus.dialects.step.ops import (
    AccumOp,
    ApplyOp,
    BroadcastOp,
    PartitionOp,
    ReassembleOp,
    SelectGenOp,
)
from steplus.dialects.step.dims import dim_symbols, evaluate_bound
from steplus.dialects.step.types import BufferType, StreamType, TileType, TupleType, as_dim
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.step.bindings import (  # noqa: F401  (BIND_ATTR, parse_bind_attr: re-exported)
    BIND_ATTR,
    graph_bindings,
    parse_bind_attr,
    parse_bindings,
    set_graph_bindings,
)
from steplus.passes.step.traces import KVTrace, RoutingTrace, TraceError
from steplus.utils.attrs import i64_array
from steplus.utils.gc_pause import gc_paused


def _selector_source(v: SSAValue) -> SelectGenOp | None:
    """The select_gen a selector stream comes from (through broadcasts)."""
    while True:
        owner = v.owner
        if isinstance(owner, SelectGenOp):
            return owner
        if isinstance(owner, BroadcastOp):
            v = owner.input
            continue
        return None


def _subs_dim(d, values: dict[sympy.Symbol, int]):
    """`d` with the bound symbols replaced. Only the dim's own symbols are
    substituted (`subs` with the whole table sorts every entry on each call:
    minutes for the Qwen graphs' hundreds of bindings)."""
    e = as_dim(d)
    syms = dim_symbols(e)
    m = {s: values[s] for s in syms if s in values}
    if not m:
        return e
    if len(m) == len(syms):  # all bound: the integer, computed exactly without sympy
        v = evaluate_bound(e, m)
        if v is not None:
            return sympy.Integer(v)
    return e.xreplace(m)


def _subs(t: Attribute, values: dict[sympy.Symbol, int],
          dims: dict[sympy.Basic, sympy.Basic] | None = None) -> Attribute:
    """`t` with the bound symbols replaced (`dims`: a memo of substituted dims)."""
    def dim(d):
        if dims is None:
            return _subs_dim(d, values)
        new = dims.get(d)
        if new is None:
            new = dims[d] = _subs_dim(d, values)
        return new

    if isinstance(t, StreamType):
        return StreamType([dim(d) for d in t.dims], _subs(t.element, values, dims))
    if isinstance(t, BufferType):
        return BufferType([dim(d) for d in t.dims], _subs(t.element, values, dims))
    if isinstance(t, TupleType):
        return TupleType([_subs(e, values, dims) for e in t.elements.data])
    return t


def _symbols(graph: GraphOp) -> dict[str, sympy.Symbol]:
    found: dict[str, sympy.Symbol] = {}

    def visit(t: Attribute) -> None:
        if isinstance(t, StreamType | BufferType):
            for d in t.dims:
                for s in dim_symbols(as_dim(d)):
                    found[s.name] = s
            visit(t.element)
        elif isinstance(t, TupleType):
            for e in t.elements.data:
                visit(e)

    for v in [*graph.body.block.args, *(r for op in graph.body.block.ops for r in op.results)]:
        visit(v.type)
    return found


def routing_bindings(graph: GraphOp, trace: RoutingTrace, set_values: bool = False) -> dict[str, int]:
    """Symbol name -> value for an MoE routing trace; with `set_values`, the
    selector values of the `step.select_gen`s without values are filled in,
    too (`FillSelectorValues`)."""
    out: dict[str, int] = {"B": trace.batch}
    counts = trace.counts
    matched = False
    for op in graph.body.block.ops:
        if isinstance(op, PartitionOp):
            src = _selector_source(op.sel)
            if src is None or src.choices.value.data != trace.experts:
                continue
            matched = True
            for r, c in zip(op.outputs, counts):
                d = as_dim(r.type.dims[0])
                if isinstance(d, sympy.Symbol):
                    out[d.name] = c
                elif d.is_Integer and int(d) != c:
                    raise OpDiagnosticError(op, f"step-specialize: output has {d} elements, "
                                                f"the trace routes {c} tokens to it")
        elif isinstance(op, ReassembleOp):
            src = _selector_source(op.sel)
            dims = op.output.type.dims
            if src is None or src.choices.value.data != trace.experts or len(dims) < 2:
                continue
            ragged = as_dim(dims[1])
            if isinstance(ragged, sympy.Symbol):
                # Each token gathers its top-k experts' rows: the ragged group
                # is K everywhere, B*K in total.
                out[ragged.name] = trace.top_k
                out[f"sum_{ragged.name}"] = trace.batch * trace.top_k
    if not matched:
        raise OpDiagnosticError(graph, f"step-specialize: no step.partition driven by a "
                                       f"selector over {trace.experts} experts")
    if set_values:
        PatternRewriteWalker(FillSelectorValues(trace), apply_recursively=False).rewrite_region(
            graph.body)
    return out


class FillSelectorValues(RewritePattern):
    """Give a `step.select_gen` without values over the trace's experts the
    trace's selectors: multi-hot `[B, E]` for a `[B]` stream, one-hot
    `[B, K, E]` for a `[B, K]` stream (other ranks are left alone)."""

    def __init__(self, trace: RoutingTrace):
        self.trace = trace

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectGenOp, rewriter: PatternRewriter) -> None:
        if op.values is not None or op.choices.value.data != self.trace.experts:
            return
        if not isinstance(op.parent_op(), GraphOp):
            return
        rank = op.output.type.rank
        values = (self.trace.multi_hot() if rank == 1 else self.trace.one_hot() if rank == 2
                  else None)
        if values is None:
            return
        op.properties["values"] = i64_array(values)
        rewriter.notify_op_modified(op)


def _bind_dynamic_rows(graph: GraphOp, values: dict[str, int]) -> dict[str, int]:
    """`<acc>_rows` of retile_row accumulators the bound values determine."""
    from steplus.passes.step.tile_shapes import TileShapes

    accums = [op for op in graph.body.block.ops if isinstance(op, AccumOp) and _dynamic_rows(op)
              and any(isinstance(a, ApplyOp) and a.fn.data == "retile_row"
                      for a in op.update.walk())]
    out: dict[str, int] = {}
    if not accums:  # a statically tiled graph: no tile-shape analysis needed
        return out
    # The analysis of what the accumulators read from (the token path, not the expert
    # pipelines) gives the whole graph's shapes, except for symbols it names by counting
    # unnamed values (`t<n>_rows`: the count differs): if one is read, the whole graph's.
    shapes = TileShapes(graph, upstream_of=accums)
    read = [(shapes.of(op.output)[0][0], shapes.of(op.input)[0][0]) for op in accums]
    if shapes.counted and any(shapes.counted & dim_symbols(d) for pair in read for d in pair):
        shapes = TileShapes(graph)
        read = [(shapes.of(op.output)[0][0], shapes.of(op.input)[0][0]) for op in accums]
    for op, (rows, in_rows) in zip(accums, read):
        if not isinstance(rows, sympy.Symbol):
            continue
        t = op.input.type
        assert isinstance(t, StreamType)
        rank = op.rank.value.data
        n = as_dim(sympy.Mul(*t.dims[t.rank - rank:]) * in_rows)
        n = n.subs({x: values[x.name] for x in dim_symbols(n) if x.name in values})
        if n.is_Integer:
            out[rows.name] = int(n)
    return out


def _dynamic_rows(op: AccumOp) -> bool:
    """False when the accumulator's tile has static rows: the tile-shape analysis
    takes a written static dim as it is, so such rows are never a symbol to bind."""
    t = op.output.type
    el = t.element if isinstance(t, StreamType) else None
    return not (isinstance(el, TileType) and el.rows.data >= 0)


class SubstituteBoundSymbols(RewritePattern):
    """Retype the results of a graph's operators with the bound symbols replaced
    by their values (`!step.stream<[B_3], ...>` becomes `!step.stream<[13], ...>`).

    Only the graph's own operators (not the bodies of its higher-order ops,
    whose values are tiles) are retyped; each result changes through
    `PatternRewriter.replace_value_with_new_type`, so its users stay valid."""

    def __init__(self, graph: GraphOp, values: dict[sympy.Symbol, int]):
        self.graph = graph
        self.values = values
        self.done: dict[Attribute, Attribute] = {}
        """type -> substituted type: equal types are common (a Qwen graph's 6,424
        stream types are 2,572 distinct ones), each is substituted once."""
        self.dims: dict[sympy.Basic, sympy.Basic] = {}
        """dim -> substituted dim, likewise (`B_3` is in many types)."""

    def substituted(self, t: Attribute) -> Attribute:
        new = self.done.get(t)
        if new is None:
            new = self.done[t] = _subs(t, self.values, self.dims)
        return new

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.parent_op() is not self.graph:
            return
        for r in list(op.results):
            new = self.substituted(r.type)
            if new != r.type:
                rewriter.replace_value_with_new_type(r, new)


@gc_paused  # allocation-heavy on a large heap (utils.gc_pause)
def specialize_graph(graph: GraphOp, values: dict[str, int], rewrite: bool = False) -> dict[str, int]:
    """Record `values` (plus the dynamic tile dims they determine) in the
    graph's `step.bind` attribute; with `rewrite`, also substitute them into
    every stream type. Returns all the bindings.

    The bindings are one analysis of the whole graph (a bound symbol changes
    every type that names it); the result types then change by the
    `SubstituteBoundSymbols` pattern, and the graph's own arguments and its
    `step.bind` attribute (the graph's signature, which no operator owns)
    through the `Rewriter`."""
    merged = graph_bindings(graph)
    merged.update(values)
    merged.update(_bind_dynamic_rows(graph, merged))
    if rewrite:
        symbols = _symbols(graph)
        m = {symbols[k]: v for k, v in merged.items() if k in symbols}
        pattern = SubstituteBoundSymbols(graph, m)
        for arg in list(graph.body.block.args):
            new = pattern.substituted(arg.type)
            if new != arg.type:
                Rewriter.replace_value_with_new_type(arg, new)
        PatternRewriteWalker(pattern, apply_recursively=False,
                             walk_regions_first=False).rewrite_region(graph.body)
    set_graph_bindings(graph, merged)
    return merged


@dataclass(frozen=True)
class StepSpecializePass(ModulePass):
    """Bind symbols of step graphs to values, or to a routing / KV-length trace.

    Example: `step-opt moe.mlir -p 'step-specialize{routing="r.npz"}'` turns
    the per-expert dims `B_0 .. B_7` into the trace's token counts
    (recorded as the graph's `step.bind = {B = 64 : i64, B_0 = 13 : i64, ...}`, which
    `step-metrics` applies; `rewrite=true` also rewrites
    `!step.stream<[B_0], ...>` to `!step.stream<[13], ...>`) and fills in the
    select_gen values; `step-specialize{bind="B=64"}` binds by name.
    """

    name = "step-specialize"

    bind: str = ""
    """Symbol values, `NAME=INTEGER,...` (e.g. `B=64`)."""
    routing: str = ""
    """An MoE expert-routing trace (.npz) whose token counts bind the per-expert dims."""
    kv: str = ""
    """A KV-length trace (.npy) whose lengths bind the attention graph's dims."""
    rewrite: bool = False
    """Also rewrite the stream types with the values (else only `step.bind` records them)."""

    def __post_init__(self) -> None:
        try:
            parse_bindings(self.bind)
        except ValueError as e:  # a command-line error (step-opt: one line, exit 2)
            raise ValueError(f"step-specialize: {e}") from None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        values = parse_bindings(self.bind)
        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            bound = dict(values)
            try:
                if self.routing:
                    experts = _experts(graph)
                    bound = {**routing_bindings(graph, RoutingTrace.load(self.routing, experts),
                                              self.rewrite),
                             **values}
                if self.kv:
                    bound = {"B": _kv_batch(graph, KVTrace.load(self.kv), values), **bound}
            except TraceError as e:
                raise OpDiagnosticError(graph, f"step-specialize: {e}") from None
            specialize_graph(graph, bound, self.rewrite)


def _kv_batch(graph: GraphOp, trace: KVTrace, values: dict[str, int]) -> int:
    """The batch `B` a KV trace binds; an error when the graph has no symbol `B`
    (a trace would be accepted and change nothing) or `bind=` gives another `B`."""
    if "B" not in _symbols(graph):
        raise OpDiagnosticError(graph, f"step-specialize: kv= binds the batch symbol B to the "
                                       f"trace's {trace.batch} lengths, but @{graph.sym_name.data} "
                                       f"has no symbol B (its shapes are static); build the graph "
                                       f"for this trace instead")
    if "B" in values and values["B"] != trace.batch:
        raise OpDiagnosticError(graph, f"step-specialize: bind= gives B={values['B']} but the KV "
                                       f"trace has {trace.batch} lengths")
    return trace.batch


def _experts(graph: GraphOp) -> int:
    choices = {o.choices.value.data for o in graph.body.block.ops if isinstance(o, SelectGenOp)}
    if not choices:
        raise OpDiagnosticError(graph, "step-specialize: routing= needs a graph with a "
                                       "step.select_gen (the expert selector)")
    return max(choices)


