"""bench/exp_attention.py (Fig. 11): reference traces resolve, the predicted
traffic of every strategy equals the closed form, a simulated row checks
traffic against step-metrics, and the geomean summary is what it says."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))

from steplus.examples.workloads import attention
import exp_attention as exp  # noqa: E402

from steplus.dialects.step import GraphOp  # noqa: E402
from steplus.passes.step.traces import KVTrace  # noqa: E402


def test_every_reference_selection_is_shipped():
    configs = exp.configurations([16, 64, 80], sweep=True)
    assert len(configs) == 27 + 4
    assert {c["batch"] for c in configs if c["stdev_class"] == "sweep"} == {16, 32, 48, 64}
    for c in configs:
        if "path" in c:
            assert len(np.load(c["path"])) == c["batch"] == c["end_idx"] - c["start_idx"] + 1


@pytest.mark.parametrize("strategy", attention.STRATEGIES)
def test_predicted_traffic_is_the_closed_form(strategy):
    t = KVTrace.load(exp.trace_file(16, "0821_0836"), attention.TILE_N)
    module = attention.attention(strategy, t.batch, t.seq_len, t.offset)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    # q (8x64), k, v rows and the output (bf16), plus K and V cache tiles read
    # and the last tile of each written back (32x64 bf16 each).
    B, total = t.batch, sum(t.seq_len)
    closed = B * (1024 + 2 * 128 + 2 * 4096 + 1024) + 2 * 4096 * total
    assert exp._predicted_traffic(graph, total) == closed == 5541888


def test_a_simulated_row_matches_step_metrics():
    cfg = {"batch": 16, "stdev_class": "low", "stdev": 4.79, "start_idx": 1063, "end_idx": 1078,
           "path": str(exp.trace_file(16, "1063_1078")), "strategies": ("coarse", "interleaved")}
    row = exp.task(cfg)
    assert row["coarse_traffic_ok"] is True and row["interleaved_traffic_ok"] is True
    assert row["coarse_traffic_bytes"] == row["interleaved_traffic_bytes"] == 3084288
    # One region (B/16) against four: interleaving is faster at B = 16 (paper, §5.4).
    assert row["static_interleave_cycles"] < row["static_coarse_cycles"]


def test_summary_geomeans():
    rows = [{"static_coarse_cycles": 200, "static_interleave_cycles": 100, "dynamic_cycles": 100},
            {"static_coarse_cycles": 100, "static_interleave_cycles": 400, "dynamic_cycles": 100}]
    s = exp.summary(rows)
    assert s["vs coarse"] == pytest.approx(math.sqrt(2))
    assert s["vs interleaved"] == pytest.approx(2.0)
    assert s["vs either static (all ratios)"] == pytest.approx((2 * 1 * 1 * 4) ** 0.25)
    assert s["vs best static"] == pytest.approx(1.0)
    assert s["vs worse static (spec §9)"] == pytest.approx(math.sqrt(8))
