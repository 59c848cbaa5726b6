"""The CoE serving model: LRU cache, routing, OOM, footprint, DGX roofline (the DDR copy of an
expert's map: test_expert_map)."""

from __future__ import annotations

import math

import pytest

from steplus.examples.workloads.coe import (
    DGX_A100, EXPERT_BYTES, LRUCache, Costs, dgx_costs, footprint,
    routing_trace, serve,
)
from steplus.examples.workloads.sn40l_expert import expert_map
from steplus.examples.workloads.decoder import LLAMA2_7B, layer_weight_bytes


def _costs(slots=3, backing=10):
    return Costs("test", token_s=0.001, prefill_s=0.01, router_s={1: 0.02, 8: 0.05},
                 switch_s=0.1, hbm_slots=slots, backing_experts=backing, node_hbm_bytes=1e12)


def test_lru_evicts_the_least_recently_used():
    c = LRUCache(2)
    assert [c.touch(e) for e in (1, 2, 1, 3, 2, 1)] == [True, True, False, True, True, True]
    # 3 evicted 2 (1 was used after it), then 2 evicted 1, then 1 evicted 3
    assert c.misses == 5


def test_a_cache_smaller_than_one_expert_is_an_error():
    with pytest.raises(ValueError, match="must hold at least one expert of 13.5 GB"):
        LRUCache(0)


def test_latency_split():
    c = _costs()
    same = serve(c, 12, 8, 20, "same")
    assert same.switch_ms == 0  # the one expert stays in HBM after the warm-up
    assert same.router_ms == pytest.approx(50)
    assert same.expert_ms == pytest.approx(8 * (10 + 20 * 1))  # each pair in turn
    few = serve(c, 3, 8, 20, "uniform")
    assert few.switch_ms == 0  # every expert fits in HBM
    many = serve(c, 13, 1, 20, "uniform", batches=400)
    # uniform over 13 experts, 3 cached: a miss with probability 10/13
    assert many.switch_ms == pytest.approx(100 * 10 / 13, rel=0.15)
    assert serve(c, 14, 1, 20, "uniform").oom  # 3 in HBM + 10 in the backing tier


def test_routing_traces():
    assert set(routing_trace("same", 10, 50)) == {0}
    z = routing_trace("zipf", 100, 5000)
    counts = sorted((z == e).sum() for e in range(100))
    assert counts[-1] > 10 * counts[50]  # Zipf: the top expert dominates the median one
    with pytest.raises(ValueError, match="unknown routing"):
        routing_trace("roundrobin", 10, 5)


def test_footprint():
    """The DGX holds an expert in the HBM step-allocate-memory found for the same model
    (weights, KV caches, activations; 8 TP shares), no assumed reserve."""
    a100 = dgx_costs(DGX_A100)
    m = expert_map(1024)  # the default context
    per_expert = 8 * m.hbm_bytes
    assert m.weight_bytes < m.hbm_bytes and abs(8 * m.weight_bytes - EXPERT_BYTES) < 0.01 * EXPERT_BYTES
    assert a100.expert_hbm_bytes == per_expert
    assert a100.hbm_slots == (8 * 80e9 - per_expert) // per_expert
    assert footprint(a100, 850) == math.ceil(851 * per_expert / (8 * 80e9))


def test_dgx_roofline_is_at_least_the_weight_read():
    a100 = dgx_costs(DGX_A100)
    weights = 32 * layer_weight_bytes(LLAMA2_7B, 8)  # per GPU, per token
    assert a100.token_s >= weights / (0.6 * 2.039e12)
    assert a100.switch_s == pytest.approx(EXPERT_BYTES / 32e9)
    assert a100.backing_experts == int(2000e9 // EXPERT_BYTES)


def test_dgx_kernels_are_the_graphs_conventional_kernels():
    """The DGX runs the conventionally fused kernels of the layer graph the SN40L side
    simulates, each with step-metrics' bytes and FLOPs (no assumed activation count): in
    a decode step the q, k and v projections are each one GEMV kernel that reads its
    weight (hidden x hidden/8 bf16) and the normalized row (hidden bf16), writes its
    output (hidden/8 bf16) and does 2 x hidden x hidden/8 FLOPs; the whole layer's FLOPs
    are 2 per weight parameter plus the attention's 4 x kv x head_dim per head, to 1 %, and
    its bytes the weights and KV cache plus the rows between kernels (under 2 %)."""
    from steplus.examples.workloads.coe import _conventional

    h, tp, kv = LLAMA2_7B.hidden, 8, 1024
    ks = _conventional(1, kv)
    proj = (h * h // tp * 2 + h * 2 + h // tp * 2, 2 * h * h // tp)
    assert ks.count(proj) == 3  # q, k, v (Llama2-7B: as many KV heads as heads)
    heads = LLAMA2_7B.heads // tp
    flops = 2 * layer_weight_bytes(LLAMA2_7B, tp) // 2 + 4 * kv * LLAMA2_7B.head_dim * heads
    assert sum(f for _, f in ks) == pytest.approx(flops, rel=0.01)
    kv_bytes = 2 * kv * LLAMA2_7B.head_dim * heads * 2
    assert layer_weight_bytes(LLAMA2_7B, tp) + kv_bytes <= sum(b for b, _ in ks) \
        <= 1.02 * (layer_weight_bytes(LLAMA2_7B, tp) + kv_bytes)


def test_dgx_decode_token_is_the_memory_roofline_of_its_kernels():
    """At decode every kernel does at most ~2 FLOPs per byte, far under the A100's ridge
    (312 TFLOPS / 2.039 TB/s = 153): each kernel takes its bytes over the derated HBM,
    so a token is 32 x (bytes / (0.6 x 2.039 TB/s) + kernels x 2 us + two ring
    all-reduces of one row over NVLink at 10 us each) + the LM head's read."""
    from steplus.examples.workloads.coe import VOCAB, _conventional
    from steplus.examples.workloads.decoder import collective_bytes

    ks = _conventional(1, 1024)
    assert max(f / b for b, f in ks) < 2.1
    bw = 0.6 * 2.039e12
    ar = 2 * (10e-6 + 2 * 7 / 8 * collective_bytes(LLAMA2_7B, 1) / 600e9)
    layer = sum(b for b, _ in ks) / bw + len(ks) * 2e-6 + ar
    head = VOCAB * LLAMA2_7B.hidden * 2 / 8 / bw
    assert dgx_costs(DGX_A100).token_s == pytest.approx(32 * layer + head, rel=1e-12)
