"""The `sn40l` fabric preset is built from the module's `#target.sn40l` (issue 25 item 2).

`dialects/target/fabric.py`'s `sn40l_config(table)` is the one mapping from the SN40L
parameter table to a `HardwareConfig`; a module's `#target.sn40l<{...}>` changes the
table, and `fabric_target_of` / `fabric_preset_of` (so `step-run`, with or without
`--preset sn40l`, and `convert-step-to-runtime`) build the preset from it. Expected
values are the table's formulas recomputed here, and the HBM bound of a
bandwidth-bound copy (bytes moved / bytes per cycle)."""

from __future__ import annotations

import math

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from conftest import run_tool
from steplus.dialects.program_dialects import get_all_dialects
from steplus.dialects.target.attrs import fabric_preset_of, fabric_target_of
from steplus.dialects.target.fabric import SN40L, get_preset, sn40l_config
from steplus.dialects.target.sn40l import with_changes
from steplus.tools import step_run

GRAPH = """builtin.module attributes {ATTRS} {
  step.graph @g {
    %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 64>, stride = array<i64: 1>, tiled_out_shape = array<i64: 64>} : () -> !step.stream<[64], !step.tile<64x64xbf16>>
    step.linear_offchip_store %x {base_addr = 1048576 : i64} : !step.stream<[64], !step.tile<64x64xbf16>>
  }
}
"""
COPY_BYTES = 2 * 64 * 64 * 64 * 2  # 64 tiles of 64x64 bf16, read then written


def _parse(attrs: str) -> ModuleOp:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    m = Parser(ctx, GRAPH.replace("ATTRS", attrs)).parse_module()
    m.verify()
    return m


def test_default_table_gives_the_preset_unchanged():
    assert sn40l_config() == get_preset("sn40l") == SN40L
    assert sn40l_config(with_changes({})) == SN40L
    m = _parse('target.fabric = #target.fabric<"sn40l">, target.sn40l = #target.sn40l')
    assert fabric_target_of(m) == SN40L
    assert fabric_preset_of("sn40l", _parse('target.fabric = #target.fabric<"sn40l">')) == SN40L


def test_changed_parameters_reach_the_fabric():
    m = _parse('target.fabric = #target.fabric<"sn40l">, target.sn40l = #target.sn40l<{'
               "hbm_channels = 20 : i64, agcu_requests = 2 : i64, pcus = 520 : i64, "
               "clock_ghz = 1.0 : f64, launch_so_us = 3.0 : f64}>")
    cfg = fabric_target_of(m)
    assert cfg is not None and cfg.name == "sn40l"
    assert (cfg.hbm.channels, cfg.hbm.par_dispatch, cfg.ddr and cfg.ddr.par_dispatch) == (20, 2, 2)
    unit = math.floor(638e12 / (520 * 1.0e9))  # pcu_flops: socket TFLOPS / (PCUs x clock)
    assert (cfg.compute_units, cfg.unit_flops, cfg.compute_bw) == (520, unit, 520 * unit)
    assert cfg.clock_ghz == 1.0 and cfg.launch_so_cycles == 3000  # 3 us at 1 GHz
    assert cfg.launch_ho_cycles == 1000  # the seed table's 1 us, at the changed clock
    assert (cfg.pmu_bw, cfg.memory_units, cfg.hbm.capacity_bytes) == (
        SN40L.pmu_bw, SN40L.memory_units, SN40L.hbm.capacity_bytes)
    assert fabric_preset_of("sn40l", m) == cfg
    # a #target.fabric change applies on top of the module's table
    m2 = _parse('target.fabric = #target.fabric<"sn40l", {base_depth = 3 : i64}>, '
                "target.sn40l = #target.sn40l<{hbm_channels = 20 : i64}>")
    cfg2 = fabric_target_of(m2)
    assert cfg2 is not None and (cfg2.hbm.channels, cfg2.base_depth) == (20, 3)


def test_other_presets_ignore_the_table():
    m = _parse('target.fabric = #target.fabric<"step-eval">, '
               "target.sn40l = #target.sn40l<{hbm_channels = 20 : i64}>")
    assert fabric_target_of(m) == get_preset("step-eval")
    assert fabric_preset_of("swiglu-hdl", m) == get_preset("swiglu-hdl")


def test_a_table_that_is_no_fabric_is_an_error_where_written():
    with pytest.raises(VerifyException, match=r"#target.sn40l: as the sn40l fabric: "
                       r"channels: expected an integer in \[1, 1024\], got 5000"):
        _parse("target.sn40l = #target.sn40l<{hbm_channels = 5000 : i64}>")


def _cycles(tmp_path, attrs: str, *flags: str) -> int:
    path = tmp_path / "g.mlir"
    path.write_text(GRAPH.replace("ATTRS", attrs))
    r = run_tool(step_run.main, [str(path), *flags])
    assert r.code == 0, r.err
    lines = dict(line.split(None, 1) for line in r.out.splitlines() if line.strip())
    return int(lines["cycles"])


def test_step_run_simulates_the_module_table(tmp_path):
    seed = _cycles(tmp_path, 'target.fabric = #target.fabric<"sn40l">')
    two = 'target.fabric = #target.fabric<"sn40l">, target.sn40l = #target.sn40l<{hbm_channels = 2 : i64}>'
    narrow = _cycles(tmp_path, two)
    # 2 channels x 64 B every 2 cycles = 64 B/cycle: the copy takes at least bytes / 64
    # cycles, and HBM-bound, not much more (latencies and start-up: under 1 %)
    assert COPY_BYTES / 64 <= narrow <= 1.01 * COPY_BYTES / 64
    # the seed's 40 channels move it far faster (each stream issues 4 requests a cycle)
    assert seed < COPY_BYTES / 64 / 4
    # --preset sn40l reads the module's table too; --preset step-eval does not use it
    assert _cycles(tmp_path, two, "--preset", "sn40l") == narrow
    assert _cycles(tmp_path, two, "--preset", "step-eval") == _cycles(
        tmp_path, 'target.fabric = #target.fabric<"sn40l">', "--preset", "step-eval")


def test_step_run_explain_prints_the_module_table(tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text(GRAPH.replace("ATTRS", 'target.fabric = #target.fabric<"sn40l">, '
                                  "target.sn40l = #target.sn40l<{hbm_channels = 2 : i64}>"))
    r = run_tool(step_run.main, [str(path), "--explain"])
    assert r.code == 0, r.err
    row = next(ln for ln in r.out.splitlines() if ln.startswith("hbm_channels"))
    assert row.split()[1:3] == ["2", "channels"] and "changed by the target attribute" in row
