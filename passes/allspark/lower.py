"""`pim-lower-phases`: a scheduled `pim.model` to per-node phase programs and ring transfers.

Every node of a temporal layer's sub-arrays runs the same program (SPMD): the
layer's intra-node computation (`pim.compute`, `T_c` of eq. 15) and its cyclic
dataflows (`pim.ring`, one per phase of Sec. V-B: weight sharing before the
weighted products, the K/V rounds over the patch nodes, the gathers over the
head groups), each with its rounds and bytes per node; their bytes are the D and
W terms of eqs. 13-14.  A stage whose branches depend on each other (shifted
windows, pooled or sub-sampled context) gets a `pim.interact`: the feature map
of each dependency sent between the anchors of the two sub-arrays its branches
are bound to (the seed's greedy binding), once per block.

The schedule is checked first (`pim-verify-schedule`'s rules); a layer without
`placement` gets Algorithm 1's rectangles.  With a `batch` on the `pim.model`,
feature-map rings and interactions carry every input's bytes and weight-sharing
rings run once; a stage with `stream_bytes` (a baseline over node memory) gets a
`pim.ring` of phase `stream` on the `mesh` axis in every temporal layer.  `runtime/pim/program.py` executes
the result on the link-level NoC simulator (`pim-orchestrate --simulate`).

```mlir
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()
```

`step-opt s.mlir -p 'pim-orchestrate,pim-lower-phases'` schedules and lowers.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.pim import ComputeOp, InteractOp, LayerOp, ModelOp, RingOp, StageOp, body_ops
from steplus.dialects.target.pim import PimHardware
from steplus.passes.allspark.cost import layer_cost
from steplus.passes.allspark.ir import batch_of, check_model, layer_ops, machine_of, workload_of
from steplus.passes.allspark.layout import Slot, greedy_binding, structured_layout
from steplus.passes.allspark.partition import Scheme, ring_phases
from steplus.passes.allspark.vit import dependency_edges


def _int(v: int) -> IntegerAttr[I64]:
    return IntegerAttr(v, i64)


def lower_model(op: ModelOp, hw: PimHardware | None = None) -> None:
    """Fill every `pim.layer` of a scheduled model with its phase program.

    ``hw`` replaces the machine the op names (e.g. with other assumed parameters)."""
    hw = hw or machine_of(op)
    check_model(op, hw)
    vit = workload_of(op)
    batch = batch_of(op)
    bpe = hw.bytes_per_elem
    for st, stage in zip(vit.stages, [s for s in body_ops(op) if isinstance(s, StageOp)]):
        for old in [o for o in body_ops(stage) if isinstance(o, InteractOp)]:
            Rewriter.erase_op(old)
        slots: list[Slot] = []
        for j, lay in enumerate(layer_ops(stage)):
            g, m = lay.g_m
            scheme = Scheme(g, m)
            if lay.placement is None:
                rects = structured_layout(hw.rows, hw.cols, m, g)[: lay.branches.value.data]
                lay.placement = DenseArrayBase.from_list(i64, [x for r in rects for x in r])
            slots += [Slot(j, r) for r in lay.rects()]
            cost = layer_cost(st, scheme, hw, batch)
            if lay.cycles is None:
                lay.cycles = _int(cost.total)
            ops: list[ComputeOp | RingOp] = [ComputeOp.create(properties={
                "phase": StringAttr("blocks"), "cycles": _int(cost.compute)})]
            for ph in ring_phases(st, scheme):
                if ph.rounds > 0 and ph.elems > 0:
                    # feature maps travel for every input, shared weights once (Sec. VI-D)
                    per = 1 if ph.name.startswith("ws-") else batch
                    ops.append(RingOp.create(properties={
                        "phase": StringAttr(ph.name),
                        "axis": StringAttr("patch" if ph.patch_ring else "group"),
                        "rounds": _int(ph.rounds), "bytes": _int(ph.elems * bpe * per)}))
            if stage.stream_bytes is not None and stage.stream_bytes.value.data:
                ops.append(RingOp.create(properties={
                    "phase": StringAttr("stream"), "axis": StringAttr("mesh"),
                    "rounds": _int(1), "bytes": _int(stage.stream_bytes.value.data)}))
            if lay.program is None:
                new = LayerOp.create(properties=dict(lay.properties),
                                     regions=[Region(Block())])
                Rewriter.replace_op(lay, new)
                lay = new
            block = lay.regions[0].block
            for old in list(block.ops):
                Rewriter.erase_op(old)
            for o in ops:
                Rewriter.insert_op(o, InsertPoint.at_end(block))
        edges = dependency_edges(st)
        if edges and len(slots) >= st.branches:
            bind = greedy_binding(st.branches, edges, slots)
            pairs: list[int] = []
            for a, b in edges:
                pa, pb = slots[bind[a]].anchor, slots[bind[b]].anchor
                pairs += [*pa, *pb, *pb, *pa]
            Rewriter.insert_op(InteractOp.create(properties={
                "bytes": _int(st.tokens * st.channels * bpe * batch), "times": _int(st.blocks),
                "pairs": DenseArrayBase.from_list(i64, pairs)}),
                InsertPoint.at_end(stage.body.block))


@dataclass(frozen=True)
class PimLowerPhasesPass(ModulePass):
    """Lower each scheduled `pim.model` to per-node phase programs and ring transfers.

    Each `pim.layer` gets a program: one `pim.compute` (`T_c`) and one `pim.ring`
    per cyclic dataflow phase with its rounds and bytes per node; each stage with
    local-global dependencies gets a `pim.interact` between bound sub-arrays.

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
      "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
      }) : () -> ()
      "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 6, 2>, branches = 16 : i64}> : () -> ()
      }) : () -> ()
      "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64}> : () -> ()
      }) : () -> ()
      "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
      }) : () -> ()
    }) : () -> ()
    ```
    """

    name = "pim-lower-phases"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for model_op in [o for o in op.walk() if isinstance(o, ModelOp)]:
            lower_model(model_op)
