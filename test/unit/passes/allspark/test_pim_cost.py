"""The analytical cost model (eqs. 12-15) and partition terms on hand-derived instances."""

from __future__ import annotations

import math

import pytest
from pim_helpers import tiny_hw, tiny_stage

from steplus.passes.allspark.vit import build
from steplus.passes.allspark.cost import (
    gemm,
    layer_cost,
    layer_energy_pj,
    ring_hops,
    stage_weight_bytes,
    weights_per_node,
)
from steplus.dialects.target.pim import MIB, preset
from steplus.passes.allspark.partition import (
    Scheme,
    block_traffic,
    candidates,
    fits,
    ring_phases,
    split_values,
)


def test_gemm_roofline() -> None:
    hw = tiny_hw()  # 4x4 PEs
    # 4 x ceil(8/4) x ceil(6/4) = 16 cycles; bytes 32+48+24=104 -> ceil(104/13.72)=8 cycles
    assert gemm(hw, 4, 8, 6).cycles == 16
    assert gemm(hw, 4, 8, 6).dram_bytes == 104
    # memory bound: 1 x 1 x 1 MAC cycles, but 1*64 + 64*4 + 4 = 324 bytes -> ceil(324/13.72)
    g = gemm(hw, 1, 64, 4)
    assert g.cycles == math.ceil(324 / hw.dram_bytes_per_cycle) == 24


def test_layer_cost_closed_form() -> None:
    """g=2, m=2 on the tiny stage (C=16, h=2, d=8, N=M=16, a1=4, merge 32, 1 block)."""
    st, hw = tiny_stage(), tiny_hw()
    c = layer_cost(st, Scheme(2, 2), hw)
    # b=1, q=8, p=pk=8.  Transfer (eq. 14): D_PM = 1*8*16 = 128; per block
    # D_K = D_V = 64, D_MSA_FC = 64, D_FFN = 64 + 256, 2*D_LN = 2*16 -> 544.
    assert c.transfer == (128 + 544) // 8 == 84
    # Weight sharing (eq. 13, m=2): W_PM = 32*8/2 = 128; W_MSA = 3*16*8/2 = 192;
    # W_FC = 16*8/2 = 64; W_FFN = 2*4*16*8/2 = 512 -> 896 bytes.
    assert c.sharing == 896 // 8 == 112
    # Compute (eq. 15) on 4x4 PEs, all MAC-bound: PM 8*8*2 = 128; LT 8*4*6 = 192;
    # QK^T 8*2*4 = 64; AV 8*4*2 = 64; FC 64; FFN1 8*4*8 = 256; FFN2 8*16*2 = 256;
    # ACU (8*16 + 2*8*8 + 8*32)/16 = 32.
    assert c.compute == 128 + 192 + 64 + 64 + 64 + 256 + 256 + 32 == 1056
    assert c.total == 1056 + 84 + 112
    # workspace: max(LT 8*16+3*8*8+3*16*8, MSA 3*64+2*16*8+8*16, FFN 8*16+8*64+64*8)
    assert c.workspace == max(128 + 192 + 384, 192 + 256 + 128, 128 + 512 + 512) == 1152


def test_single_node_has_no_transfer_or_sharing() -> None:
    c = layer_cost(tiny_stage(), Scheme(1, 1), tiny_hw())
    assert (c.transfer, c.sharing, c.vertical_bytes, c.horizontal_bytes) == (0, 0, 0, 0)


def test_block_traffic_matches_the_seed_formulas() -> None:
    st = build("swin-b", 640).stages[2]  # C=512, 16 heads of 32, 49 patches
    t = block_traffic(st, st.groups[0], Scheme(16, 4))
    p, q = math.ceil(49 / 4), 32  # p = 13, q = b*d = 32
    assert t.k == t.v == 3 * p * q
    assert t.msa_fc == 15 * p * q
    assert t.ffn == 15 * p * q + 15 * p * 4 * q
    assert t.ln == 2 * 15 * p


def test_ring_phases_sum_to_the_cost_model_terms() -> None:
    hw = preset("allspark-16x16")
    for st in build("twins-s", 224).stages:
        for s in candidates(st, hw)[:6]:
            total = sum(ph.rounds * ph.elems for ph in ring_phases(st, s))
            c = layer_cost(st, s, hw)
            assert total == c.vertical_bytes + c.horizontal_bytes


