"""Parallel sweeps give the serial results (issue 32 item 3).

The benches that run many independent simulations (bench/sim_moe.py,
exp_tiling, exp_timemux, exp_attention, exp_decoder) run them in a local
process pool by default (`--jobs N`, one worker per core; `steplus.tools.sweep`).
A simulation is deterministic, so the rows of a sweep must not depend on how
many workers ran it nor in which order they finished: here a tiny sim_moe
sweep (Mixtral B=64, dynamic tiling and tile_N 16) runs serially and on two
workers, and both give the golden cycles, in configuration order.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from golden import MOE_CYCLES
from steplus.tools.sweep import run_sweep

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

from sim_moe import _task, main  # noqa: E402

CONFIGS = [{"model": "mixtral", "batch": 64, "tile_n": None, "depth": None},
           {"model": "mixtral", "batch": 64, "tile_n": 16, "depth": None}]


def _without_time(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "wall_s"}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores for two workers")
def test_two_workers_give_the_serial_rows_in_order():
    serial = run_sweep(_task, CONFIGS, workers=1, progress=False)
    parallel = run_sweep(_task, CONFIGS, workers=2, progress=False)
    assert [_without_time(r) for r in parallel] == [_without_time(r) for r in serial]
    assert [r["cycles"] for r in serial] == [MOE_CYCLES[("mixtral", 64, None)],
                                             MOE_CYCLES[("mixtral", 64, 16)]]
    assert [r["tile_n"] for r in parallel] == ["dyn", 16]


def test_jobs_is_a_bounded_integer(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--jobs", "0"])
    assert e.value.code == 2
    assert "argument --jobs/--workers: expected an integer in [1, 256], got '0'" \
        in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--tiles", "x"], "--tiles: expected positive integers or dyn, got 'x'"),
    (["--models", "foo"], "--models: unknown ['foo'] (have mixtral, qwen)"),
    (["--batches", "0"], "--batches: expected positive integers like 64,1024, got '0'"),
    (["--models", "mixtral", "--batches", "7"], "--batches: no shipped routing trace for mixtral B=7"),
    (["--depth", "0"], "--depth: expected an integer in [1, 1048576], got 0"),
])
def test_sim_moe_refuses_bad_arguments_in_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
