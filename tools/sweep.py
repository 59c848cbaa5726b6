"""Run experiment configurations in parallel: local processes, or a Dask cluster.

`run_sweep(task, configs)` applies a picklable `task(config) -> dict` to every
configuration and returns the results in configuration order, with a tqdm
progress bar on stderr when it is a terminal. By default the configurations run in local worker
processes (`concurrent.futures`, one per core); given `scheduler=
"tcp://host:8786"` they run on that existing Dask cluster instead.

Why Dask (`distributed`) rather than Ray: our tasks are independent, coarse
(seconds to minutes: build a graph, bind a trace, simulate) Python functions
over small inputs — exactly Dask's `client.map`; it is pure Python, installs
in seconds from a pinned wheel, starts a local cluster in-process for tests,
and needs no object store or GPU-aware scheduler, which Ray brings along.

Example:

```python
from steplus.tools.sweep import run_sweep
rows = run_sweep(my_task, [{"tile_n": t} for t in (16, 64)], workers=2)
rows = run_sweep(my_task, configs, scheduler="tcp://10.0.0.5:8786")   # a cluster
```
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path


MAX_JOBS = 256
"""Most worker processes a command line may ask for."""


def _jobs(text: str) -> int:
    import argparse

    if not text.isdigit() or not 1 <= int(text) <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected an integer in [1, {MAX_JOBS}], got {text!r}")
    return int(text)


def add_jobs_argument(parser) -> None:
    """The sweep benches' `--jobs N` (alias `--workers`): local worker processes,
    default one per core (`run_sweep`'s `workers=None`); 1 runs in this process."""
    parser.add_argument("--jobs", "--workers", dest="jobs", type=_jobs, default=None,
                        metavar="N", help="local worker processes (default: one per core; "
                        "1: serial, in this process)")


class SweepError(Exception):
    """A configuration failed; names it."""


def _bar(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    # disable=None: tqdm draws only when stderr is a terminal (not in pipes, files, CI logs)
    return tqdm(total=total, desc=desc, file=sys.stderr, disable=None if enabled else True,
                leave=False)


def run_sweep(task: Callable[[dict], dict], configs: Sequence[dict], *, workers: int | None = None,
              scheduler: str | None = None, progress: bool = True,
              desc: str = "sweep") -> list[dict]:
    """`[task(c) for c in configs]`, in parallel; results in configuration order."""
    configs = list(configs)
    results: list[dict | None] = [None] * len(configs)
    if scheduler is not None:
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(scheduler) as client, _bar(len(configs), desc, progress) as bar:
            futures = client.map(task, configs, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            for f in dask_completed(futures):
                i = index[f.key]
                try:
                    results[i] = f.result()
                except Exception as e:
                    raise SweepError(f"configuration {configs[i]} failed: {e}") from None
                bar.update(1)
        return results  # type: ignore[return-value]
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n <= 1:
        with _bar(len(configs), desc, progress) as bar:
            for i, c in enumerate(configs):
                results[i] = task(c)
                bar.update(1)
        return results  # type: ignore[return-value]
    with ProcessPoolExecutor(max_workers=n) as pool, _bar(len(configs), desc, progress) as bar:
        futures = {pool.submit(task, c): i for i, c in enumerate(configs)}
        for f in as_completed(futures):
            i = futures[f]
            try:
                results[i] = f.result()
            except Exception as e:
                raise SweepError(f"configuration {configs[i]} failed: {e}") from None
            bar.update(1)
    return results  # type: ignore[return-value]


def write_csv(path: str | Path, rows: Sequence[dict]) -> Path:
    """Rows (dicts with the same keys) to a CSV file; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path
