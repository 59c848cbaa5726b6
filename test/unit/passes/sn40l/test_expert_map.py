"""CoE from the allocator (issue 31 item 4): an expert's footprint, placement and switch copy
come from step-allocate-memory's map of the whole model, not from a parameter count."""

from __future__ import annotations

import pytest

from steplus.dialects.step import ops as so
from steplus.dialects.target.fabric import SN40L
from steplus.dialects.target.sn40l import value
from steplus.examples.workloads.coe import sn40l_costs
from steplus.examples.workloads.decoder import LLAMA2_7B, P2P, TINY, layer_weight_bytes, shard
from steplus.examples.workloads.sn40l_expert import (
    VOCAB, copy_module, expert_map, expert_module, switch_seconds, token_run,
)
from steplus.examples.workloads.sn40l_ranges import defaults
from steplus.passes.sn40l.kernels import kernel_groups


def _weights(model, tp, context):
    """Bytes the graphs load as weights: the layer's matrices and norms, RoPE's rotation
    (hd x hd, Q and K) and its one-row sin/cos (decode), the embedding and LM head."""
    hd = model.head_dim
    rope = 2 * (hd * hd * 2) + 4 * (hd * 2)
    return model.layers * (layer_weight_bytes(model, tp) + rope) \
        + 2 * (VOCAB // tp) * model.hidden * 2


def _kv(model, tp, context):
    hq, _, _ = shard(model, tp)
    return model.layers * 2 * context * model.head_dim * hq * 2


def test_the_expert_is_one_kernel_sequence_the_layers_chained():
    m = expert_module(32, TINY, tp=1)
    (ks,) = kernel_groups(m)
    assert [k.sym_name.data for k in ks] == ["expert_embed", "expert_l0", "expert_l1",
                                             "expert_head"]


def test_tiny_expert_map_is_its_weights_and_kv_cache():
    mp = expert_map(32, TINY, 1)
    w, kv = _weights(TINY, 1, 32), _kv(TINY, 1, 32)
    assert mp.weight_bytes == w == mp.copy_bytes
    # HBM holds the weights, the KV caches and a few activation rows sharing by lifetime
    assert w + kv <= mp.hbm_bytes <= w + kv + 64 * 1024
    assert mp.ddr_bytes == 0 and mp.kernels == 4


def test_llama_expert_map_matches_the_closed_form():
    ctx = int(defaults()["context"])
    mp = expert_map(ctx)
    w = _weights(LLAMA2_7B, 8, ctx)
    assert mp.weight_bytes == w
    # eight sockets' weights are the parameters in bf16 plus what every socket replicates:
    # the two norm vectors (7 extra copies of 2 x hidden bf16 per layer) and the RoPE
    # tables; the final norm (hidden) is not in the graphs
    d, hd = LLAMA2_7B.hidden, LLAMA2_7B.head_dim
    rope = 2 * (hd * hd * 2) + 4 * (hd * 2)
    assert 8 * w - 2 * LLAMA2_7B.params(VOCAB) == 32 * (7 * 2 * d * 2 + 8 * rope) - 2 * d
    kv = _kv(LLAMA2_7B, 8, ctx)
    assert w + kv <= mp.hbm_bytes <= w + kv + (1 << 20)
    assert len(mp.runs) <= 4  # the weights (largest, all live together) are placed first


def test_switch_is_the_simulated_copy_of_the_map():
    mp = expert_map(32, TINY, 1)
    ddr = SN40L.ddr
    assert ddr is not None
    m = copy_module(mp.runs, ddr.channels)
    (g,) = kernel_groups(m)[0]
    loads = [op for op in g.body.block.ops if isinstance(op, so.LinearOffChipLoadOp)]
    copied = sum(int(op.tiled_out_shape.get_values()[0]) * op.output.type.element.rows.data
                 * op.output.type.element.cols.data * 2 for op in loads)
    assert copied == mp.copy_bytes
    s = switch_seconds(32, TINY, 1)
    peak = ddr.channels * ddr.request_bytes / ddr.initiation_interval * SN40L.clock_ghz * 1e9
    assert mp.copy_bytes / peak <= s <= 1.15 * mp.copy_bytes / peak


def test_tiny_token_is_the_simulated_kernel_sequence():
    cycles, kernels = token_run(32, P2P(1, 200, 1000), TINY, 2)
    assert kernels == 4  # embedding, 2 layers, head
    # two layers with their all-reduces on a slower network take longer
    slow, _ = token_run(32, P2P(1, 50, 5000), TINY, 2)
    assert slow > cycles


def test_sn40l_capacity_comes_from_the_map():
    """~6 s: the whole Llama2-7B expert is simulated for its token time."""
    c = sn40l_costs()
    mp = expert_map(int(defaults()["context"]))
    hbm, ddr = int(value("hbm_bytes")), int(value("ddr_bytes"))
    assert c.hbm_slots == (hbm - mp.hbm_bytes) // mp.hbm_bytes
    assert c.backing_experts == ddr // mp.resident_bytes
    # a token is the whole allocated expert simulated: at least its weights read at the
    # HBM peak (40 channels x 64 B / 2 cycles at 1.6 GHz), and not slower than half of it
    peak = SN40L.hbm.channels * SN40L.hbm.request_bytes / SN40L.hbm.initiation_interval \
        * SN40L.clock_ghz * 1e9
    assert mp.weight_bytes / peak <= c.token_s <= 2 * mp.weight_bytes / peak
    # DDR efficiency scales the simulated copy: 0.61 of the channel peak is the seed's 1 TB/s
    slow = sn40l_costs({**defaults(), "ddr_eff": 0.61})
    assert slow.switch_s == pytest.approx(c.switch_s / 0.61)
