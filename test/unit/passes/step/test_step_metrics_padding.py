"""Padded FLOPs in graphs whose types hold numbers, and the artifact's FLOP formula.

Reference spec §5.4: `flops` includes the padding rows of the static token
tiles, `padded_flops` is the padding-only part, and the artifact's formula is
`expert_flops(b) = b F (14 D + 1)` per expert on its `b = T_e t` padded rows.
The expected values are derived here from those definitions and the routing
trace's token counts, not from the implementation.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from xdsl.context import Context

from steplus.dialects.step import GraphOp
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.specialize import StepSpecializePass
from steplus.passes.step.traces import RoutingTrace, shipped_routing_trace

REPO = Path(__file__).resolve().parents[4]
STEP = REPO / "examples" / "step"
D, F, E, K, TF, TN = 4096, 14336, 8, 2, 64, 16
TRACE = shipped_routing_trace("mixtral", 64)


def _graph(module) -> GraphOp:
    (graph,) = [op for op in module.walk() if isinstance(op, GraphOp)]
    return graph


def _expert_text(tokens: int, tn: int, d: int = 64, f: int = 128) -> str:
    """One expert on `tokens` token rows in chunks of `tn` (padded), each
    chunk times a [d, f] weight tile; every dim a number, inferred by `_`."""
    row, w, out = (f"!step.tile<1x{d}xbf16>", f"!step.tile<{d}x{f}xbf16>",
                   f"!step.tile<1x{f}xbf16>")
    chunks = math.ceil(tokens / tn)
    ref = f"!step.stream<[{chunks}], !step.tile<1x1xi64>>"
    return f"""
step.graph @expert {{
^bb0(%tok: !step.stream<[{tokens}], {row}>, %ref: {ref}):
  %c, %pad = step.reshape %tok {{split_dim = 0 : i64, chunk_size = {tn} : i64}} : (!step.stream<[{tokens}], {row}>) -> (!step.stream<[_, _], {row}>, !step.stream<[_, _], i1>)
  step.consume %pad : !step.stream<[_, _], i1>
  %w = step.linear_offchip_load %ref {{base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: {tn}>}} : ({ref}) -> !step.stream<[{chunks}, {tn}], {w}>
  %z = step.zip %c, %w : (!step.stream<[_, _], {row}>, !step.stream<[{chunks}, {tn}], {w}>) -> !step.stream<[_, _], !step.tuple<{row}, {w}>>
  %y = step.map %z : !step.stream<[_, _], !step.tuple<{row}, {w}>> -> !step.stream<[_, _], {out}> {{
  ^bb0(%a: {row}, %b: {w}):
    %m = step.apply "matmul"(%a, %b) : ({row}, {w}) -> {out}
    step.yield %m : {out}
  }}
  step.consume %y : !step.stream<[_, _], {out}>
}}
"""


@pytest.mark.parametrize("tokens", [1, 15, 16, 17, 40])
def test_padding_in_numeric_dims_is_counted(tokens):
    # 2*d*f FLOPs per token row of the matmul; ceil(tokens/16)*16 rows computed
    tn, d, f = 16, 64, 128
    gm = compute_metrics(_graph(parse_xdsl(_expert_text(tokens, tn, d, f))))
    rows = math.ceil(tokens / tn) * tn
    assert gm.flops == 2 * d * f * rows
    assert gm.padded_flops == 2 * d * f * (rows - tokens)


def _mixtral(stem: str, rewrite: bool):
    module = parse_xdsl((STEP / f"{stem}.mlir").read_text())
    StepSpecializePass(routing=str(TRACE), rewrite=rewrite).apply(Context(), module)
    graph = _graph(module)
    return graph, compute_metrics(graph)


def _bound(graph, gm):
    # the recorded bindings (step-specialize's step.bind), as step-metrics applies them
    from steplus.passes.step.bindings import parse_bind_attr

    return gm.bind(parse_bind_attr(graph.attributes["step.bind"], graph))


def _per_row_flops() -> int:
    # the graph's own count per token row of one expert, over its F/tF weight
    # tiles: gate and up matmuls 2*D*tF each, SiLU 8 and Mul 1 per element of
    # the row's tF slice, down matmul 2*tF*D plus its accumulating add D.
    return (F // TF) * (2 * 2 * D * TF + 8 * TF + TF + 2 * TF * D + D)


@pytest.mark.parametrize("rewrite", [False, True])
def test_mixtral_static_padding_with_and_without_rewritten_types(rewrite):
    counts = RoutingTrace.load(TRACE, E).counts
    graph, gm = _mixtral("moe_mixtral_tn16", rewrite)
    bound = _bound(graph, gm)
    padding_rows = sum(math.ceil(c / TN) * TN - c for c in counts)
    assert padding_rows > 0
    assert int(bound.padded_flops) == _per_row_flops() * padding_rows
    # §5.4: the artifact's formula on the padded rows b = T_e * tN
    art = sum(math.ceil(c / TN) * TN * F * (14 * D + 1) for c in counts)
    assert int(bound.flops_artifact) == art


def test_mixtral_dynamic_tiling_has_no_padding():
    counts = RoutingTrace.load(TRACE, E).counts
    graph, gm = _mixtral("moe_mixtral_dyn", True)
    bound = _bound(graph, gm)
    assert bound.padded_flops == 0
    assert int(bound.flops_artifact) == sum(c * F * (14 * D + 1) for c in counts)


def test_time_multiplexed_experts_keep_the_artifact_formula():
    # step-time-multiplex shares one pipeline among E/R experts; each region's
    # SiLU-gated product covers its experts' padded token tiles, so the sum
    # is the weight-stationary one.
    from steplus.passes.step.time_multiplex import StepTimeMultiplexPass

    sys.path.insert(0, str(STEP))
    from steplus.examples.workloads import graphs as workloads

    module = workloads.moe(workloads.MODELS["mixtral"], TN)
    StepTimeMultiplexPass(regions=2).apply(Context(), module)
    graph = _graph(module)
    assert sum(1 for op in graph.body.block.ops if op.name == "step.eager_merge") == 2
    counts = RoutingTrace.load(TRACE, E).counts
    gm = compute_metrics(graph).bind({f"B_{e}": c for e, c in enumerate(counts)})
    assert int(gm.flops_artifact) == sum(math.ceil(c / TN) * TN * F * (14 * D + 1) for c in counts)


def test_no_swiglu_expert_no_artifact_formula():
    gm = compute_metrics(_graph(parse_xdsl(_expert_text(17, 16))))
    assert gm.flops_artifact is None
