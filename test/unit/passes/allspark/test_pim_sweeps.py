"""The Allspark sweeps run their points in parallel and give the serial rows (issue 32 item 3).

`bench/allspark_sweeps.py` (the batch sweep of seed Fig. 14 and the mesh / memory
sweep of Fig. 15, run by `bench/exp_allspark.py`) runs its independent points through
`steplus.tools.sweep.run_sweep`: a local process pool by default. Each point is an ILP
orchestration, deterministic, so the rows must not depend on how many workers ran them
nor on the order they finished: a small sweep (Swin-T at 224x224) on one and on two
workers gives the same rows, in point order.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

from allspark_sweeps import batch_sweep, main, mesh_sweep  # noqa: E402

TWO_CORES = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores for two workers")


@TWO_CORES
def test_batch_sweep_on_two_workers_gives_the_serial_rows_in_order():
    serial = batch_sweep("swin-t", 224, (1, 2), jobs=1)
    parallel = batch_sweep("swin-t", 224, (1, 2), jobs=2)
    assert parallel == serial
    assert [r["batch"] for r in parallel] == [1, 2]
    one, two = serial
    assert "error" not in one and "error" not in two
    # two images share each weight transfer: less sharing time per image than one alone
    assert two["sharing_ms_per_image"] < one["sharing_ms_per_image"]


@TWO_CORES
def test_mesh_sweep_on_two_workers_gives_the_serial_rows_in_order():
    serial = mesh_sweep(("swin-t",), 224, (8,), (8.0, 16.0), jobs=1)
    parallel = mesh_sweep(("swin-t",), 224, (8,), (8.0, 16.0), jobs=2)
    assert parallel == serial
    # the points: each mesh side at 8 MiB per node, then the 16x16 mesh at the other caps
    assert [(r["mesh"], r["cap_MiB"]) for r in parallel] == [("8x8", 8.0), ("16x16", 16.0)]


def test_jobs_is_a_bounded_integer(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--jobs", "0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --jobs/--workers: expected an integer in [1, 256], got '0'" in err
    assert "Traceback" not in err
