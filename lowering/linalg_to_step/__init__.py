"""`convert-linalg-to-step{tile=... schedule=... memory=...}`: tensor programs -> STeP graphs.

A `func.func` on static tensors of rank 1 to 3, as torch-mlir, the ONNX
importer or IREE's input pipelines emit it (linalg on tensors), becomes a
`step.graph` of the same name that replaces it:

- function arguments, and tensor constants (`dense`, `dense_resource`:
  torch-mlir's parameters; numbered after the arguments, their values in
  `Lowered.constants`), become off-chip tensors at base addresses of a
  documented layout (arguments from 0, results from 1 GiB, 16 MiB boundaries;
  `memory=` overrides, see `options`), read by `linear_offchip_load`s in the
  tile walk their consumer needs;
- `linalg.matmul`, `matmul_transpose_b`, `batch_matmul` (the batch as the
  outer stream dim) become tiled `accum` pipelines (`matmul`/`matmul_t` +
  `add` into a zero f32 tile) under the loop schedule `schedule=` (spec
  §8.1's "mn_mk" by default) and the tile sizes of `tile=` (per-matmul
  overrides);
- element-wise `linalg.generic`s (add, sub, mul, div, max, neg, exp, rsqrt,
  square, torch's `x * sigmoid(x)` as `silu`, operations with a scalar as
  `add_scalar[c]`, ...; row, column and batch broadcasts) become `map`s
  fused into the stream: no intermediate goes off-chip; row reductions
  (sum, max over the last dim) become `accum`s into a column, which joins
  the row tiles again through a `repeat`; reshapes of arguments are views,
  of computed tensors those that keep the tiling (see `recognize`);
- results are stored (`linear_offchip_store`, f32).

Dynamic layers are lowered by recognition, one level up (`aten`): a
`torch.export` graph's top-k MoE layers become the §8.2 partition / expert
pipelines / reassemble graph (`moe_graph`, static or dynamic tiling) and its
GQA decode attentions with a KV cache the §8.4 graph (`attention_graph`);
what does not match is a located remark, never a graph.

What cannot be tiled as asked (a tile larger than its dim) is a remark; tile
sizes that do not divide, dynamic shapes and unsupported ops are located
errors naming the option or the op. See `docs/guide/pytorch-to-step.md`.

Example:

    step-opt examples/linalg/swiglu_ffn.mlir \\
        -p 'convert-linalg-to-step{tile="32x128" schedule="mn_mk"}'

gives `step.graph @swiglu_ffn`, op for op `examples/step/swiglu_tm32_tn128.mlir`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from steplus.lowering.linalg_to_step.constants import resource_lookup
from steplus.lowering.linalg_to_step.emit import EmitOptions, Layout, Lowered, emit_graph
from steplus.lowering.linalg_to_step.options import parse_memory, parse_schedule, parse_tiles
from steplus.lowering.linalg_to_step.recognize import recognize

__all__ = ["ConvertLinalgToStepPass", "FuncToGraph", "Layout", "Lowered", "lower_module",
           "replace_with_graphs"]


def _options(tile: str, schedule: str, memory: str) -> EmitOptions:
    return EmitOptions(parse_tiles(tile), parse_schedule(schedule), parse_memory(memory))


def lower_module(module: ModuleOp, tile: str = "32x128", schedule: str = "mn_mk",
                 memory: str = "", ctx: Context | None = None) -> list[Lowered]:
    """Replace every `func.func` with a body by its step graph; return what was built.

    `ctx`: the context the module was parsed in (its `dense_resource` blobs: the
    values of torch-mlir's parameters). Raises ValueError for malformed options
    and `OpDiagnosticError` (located) for programs the lowering does not support.
    Nothing is changed on error."""
    opts = _options(tile, schedule, memory)
    funcs = [op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    lookup = resource_lookup(ctx)
    lowered = [emit_graph(recognize(f, lookup), opts) for f in funcs]
    replace_with_graphs(module, {f: low.graph.module() for f, low in zip(funcs, lowered)})
    return lowered


@dataclass
class FuncToGraph(RewritePattern):
    """A `func.func` replaced by the step graph built for it: the ops of a module built
    aside (`built`, by the function) moved before it, the function erased."""

    built: dict[int, ModuleOp]  # id(func) -> the module holding its graph

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        graph = self.built.get(id(op))
        if graph is not None:
            rewriter.inline_block(graph.body.block, InsertPoint.before(op))
            rewriter.erase(op)


def replace_with_graphs(module: ModuleOp, built: dict[func.FuncOp, ModuleOp]) -> None:
    """Replace each function of `built` in `module` by its graph (`FuncToGraph`)."""
    walker = PatternRewriteWalker(FuncToGraph({id(f): m for f, m in built.items()}),
                                  apply_recursively=False)
    walker.rewrite_module(module)


@dataclass(frozen=True)
class ConvertLinalgToStepPass(ModulePass):
    """Lower linalg-on-tensors functions to tiled, fused step graphs (see module doc).

    Example: `step-opt ffn.mlir -p 'convert-linalg-to-step{tile="16x64"}'`."""

    name = "convert-linalg-to-step"

    tile: str = "32x128"
    """Matmul tile `MxN[xK]`, with per-matmul overrides `;I=MxN[xK]` by program order."""
    schedule: str = "mn_mk"
    """Tiled dims per matmul chain depth, letters of `mnk` joined by `_` (spec §8.1's `mn_mk`)."""
    memory: str = ""
    """Base addresses `arg0=0,result0=...` or `align=BYTES`; empty: the default layout."""

    def __post_init__(self) -> None:
        try:
            _options(self.tile, self.schedule, self.memory)
        except ValueError as e:  # a command-line error (step-opt: one line, exit 2)
            raise ValueError(f"convert-linalg-to-step: {e}") from None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.tile, self.schedule, self.memory, ctx)
