"""Cutting a step graph into kernels that run one after the other.

A *kernel* is a `step.graph` the chip runs as one launch; the kernels of one
source graph `@g` are `@g_k0, @g_k1, ...` in launch order, each with the
attributes `sn40l.kernel = k`, `sn40l.kernels = n` and `sn40l.source = "g"`.
Every stream that crosses a cut goes through off-chip memory: the producing
kernel stores it once (`linear_offchip_store`, `name = "<sym>_st"`), every
consuming kernel loads it back (`linear_offchip_load` walking the stream's
dims row-major, so the elements and their stop levels are the original
stream's; `name = "<sym>_ld<k>"`). Both carry `sn40l.symbol = "<sym>"` and
the symbol's address; intermediate symbols are laid out one after the other
from `INTERMEDIATE_BASE` (step-allocate-memory assigns real addresses).

Which ops share a kernel is the caller's choice for the *anchor* ops (compute,
routing and collectives: map, accum, scan, flat_map, partition, reassemble,
all_reduce, ..., and static gathers: a `random_offchip_load` of a
`metadata_gen`'s addresses); the
other ops follow (`assign`):

- off-chip loads without a reference stream and the generators
  (`select_gen`, `metadata_gen`) are re-materialized in every kernel that
  uses them (a weight is re-read from HBM, not copied);
- stores and `consume` go with their producer;
- shape and plumbing ops (flatten, reshape, repeat, expand, promote, zip,
  loads driven by a reference stream) go with their first consumer;
- `step.broadcast` is dissolved: a value used in several places is stored
  once and loaded by each consuming kernel; inside a kernel the fan-out gets
  a fresh `step.broadcast` (a stream has one consumer).

A stream crossing a cut must have static dims and a tile element (a
selector or a ragged stream cannot be written to memory); otherwise the cut
is an error naming the producing op.

Example: a load -> exp -> add-accum -> store graph cut at every anchor is
two kernels, `@g_k0` (load, exp, store of `g.t0`) and `@g_k1` (load of
`g.t0`, accum, store).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import sympy

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.builder import Builder
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import RaggedSymbol, to_expr
from steplus.dialects.step.types import StreamType, TileType
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.utils.attrs import i64_array
from steplus.dialects.sn40l_attrs import KERNEL, KERNELS, SOURCE, SYMBOL
from steplus.dialects.step.discardable import FANOUT_DEPTH, NAME
from steplus.passes.step.bindings import graph_bindings, set_graph_bindings

INTERMEDIATE_BASE = 1 << 44
"""Where the cut streams are laid out (above every address the workloads use)."""

# the sn40l.* attributes written here (kernel, kernels, source, symbol) are
# registered in dialects/sn40l_attrs.py: written with their `set`, read with `get`

ANCHORS = (so.MapOp, so.AccumOp, so.ScanOp, so.FlatMapOp, sr.PartitionOp, sr.ReassembleOp,
           sr.EagerMergeOp, sr.ParallelizeOp, so.RandomOffChipStoreOp, sg.ExpertAddrGenOp,
           sg.CacheReadAddrGenOp, sg.FilterLastTileOp, so.AllReduceOp, so.AllGatherOp)
SINKS = (so.LinearOffChipStoreOp, sr.ConsumeOp)
MEMORY = (so.LinearOffChipLoadOp, so.LinearOffChipStoreOp, so.RandomOffChipLoadOp,
          so.RandomOffChipStoreOp)


def is_anchor(op: Operation) -> bool:
    return isinstance(op, ANCHORS) or is_gather(op)


def is_gather(op: Operation) -> bool:
    """A static gather: a random load of a `metadata_gen`'s addresses (the route's data
    movement, embedding lookups, im2col) — an operator of its own, so a gather that
    reads what an earlier operator stored is cut from it like any other reader."""
    return isinstance(op, so.RandomOffChipLoadOp) and bool(op.operands) and \
        isinstance(source(op.operands[0]).owner, sg.MetadataGenOp)


def is_remat(op: Operation) -> bool:
    """Ops copied into every kernel that uses them (no stream operand)."""
    return (isinstance(op, so.LinearOffChipLoadOp) and op.ref is None) or \
        isinstance(op, (sg.SelectGenOp, sg.MetadataGenOp))


def ensure_names(graph: GraphOp) -> None:
    """Give every off-chip memory op a `name` (`ld0`, `st0`, ... in block order)
    so the same tensor has the same name in the source graph and its kernels."""
    counts = {"ld": 0, "st": 0}
    for op in graph.body.block.ops:
        if isinstance(op, MEMORY):
            kind = "ld" if isinstance(op, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)) \
                else "st"
            if NAME.get(op) is None:
                NAME.set(op, f"{kind}{counts[kind]}")
            counts[kind] += 1


def source(v: SSAValue) -> SSAValue:
    """`v` with broadcasts seen through (the value actually produced)."""
    while isinstance(v.owner, sr.BroadcastOp):
        v = v.owner.input
    return v


def users(v: SSAValue) -> Iterator[tuple[Operation, int]]:
    """(op, operand index) of every consumer of `v`, through broadcasts."""
    for use in list(v.uses):
        if isinstance(use.operation, sr.BroadcastOp):
            for r in use.operation.results:
                yield from users(r)
        else:
            yield use.operation, use.index


def assign(graph: GraphOp, anchor_kernel: dict[Operation, int]) -> dict[Operation, set[int]]:
    """Kernels of every op given the anchors' (see module doc)."""
    ops = [op for op in graph.body.block.ops if not isinstance(op, sr.BroadcastOp)]
    of: dict[Operation, set[int]] = {op: {k} for op, k in anchor_kernel.items()}

    def user_kernels(op: Operation) -> set[int]:
        ks: set[int] = set()
        for r in op.results:
            for u, _ in users(r):
                ks |= of.get(u, set())
        return ks

    def producer_kernels(op: Operation) -> set[int]:
        ks: set[int] = set()
        for v in op.operands:
            owner = source(v).owner
            if isinstance(owner, Operation):
                ks |= of.get(owner, set())
        return ks

    for _ in range(3):  # followers of followers settle in a few sweeps
        for op in reversed(ops):
            if op in anchor_kernel or isinstance(op, SINKS):
                continue
            ks = user_kernels(op)
            if ks:
                of[op] = ks if is_remat(op) else {min(ks)}
        for op in ops:
            if isinstance(op, SINKS) or (op not in of and not is_anchor(op)):
                ks = producer_kernels(op)
                if ks:
                    of[op] = {min(ks)}
    for op in ops:
        of.setdefault(op, {0})
    return of


