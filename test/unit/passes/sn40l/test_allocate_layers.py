"""step-allocate-memory{layers=N}: the memory map of N identical layers, and the layers
simulated each from the tier its copy was placed in (issue 31 item 2)."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import f32

from steplus.dialects.sn40l_attrs import HBM_BYTES
from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import Graph
from steplus.dialects.target.fabric import SN40L
from steplus.examples.workloads.sn40l_route import simulate_layers
from steplus.passes.sn40l.allocate_memory import StepAllocateMemoryPass, plan_layers
from steplus.passes.sn40l.kernelize import kernelize_graph

W = 64 * 64 * 64 * 4  # the layer's weight: 64 tiles of 64x64 f32, 1 MiB


def _layer():
    """A weight streamed once (read first: resident), reduced to one tile (stored)."""
    g = Graph("layer")
    g.load((64, 64), f32, [64], base_addr=1 << 30, name="w").accum("add", 1, name="s") \
        .store(base_addr=1 << 31)
    return g.module()


def _two_kernels():
    """x -> exp -> t (stored, read back by the second kernel) -> * w -> out."""
    g = Graph("g")
    x = g.load((16, 16), f32, [4], name="x")
    x.map("exp", name="e").store(base_addr=4096)
    g.load((16, 16), f32, [4], base_addr=4096, name="t") \
        .map("mul", g.load((16, 16), f32, [4], base_addr=1 << 20, name="w"), name="m") \
        .store(base_addr=8192)
    return next(o for o in g.module().walk() if isinstance(o, GraphOp))


def test_resident_symbols_get_a_copy_per_layer_activations_share():
    ks = kernelize_graph(_two_kernels(), "unfused")
    n = len(ks)
    p = plan_layers(ks, 3, 1 << 30, 1 << 30)
    assert n == 2 and len(p.symbols) == 3 * 4  # x, w, the cut t, the output
    by = {(s.key, s.layer): s for s in p.symbols}
    for k in range(3):  # weights and inputs live over the whole run, in every layer
        assert (by[1 << 20, k].first, by[1 << 20, k].last) == (0, 5)
        assert (by[0, k].first, by[0, k].last) == (0, 5)
        assert (by[4096, k].first, by[4096, k].last) == (2 * k, 2 * k + 1)  # its layer
        assert (by[8192, k].first, by[8192, k].last) == (2 * k + 1, 5)  # the output
        assert by[0, k].name.endswith(f"@{k}")
    ts = [by[4096, k] for k in range(3)]
    # 4 KiB each: 3 x (x, w, output) resident + one shared activation slot
    assert p.hbm_peak == (9 + 1) * 4096
    assert len({s.offset for s in ts}) == 1


def test_layers_pass_option_reports_the_model_peak_and_checks_its_bound():
    m = _layer()
    StepAllocateMemoryPass(layers=4).apply(Context(), m)
    g = next(o for o in m.walk() if isinstance(o, GraphOp))
    assert HBM_BYTES.require(g) == 4 * (W + 64 * 64 * 4)
    for bad in (0, 1025, True):
        with pytest.raises(ValueError, match="layers must be an integer in 1..1024"):
            StepAllocateMemoryPass(layers=bad)


def test_layers_past_hbm_stream_their_weights_from_ddr_at_its_bandwidth():
    """4 layers, HBM for 3.5 weights: the outputs (least traffic) and then the last
    layer's weight spill. Moving W takes W / peak bytes per cycle: HBM 40 channels x 64 B
    / 2 = 1280 B/cycle, DDR 4 x 64 B / 2 = 128 (10x). The DDR layer's cycles move by the
    extra transfer time: at least W/128 - W/1280 (the HBM layer fully overlapped its
    stream), at most W/128 plus 10 % (request latency, pipeline fill: nothing overlapped)."""
    r = simulate_layers(_layer(), "fused", layers=4, hbm=7 * W // 2, ddr=1 << 30)
    out = 64 * 64 * 4
    assert r.layer_ddr_bytes == [out, out, out, W + out]
    assert r.simulations == 2 and r.hbm_bytes <= 7 * W // 2
    hbm_bw = SN40L.hbm.peak_bytes_per_cycle
    assert SN40L.ddr is not None
    ddr_bw = SN40L.ddr.peak_bytes_per_cycle
    assert hbm_bw / ddr_bw == 10
    fast, slow = r.layer_cycles[0], r.layer_cycles[3]
    assert r.layer_cycles[:3] == [fast] * 3
    assert W / hbm_bw <= fast < W / ddr_bw
    assert W / ddr_bw <= slow
    assert W / ddr_bw - W / hbm_bw <= slow - fast <= 1.1 * W / ddr_bw
    assert r.kernel_cycles == 3 * fast + slow


def test_llama2_7b_decode_32_layers_fit_one_socket_hbm_with_a_copy_per_layer():
    """Llama2-7B's route layer (TP8 shard, decode B = 4, 4K cache) x 32: every layer's
    weights and K/V caches resident. Per layer (bf16): q, k, v, o 4096 x 512; gate, up,
    down 4096 x 1376; K and V caches 4 requests x 4 KV heads x ceil(4097 / 32) tiles of
    32 x 128. The rest (norm weights, RoPE tables, the input and output, the shared
    activations) is under 1 MiB per layer. All in the SN40L's 64 GiB HBM."""
    pytest.importorskip("torch")
    from steplus.examples.workloads.sn40l import prepare
    from steplus.examples.workloads.sn40l_llama import LLAMA2_7B, route_layer
    from steplus.lowering.linalg_to_step.collective import P2PNet

    ks = prepare(route_layer(LLAMA2_7B, p2p=P2PNet(8)).module, "fused", memory=False)
    p = plan_layers(ks, 32, 64 << 30, 1536 << 30)
    weights = (4 * 4096 * 512 + 3 * 4096 * 1376) * 2
    caches = 2 * 4 * 4 * -(-4097 // 32) * 32 * 128 * 2
    assert 32 * (weights + caches) <= p.hbm_peak <= 32 * (weights + caches + (1 << 20))
    assert p.ddr_peak == 0 and not p.spilled
    big = [s for s in p.symbols if s.size == caches // 2]  # the K and V caches
    assert len(big) == 64 and len({s.offset for s in big}) == 64
