"""step-time-multiplex on the weight-stationary MoE layer gives the
time-multiplexed layer of the reference spec §8.3 (the builder's graph): the
same ops and, bound to the shipped trace, the same metrics."""

from __future__ import annotations

import collections

import pytest
from xdsl.context import Context

from conftest import REPO
from steplus.dialects.step import GraphOp
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.specialize import routing_bindings, specialize_graph
from steplus.passes.step.time_multiplex import StepTimeMultiplexPass
from steplus.passes.step.traces import RoutingTrace

from steplus.examples.workloads import graphs as workloads

from steplus.utils.diagnostics import collecting_diagnostics  # noqa: E402

TRACE = REPO / "examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz"


def _graph(module) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


@pytest.mark.parametrize("regions", [1, 2, 4])
@pytest.mark.parametrize("tile_n", [16, None], ids=["tn16", "dynamic"])
def test_time_multiplexing_the_weight_stationary_moe(regions, tile_n):
    model = workloads.MODELS["mixtral"]
    module = workloads.moe(model, tile_n, 64)
    StepTimeMultiplexPass(regions=regions).apply(Context(), module)
    module.verify()
    got, expected = _graph(module), _graph(workloads.moe_time_multiplexed(model, regions, tile_n, 64))
    ops = lambda g: collections.Counter(op.name for op in g.walk())  # noqa: E731
    assert ops(got) == ops(expected)
    trace = RoutingTrace.load(TRACE, model.experts)
    for graph in (got, expected):
        graph.attributes.pop("step.bind", None)
    a, b = (compute_metrics(g).bind(specialize_graph(g.clone(), routing_bindings(g, trace)))
            for g in (got, expected))
    assert (a.offchip, a.onchip, a.flops) == (b.offchip, b.onchip, b.flops)


def test_weights_a_shared_region_cannot_address_are_left_alone():
    """Mixtral's intermediate 14336 is not a multiple of tile_F 48: an expert's
    298 tiles stop short of its matrix, so `first base + expert x 298 tiles`
    would read the previous expert's rows; the pass says so and does nothing."""
    module = workloads.moe(workloads.MODELS["mixtral"], 16, 48)
    before = str(module)
    with collecting_diagnostics() as engine:
        StepTimeMultiplexPass(regions=2).apply(Context(), module)
    assert str(module) == before
    assert [d.message for d in engine.diagnostics] == [
        "step-time-multiplex: nothing to do: up_ld1 reads its weights at 0x107000000, not at "
        "0x106fc0000 (right after the previous expert's matrix): a shared region addresses an "
        "expert's weights as the first expert's base + expert x matrix size"]
