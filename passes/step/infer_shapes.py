"""`step-infer-shapes`: fill in and check every result stream type of a step graph.

The inference itself (`infer_graph`, over the ops' shape rules) lives with the dialect in
`steplus.dialects.step.inference`: an analysis of the whole graph (a fixed point over
its feedback edges), which changes no IR. This module is the pass: the analysis, then
`ApplyInferredTypes`, a rewrite pattern that retypes each result whose inferred type
differs from the written one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from steplus.dialects.step import GraphOp
from steplus.dialects.step.inference import infer_graph
from steplus.dialects.step.types import StreamType

__all__ = ["ApplyInferredTypes", "StepInferShapesPass"]


class ApplyInferredTypes(RewritePattern):
    """Give each result the type `infer_graph` found for it, where it differs
    from the written one (a `_` filled in); users stay valid
    (`PatternRewriter.replace_value_with_new_type`)."""

    def __init__(self, types: dict[SSAValue, StreamType]):
        self.types = types

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        for r in list(op.results):
            new = self.types.get(r)
            if new is not None and new != r.type:
                rewriter.replace_value_with_new_type(r, new)



@dataclass(frozen=True)
class StepInferShapesPass(ModulePass):
    """Infer every step result type from the shape tables; fill in `_` dims, reject contradictions.

    Each operator's result dims are computed from its operands and
    properties by the op's own rule (`infer_shapes`, seed appendix tables
    2-6, see `steplus.dialects.step.shape_rules`). A written `_`
    dimension is replaced by the inferred one; fresh dims of the tables
    (Partition's `B_i`, Reassemble's ragged dim, ...) accept the written
    symbol; any other written dim must equal the inferred expression.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[B], !step.tile<1x64xf32>>):
      %d, %p = step.reshape %x {split_dim = 0 : i64, chunk_size = 16 : i64}
          : (!step.stream<[B], !step.tile<1x64xf32>>)
          -> (!step.stream<[_, 16], !step.tile<1x64xf32>>, !step.stream<[_, _], i1>)
      // after step-infer-shapes:
      //   -> (!step.stream<["ceiling(B/16)", 16], ...>, !step.stream<["ceiling(B/16)", 16], i1>)
      // written [B/8, 16] instead:
      //   error: dimension 0 of result #0: inferred ceiling(B/16), written B/8
    }
    ```
    """

    name = "step-infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.walk() if isinstance(g, GraphOp)]:
            types = infer_graph(graph)
            PatternRewriteWalker(ApplyInferredTypes(types),
                                 apply_recursively=False).rewrite_region(graph.body)
