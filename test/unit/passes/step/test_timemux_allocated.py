"""Allocated FLOPs of the time-multiplexing experiment (bench/exp_timemux.py).

Reference spec §5.4: `allocated_flops = 5 U R + W E + A` with every unit 1024
FLOPs/cycle; the dynamic-tiling baseline row (R = E = 128, from the plain
weight-stationary dynamic driver) omits the final Accum's `A`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "bench"))

import exp_timemux  # noqa: E402


@pytest.mark.parametrize("regions", [128, 64, 2])
def test_static_rows_count_every_unit(regions):
    assert exp_timemux.allocated_flops(regions, 128, dynamic=False) == (
        5 * 1024 * regions + 1024 * 128 + 1024)


def test_dynamic_baseline_omits_the_final_accum():
    assert exp_timemux.allocated_flops(128, 128, dynamic=True) == 5 * 1024 * 128 + 1024 * 128


@pytest.mark.parametrize("regions", [64, 8, 2])
def test_dynamic_time_multiplexed_rows_count_the_final_accum(regions):
    assert exp_timemux.allocated_flops(regions, 128, dynamic=True) == (
        5 * 1024 * regions + 1024 * 128 + 1024)
