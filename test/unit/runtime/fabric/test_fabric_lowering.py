"""convert-step-to-runtime and the hardware configurations."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32

from steplus.dialects.step.builder import Graph
from steplus.dialects.step.ops import ConsumeOp
from steplus.dialects.step.types import TileType
from steplus.lowering.step_to_runtime import ConvertStepToRuntimePass, LoweringError
from steplus.runtime.fabric.build import build_program
from steplus.dialects.target.fabric import (
    PRESETS, SN40L, STEP_EVAL, HardwareConfig, get_preset,
)
from swiglu_graphs import swiglu_graph, swiglu_traffic
from golden import ROUTE_2EXPERTS_CYCLES, SWIGLU_SN40L_CYCLES_32x64


def test_presets_are_data():
    assert STEP_EVAL.hbm.peak_bytes_per_cycle == 1024
    assert get_preset("swiglu-hdl").hbm.peak_bytes_per_cycle == 256
    assert SN40L.hbm.peak_bytes_per_cycle == 1280 and SN40L.sram_bytes == 520 << 20
    assert SN40L.compute_units == SN40L.memory_units == 1040
    for cfg in PRESETS.values():
        assert HardwareConfig.from_json(cfg.to_json()) == cfg
    cfg = HardwareConfig.from_json('{"preset": "sn40l", "hbm": {"channels": 8}, "pmu_bw": 128}')
    assert cfg.hbm.channels == 8 and cfg.pmu_bw == 128 and cfg.sram_bytes == SN40L.sram_bytes
    assert STEP_EVAL.with_(channels=4, base_depth=1).hbm.channels == 4
    with pytest.raises(ValueError, match="unknown hardware config field"):
        HardwareConfig.from_json('{"bogus": 1}')
    with pytest.raises(ValueError, match="unknown hardware preset"):
        get_preset("tpu")


def test_sn40l_preset_runs_swiglu():
    m = build_program(swiglu_graph(64, 256, 512, 32, 64), SN40L.with_(compute_bw=4096, par_dispatch=1)).run()
    assert m.offchip_traffic == swiglu_traffic(64, 256, 512, 32, 64)
    # PMU-bound like step-eval: the extra channels do not help (a regression pin)
    assert m.cycles == SWIGLU_SN40L_CYCLES_32x64
    # the preset's own compute (a whole socket per unallocated op) is PMU-bound too
    fast = build_program(swiglu_graph(64, 256, 512, 32, 64), SN40L).run()
    assert fast.cycles == build_program(swiglu_graph(64, 256, 512, 32, 64),
                                        SN40L.with_(compute_bw=1 << 30)).run().cycles


def _builder_graph():
    g = Graph("g")
    # a [3, 2] walk over a 3x2-tile tensor with stride [1, 1]: tile (i0, i1) is tile i0 + i1
    x = g.load(tile=(8, 16), dtype=f32, out_shape=[3, 2], stride=[1, 1], base_addr=0)
    x.map("exp").accum("add", rank=1).store(base_addr=4096)
    return g.module()


def test_functional_builder_graph_matches_numpy():
    prog = build_program(_builder_graph(), STEP_EVAL, functional=True)
    m = prog.run()
    X = prog.tensors["linear_offchip_load0"]

    def tile_at(i0, i1):  # tile (i0, i1) is tile sum(i*stride) of tiled_in_shape, row-major
        bi, bj = divmod(i0 * 1 + i1 * 1, 2)  # the load's stride is [1, 1]
        return X[8 * bi:8 * bi + 8, 16 * bj:16 * bj + 16]

    ref = [np.exp(tile_at(i, 0)) + np.exp(tile_at(i, 1)) for i in range(3)]
    got = prog.context("linear_offchip_store0").stored
    assert len(got) == 3
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b)
    # exp: 4 FLOPs x 128 elements / 4096 -> 1 cycle, load 512 B / 64 -> 8 cycles
    assert next(c for c in m.contexts if c.name == "map0").busy == 6 * 8
    # accum add: 128 FLOPs -> 1 cycle per element (its input is not in a memory unit)
    assert next(c for c in m.contexts if c.name == "accum0").busy == 6
    assert m.offchip_read == 6 * 8 * 16 * 4 and m.offchip_written == 3 * 8 * 16 * 4


def test_fanout_gets_a_broadcast_appended():
    g = Graph("fan")
    x = g.load(tile=(4, 4), dtype=f32, out_shape=[2], base_addr=0)
    x.consume()
    # a second consumer: illegal in verified IR (the builder refuses it), placed with a Broadcast
    g.block.add_op(ConsumeOp.create(operands=[x.value]))
    module = ModuleOp([g.op])
    prog = build_program(module, STEP_EVAL)
    assert [c.name for c in prog.contexts][-1] == "linear_offchip_load0.bcast0"
    m = prog.run()
    # the broadcast hands both tiles to both consumers; they are read off chip once
    assert [prog.context(n).firings for n in ("consume0", "consume1")] == [2, 2]
    assert m.offchip_read == 2 * 4 * 4 * 4
    ConvertStepToRuntimePass().apply(Context(), module)
    module.verify()
    ops = list(g.op.body.block.ops)
    assert ops[-1].name == "step.broadcast"
    assert [o.attributes["runtime.context"].value.data for o in ops] == [0, 1, 2, 3]


def test_unsupported_ops_are_reported():
    g = Graph("args")
    g.load(tile=(1, 1), dtype=f32, out_shape=[4]).consume()
    g.argument([4], TileType(1, 1, f32)).consume()
    with pytest.raises(LoweringError, match=r"graph arguments can only be the \(bound\) reference streams of loads"):
        build_program(g.module(), STEP_EVAL)


def test_partition_and_reassemble_from_mlir_text():
    from conftest import REPO

    from steplus.tools.loading import load_module

    module = load_module(str(REPO / "test/filecheck/tools/inputs/step-route-2experts.mlir"))
    prog = build_program(module, get_preset("swiglu-hdl"), functional=True)
    m = prog.run()
    X = prog.tensors["tokens"]
    got = prog.context("out").stored
    # token 2 goes to both experts; e0 (16 FLOPs/cycle) is faster than e1 (4)
    np.testing.assert_allclose(np.concatenate(got), np.exp(X[[0, 1, 2, 2, 3]]))
    busy = {c.name: c.busy for c in m.contexts}
    assert busy["part"] == 4 * (1 + 1)  # tile straight from HBM (1 cycle) + switch 1
    assert busy["e0"] == 2 * 4 and busy["e1"] == 3 * 16
    assert m.offchip_written == 5 * 64
    assert m.cycles == ROUTE_2EXPERTS_CYCLES  # a regression pin, as step-run-graph.mlir's
