"""`step-time-multiplex{regions=N}`: E identical expert pipelines -> N shared regions.

Configuration time-multiplexing (seed §5.3, Fig. 13; reference spec §8.3).
In a weight-stationary MoE layer every expert has its own pipeline: from the
accumulator that groups its tokens (`retile_row`) through the weight loads
(driven by the token tiles), the matmuls, SiLU and the down projection, to the
`flat_map` that splits the result back into rows. With E experts that is E
configured copies. The pass keeps N copies instead: experts are grouped
contiguously (E/N per region) and each region

- merges its experts' token tiles with `step.eager_merge` (data, selector);
- fetches the selected expert's weights with `step.random_offchip_load`
  addressed by `step.expert_addr_gen` on the selector (tiles per expert = the
  tiles one weight load walked per token tile);
- runs the pipeline once, on the merged stream;
- sends each result tile back to its expert with `step.partition` by the same
  selector, into the expert's original `flat_map`.

Types downstream are re-derived by the shape rules. The pipelines must have
identical structure (the same ops with the same properties, up to weight
addresses); otherwise, or without such pipelines, the graph is left alone
with a remark saying why.

Example: `step-opt examples/step/moe_qwen_tn16.mlir -p 'step-time-multiplex{regions=16}'`
gives 16 `step.eager_merge`s, 48 `step.random_offchip_load`s and no more
per-expert weight loads; its metrics bound to a trace equal the hand-built
`moe_time_multiplexed` graph's (examples/workloads/graphs.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, cast

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import SelectorType, StreamType, TileType
from steplus.dialects.step.verify import int_of, ints_of
from steplus.utils.diagnostics import NotApplicable, OpDiagnosticError, emit
from steplus.passes.step.dynamic_tiling import _propagate, refresh
from steplus.dialects.step.shape_rules import new_symbol

_OpT = TypeVar("_OpT", bound=Operation)

ADDRESS = TileType(1, 1, i64)


@dataclass
class Pipeline:
    """One expert's ops from its token accumulator to its row-splitting flat_map."""

    acc: so.AccumOp
    ops: list[Operation]  # in block order, acc excluded, flat_map excluded
    rows: so.FlatMapOp


def _retile_accums(graph: GraphOp) -> list[so.AccumOp]:
    return [op for op in graph.body.block.ops if isinstance(op, so.AccumOp) and any(
        isinstance(a, so.ApplyOp) and a.fn.data == "retile_row" for a in op.update.walk())]


def find_pipelines(graph: GraphOp) -> list[Pipeline]:
    """The expert pipelines; `NotApplicable` says why there are none."""
    order = {op: i for i, op in enumerate(graph.body.block.ops)}
    pipelines = []
    for acc in _retile_accums(graph):
        seen: set[Operation] = set()
        work: list[SSAValue] = [acc.output]
        rows: so.FlatMapOp | None = None
        while work:
            for use in list(work.pop().uses):
                user = use.operation
                if isinstance(user, so.FlatMapOp):
                    if rows is not None and rows is not user:
                        raise NotApplicable("a token accumulator reaches two flat_maps")
                    rows = user
                    continue
                if user not in seen:
                    seen.add(user)
                    work.extend(user.results)
        if rows is None:
            raise NotApplicable("no flat_map splits an expert's results back into rows")
        pipelines.append(Pipeline(acc, sorted(seen, key=order.__getitem__), rows))
    if not pipelines:
        raise NotApplicable("no retile_row accumulator groups tokens per expert")
    return pipelines


def _signature(p: Pipeline) -> list[tuple]:
    sig = []
    for op in p.ops:
        props = tuple(sorted((k, str(v)) for k, v in op.properties.items() if k != "base_addr"))
        sig.append((op.name, props, len(op.operands), len(op.results)))
    return sig


def _weight_loads(p: Pipeline) -> list[so.LinearOffChipLoadOp]:
    return [op for op in p.ops if isinstance(op, so.LinearOffChipLoadOp) and op.ref is not None]


def _layout_problem(pipelines: list[Pipeline], per: int) -> str | None:
    """Why a region's `step.random_offchip_load` (its first expert's base + the
    selected expert x one matrix) would not read the experts' own weights, or None.

    Expert j of a region must keep its matrix of each kind right after expert
    j-1's: base_j = base_0 + j * (tiles per matrix x tile bytes)."""
    for r in range(0, len(pipelines), per):
        group = [_weight_loads(p) for p in pipelines[r:r + per]]
        for k, first in enumerate(group[0]):
            tile = first.output.type.element
            if not isinstance(tile, TileType):
                return f"{first.name} does not load tiles"
            size = tile.rows.data * tile.cols.data * tile.bytes_per_scalar()
            tiles = 1
            for d in ints_of(first.tiled_in_shape):
                tiles *= d
            for j, loads in enumerate(group[1:], 1):
                want = int_of(first.base_addr) + j * tiles * size
                got = int_of(loads[k].base_addr)
                if got != want:
                    name = loads[k].output.name_hint or f"load {k} of expert {r + j}"
                    return (f"{name} reads its weights at {got:#x}, not at {want:#x} (right after "
                            f"the previous expert's matrix): a shared region addresses an expert's "
                            f"weights as the first expert's base + expert x matrix size")
    return None


