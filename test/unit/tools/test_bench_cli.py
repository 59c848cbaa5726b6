"""Every bench is a command with --help (issue 28 item 3): `--help` prints the
usage and exits 0 without running the bench (bench/moe_metrics.py ran the whole
bench on --help)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BENCHES = sorted(p for p in (REPO / "bench").glob("*.py")
                 if '__name__ == "__main__"' in p.read_text(encoding="utf-8"))


def test_benches_are_found():
    assert {"moe_metrics.py", "exp_tiling.py", "sim_moe.py"} <= {p.name for p in BENCHES}


@pytest.mark.parametrize("bench", BENCHES, ids=[p.stem for p in BENCHES])
def test_bench_parses_its_arguments_with_argparse(bench: Path):
    tree = ast.parse(bench.read_text(encoding="utf-8"))
    calls = {node.func.attr for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert {"ArgumentParser", "parse_args"} <= calls, f"{bench.name}: no argparse command line"


def _help(bench: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(bench), "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_moe_metrics_help_does_not_run_the_bench():
    r = _help(REPO / "bench" / "moe_metrics.py")
    assert r.returncode == 0 and r.stdout.startswith("usage: moe_metrics.py")
    assert "mixtral" not in r.stdout and r.stderr == ""


@pytest.mark.slow
@pytest.mark.parametrize("bench", BENCHES, ids=[p.stem for p in BENCHES])
def test_every_bench_help_prints_usage(bench: Path):
    r = _help(bench)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: {bench.name}")


# Benches that print in seconds need no status line (measured on the 2-core session machine).
QUICK = {"allspark_gpu.py": "~4 s: 12 orchestrations of three models"}


@pytest.mark.parametrize("bench", BENCHES, ids=[p.stem for p in BENCHES])
def test_bench_shows_progress_or_is_quick(bench: Path):
    """Issue 28 item 4: every bench that can run past ~10 s draws a status line or a
    progress bar on stderr (steplus.tools.progress, tqdm, or a sweep's bar)."""
    text = bench.read_text(encoding="utf-8")
    shows = any(s in text for s in ("steplus.tools.progress", "tqdm", "run_sweep("))
    assert shows or bench.name in QUICK, f"{bench.name}: no progress on stderr"


@pytest.mark.parametrize("name", ["guide_numbers.py", "ila_semantics.py", "isel_errors.py",
                                  "integer_division.py", "lus_ticks.py"])
def test_status_line_benches_take_quiet(name: str):
    r = _help(REPO / "bench" / name)
    assert r.returncode == 0 and "--quiet" in r.stdout and r.stderr == ""
