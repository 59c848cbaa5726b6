"""Hostile hardware configs and oversized simulations: validated on load,
refused before allocating (with `--force` to override), never a traceback."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.dialects.step import GraphOp
from steplus.passes.step import sim_estimate
from steplus.passes.step.sim_estimate import SimulationTooLarge, estimate_simulation
from steplus.runtime.fabric.build import build_program
from steplus.dialects.target.fabric import PRESETS, HardwareConfig, HBMConfig, get_preset
from steplus.tools.registry import get_all_dialects
from conftest import run_tool

GRAPH = """
step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
  %r = step.repeat %x {count = 3 : i64} : (!step.stream<[B, 2], !step.tile<16x64xf32>>) -> !step.stream<[B, 2, 3], !step.tile<16x64xf32>>
  step.linear_offchip_store %r {base_addr = 4096 : i64} : !step.stream<[B, 2, 3], !step.tile<16x64xf32>>
}
"""


@pytest.mark.parametrize("text, message", [
    ('{"hbm": {"channels": 0}}', "hbm.channels: expected an integer in [1, 1024], got 0"),
    ('{"hbm": {"channels": 100000}}', "hbm.channels: expected an integer in [1, 1024], got 100000"),
    ('{"base_depth": "2"}', 'base_depth: expected an integer in [1, 1048576], got "2"'),
    ('{"base_depth": true}', "base_depth: expected an integer in [1, 1048576], got true"),
    ('{"pmu_bw": -64}', "pmu_bw: expected an integer in [1, 1099511627776], got -64"),
    ('{"compute_bw": 0}', "compute_bw: expected an integer in [1, 1099511627776], got 0"),
    ('{"ddr": {"capacity_bytes": 0}}',
     "ddr.capacity_bytes: expected an integer in [1, 4611686018427387904], got 0"),
    ('{"hbm": {"initiation_interval": 1.5}}',
     "hbm.initiation_interval: expected an integer in [1, 1099511627776], got 1.5"),
    ('{"clock_ghz": NaN}', "clock_ghz: expected a number in [1e-06, 1e+06], got nan"),
    ('{"clock_ghz": 0}', "clock_ghz: expected a number in [1e-06, 1e+06], got 0"),
    ('{"systolic_tile": [16]}', "systolic_tile: expected two integers in [1, 4096], got (16,)"),
    ('{"systolic_tile": "16x16"}', "systolic_tile: expected two integers in [1, 4096], got '16x16'"),
    ('{"hbm": [32]}', "hbm: expected a JSON object, got [32]"),
    ('{"preset": 3}', "preset: expected a preset name, got 3"),
    ('{"name": null}', "name: expected a string, got None"),
    ('{"depth": 2}', "unknown hardware config field(s): depth (expected base_depth, clock_ghz, "
                     "compute_bw, compute_units, ddr, end_offset, hbm, launch_ho_cycles, "
                     "launch_so_cycles, memory_units, name, pmu_bw, preset, sram_bytes, "
                     "systolic_tile, unit_flops)"),
    ('{"hbm": {"chanels": 8}}', "unknown hardware config field(s): hbm.chanels (expected "
                                "capacity_bytes, channels, initiation_interval, latency, "
                                "par_dispatch, request_bytes, startup)"),
    ("[1, 2]", "a hardware config is a JSON object"),
])
def test_bad_config_names_the_key(text: str, message: str):
    with pytest.raises(ValueError) as e:
        HardwareConfig.from_json(text)
    assert str(e.value) == message


def test_valid_configs_still_load():
    cfg = HardwareConfig.from_json('{"preset": "swiglu-hdl", "base_depth": 4, '
                                   '"hbm": {"channels": 16}, "clock_ghz": 1.6}')
    assert (cfg.name, cfg.base_depth, cfg.hbm.channels, cfg.hbm.par_dispatch) == \
        ("swiglu-hdl", 4, 16, 4)
    for preset in PRESETS.values():
        assert HardwareConfig.from_json(preset.to_json()) == preset
    with pytest.raises(ValueError, match="base_depth"):
        get_preset("step-eval").with_(base_depth=0)
    with pytest.raises(ValueError, match="channels"):
        dataclasses.replace(HBMConfig(), channels=0)


def test_step_run_reports_a_bad_config(tmp_path):
    from steplus.tools.step_run import main

    cfg = tmp_path / "hw.json"
    cfg.write_text('{"hbm": {"channels": 0}}')
    graph = tmp_path / "g.mlir"
    graph.write_text(GRAPH)
    r = run_tool(main, [str(graph), "--bind", "B=4", "--config", str(cfg)])
    assert (r.code, r.out) == (1, "")
    assert r.err == (f"{cfg}: error: invalid hardware config: "
                     "hbm.channels: expected an integer in [1, 1024], got 0\n")


def _graph(text: str, b: int) -> GraphOp:
    ctx = Context(allow_unregistered=True)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    module = Parser(ctx, text.replace("[B", f"[{b}")).parse_module()
    return next(op for op in module.walk() if isinstance(op, GraphOp))


def test_estimate_counts_the_stream_elements():
    # the load walks B x 2 tiles, the repeat emits B x 2 x 3: 8B elements.
    for b in (1, 4, 10**9):
        assert estimate_simulation(_graph(GRAPH, b)) == 8 * b


def test_oversized_simulation_is_refused_before_building():
    graph = _graph(GRAPH, 10**9)
    with pytest.raises(SimulationTooLarge) as e:
        build_program(graph)
    assert str(e.value) == ("simulation too large: about 8,000,000,000 stream elements "
                            "(limit 10,000,000); bind smaller dims, or pass --force to run it "
                            "anyway")


def test_functional_tensors_are_bounded(monkeypatch):
    # 4 x 2 tiles of 16x64 read from a 4*16 x 2*64 float64 tensor: 65536 bytes.
    monkeypatch.setattr(sim_estimate, "MAX_TENSOR_BYTES", 65535)
    with pytest.raises(SimulationTooLarge, match="about 65,536 bytes of random input tensors"):
        build_program(_graph(GRAPH, 4), functional=True)
    monkeypatch.setattr(sim_estimate, "MAX_TENSOR_BYTES", 65536)
    prog = build_program(_graph(GRAPH, 4), functional=True)
    m = prog.run()
    # at the limit it runs: the store gets each of the 4 x 2 tiles 3 times in a
    # row (step.repeat), and the values do not change the timing
    stored = prog.context("linear_offchip_store0").stored
    assert len(stored) == 4 * 2 * 3
    for k in range(0, len(stored), 3):
        assert stored[k].shape == (16, 64)
        np.testing.assert_array_equal(stored[k + 1], stored[k])
        np.testing.assert_array_equal(stored[k + 2], stored[k])
    assert m.cycles == build_program(_graph(GRAPH, 4), functional=False).run().cycles


def test_step_run_force_overrides_the_limit(tmp_path, monkeypatch):
    from steplus.tools.step_run import main

    graph = tmp_path / "g.mlir"
    graph.write_text(GRAPH)
    monkeypatch.setattr(sim_estimate, "MAX_SIM_ELEMENTS", 31)  # 8 x 4 = 32 elements
    r = run_tool(main, [str(graph), "--bind", "B=4"])
    assert (r.code, r.out) == (1, "")
    assert r.err == (f"{graph}: error: simulation too large: about 32 stream elements "
                     "(limit 31); bind smaller dims, or pass --force to run it anyway\n")
    forced = run_tool(main, [str(graph), "--bind", "B=4", "--force"])
    assert forced.code == 0 and forced.out.startswith("hardware               step-eval\n")


MATMUL = """
step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : () -> !step.stream<[1], !step.tile<64x1xf32>>
  %w = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : () -> !step.stream<[1], !step.tile<1x64xf32>>
  %z = step.zip %x, %w : (!step.stream<[1], !step.tile<64x1xf32>>, !step.stream<[1], !step.tile<1x64xf32>>) -> !step.stream<[1], !step.tuple<!step.tile<64x1xf32>, !step.tile<1x64xf32>>>
  %e = step.map %z : !step.stream<[1], !step.tuple<!step.tile<64x1xf32>, !step.tile<1x64xf32>>> -> !step.stream<[1], !step.tile<64x64xf32>> {
  ^bb0(%a: !step.tile<64x1xf32>, %b: !step.tile<1x64xf32>):
    %v = step.apply "matmul"(%a, %b) : (!step.tile<64x1xf32>, !step.tile<1x64xf32>) -> !step.tile<64x64xf32>
    step.yield %v : !step.tile<64x64xf32>
  }
  step.linear_offchip_store %e {base_addr = 4096 : i64} : !step.stream<[1], !step.tile<64x64xf32>>
}
"""


def test_functional_tile_values_are_bounded(monkeypatch):
    # The matmul of a 64x1 and a 1x64 tile holds 64 x 64 float64 values: 32768 bytes.
    monkeypatch.setattr(sim_estimate, "MAX_TENSOR_BYTES", 32767)
    with pytest.raises(SimulationTooLarge, match="about 32,768 bytes of one tile's values"):
        build_program(_graph(MATMUL, 1), functional=True)
    timing = build_program(_graph(MATMUL, 1), functional=False).run()  # no values: no limit
    monkeypatch.setattr(sim_estimate, "MAX_TENSOR_BYTES", 32768)
    prog = build_program(_graph(MATMUL, 1), functional=True)
    m = prog.run()
    (out,) = prog.context("linear_offchip_store0").stored
    x, w = prog.tensors["linear_offchip_load0"], prog.tensors["linear_offchip_load1"]
    np.testing.assert_allclose(out, x @ w)
    assert m.cycles == timing.cycles
