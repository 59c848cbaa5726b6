"""Hostile step-run options and files (HARDEN-4): a one-line error, never a hang,
an unbounded read or an internal error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_tool
from steplus.tools.step_run import main as step_run

GRAPH = """step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>, stride = array<i64: 4, 1>, tiled_out_shape = array<i64: 2, 4>} : () -> !step.stream<[2, 4], !step.tile<2x3xf32>>
  %t = step.regroup %x {dim = 0 : i64, axis = 0 : i64} : (!step.stream<[2, 4], !step.tile<2x3xf32>>) -> !step.stream<[2, 2], !step.tile<4x3xf32>>
  step.linear_offchip_store %t {base_addr = 4096 : i64} : !step.stream<[2, 2], !step.tile<4x3xf32>>
}
"""
NODE = """node f(x: int) returns (y: int);
(*@contract guarantee y = x; *)
let y = x; tel
"""


@pytest.fixture
def graph(tmp_path: Path) -> str:
    p = tmp_path / "g.mlir"
    p.write_text(GRAPH)
    return str(p)


@pytest.mark.parametrize("device", ["/dev/zero", "fifo", "folder"])
def test_config_that_is_no_regular_file_is_refused_at_once(graph: str, tmp_path: Path,
                                                           device: str):
    """--config /dev/zero read until memory ran out (killed); a FIFO waited for a writer."""
    path = {"/dev/zero": "/dev/zero", "folder": str(tmp_path)}.get(device)
    if path is None:
        path = str(tmp_path / "cfg.json")
        os.mkfifo(path)
    r = run_tool(step_run, [graph, "--config", path, "-q"])
    assert r.code == 1
    assert r.err.strip() == f"{path}: error: cannot read config: not a regular file"


def test_config_past_one_mib_is_refused(graph: str, tmp_path: Path):
    big = tmp_path / "big.json"
    big.write_text(" " * (1 << 20) + "{}")
    r = run_tool(step_run, [graph, "--config", str(big), "-q"])
    assert r.code == 1
    assert r.err.strip() == f"{big}: error: cannot read config: larger than 1048576 bytes"


def test_config_within_the_limit_still_reads(graph: str, tmp_path: Path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{"preset": "sn40l", "base_depth": 0}')
    r = run_tool(step_run, [graph, "--config", str(cfg), "-q"])
    assert r.code == 1
    assert r.err.strip() == (f"{cfg}: error: invalid hardware config: base_depth: expected "
                             "an integer in [1, 1048576], got 0")


@pytest.mark.parametrize("device", ["/dev/zero", "fifo"])
def test_input_that_is_no_regular_file_is_refused_at_once(tmp_path: Path, device: str):
    """--input x=/dev/zero never returned (np.loadtxt of an endless file)."""
    lus = tmp_path / "f.lus"
    lus.write_text(NODE)
    path = "/dev/zero"
    if device == "fifo":
        path = str(tmp_path / "x.csv")
        os.mkfifo(path)
    r = run_tool(step_run, [str(lus), "--node", "f", "--ticks", "2", "--input", f"x={path}"])
    assert r.code == 1
    assert r.err.strip() == f"{path}: error: cannot read input 'x': not a regular file"


def test_input_csv_of_floats_after_ints_still_reads(tmp_path: Path):
    """The int64 attempt and the float fallback read the same open file (seek back)."""
    lus = tmp_path / "f.lus"
    lus.write_text("node f(r: real) returns (s: real);\nlet s = r; tel\n")
    csv = tmp_path / "r.csv"
    csv.write_text("1\n2.5\n")
    r = run_tool(step_run, [str(lus), "--node", "f", "--ticks", "2", "--input", f"r={csv}"])
    assert r.code == 0, r.err
    assert r.out.splitlines() == ["tick 0: s=1.", "tick 1: s=2.5"]


def test_negative_check_seed_is_a_usage_error(tmp_path: Path):
    """--check --seed -1 was 'internal error: ValueError: expected non-negative integer'."""
    lus = tmp_path / "f.lus"
    lus.write_text(NODE)
    r = run_tool(step_run, [str(lus), "--node", "f", "--check", "--runs", "2", "--ticks", "2",
                            "--seed", "-1"])
    assert r.code == 2
    assert r.err.strip() == "step-run: error: --seed must be 0 to 2^64 - 1"


def test_kv_trace_fifo_is_refused_at_once(graph: str, tmp_path: Path):
    """--kv on a FIFO waited for a writer forever (the trace reader's open)."""
    fifo = tmp_path / "lengths.npy"
    os.mkfifo(fifo)
    r = run_tool(step_run, [graph, "--kv", str(fifo), "-q"])
    assert r.code == 1
    assert r.err.splitlines()[0] == (f"{graph}:1:1: error: step-specialize: {fifo}: cannot "
                                     "read KV-length trace: not a regular file")
