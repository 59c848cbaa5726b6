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
from steplus.runtime.fabric.config import get_preset

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
    module, graph, _, predicted = _specialized("mixtral", tile_n, TRACE)
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
    B, D = 64, m.hidden
    assert result.offchip_traffic == int(predicted.offchip)
    assert result.offchip_written == 4 * B * D
    assert result.onchip_peak == int(predicted.onchip)
    assert result.cycles == MOE_CYCLES[("mixtral", 64, tile_n)]


def test_qwen_idle_experts_allocate_nothing_on_chip():
    """Qwen B=64 (60 experts, top-4): some experts get no token in the trace.
    Their pipelines never receive an element and — as in step-metrics and the
    artifact's Qwen driver (§5.5) — allocate no on-chip memory."""
    from steplus.passes.step.traces import shipped_routing_trace

    module, _, bind, predicted = _specialized("qwen", 16, shipped_routing_trace("qwen", 64))
    assert any(bind[f"B_{e}"] == 0 for e in range(60))  # the case under test
    result = build_program(module, get_preset("step-eval")).run()
    assert result.offchip_traffic == int(predicted.offchip) == 680264704
    assert result.onchip_peak == int(predicted.onchip) == 70799362
    assert result.cycles == MOE_CYCLES[("qwen", 64, 16)]
