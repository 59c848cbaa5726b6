"""The headline numbers the experiment drivers print (bench/exp_tiling.py,
bench/exp_timemux.py) are what their docstrings define, on hand-made rows."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))

import exp_tiling  # noqa: E402
import exp_timemux  # noqa: E402


def _row(tile, cycles, onchip, offchip=100, model="m", batch=64):
    return {"model": model, "batch": batch, "tile_n": tile, "cycles": cycles,
            "onchip_bytes": onchip, "offchip_bytes": offchip}


def test_pareto_distance_uses_only_the_static_front():
    static = [_row(16, 400, 10), _row(64, 100, 40), _row(32, 500, 50)]  # 32 is dominated
    # against (100, 40): max(1, 4) = 4; against (400, 10): max(4, 1) = 4; so 4.
    assert exp_tiling.pareto_distance(_row("dyn", 100, 10), static) == 4
    # a point worse than the front has a distance below 1
    assert exp_tiling.pareto_distance(_row("dyn", 800, 80), static) == pytest.approx(0.5)


def test_tiling_summary_geomeans_over_groups_and_tiles():
    rows = [_row(16, 200, 20, 300), _row(64, 100, 80, 100), _row("dyn", 100, 20, 100),
            _row(16, 400, 10, 100, batch=1024), _row("dyn", 100, 10, 100, batch=1024),
            _row(32, "error: x", 5, 100, batch=1024)]
    s = exp_tiling.summary(rows)
    assert s["speedup"] == pytest.approx((2 * 1 * 4) ** (1 / 3))
    assert s["on-chip reduction"] == pytest.approx((1 * 4 * 1) ** (1 / 3))
    assert s["traffic reduction"] == pytest.approx(3 ** (1 / 3))
    # B=64: min(max(2, 1), max(1, 4)) = 2; B=1024: max(4, 1) = 4 (the error row is no point)
    assert s["Pareto improvement distance"] == pytest.approx(math.sqrt(2 * 4))


def test_timemux_summary_picks_the_best_utilization_within_the_overhead():
    rows = [{"regions": r, "tile_n": 32, "cycles": c, "utilization_pct": u}
            for r, c, u in ((128, 1000, 5.0), (64, 1005, 9.0), (32, 1040, 20.0), (16, 2000, 30.0))]
    lines = exp_timemux.summary(rows)
    assert lines == [
        "tile_N=32: within 1% of R=128's cycles the best is R=64: utilization 9.0% vs 5.0% "
        "(1.80x), cycles +0.50%",
        "tile_N=32: within 5% of R=128's cycles the best is R=32: utilization 20.0% vs 5.0% "
        "(4.00x), cycles +4.00%"]