def tile_bytes(t: Attribute) -> int:
    """Bytes of one tile of a stream of static tiles (what `_static` has checked)."""
    assert isinstance(t, StreamType) and isinstance(t.element, TileType)
    el = t.element
    return el.rows.data * el.cols.data * el.bytes_per_scalar()


def context_name(op: Operation) -> str:
    """The `name` attribute `ensure_names` gave an operator (its simulator context)."""
    name = NAME.get(op)
    if name is None:
        raise ValueError(f"{op.name} has no name (ensure_names first)")
    return name


def _static(v: SSAValue, op: Operation,
            tag: str = "step-kernelize") -> tuple[list[int], TileType]:
    t = v.type
    why = "its element is not a static tile"
    if isinstance(t, StreamType) and isinstance(el := t.element, TileType) and el.is_static:
        try:
            return [int(d) for d in t.dims], el
        except TypeError:
            why = "its dims are not numbers (bind them first: step-specialize)"
    raise OpDiagnosticError(op, f"{tag}: cannot cut the stream {op.name} produces into "
                                f"kernels: {why}")


class UnstorableCut(OpDiagnosticError):
    """A cut stream that cannot go through memory (ragged dims, a selector, addresses): its
    producer's kernel `first` and its user's kernel `last` must be one kernel."""

    def __init__(self, op: Operation, message: str, first: int, last: int):
        super().__init__(op, message)
        self.first, self.last = first, last


def storable(v: SSAValue) -> bool:
    """Whether a stream can be stored and loaded back: static dims and static tiles,
    not addresses (`1x1` integer tiles: metadata and cache addresses carry values the
    timing simulation needs, so they stay in the kernel that generates them)."""
    t = v.type
    if not (isinstance(t, StreamType) and isinstance(el := t.element, TileType)
            and el.is_static and not el.is_address):
        return False
    return all(to_expr(d).is_number for d in t.dims)


def _producer(v: SSAValue) -> Operation:
    """The op a cut stream comes from (cut streams are op results)."""
    assert isinstance(v.owner, Operation)
    return v.owner


def _prod(vs: list[int]) -> int:
    out = 1
    for v in vs:
        out *= v
    return out


