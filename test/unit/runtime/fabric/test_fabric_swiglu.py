"""The SwiGLU sweep of reference spec §8.1 on the simulated fabric."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.runtime.fabric.build import build_program
from steplus.dialects.target.fabric import get_preset
from steplus.runtime.fabric.hbm_reference import ReferenceHBMServer
from steplus.runtime.fabric.contexts import StoreCtx
from swiglu_graphs import SWEEP_TM, SWEEP_TN, swiglu_graph, swiglu_reference, swiglu_traffic
from golden import SWIGLU_HDL_CYCLES as CYCLES

B, D, F = 64, 256, 512
HDL = get_preset("swiglu-hdl")


def _ceil(a, b):
    return -(-a // b)


@pytest.mark.parametrize("tm", SWEEP_TM)
@pytest.mark.parametrize("tn", SWEEP_TN)
def test_sweep_traffic_cycles_and_roofline(tm, tn):
    prog = build_program(swiglu_graph(B, D, F, tm, tn), HDL)
    m = prog.run()
    assert m.offchip_traffic == swiglu_traffic(B, D, F, tm, tn)
    assert m.cycles == CYCLES[(tm, tn)]
    # §2: no run moves its bytes faster than the HBM's peak (8 channels x 64 B / II 2)
    assert HDL.hbm.peak_bytes_per_cycle == 256
    assert m.cycles >= _ceil(m.offchip_traffic, HDL.hbm.peak_bytes_per_cycle)
    M, N = B // tm, F // tn
    busy = {c.name: c.busy for c in m.contexts}
    gate = max(_ceil(tm * D * 4, 256) + _ceil(D * tn * 4, 256), _ceil(2 * tm * D * tn, 4096))
    assert busy["gate"] == busy["up"] == M * N * gate
    assert busy["silu"] == M * N * _ceil(8 * tm * tn, 4096)
    assert busy["mul"] == M * N * _ceil(tm * tn, 4096)
    down = max(_ceil(tn * D * 4, 256), _ceil(2 * tm * tn * D, 4096))
    final = max(down, _ceil(tm * D * 4, 256))
    assert busy["down"] == M * ((N - 1) * down + final)
    store = next(c for c in prog.contexts if isinstance(c, StoreCtx))
    assert m.cycles == store.clock + HDL.end_offset


@pytest.mark.parametrize("tm,tn", [(16, 16), (32, 64), (64, 256)])
@pytest.mark.parametrize("preset", ["swiglu-hdl", "step-eval"])
def test_closed_form_hbm_matches_request_level_controller(tm, tn, preset):
    cfg = get_preset(preset)
    fast = build_program(swiglu_graph(B, D, F, tm, tn), cfg).run()
    slow = build_program(swiglu_graph(B, D, F, tm, tn), cfg,
                         hbm_factory=ReferenceHBMServer).run()
    assert fast.cycles == slow.cycles
    assert [c.clock for c in fast.contexts] == [c.clock for c in slow.contexts]


def test_functional_mode_computes_swiglu():
    prog = build_program(swiglu_graph(B, D, F, 16, 64), HDL, functional=True)
    m = prog.run()
    assert m.cycles == CYCLES[(16, 64)]  # values do not change timing
    out = np.concatenate(next(c for c in prog.contexts if isinstance(c, StoreCtx)).stored, axis=0)
    T = prog.tensors
    np.testing.assert_allclose(out, swiglu_reference(T["X"], T["Wg"], T["Wu"], T["Wd"]),
                               rtol=1e-12, atol=1e-12)


def test_trace_and_metrics_table():
    prog = build_program(swiglu_graph(B, D, F, 32, 128), HDL, trace=True)
    m = prog.run()
    tr = prog.chrome_trace()["traceEvents"]
    names = {e["args"]["name"] for e in tr if e["ph"] == "M"}
    assert {"X", "gate", "down", "linear_offchip_store0", "broadcast0"} <= names
    gate = next(e["tid"] for e in tr if e["ph"] == "M" and e["args"]["name"] == "gate")
    assert sum(e["dur"] for e in tr if e["ph"] == "X" and e["tid"] == gate) == \
        next(c.busy for c in m.contexts if c.name == "gate")
    table = m.table()
    assert table.splitlines()[0] == f"cycles                 {m.cycles}"
    assert "gate" in table and "util%" in table
    d = m.to_dict()
    assert d["offchip_traffic_bytes"] == swiglu_traffic(B, D, F, 32, 128)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_timing_does_not_depend_on_the_run_order(seed):
    base = build_program(swiglu_graph(B, D, F, 32, 32), HDL).run()
    prog = build_program(swiglu_graph(B, D, F, 32, 32), HDL)
    prog.sim.shuffle_seed = seed
    m = prog.run()
    assert [(c.name, c.clock, c.busy, c.stall_in, c.stall_out) for c in m.contexts] == \
        [(c.name, c.clock, c.busy, c.stall_in, c.stall_out) for c in base.contexts]
