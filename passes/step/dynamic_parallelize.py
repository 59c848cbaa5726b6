"""`step-dynamic-parallelize{factor=P}`: static request distribution -> dynamic dispatch.

Dynamic parallelization (seed §5.4, Fig. 10; reference spec §8.4). A
statically parallelized graph runs R identical *regions*, each fed a fixed
share of the requests (the outer dim of the streams it is fed). Two static
forms are recognized:

- **interleaved**: `step.parallelize` ops (one per fed stream, all with R
  outputs, one request per turn: `rank` = the stream's rank - 1) deal the
  requests round-robin; region r is everything downstream of the r-th
  outputs. Identity `step.flatten`s (`min = max`) feeding a parallelize only
  are looked through.
- **coarse**: the graph is R disconnected identical components, each with its
  own sources (`step.linear_offchip_load` without ref, `step.metadata_gen`)
  of one block of requests; region r is everything downstream of component
  r's sources (again through identity flattens). The pass concatenates the
  blocks, in region order, into one source per stream: loads must read
  adjacent blocks of one tensor (`base_addr` of block r+1 = end of block r),
  metadata values are concatenated.

The pass replaces the distribution by the Fig. 10 dispatch over P regions:

```text
%em_data, %em_sel = step.eager_merge %sig0, ..., %sig{P-1}   // feedback: "region r is free"
step.consume %em_data
%pem_last, %pem_steal = step.partition %em_sel, %ctl_a       // drop the last P signals
%rr = step.flatten (step.select_gen <identity P x P>)        // requests 0..P-1 -> regions 0..P-1
%asg = step.flatten (step.reassemble %rr, %pem_steal, %ctl_b) // then the first free region
%x0, ..., %x{P-1} = step.partition %x, %asg#k               // per fed stream x (a broadcast of %asg)
```

and builds P copies of region 0 behind the partitions (the fan-out
broadcasts of the fed streams of every region first, then the region
bodies, as the hand-written graph does). A region signals that it is free
when it has read all the data of its current request: its first
`step.random_offchip_load` (the K cache in the attention graph) is
broadcast to `%sig<r> = step.accum {rank = rank - 1} "signal_all_read"`, one
signal per request, fed back to the eager_merge. Types: in region r, a stream
whose outer dim is region 0's request count gets the dispatched count
`N<r>` (the last `B - N0 - ... - N{P-2}`); symbols local to region 0 (`?L0`,
`Krest0`) are renamed per region (`?L<r>`). `step.bind` entries about the
old regions' local symbols (`sum_L0 = ...`) are dropped: they now depend on
the run.

Legality: the regions must be identical (op for op, properties included),
read nothing from outside but their fed streams, write their results only
through `step.random_offchip_store` (addressed per request, so the dispatch
order does not change what is written; a `step.linear_offchip_store` writes
in stream order) and contain no `step.eager_merge`; the request count must be
static and at least P. Otherwise the graph is left alone with a remark
saying why (a too small request count is an error).

Example: `step-opt examples/step/attention_interleaved_b16_high.mlir -p
'step-dynamic-parallelize{factor=4}'` gives the graph of
`examples/step/attention_dynamic_b16_high.mlir` (op for op); so does the
coarse graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import dim_symbols, to_expr
from steplus.dialects.step.builder import ADDRESS, Graph, Stream, eager_merge, reassemble
from steplus.dialects.step.types import RaggedSymbol, StreamType
from steplus.utils.diagnostics import NotApplicable, OpDiagnosticError, emit
from steplus.dialects.step.shape_rules import new_symbol
from steplus.utils.attrs import ints_of

NAME = "step-dynamic-parallelize"


class Strategy(Enum):
    """How a graph is statically parallelized."""

    INTERLEAVED = "interleaved"  # requests dealt round-robin by step.parallelize
    COARSE = "coarse"  # one block of requests per region


@dataclass
class StaticParallel:
    """A statically parallelized graph: R regions fed slices of S streams."""

    kind: Strategy
    regions: list[list[Operation]]  # per region, its ops in block order
    entries: list[list[SSAValue]]  # entries[r][s]: region r's slice of fed stream s
    counts: list[sympy.Expr]  # requests per region (the entries' outer dim)
    sources: list[list[Operation]]  # coarse: sources[s][r]; interleaved: []
    whole: list[SSAValue] = field(default_factory=list)  # interleaved: the streams dealt
    drop: list[Operation] = field(default_factory=list)  # distribution ops to erase


def _stream(v: SSAValue) -> StreamType:
    t = v.type
    assert isinstance(t, StreamType)
    return t


def _identity_flatten(op: Operation | None) -> bool:
    return isinstance(op, sr.FlattenOp) and op.min.value.data == op.max.value.data


def _through_flattens(v: SSAValue, drop: list[Operation]) -> SSAValue:
    """Up from `v` through identity flattens used only once (recorded in `drop`)."""
    while isinstance(f := v.owner, sr.FlattenOp) and _identity_flatten(f) \
            and len(list(v.uses)) == 1:
        drop.append(f)
        v = f.input
    return v


def _down_flattens(v: SSAValue, drop: list[Operation]) -> SSAValue:
    """Down from a source through identity flattens that are its only user."""
    while len(uses := list(v.uses)) == 1 and _identity_flatten(uses[0].operation):
        drop.append(uses[0].operation)
        v = uses[0].operation.results[0]
    return v


def _closure(entries: list[SSAValue], order: dict[Operation, int]) -> list[Operation]:
    seen: set[Operation] = set()
    work = list(entries)
    while work:
        for use in list(work.pop().uses):
            user = use.operation
            while user is not None and user not in order:
                user = user.parent_op()  # a use inside a map body: its top-level op
            if user is not None and user not in seen:
                seen.add(user)
                work.extend(user.results)
    return sorted(seen, key=order.__getitem__)


def _signature(ops: list[Operation], entries: list[SSAValue]) -> list[tuple]:
    """Region structure: op names, properties and operand wiring (NotApplicable: what is wrong)."""
    index = {op: i for i, op in enumerate(ops)}
    slot = {v: s for s, v in enumerate(entries)}
    sig = []
    for op in ops:
        wiring = []
        for v in op.operands:
            if v in slot:
                wiring.append(("in", slot[v]))
            elif v.owner in index:
                wiring.append((index[v.owner], v.index))  # type: ignore[index, union-attr]
            else:
                raise NotApplicable(f"{op.name} reads a stream from outside its region")
        props = tuple(sorted((k, str(p)) for k, p in op.properties.items()))
        sig.append((op.name, props, tuple(wiring), len(op.results)))
    return sig


def _legal(ops: list[Operation]) -> None:
    for op in ops:
        if isinstance(op, so.LinearOffChipStoreOp):
            raise NotApplicable("a region writes with step.linear_offchip_store (in stream order, "
                                "which a dynamic dispatch changes)")
        if isinstance(op, sr.EagerMergeOp):
            raise NotApplicable("a region already merges eagerly (step.eager_merge)")
    if not any(isinstance(op, so.RandomOffChipLoadOp) for op in ops):
        raise NotApplicable("a region reads no per-request data (no step.random_offchip_load "
                            "to signal with)")


def _interleaved(graph: GraphOp, pars: list[sr.ParallelizeOp],
                 order: dict[Operation, int]) -> StaticParallel:
    n = len(pars[0].outputs)
    if any(len(p.outputs) != n for p in pars):
        raise NotApplicable("the step.parallelize ops deal to different numbers of regions")
    drop: list[Operation] = list(pars)
    whole = []
    for p in pars:
        if p.rank.value.data != _stream(p.input).rank - 1:
            raise NotApplicable("a step.parallelize deals groups other than one outer element (request)")
        whole.append(_through_flattens(p.input, drop))
    outer = {_stream(w).dims[0] for w in whole}
    if len(outer) != 1:
        raise NotApplicable("the parallelized streams have different outer dims")
    entries: list[list[SSAValue]] = [[p.outputs[r] for p in pars] for r in range(n)]
    regions = [_closure(e, order) for e in entries]
    counts = [_stream(e[0]).dims[0] for e in entries]
    return StaticParallel(Strategy.INTERLEAVED, regions, entries, counts, [], whole, drop)


def _components(graph: GraphOp) -> list[list[Operation]]:
    ops = list(graph.body.block.ops)
    parent = {op: op for op in ops}

    def find(x: Operation) -> Operation:
        while parent[x] is not x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for op in ops:
        for v in op.operands:
            if isinstance(v.owner, Operation) and v.owner in parent:
                parent[find(op)] = find(v.owner)
    groups: dict[Operation, list[Operation]] = {}
    for op in ops:
        groups.setdefault(find(op), []).append(op)
    return list(groups.values())


def _coarse(graph: GraphOp, order: dict[Operation, int]) -> StaticParallel:
    comps = _components(graph)
    drop: list[Operation] = []
    entries, sources = [], []
    for comp in comps:
        srcs = [op for op in comp if not op.operands and op.results]
        if not srcs or any(not isinstance(s, so.LinearOffChipLoadOp | sg.MetadataGenOp)
                           for s in srcs):
            raise NotApplicable("no step.parallelize, and the graph's sources are not "
                                "per-request loads and metadata")
        sources.append(srcs)
        entries.append([_down_flattens(s.results[0], drop) for s in srcs])
    counts = []
    for e in entries:
        outer = {_stream(v).dims[0] for v in e}
        if len(outer) != 1:
            raise NotApplicable("no step.parallelize, and the sources differ in their outer (request) dim")
        counts.append(outer.pop())
    regions = [_closure(e, order) for e in entries]
    srcs_t = [list(x) for x in zip(*sources)] if len({len(s) for s in sources}) == 1 else None
    if srcs_t is None:
        raise NotApplicable("the graph's components have different numbers of sources")
    return StaticParallel(Strategy.COARSE, regions, entries, counts, srcs_t, [], drop)


def find_static_parallel(graph: GraphOp) -> StaticParallel:
    """The static parallelization of `graph`; `NotApplicable` says why there is none."""
    order = {op: i for i, op in enumerate(graph.body.block.ops)}
    pars = [op for op in graph.body.block.ops if isinstance(op, sr.ParallelizeOp)]
    found = _interleaved(graph, pars, order) if pars else _coarse(graph, order)
    owner: dict[Operation, int] = {}
    for r, ops in enumerate(found.regions):
        for op in ops:
            if owner.setdefault(op, r) != r:
                raise NotApplicable("the regions share operators")
        _legal(ops)
    sig = _signature(found.regions[0], found.entries[0])
    for r in range(1, len(found.regions)):
        if _signature(found.regions[r], found.entries[r]) != sig:
            raise NotApplicable("the regions differ in structure")
    if found.kind is Strategy.COARSE:
        _mergeable(found)
    return found


# -- merging the coarse blocks ---------------------------------------------------------


def _mergeable(found: StaticParallel) -> None:
    for per_region in found.sources:
        first = per_region[0]
        if any(op.name != first.name for op in per_region):
            raise NotApplicable("the regions' sources differ")
        if isinstance(first, so.LinearOffChipLoadOp):
            end = None
            for op in per_region:
                assert isinstance(op, so.LinearOffChipLoadOp)
                ins, outs = ints_of(op.tiled_in_shape), ints_of(op.tiled_out_shape)
                t = _stream(op.output)
                if ins != outs or t.dims[0] != ins[0] or ins[1:] != ints_of(first.tiled_in_shape)[1:] \
                        or op.output.type.element != first.output.type.element:
                    raise NotApplicable("a region's load is not a plain block of requests")
                stride = [int(np.prod(ins[k + 1:])) for k in range(len(ins))]
                if ints_of(op.stride) != stride:
                    raise NotApplicable("a region's load is not a plain block of requests")
                base = op.base_addr.value.data
                if end is not None and base != end:
                    raise NotApplicable("the regions' blocks of requests are not adjacent in memory")
                el = t.element
                nbytes = el.rows.data * el.cols.data * el.bytes_per_scalar()  # type: ignore[union-attr]
                end = base + int(np.prod(ins)) * nbytes


def _merged_source(per_region: list[Operation], total: int) -> Operation:
    first = per_region[0]
    t = _stream(first.results[0])
    if isinstance(first, sg.MetadataGenOp):
        values = [v for op in per_region for v in ints_of(op.values)]  # type: ignore[attr-defined]
        new = first.clone()
        new.properties["values"] = DenseArrayBase.from_list(i64, values)
    else:
        assert isinstance(first, so.LinearOffChipLoadOp)
        shape = [total, *ints_of(first.tiled_in_shape)[1:]]
        new = first.clone()
        new.properties["tiled_in_shape"] = DenseArrayBase.from_list(i64, shape)
        new.properties["tiled_out_shape"] = DenseArrayBase.from_list(i64, shape)
    Rewriter.replace_value_with_new_type(new.results[0],
                                         StreamType([total, *t.dims[1:]], t.element))
    hint = first.results[0].name_hint
    if hint:
        new.results[0].name_hint = hint[:-1] if hint.endswith("0") and len(hint) > 1 else hint
    return new


# -- the rewrite ---------------------------------------------------------------------


def _symbols(t: Attribute) -> set[sympy.Symbol]:
    if not isinstance(t, StreamType):
        return set()
    return {s for d in t.dims for s in dim_symbols(to_expr(d))}


def _region_name(name: str, r: int, taken: set[str]) -> str:
    base = name[:-1] if name.endswith("0") and not name[-2:-1].isdigit() else None
    out = f"{base}{r}" if base is not None else (name if r == 0 else f"{name}_{r}")
    while out in taken:
        out += "_"
    return out


def _hint(hint: str | None, r: int) -> str | None:
    if hint is None:
        return None
    runs = re.findall(r"\d+", hint)
    if runs == ["0"]:
        return re.sub(r"0", str(r), hint)
    return hint if r == 0 else f"{hint}_r{r}"


class _Rewrite:
    def __init__(self, graph: GraphOp, found: StaticParallel, factor: int):
        self.graph, self.found, self.P = graph, found, factor
        self.block = graph.body.block
        self.g = Graph("_")
        self.g.block = self.block
        self.all_symbols = {s.name for op in self.block.walk() for r in op.results
                            for s in _symbols(r.type)}
        self.g._names = set(self.all_symbols)

    def run(self) -> None:
        f, P = self.found, self.P
        whole = self._whole_sources()
        total = _stream(whole[0].value).dims[0]
        if not (total.is_Integer and int(total) >= P):
            raise OpDiagnosticError(self.graph, f"{NAME}: {total} requests cannot be "
                                                f"dispatched over {P} regions")
        B = int(total)
        counts = self._counts(B)
        signals, parts = self._dispatch(whole, counts, B)
        template = f.regions[0]
        local = self._local_symbols(template)
        fans = [op for op in template if isinstance(op, sr.BroadcastOp)
                and op.input in f.entries[0]]
        body = [op for op in template if op not in fans]
        sig_load = next(op for op in body if isinstance(op, so.RandomOffChipLoadOp))
        mappings = [dict(zip(f.entries[0], [p[r].value for p in parts])) for r in range(P)]
        renames = [self._renames(local, r) for r in range(P)]
        clones: list[list[Operation]] = [[] for _ in range(P)]
        sig_src: list[SSAValue] = []
        for phase in (fans, body):
            for r in range(P):
                for op in phase:
                    c = self._clone(op, mappings[r], f.counts[0], counts[r], renames[r], r)
                    clones[r].append(c)
                    if op is sig_load:
                        part, sig = Stream(self.g, c.results[0]).broadcast(
                            2, [f"{c.results[0].name_hint}_part", f"{c.results[0].name_hint}_sig"]
                            if c.results[0].name_hint else [])
                        mappings[r][op.results[0]] = part.value
                        sig_src.append(sig.value)
        for r in range(P):  # operands produced later in the template (none in DAG regions)
            for c in clones[r]:
                for i, v in enumerate(c.operands):
                    if v in mappings[r] and mappings[r][v] is not v:
                        c.operands[i] = mappings[r][v]
        for r, (fb, src) in enumerate(zip(signals, sig_src)):
            rank = _stream(src).rank - 1
            fb.connect(Stream(self.g, src).accum("signal_all_read", rank, acc=ADDRESS,
                                                 name=f"sig{r}"))
        self._erase(local)

    def _whole_sources(self) -> list[Stream]:
        f = self.found
        if f.kind is Strategy.INTERLEAVED:
            return [Stream(self.g, v) for v in f.whole]
        out = []
        total = sum((to_expr(c) for c in f.counts), sympy.Integer(0))
        for per_region in f.sources:
            if len(per_region) == 1:
                out.append(Stream(self.g, per_region[0].results[0]))
                continue
            new = _merged_source(per_region, int(total))
            Rewriter.insert_op(new, InsertPoint.before(per_region[0]))
            out.append(Stream(self.g, new.results[0]))
        return out

    def _counts(self, B: int) -> list[sympy.Expr]:
        names = []
        for r in range(self.P - 1):
            name = f"N{r}"
            while name in self.g._names:
                name += "_"
            names.append(name)
        self.g._names |= set(names)
        syms = [new_symbol(n, False) for n in names]
        return [*syms, sympy.Integer(B) - sum(syms, sympy.Integer(0))]

    def _dispatch(self, whole: list[Stream], counts: list[sympy.Expr], B: int):
        g, P = self.g, self.P
        one_hot = lambda ch, n: np.eye(n, dtype=np.int64)[ch]  # noqa: E731
        signals = [g.feedback([c], ADDRESS, name=f"sig{r}_fb") for r, c in enumerate(counts)]
        em_data, em_sel = eager_merge(signals, ["em_data", "em_sel"])
        em_data.consume()
        ctl_a = g.select_gen(2, [B], one_hot([1] * (B - P) + [0] * P, 2), name="ctl_a_gen")
        done, steal = em_sel.partition(ctl_a.flatten(0, 0, name="ctl_a"),
                                       ["pem_last", "pem_steal"])
        done.with_dims([P]).consume()
        steal.with_dims([B - P])
        rr = g.select_gen(P, [P], one_hot(list(range(P)), P), name="rr_gen").flatten(
            0, 0, name="rr")
        ctl_b = g.select_gen(2, [B], one_hot([0] * P + [1] * (B - P), 2), name="ctl_b")
        asg = reassemble([rr, steal], ctl_b, name="asg_reasm").with_dims([B, 1]).flatten(
            0, 1, name="asg")
        bases = [h.removeprefix("load_").removeprefix("meta_") if (h := w.value.name_hint)
                 else None for w in whole]
        sels = asg.broadcast(len(whole), [f"asg_{b}" if b else None for b in bases])
        parts = []
        for w, sel, base in zip(whole, sels, bases):
            outs = w.partition(sel, [f"{base}{r}" if base else None for r in range(P)])
            parts.append([o.with_dims([c, *o.dims[1:]]) for o, c in zip(outs, counts)])
        return signals, parts

    def _local_symbols(self, template: list[Operation]) -> set[sympy.Symbol]:
        inside = {s for op in template for r in op.results for s in _symbols(r.type)}
        region_ops = {op for ops in self.found.regions for op in ops}
        outside = {s for op in self.block.ops if op not in region_ops
                   for r in op.results for s in _symbols(r.type)}
        self.taken = {s.name for s in outside} | set(self.g._names) - {
            s.name for op in region_ops for r in op.results for s in _symbols(r.type)}
        return inside - outside

    def _renames(self, local: set[sympy.Symbol], r: int) -> dict[sympy.Symbol, sympy.Symbol]:
        out = {}
        for s in sorted(local, key=lambda x: x.name):
            name = _region_name(s.name, r, self.taken)
            out[s] = new_symbol(name, isinstance(s, RaggedSymbol))
        return out

    def _clone(self, op: Operation, mapping: dict[SSAValue, SSAValue], old_n: sympy.Expr,
               new_n: sympy.Expr, renames: dict, r: int) -> Operation:
        c = op.clone(value_mapper=dict(mapping))
        Rewriter.insert_op(c, InsertPoint.at_end(self.block))
        for old, new in zip(op.results, list(c.results)):
            t = new.type
            if isinstance(t, StreamType):
                dims = [to_expr(d).xreplace(renames) for d in t.dims]
                if dims and to_expr(t.dims[0]) == to_expr(old_n):
                    dims[0] = new_n
                nt = StreamType(dims, t.element)
                if nt != t:
                    new = Rewriter.replace_value_with_new_type(new, nt)
            new.name_hint = _hint(old.name_hint, r)
            mapping[old] = new
        return c

    def _erase(self, local: set[sympy.Symbol]) -> None:
        f = self.found
        doomed: list[Operation] = [op for ops in f.regions for op in ops]
        doomed += f.drop
        if f.kind is Strategy.COARSE:
            doomed += [op for per in f.sources if len(per) > 1 for op in per]
        old_local = set(local)
        for ops in f.regions[1:]:
            old_local |= {s for op in ops for r in op.results for s in _symbols(r.type)}
        for op in doomed:  # a feedback edge may run from a later doomed op to an earlier one
            Rewriter.erase_op(op, safe_erase=False)
        self._drop_bindings({s.name for s in old_local})

    def _drop_bindings(self, names: set[str]) -> None:
        from steplus.passes.step.bindings import graph_bindings, set_graph_bindings

        kept = {k: v for k, v in graph_bindings(self.graph).items()
                if k not in names and k.removeprefix("sum_") not in names}
        set_graph_bindings(self.graph, kept)


def dynamic_parallelize(graph: GraphOp, factor: int) -> bool:
    """Rewrite `graph` if it is statically parallelized; False (and a remark) if not."""
    try:
        found = find_static_parallel(graph)
    except NotApplicable as why:
        emit(graph, "remark", f"{NAME}: nothing to do: {why}")
        return False
    _Rewrite(graph, found, factor).run()
    from steplus.dialects.step.inference import infer_graph

    infer_graph(graph)
    return True


@dataclass(frozen=True)
class StepDynamicParallelizePass(ModulePass):
    """Dispatch requests to P regions on demand (Partition + EagerMerge feedback, Fig. 10).

    Example: `step-opt attention_interleaved_b16_high.mlir -p
    'step-dynamic-parallelize{factor=4}'` replaces the round-robin
    `step.parallelize`s by an `step.eager_merge` of the regions' "request
    read" signals that picks the region of each request after the first 4,
    and `step.partition`s of the requests' streams by that assignment: the
    graph `attention_dynamic_b16_high.mlir` is.
    """

    name = NAME

    factor: int = 4
    """Number of parallel regions requests are dispatched to (P)."""

    def __post_init__(self) -> None:
        if self.factor < 1:
            raise ValueError(f"{NAME}: factor must be a positive integer, got {self.factor}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            dynamic_parallelize(graph, self.factor)
