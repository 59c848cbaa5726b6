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
