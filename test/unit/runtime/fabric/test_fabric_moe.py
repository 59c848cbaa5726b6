"""The Mixtral MoE layer (reference spec §8.2) on the simulated fabric: it runs
to completion, reads exactly the off-chip bytes step-metrics predicts, and its
cycle count is deterministic (pinned in golden.py against regressions of the
model)."""

from __future__ import annotations


import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr

from conftest import REPO
from golden import MOE_CYCLES
from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.runtime.fabric.build import build_program
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.specialize import StepSpecializePass, parse_bind_attr
from steplus.dialects.target.fabric import get_preset

from steplus.examples.workloads import graphs as workloads

TRACE = REPO / "examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz"


def _specialized(model: str, tile_n, trace):
    """The §8.2 graph bound to a routing trace: (module, graph, bindings, step-metrics)."""
    module = workloads.moe(workloads.MODELS[model], tile_n)
    StepSpecializePass(routing=str(trace), rewrite=True).apply(Context(), module)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    bind = parse_bind_attr(graph.attributes["step.bind"])
    return module, graph, bind, compute_metrics(graph).bind(bind)


# The cycle totals are regression pins of the model (golden.MOE_CYCLES: MoE
# totals are chaotic, §11.2, not derivable by hand).
@pytest.mark.parametrize("tile_n", [16, None], ids=["tn16", "dynamic"])
def test_mixtral_layer_simulates_with_the_predicted_traffic(tile_n):
    m = workloads.MODELS["mixtral"]
    module, graph, bind, predicted = _specialized("mixtral", tile_n, TRACE)
    cfg = get_preset("step-eval")
    if tile_n is None:
        cfg = cfg.with_(compute_bw=6400)
        for op in graph.body.block.ops:
            if isinstance(op, so.AccumOp) and op.output.name_hint.startswith("acc") \
                    and op.output.name_hint != "acc_out":
                op.attributes["compute_bw"] = IntegerAttr(1024, 64)
    result = build_program(module, cfg).run()
    # Off-chip traffic is exactly step-metrics' (§5.1): loads at bf16, the store
    # counted at its declared f32 (its requests are the simulated bf16 rows).
    B, D, F, tF = 64, m.hidden, m.inter, workloads.TILE_F
    assert result.offchip_traffic == int(predicted.offchip)
    assert result.offchip_written == 4 * B * D
    assert result.onchip_peak == int(predicted.onchip)
    # ... and both are §5.5's closed forms of the trace's token counts: each
    # expert loads its three weight matrices once per token tile (static) or
    # once if it has tokens (dynamic); on chip the static per-expert unit is
    # 12 tN D + 6 D tF, the dynamic one 12 D c_e + 6 D tF for an expert with tokens
    counts = [bind[f"B_{e}"] for e in range(m.experts)]
    assert sum(counts) == B * m.top_k
    tiles = [(-(-c // tile_n) if tile_n else int(c > 0)) for c in counts]
    assert result.offchip_traffic == \
        2 * B * D + 2 * B * m.top_k + sum(tiles) * 3 * 2 * D * F + 4 * B * D
    per_expert = [(12 * tile_n * D if tile_n else 12 * D * c) + 6 * D * tF
                  for c in counts if c > 0]
    assert result.onchip_peak == 10 * D + 2 + sum(per_expert)
    assert result.cycles == MOE_CYCLES[("mixtral", 64, tile_n)]


def test_qwen_idle_experts_allocate_nothing_on_chip():
    """Qwen B=64 (128 experts, top-8): 68 experts get no token in the trace.
    Their pipelines never receive an element and — as in step-metrics and the
    artifact's Qwen driver (§5.5) — allocate no on-chip memory."""
    from steplus.passes.step.traces import shipped_routing_trace

    m, B, tN, tF = workloads.MODELS["qwen"], 64, 16, workloads.TILE_F
    module, _, bind, predicted = _specialized("qwen", tN, shipped_routing_trace("qwen", B))
    counts = [bind[f"B_{e}"] for e in range(m.experts)]
    assert sum(counts) == B * m.top_k and counts.count(0) == 68  # the case under test
    result = build_program(module, get_preset("step-eval")).run()
    # §5.5: tokens and routing weights in (bf16), every expert's three weight
    # matrices once per token tile, f32 output; on chip the constant 10D + 2 and
    # the per-expert unit only for experts with tokens (the Qwen "revet" driver)
    D, F = m.hidden, m.inter
    traffic = 2 * B * D + 2 * B * m.top_k + sum(-(-c // tN) for c in counts) * 3 * 2 * D * F \
        + 4 * B * D
    onchip = 10 * D + 2 + sum(12 * tN * D + 6 * D * tF for c in counts if c > 0)
    assert result.offchip_traffic == int(predicted.offchip) == traffic
    assert result.onchip_peak == int(predicted.onchip) == onchip
    assert result.cycles == MOE_CYCLES[("qwen", 64, 16)]
