"""The reference workloads (examples/workloads/graphs.py): their step-metrics,
bound to the shipped routing traces, equal closed forms written here from the
reference-workload spec §5.5 (weights loaded once per token tile, activations
in and out, padding); and the committed .mlir files are the builders' output."""

from __future__ import annotations

import functools

import pytest

from conftest import REPO
from steplus.dialects.step import GraphOp
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.specialize import routing_bindings, specialize_graph
from steplus.passes.step.traces import RoutingTrace

from steplus.examples.workloads import graphs as workloads

TRACES = REPO / "examples" / "data" / "step-traces" / "expert_routing"
TRACE_FILES = {
    ("mixtral", 64): "mixtral_b64/008_010.npz",
    ("qwen", 64): "qwen_b64/032_012.npz",
    ("mixtral", 1024): "mixtral_b1024/019_009.npz",
    ("qwen", 1024): "qwen_b1024/022_016.npz",
}


def _graph(module) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


@functools.cache
def _moe(model: str, tile_n: int | None):
    module = workloads.moe(workloads.MODELS[model], tile_n)
    graph = _graph(module)
    return module, graph, compute_metrics(graph)


def _closed_form(model: str, batch: int, tile_n: int | None) -> tuple[int, int]:
    """Traffic and on-chip bytes of §5.5 for the shipped trace."""
    m = workloads.MODELS[model]
    D, F, K, tF = m.hidden, m.inter, m.top_k, workloads.TILE_F
    c = RoutingTrace.load(TRACES / TRACE_FILES[(model, batch)], m.experts).counts
    tiles = [int(x > 0) if tile_n is None else -(-x // tile_n) for x in c]
    traffic = 2 * batch * D + 2 * batch * K + sum(tiles) * 3 * (2 * D * F) + 4 * batch * D
    active = [x for x in c if x > 0]
    if tile_n is None:
        onchip = 10 * D + 2 + 12 * D * sum(c) + len(active) * 6 * D * tF
    else:
        onchip = 10 * D + 2 + len(active) * (12 * tile_n * D + 6 * D * tF)
    return traffic, onchip


@pytest.mark.parametrize("tile_n", [16, 64, None], ids=["tn16", "tn64", "dynamic"])
@pytest.mark.parametrize("model", ["mixtral", "qwen"])
def test_moe_metrics_bound_to_the_traces_equal_the_closed_forms(model, tile_n):
    _, graph, symbolic = _moe(model, tile_n)
    for batch in (64, 1024):
        trace = RoutingTrace.load(TRACES / TRACE_FILES[(model, batch)], workloads.MODELS[model].experts)
        bindings = specialize_graph(graph.clone(), routing_bindings(graph, trace))
        bound = symbolic.bind(bindings)
        assert (int(bound.offchip), int(bound.onchip)) == _closed_form(model, batch, tile_n), batch


def _expert_flops(b, D, F):
    # our function library: 3 matmuls, SiLU 8/elem, Mul 1/elem, and the down
    # projection's partial sums added once per F tile
    return 6 * b * D * F + 9 * b * F + b * D * (F // workloads.TILE_F)


@pytest.mark.parametrize("tile_n", [16, None], ids=["tn16", "dynamic"])
def test_moe_flops_count_padding_rows(tile_n):
    _, graph, symbolic = _moe("mixtral", tile_n)
    m = workloads.MODELS["mixtral"]
    D, F, K = m.hidden, m.inter, m.top_k
    trace = RoutingTrace.load(TRACES / TRACE_FILES[("mixtral", 64)], m.experts)
    bound = symbolic.bind(specialize_graph(graph.clone(), routing_bindings(graph, trace)))
    c = trace.counts
    rows = [x if tile_n is None else -(-x // tile_n) * tile_n for x in c]
    # experts (on padded rows) + the per-row routing-weight Mul + the final Accum adds
    expected = sum(_expert_flops(r, D, F) for r in rows) + 64 * K * D + 64 * K * D
    assert int(bound.flops) == expected
    assert int(bound.padded_flops) == sum(_expert_flops(r - x, D, F) for r, x in zip(rows, c))


@pytest.mark.parametrize("tm", [16, 32, 64])
@pytest.mark.parametrize("tn", [16, 32, 64, 128, 256])
def test_swiglu_traffic_and_flops(tm, tn):
    B, D, F = 64, 256, 512
    gm = compute_metrics(_graph(workloads.swiglu(tm, tn)))
    # X re-read once per N tile, the three weights once per M tile, f32 output
    assert int(gm.offchip) == 4 * B * D * (F // tn) + 3 * 4 * D * F * (B // tm) + 4 * B * D
    # 3 matmuls, SiLU, Mul, and each accumulator's add (gate/up: one K step;
    # down: one per F tile)
    assert int(gm.flops) == 2 * B * D * F * 3 + 8 * B * F + B * F + 2 * B * F + B * D * (F // tn)
    # loads: one tile each; gate/up/down accumulators; the stored tile
    assert int(gm.onchip) == 4 * (tm * D + 2 * D * tn + tn * D) + 4 * (2 * tm * tn + tm * D) + 4 * tm * D


def test_committed_examples_are_the_builders_output():
    for stem, module in workloads.configurations().items():
        if stem.startswith("moe_qwen"):  # the same builder as mixtral; checked below, cached
            tile = stem.rsplit("_", 1)[1]
            module = _moe("qwen", None if tile == "dyn" else int(tile[2:]))[0]
        path = REPO / "examples" / "step" / f"{stem}.mlir"
        assert path.read_text() == workloads.mlir_text(module), f"{path} is stale: run examples/workloads/graphs.py"


@pytest.mark.parametrize("regions", [16])
def test_time_multiplexed_moe_metrics_equal_the_closed_forms(regions):
    # §8.3 / §5.5: same traffic as weight-stationary (a region reloads an
    # expert's weights per token tile); on-chip 10D + 2 + A_e*4*tN*D +
    # A_r*(8*tN*D + 6*D*tF) with A_e active experts, A_r active regions.
    m = workloads.MODELS["qwen"]
    E, D, F, K, tN, tF, B = m.experts, m.hidden, m.inter, m.top_k, 32, 48, 64
    graph = _graph(workloads.moe_time_multiplexed(m, regions, tN, tF))
    trace = RoutingTrace.load(TRACES / TRACE_FILES[("qwen", B)], E)
    bound = compute_metrics(graph).bind(specialize_graph(graph.clone(), routing_bindings(graph, trace)))
    c, per = trace.counts, E // regions
    tiles = sum(-(-x // tN) for x in c)
    active_experts = sum(1 for x in c if x > 0)
    active_regions = sum(1 for r in range(regions) if any(c[r * per:(r + 1) * per]))
    assert int(bound.offchip) == 2 * B * D + 2 * B * K + tiles * 3 * 2 * D * F + 4 * B * D
    assert int(bound.onchip) == (10 * D + 2 + active_experts * 4 * tN * D
                                 + active_regions * (8 * tN * D + 6 * D * tF))
