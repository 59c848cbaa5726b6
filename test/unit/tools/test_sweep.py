"""The experiment driver runs configurations on local processes and on a Dask
cluster (a local one started here), results in configuration order."""

from __future__ import annotations

import os

import pytest

from steplus.tools.sweep import SweepError, run_sweep, write_csv


def square(config: dict) -> dict:
    if config["x"] < 0:
        raise ValueError("negative")
    return {"x": config["x"], "y": config["x"] ** 2, "pid": os.getpid()}


CONFIGS = [{"x": x} for x in range(7)]


def test_local_processes_keep_the_configuration_order():
    rows = run_sweep(square, CONFIGS, workers=2, progress=False)
    assert [r["y"] for r in rows] == [x * x for x in range(7)]
    assert all(r["pid"] != os.getpid() for r in rows)  # really in worker processes


def test_a_failing_configuration_is_named():
    with pytest.raises(SweepError, match=r"configuration \{'x': -1\} failed: negative"):
        run_sweep(square, [{"x": 1}, {"x": -1}], workers=2, progress=False)


def test_a_dask_cluster_runs_the_same_sweep(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        rows = run_sweep(square, CONFIGS, scheduler=cluster.scheduler_address, progress=False)
    assert [r["y"] for r in rows] == [x * x for x in range(7)]
    path = write_csv(tmp_path / "out" / "s.csv", rows)
    assert path.read_text().splitlines()[0] == "x,y,pid"
