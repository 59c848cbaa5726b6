"""Every assumption a range (issue 31 item 5): the labeled table, the sweep, the closed forms."""

from __future__ import annotations

import pytest

from steplus.dialects.target.sn40l import value
from steplus.examples.workloads.sn40l_ranges import (
    ASSUMPTIONS, COE_ASSUMPTIONS, FUSION_ASSUMPTIONS, Assumption, allreduce_s,
    assumptions_table, defaults, model_seconds, sweep,
)


def test_every_assumption_is_labeled_with_a_range_around_its_default():
    for a in ASSUMPTIONS.values():
        assert a.low <= a.default <= a.high, a.name
        assert a.low < a.high and a.why and a.unit
        assert a.platform in ("sn40l", "dgx", "workload")
    # the SN40L defaults are the target table's (one home for the numbers)
    for n in ("launch_so_us", "launch_ho_us", "p2p_gbps", "p2p_latency_us"):
        assert ASSUMPTIONS[n].default == value(n)
    # DGX constants sit in the same table as the SN40L ones
    assert {"dgx_eff", "dgx_kernel_us", "dgx_allreduce_us"} <= set(COE_ASSUMPTIONS)
    text = assumptions_table()
    assert "| dgx_kernel_us | dgx | 2 | 0.5-5 | us/kernel | assumed |" in text
    assert "| launch_so_us | sn40l | 15 | 5-30 | us/kernel | assumed |" in text


def test_sweep_one_at_a_time_and_corners():
    t = {"a": Assumption("a", 2, 1, 4, "", "sn40l", "x"),
         "b": Assumption("b", 10, 5, 20, "", "sn40l", "y")}
    r = sweep(lambda v: v["a"] * v["b"], ["a", "b"], t)
    assert r.value == 20
    assert r.each == {"a": (10, 40), "b": (10, 40)}
    assert (r.low, r.high) == (5, 80)  # the corners (1, 5) and (4, 20)
    r = sweep(lambda v: v["a"] / v["b"], ["a", "b"], t)
    assert (r.low, r.high) == (1 / 20, 4 / 5)
    assert sweep(lambda v: 3.0, ["a"], t).dominant() == "none"
    assert sweep(lambda v: v["a"] + 10 * v["b"], ["a", "b"], t).dominant() == "b"
    with pytest.raises(ValueError, match="unknown assumption"):
        sweep(lambda v: 0.0, ["nope"], t)


def test_ring_allreduce_and_layer_time_closed_forms():
    v = defaults()
    # 8 KiB over TP8: 1 us + 2 * 7/8 * 8192 B / 200 GB/s
    assert allreduce_s(8192, 8, v) == pytest.approx(1e-6 + 2 * 7 / 8 * 8192 / 200e9)
    v2 = {**v, "p2p_gbps": 50.0, "p2p_latency_us": 0.0}
    assert allreduce_s(8192, 8, v2) == pytest.approx(2 * 7 / 8 * 8192 / 50e9)
    # 32 layers of 16000 cycles at 1.6 GHz, 33 launches of 15 us, 3 us of collectives
    assert model_seconds(16000, 33, 15.0, 32, 3e-6, 1.6) == pytest.approx(
        32 * (10e-6 + 33 * 15e-6 + 3e-6))


def test_decode_fusion_range_is_the_launch_cost_ratio():
    """Unfused decode: 33 kernels, fused: 1; the fusion speedup over the launch range is
    the closed form (Ku + 33 L + C) / (Kf + L + C) at L = 5 and 30 us."""
    ku, kf, c = 102823 / 1.6e9, 71219 / 1.6e9, 0.0

    def fus(v):
        return (model_seconds(102823, 33, v["launch_so_us"], 32, c, 1.6)
                / model_seconds(71219, 1, v["launch_so_us"], 32, c, 1.6))

    r = sweep(fus, FUSION_ASSUMPTIONS)
    assert r.each["launch_so_us"] == pytest.approx(
        ((ku + 33 * 5e-6) / (kf + 5e-6), (ku + 33 * 30e-6) / (kf + 30e-6)))
    assert r.value == pytest.approx((ku + 33 * 15e-6) / (kf + 15e-6))
    assert r.dominant() == "launch_so_us"