class _Region:
    """Builds one shared region in front of `anchor`."""

    def __init__(self, block: Block, anchor: Operation, index: int):
        self.block, self.anchor, self.index = block, anchor, index

    def add(self, op: _OpT) -> _OpT:
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        for r in op.results:
            if isinstance(r.type, StreamType):
                refresh(op)
                break
        return op

    def build(self, group: list[Pipeline]) -> None:
        template = group[0]
        accs = [p.acc.output for p in group]
        t0 = accs[0].type
        sel_t = StreamType([t0.dims[0]], SelectorType(len(group)))
        em = self.add(sr.EagerMergeOp.create(operands=accs, result_types=[t0, sel_t]))
        em.results[0].name_hint, em.results[1].name_hint = f"em{self.index}", f"em{self.index}_sel"
        data, sel = em.results
        sel_b = self.add(sr.BroadcastOp.create(operands=[sel], result_types=[sel.type] * 2))
        sel_addr, sel_part = sel_b.results
        loads = _weight_loads(template)
        if not loads:
            raise OpDiagnosticError(template.acc, "step-time-multiplex: the expert's weights are "
                                                  "not loaded per token tile (no load with a ref)")
        per_tile = [int(sympy.Mul(*ints_of(op.tiled_out_shape))) for op in loads]
        if len(set(per_tile)) != 1:
            raise OpDiagnosticError(loads[0], "step-time-multiplex: the weight loads walk "
                                              "different numbers of tiles")
        nf = per_tile[0]
        addr_t = StreamType([*sel_t.dims, nf], ADDRESS)
        addr = self.add(sg.ExpertAddrGenOp.create(
            operands=[sel_addr], result_types=[addr_t],
            properties={"tiles_per_expert": IntegerAttr(nf, i64)}))
        addrs = list(self.add(sr.BroadcastOp.create(
            operands=[addr.output], result_types=[addr.output.type] * len(loads))).results) \
            if len(loads) > 1 else [addr.output]
        mapping: dict[SSAValue, SSAValue] = {template.acc.output: data}
        replaced: dict[Operation, SSAValue] = {}
        for op in template.ops:
            if isinstance(op, sr.BroadcastOp) and op.input is template.acc.output:
                keep = [r for r in op.results
                        if not all(isinstance(u.operation, so.LinearOffChipLoadOp) for u in r.uses)]
                if len(keep) == 1:
                    mapping[keep[0]] = data
                    continue
                b = self.add(sr.BroadcastOp.create(operands=[data], result_types=[data.type] * len(keep)))
                mapping.update(zip(keep, b.results))
                continue
            if isinstance(op, so.LinearOffChipLoadOp) and op in loads:
                k = loads.index(op)
                tile = op.output.type.element
                load = self.add(so.RandomOffChipLoadOp.create(
                    operands=[addrs[k]], result_types=[StreamType(addr_t.dims, tile)],
                    properties={"base_addr": op.base_addr,
                                "tiled_in_shape": DenseArrayBase.from_list(i64, [len(group) * nf])}))
                load.output.name_hint = op.output.name_hint
                replaced[op] = load.output
                mapping[op.output] = load.output
                continue
            if isinstance(op, sr.FlattenOp) and isinstance(src := op.input.owner, Operation) \
                    and src in replaced:
                mapping[op.output] = replaced[src]  # addresses are already flat
                continue
            clone = op.clone(value_mapper=dict(mapping))
            self.add(clone)
            mapping.update(zip(op.results, clone.results))
        down = mapping[template.rows.input]
        down_t = cast(StreamType, down.type)  # the clone of a verified stream
        outs = [StreamType([new_symbol(f"R{self.index}_{j}", False), *down_t.dims[1:]],
                           down_t.element) for j in range(len(group))]
        part = self.add(sr.PartitionOp.create(operands=[down, sel_part], result_types=outs))
        for p, out in zip(group, part.results):
            out.name_hint = f"pres{self.index}_{group.index(p)}"
            p.rows.operands = [out]
            _propagate([out])


def time_multiplex(graph: GraphOp, regions: int) -> None:
    try:
        pipelines = find_pipelines(graph)
    except NotApplicable as why:
        emit(graph, "remark", f"step-time-multiplex: nothing to do: {why}")
        return
    if len(pipelines) % regions:
        raise OpDiagnosticError(graph, f"step-time-multiplex: {len(pipelines)} expert pipelines "
                                       f"do not split into {regions} regions")
    sig = _signature(pipelines[0])
    for p in pipelines[1:]:
        if _signature(p) != sig:
            emit(graph, "remark", "step-time-multiplex: nothing to do: the expert pipelines "
                                  "differ in structure")
            return
    per = len(pipelines) // regions
    if (why := _layout_problem(pipelines, per)) is not None:
        emit(graph, "remark", f"step-time-multiplex: nothing to do: {why}")
        return
    anchor = pipelines[-1].rows
    block = graph.body.block
    for r in range(regions):
        _Region(block, anchor, r).build(pipelines[r * per:(r + 1) * per])
    for p in pipelines:
        for op in reversed(p.ops):
            Rewriter.erase_op(op)
    from steplus.dialects.step.inference import infer_graph

    infer_graph(graph)


@dataclass(frozen=True)
class StepTimeMultiplexPass(ModulePass):
    """Share N configured expert regions among E identical expert pipelines.

    Example: `step-opt moe.mlir -p 'step-time-multiplex{regions=16}'` turns 128
    per-expert pipelines into 16 regions behind `step.eager_merge`s whose
    selectors address `step.random_offchip_load`s of the experts' weights.
    """

    name = "step-time-multiplex"

    regions: int = 1
    """Number of configured expert regions the pipelines share (N)."""

    def __post_init__(self) -> None:
        if self.regions < 1:
            raise ValueError(
                f"step-time-multiplex: regions must be a positive integer, got {self.regions}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            time_multiplex(graph, self.regions)
