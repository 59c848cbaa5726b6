"""convert-step-to-runtime: write a `step.graph`'s fabric placement into the IR.

The placement itself is decided once, by `passes/step/fabric_placement.py`
(`place`): context order, zip fusion, the padding consumes of reshapes that
get no context, Broadcasts for fan-out, group ranks, per-op knobs.
`steplus.runtime.fabric.build.build_program` instantiates the same
placement, so the `runtime.context` this pass writes on an op is the index of
the context the simulator runs for it.

The configuration comes from the pass's `preset` option or, without one, from
the module's `#target.fabric` attribute (`dialects/target/attrs.py`; step-eval
when there is none); the pass writes the attribute it used on the module, so
`step-run` simulates the placed module on the same fabric.

Example:

```mlir
// step-opt -p 'convert-step-to-runtime{preset=swiglu-hdl}' g.mlir gives
builtin.module attributes {target.fabric = #target.fabric<"swiglu-hdl">} {
  step.graph @g attributes {runtime.depth = 1 : i64} {
    %x = step.linear_offchip_load {runtime.context = 0 : i64, base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
    step.linear_offchip_store %x {runtime.context = 1 : i64, base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
  }
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context as MLContext
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step import GraphOp
from steplus.dialects.step.discardable import RUNTIME_CONTEXT, RUNTIME_DEPTH
from steplus.dialects.step.ops import BroadcastOp
from steplus.dialects.target.attrs import FABRIC_KEY, FabricTargetAttr, sn40l_table_of
from steplus.dialects.target.fabric import FIELD_LIMITS, get_preset
from steplus.passes.step.fabric_placement import LoweringError, Placement, find_graph, place
from steplus.utils.diagnostics import OpDiagnosticError

__all__ = ["ConvertStepToRuntimePass", "LoweringError", "find_graph"]


class WriteContext(RewritePattern):
    """Write `runtime.context = k` on each operator the placement made context k."""

    def __init__(self, context_of: dict[Operation, int]):
        self.context_of = context_of

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        k = self.context_of.get(op)
        if k is None or RUNTIME_CONTEXT.get(op) == k:
            return
        RUNTIME_CONTEXT.set(op, k)
        rewriter.notify_op_modified(op)


class AppendBroadcasts(RewritePattern):
    """Append the placement's fan-out `step.broadcast`s at the end of a graph, in
    placement order (their contexts are numbered in that order), each taking over
    the uses of its stream one result per use; then write the graph's
    `runtime.depth`.

    It matches the graph, not the producers: the broadcasts' order is the
    placement's, which is not the producers' order in the block."""

    def __init__(self, placements: dict[GraphOp, Placement]):
        self.placements = placements

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GraphOp, rewriter: PatternRewriter) -> None:
        p = self.placements.pop(op, None)
        if p is None:
            return
        block = op.body.block
        for res, k in p.broadcasts:
            _broadcast(res, k, block, rewriter)
        RUNTIME_DEPTH.set(op, p.depth)
        rewriter.notify_op_modified(op)


def _broadcast(res: SSAValue, k: int, block: Block, rewriter: PatternRewriter) -> None:
    uses = list(res.uses)
    b = BroadcastOp.create(operands=[res], result_types=[res.type] * len(uses),
                           attributes={RUNTIME_CONTEXT.name: RUNTIME_CONTEXT.attr(k)})
    rewriter.insert(b, InsertPoint.at_end(block))
    for u, r in zip(uses, b.results):
        rewriter.replace_uses_with_if(res, r, lambda x, u=u: x is u)
        r.name_hint = None  # unnamed, as before the conversion (the output is unchanged)


@dataclass(frozen=True)
class ConvertStepToRuntimePass(ModulePass):
    """Place step graphs on the fabric: insert Broadcasts, number contexts, set depths.

    Every stream with several consumers gets a `step.broadcast` appended at the
    end of the graph (reference spec §7); every operator that becomes a context
    gets `runtime.context = k` (zips fused into their consumer and the
    `step.consume` of a reshape's padding get none); the graph gets
    `runtime.depth` (the configuration's base depth unless `depth` is given),
    and the module the `#target.fabric` it was placed for (`preset`, else the
    module's own attribute, else step-eval). A graph the simulator cannot place
    is an error at the op.

    Example:

    ```mlir
    step.graph @g {
      %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
      step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
    }
    ```

    becomes, with `step-opt -p 'convert-step-to-runtime{preset=swiglu-hdl}'`:

    ```mlir
    builtin.module attributes {target.fabric = #target.fabric<"swiglu-hdl">} {
      step.graph @g attributes {runtime.depth = 1 : i64} {
        %x = step.linear_offchip_load {runtime.context = 0 : i64, base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
        step.linear_offchip_store %x {runtime.context = 1 : i64, base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
      }
    }
    ```
    """

    name = "convert-step-to-runtime"

    preset: str = ""
    """The fabric to place for: a preset of dialects/target/fabric.py (step-eval, swiglu-hdl, sn40l); empty: the module's #target.fabric, else step-eval."""
    depth: int = 0
    """The channel depth (FIFO entries); 0: the configuration's base depth."""

    def __post_init__(self) -> None:
        _, lo, hi = FIELD_LIMITS["base_depth"]  # the fabric's bound on a FIFO depth
        if self.depth != 0 and not lo <= self.depth <= hi:
            raise ValueError(f"depth must be 0 (the configuration's base depth) or in "
                             f"[{lo}, {hi}] (a fabric's base_depth), got {self.depth}")
        if self.preset:
            get_preset(self.preset)  # an unknown name: a usage error, the preset's message

    def apply(self, ctx: MLContext, op: ModuleOp) -> None:
        try:
            if self.preset:
                target = FabricTargetAttr(self.preset)
            else:
                attr = op.attributes.get(FABRIC_KEY)
                target = attr if isinstance(attr, FabricTargetAttr) else FabricTargetAttr("step-eval")
            cfg = target.config(sn40l_table_of(op))  # the sn40l preset: the module's #target.sn40l
        except (ValueError, VerifyException) as e:
            raise OpDiagnosticError(None, f"convert-step-to-runtime: {e}") from None
        depth = self.depth or cfg.base_depth
        # the placement is one decision over each whole graph, made before any edit
        placements: dict[GraphOp, Placement] = {}
        for g in [o for o in op.walk() if isinstance(o, GraphOp)]:
            try:
                placements[g] = place(g, cfg, depth)
            except LoweringError as e:
                raise OpDiagnosticError(e.op, f"convert-step-to-runtime: {e}") from None
        context_of = {o: k for p in placements.values() for o, k in p.context_of.items()}
        PatternRewriteWalker(GreedyRewritePatternApplier(
            [AppendBroadcasts(placements), WriteContext(context_of)], dce_enabled=False),
            apply_recursively=False).rewrite_module(op)
        op.attributes[FABRIC_KEY] = target