def split(graph: GraphOp, of: dict[Operation, set[int]], tag: str) -> list[GraphOp]:
    """The kernels of `graph` (ops placed by `of`), in launch order."""
    name = graph.sym_name.data
    n = max((max(ks) for ks in of.values()), default=0) + 1
    blocks = [Block() for _ in range(n)]
    builders = [Builder(InsertPoint.at_end(b)) for b in blocks]  # each kernel's ops, in order
    maps: list[dict[SSAValue, SSAValue]] = [{} for _ in range(n)]
    symbols: dict[SSAValue, tuple[str, int]] = {}  # produced value -> (symbol, address)
    loaded: list[dict[SSAValue, SSAValue]] = [{} for _ in range(n)]
    stored: set[SSAValue] = set()
    next_addr = [INTERMEDIATE_BASE]
    order = {op: i for i, op in enumerate(graph.body.block.ops)}

    def symbol_of(v: SSAValue, producer: Operation) -> tuple[str, int]:
        if v not in symbols:
            dims, _ = _static(v, producer, tag)
            size = tile_bytes(v.type)
            for d in dims:
                size *= d
            symbols[v] = (f"{name}.t{len(symbols)}", next_addr[0])
            next_addr[0] += -(-size // 4096) * 4096
        return symbols[v]

    def operand(k: int, v: SSAValue, user: Operation) -> SSAValue:
        v = source(v)
        if v in maps[k]:
            return maps[k][v]
        if isinstance(v, BlockArgument):
            arg = blocks[k].insert_arg(v.type, len(blocks[k].args))
            maps[k][v] = arg
            return arg
        producer = v.owner
        assert isinstance(producer, Operation)  # not a block argument (handled above)
        kp = min(of[producer])
        if kp >= k:
            raise OpDiagnosticError(user, f"{tag}: {user.name} would run in kernel {k} before "
                                          f"its producer {producer.name} (kernel {kp})")
        if v in loaded[k]:
            return loaded[k][v]
        if not storable(v):
            raise UnstorableCut(producer, f"{tag}: the stream {producer.name} produces "
                                          "(ragged, a selector or addresses) cannot cross "
                                          "kernels", kp, k)
        sym, addr = symbol_of(v, producer)
        stored.add(v)
        dims, el = _static(v, producer, tag)
        total = 1
        for d in dims:
            total *= d
        # the stored tiles in order: tile i of the walk is tile i of a [total] tensor
        in_shape = [total] + [1] * (len(dims) - 1) if dims else [1]
        stride = [_prod(dims[j + 1:]) for j in range(len(dims))] if dims else [1]
        ld = so.LinearOffChipLoadOp.create(
            result_types=[StreamType(dims, el)],
            properties={"base_addr": IntegerAttr(addr, i64), "tiled_in_shape": i64_array(in_shape),
                        "stride": i64_array(stride), "tiled_out_shape": i64_array(dims)},
            attributes={"name": StringAttr(f"{sym.rsplit('.', 1)[1]}_ld{k}"),
                        SYMBOL.name: SYMBOL.attr(sym)})
        builders[k].insert(ld)
        loaded[k][v] = ld.output
        return ld.output

    # a fan-out's deep buffers (`fanout_depth`) stay with the stream in every kernel
    deep = {source(op.input): d for op in graph.body.block.ops
            if isinstance(op, sr.BroadcastOp) and (d := FANOUT_DEPTH.get(op))}
    for op in graph.body.block.ops:
        if isinstance(op, sr.BroadcastOp):
            continue
        for k in sorted(of[op]):
            mapper = {v: operand(k, v, op) for v in op.operands}
            clone = op.clone(value_mapper=mapper)
            builders[k].insert(clone)
            for a, b in zip(op.results, clone.results):
                maps[k][a] = b
    # stores of the cut streams, in their producer's kernel, after the producer
    for v in sorted(stored, key=lambda v: order[_producer(v)]):
        k = min(of[_producer(v)])
        sym, addr = symbols[v]
        st = so.LinearOffChipStoreOp.create(
            operands=[maps[k][v]], properties={"base_addr": IntegerAttr(addr, i64)},
            attributes={"name": StringAttr(f"{sym.rsplit('.', 1)[1]}_st"),
                        SYMBOL.name: SYMBOL.attr(sym)})
        builders[k].insert(st)
    graphs = []
    for k, block in enumerate(blocks):
        fan_out(block, {w: d for v, d in deep.items()
                        for w in (maps[k].get(v), loaded[k].get(v)) if w is not None})
        g = GraphOp(f"{name}_k{k}", Region(block))
        set_graph_bindings(g, graph_bindings(graph))  # the symbols' values hold in every kernel
        KERNEL.set(g, k)
        KERNELS.set(g, n)
        SOURCE.set(g, name)
        graphs.append(g)
    return graphs


def fan_out(block: Block, depths: dict[SSAValue, int] | None = None) -> None:
    """A `step.broadcast` after every stream with several consumers (with `fanout_depth`
    = `depths[stream]` where given: output channels that hold that many tiles)."""
    for op in list(block.ops):
        for res in op.results:
            uses = list(res.uses)
            if len(uses) > 1 and isinstance(res.type, StreamType):
                b = sr.BroadcastOp.create(operands=[res], result_types=[res.type] * len(uses))
                if depths and res in depths:
                    FANOUT_DEPTH.set(b, depths[res])
                Rewriter.insert_op(b, InsertPoint.after(op))
                for u, r in zip(uses, b.results):
                    u.operation.operands[u.index] = r


def replace_graph(module: ModuleOp, graph: GraphOp, kernels: list[GraphOp]) -> None:
    """Put `kernels` where `graph` was."""
    parent = graph.parent_block()
    assert parent is not None
    Rewriter.insert_op(kernels, InsertPoint.before(graph))
    Rewriter.erase_op(graph)


def kernel_groups(module: ModuleOp) -> list[list[GraphOp]]:
    """The graphs of `module` as launch sequences: a source's kernels in order,
    an unkernelized graph alone."""
    groups: dict[str, list[GraphOp]] = {}
    for g in module.walk():
        if isinstance(g, GraphOp):
            src = SOURCE.get(g)
            key = src if src is not None else "@" + g.sym_name.data
            groups.setdefault(key, []).append(g)
    out = []
    for gs in groups.values():
        gs.sort(key=kernel_index)
        out.append(gs)
    return out


def kernel_index(g: GraphOp) -> int:
    """A kernel's launch index (`sn40l.kernel`; 0 if absent or not an integer)."""
    k = KERNEL.get(g)
    return 0 if k is None else k


def graphs_to_kernelize(module: ModuleOp) -> list[GraphOp]:
    """The graphs not yet cut into kernels."""
    return [g for g in module.walk() if isinstance(g, GraphOp) and not KERNEL.present(g)]


def enclosing_graph(op: Operation) -> GraphOp | None:
    """The `step.graph` `op` is in (itself if it is one)."""
    cur: Operation | None = op
    for _ in range(64):
        if cur is None or isinstance(cur, GraphOp):
            return cur
        cur = cur.parent_op()
    return None


def bound(e: object, graph: Operation | None) -> sympy.Expr:
    """`e` with the graph's `step.bind` values substituted, and every ragged
    length `?L` still free bounded from above by its total `sum_L` (one
    request's length is at most the sum over the requests, when `step.bind`
    records that sum: the route's attention graphs do, from the cache shape or
    a trace's lengths). A symbol with neither stays free."""
    expr = to_expr(e)
    if expr.is_number or graph is None:
        return expr
    binds = graph_bindings(graph)
    if not binds:
        return expr
    sub: dict[sympy.Basic, sympy.Basic] = {}
    for s in expr.free_symbols:
        name = getattr(s, "name", "")
        if name in binds:
            sub[s] = sympy.Integer(binds[name])
        elif isinstance(s, RaggedSymbol) and f"sum_{name}" in binds:
            sub[s] = sympy.Integer(binds[f"sum_{name}"])
    return to_expr(expr.xreplace(sub)) if sub else expr


def static_int(e: object, op: Operation, what: str, pass_name: str) -> int:
    """`e` (a metric or a size) as an int, rounded up, or a located error
    naming the unbound symbols it still depends on. The enclosing graph's
    `step.bind` values are substituted first (`bound`: a ragged length by its
    total, an upper bound)."""
    expr = bound(e, enclosing_graph(op))
    if not expr.is_number:
        raise OpDiagnosticError(op, f"{pass_name}: the {what} of {op.name} depends on "
                                    f"unbound symbols ({expr}); bind them first (step-specialize)")
    return int(math.ceil(expr))

