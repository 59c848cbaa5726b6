"""The SN40L parameter table: seed numbers, derived per-PCU compute, validation on load."""

from __future__ import annotations

import dataclasses

import pytest

from steplus.dialects.target.sn40l import SN40L, Param, check, explain, us_to_cycles
from steplus.dialects.target.fabric import HardwareConfig, get_preset


def test_seed_numbers_and_derived_compute():
    cfg = get_preset("sn40l")
    assert (cfg.compute_units, cfg.memory_units, cfg.sram_bytes) == (1040, 1040, 520 << 20)
    assert cfg.hbm.capacity_bytes == 64 << 30 and cfg.ddr.capacity_bytes == 1536 << 30
    # 638 TFLOPS over 1040 PCUs at the assumed 1.6 GHz: 383.4 FLOPs/cycle each
    assert cfg.unit_flops == 383 and cfg.compute_bw == 383 * 1040
    assert abs(cfg.compute_bw * 1.6e9 - 638e12) / 638e12 < 0.002
    # ~2 TB/s HBM and >200 GB/s DDR at 1.6 GHz
    assert cfg.hbm.peak_bytes_per_cycle * 1.6e9 == pytest.approx(2.048e12)
    assert cfg.ddr.peak_bytes_per_cycle * 1.6e9 == pytest.approx(204.8e9)
    assert cfg.launch_so_cycles == us_to_cycles(15) == 24000
    assert HardwareConfig.from_json(cfg.to_json()) == cfg


def test_every_parameter_has_a_source_and_a_reason():
    assert {p.source for p in SN40L.values()} == {"seed", "assumed", "derived"}
    assert all(p.why for p in SN40L.values())
    text = explain()
    assert "clock_ghz" in text and "assumed" in text and "§IV" in text


@pytest.mark.parametrize("name,bad", [("hbm_gbps", 0), ("ddr_bytes", -1), ("pcus", 0),
                                      ("clock_ghz", float("nan")), ("launch_so_us", -2)])
def test_zero_or_negative_bandwidths_and_capacities_are_rejected(name, bad):
    table = dict(SN40L)
    table[name] = dataclasses.replace(table[name], value=bad)
    with pytest.raises(ValueError, match=f"sn40l parameter '{name}' must be"):
        check(table)


def test_a_missing_parameter_is_rejected():
    table = {k: v for k, v in SN40L.items() if k != "ddr_gbps"}
    with pytest.raises(ValueError, match="'ddr_gbps' is missing"):
        check(table)
    assert isinstance(SN40L["pcus"], Param)


def test_config_json_rejects_a_zero_ddr_channel_count():
    with pytest.raises(ValueError,
                       match=r"ddr.channels: expected an integer in \[1, 1024\], got 0"):
        HardwareConfig.from_json('{"preset": "sn40l", "ddr": {"channels": 0}}')


def test_node_figures_are_eight_sockets():
    v = {k: p.value for k, p in SN40L.items()}
    assert v["node_hbm_bytes"] == v["sockets"] * v["hbm_bytes"] == 512 << 30
    assert v["node_ddr_bytes"] == v["sockets"] * v["ddr_bytes"]
    assert v["node_ddr_gbps"] == pytest.approx(
        v["sockets"] * v["ddr_channels"] * 64 / 2 * v["clock_ghz"])
    assert v["node_ddr_gbps"] > 1000  # the seed: over 1 TB/s DDR->HBM per node
    assert v["node_tflops"] == v["sockets"] * v["socket_tflops"]