def test_candidates_follow_the_seed() -> None:
    assert split_values(7) == [1, 2, 3, 4, 7]
    assert split_values(16) == list(range(1, 9)) + [16]
    st = build("swin-b", 224).stages[0]  # 4 heads, P = ceil(49/8) = 7
    cands = candidates(st, preset("allspark-16x16"))
    assert len(cands) == len([1, 2, 4]) * len([1, 2, 3, 4, 7])
    # 16 heads x 7 patches does not fit an 8x8 mesh in any orientation
    st3 = build("swin-b", 224).stages[2]
    assert Scheme(16, 7) not in candidates(st3, preset("allspark-8x8"))


def test_table_vi_weights_for_the_table_v_schedule() -> None:
    """Seed Table V (Swin-B, 640^2) with reuse and sharing stores 6.94 MiB of weights."""
    hw = preset("allspark-16x16")
    stages = build("swin-b", 640).stages
    table_v = [
        [Scheme(1, 1), Scheme(1, 1), Scheme(4, 2)],
        [Scheme(2, 1), Scheme(4, 4)],
        [Scheme(8, 2), Scheme(8, 2), Scheme(16, 4)],
        [Scheme(4, 4)],
    ]
    got = sum(weights_per_node(stage_weight_bytes(st, hw, merge=False), lays)
              for st, lays in zip(stages, table_v))
    # by hand, 12*C^2*N_bk / (g*m): 12*128^2*2 (the [1,1] layer holds all)
    # + 12*256^2*2*(1/2 + 1/16) + 12*512^2*18*(1/16 + 1/64) + 12*1024^2*2/16
    expected = 393216 + 884736 + 4423680 + 1572864
    assert got == expected
    assert round(expected / MIB, 2) == 6.94
    # without reuse the repeated [8,2] and the [4,2] next to [1,1] are stored again
    no_reuse = sum(weights_per_node(stage_weight_bytes(st, hw, merge=False), lays, reuse=False)
                   for st, lays in zip(stages, table_v))
    assert no_reuse == expected + 12 * 128**2 * 2 * (1 + 1 / 8) + 12 * 512**2 * 18 / 16


def test_energy_and_hops() -> None:
    hw = tiny_hw()
    c = layer_cost(tiny_stage(), Scheme(2, 2), hw)
    e = layer_energy_pj(c, 1, hw)
    assert ring_hops(1) == 0 and ring_hops(4) == pytest.approx(1.5)  # 3 x 1 hop + 1 x 3 hops
    assert e["compute"] == pytest.approx(4 * c.macs * hw.mac_pj)
    noc_bits_hops = 8 * (c.vertical_bytes + c.horizontal_bytes) * 1.0  # ring of 2: 1 hop each
    assert e["noc"] == pytest.approx(4 * noc_bits_hops * 1.1)
    assert e["dram"] == pytest.approx(4 * c.dram_bytes * 8 * 0.66)


def test_batch_pays_compute_and_transfer_per_input_and_sharing_once() -> None:
    """Eq. 12 with N_bt = 3 on the closed-form instance of test_layer_cost_closed_form;
    the workspace keeps 3 inputs' feature maps but one copy of the phase's weights:
    LT 3*(8*16 + 3*8*8) + 3*16*8, MSA 3*(3*64 + 2*16*8 + 8*16), FFN 3*(8*16 + 8*64) + 64*8."""
    st, hw = tiny_stage(), tiny_hw()
    c = layer_cost(st, Scheme(2, 2), hw, batch=3)
    assert (c.compute, c.transfer, c.sharing) == (3 * 1056, 3 * 84, 112)
    assert c.workspace == max(3 * 320 + 384, 3 * 576, 3 * 640 + 512) == 2432
    one = layer_cost(st, Scheme(2, 2), hw)
    assert c.macs == 3 * one.macs
    assert c.horizontal_bytes == 3 * one.horizontal_bytes


def test_candidates_are_bounded_by_the_mesh_not_the_workload() -> None:
    """Only g, m up to the mesh side can fit, so only those are listed: a stage of 2**20
    heads and 2**40 tokens (from hand-written IR) used to take minutes or all memory."""
    from dataclasses import replace

    assert split_values(7, 3) == [1, 2, 3]
    assert split_values(7, 7) == [1, 2, 3, 4, 7]
    assert split_values(2**63, 16) == list(range(1, 17))
    hw = preset("allspark-16x16")
    for st in build("swin-b", 224).stages:  # the mesh bound changes no candidate
        full = [Scheme(g, m) for g in split_values(st.heads)
                for m in split_values(-(-st.tokens // hw.p_min)) if fits(Scheme(g, m), hw)]
        assert candidates(st, hw) == full
    big = replace(build("vit-t", 224).stages[0], heads=2**20, tokens=2**40)
    assert candidates(big, hw) == [Scheme(g, m) for g in range(1, 17) for m in range(1, 17)]
