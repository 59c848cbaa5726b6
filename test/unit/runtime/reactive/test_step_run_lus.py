"""step-run on lus nodes and Lustre source: the IREE backend's batched and
per-tick paths print the same ticks, and --stream runs a node tick by tick
on stdin lines (every backend), with located errors for bad lines."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from conftest import REPO, run_tool
from steplus.tools.step_run import main

LUSTRE = REPO / "examples" / "lustre"
INTEGRATOR = str(REPO / "examples" / "lus" / "integrator.mlir")


def _stream(argv, stdin_text):
    old = sys.stdin
    sys.stdin = io.StringIO(stdin_text)
    try:
        return run_tool(main, argv)
    finally:
        sys.stdin = old


def test_iree_batched_and_per_tick_print_the_same_ticks(tmp_path):
    e = np.random.default_rng(3).integers(-20, 20, 40).astype(np.int32)
    h = (np.random.default_rng(4).random(40) < 0.5).astype(np.int32)
    np.savetxt(tmp_path / "e.csv", e, fmt="%d")
    np.savetxt(tmp_path / "h.csv", h, fmt="%d")
    argv = [str(LUSTRE / "test-merge.lus"), "--node", "two_instances", "--ticks", "40",
            "--input", f"e={tmp_path / 'e.csv'}", "--input", f"h={tmp_path / 'h.csv'}"]
    runs = {extra: run_tool(main, [*argv, *extra]) for extra in
            [("--backend", "iree"), ("--backend", "iree", "--per-tick"), ()]}
    for r in runs.values():
        assert r.code == 0, r.err
    outs = [r.out for r in runs.values()]
    assert outs[0] == outs[1] == outs[2]
    # output 0 of two_instances is integr(e): the running sum of e
    # a node from Lustre prints its outputs by name: `tick 0: s=... t1=...`
    firsts = [int(line.split()[2].removeprefix("s=")) for line in outs[0].splitlines()]
    assert firsts == list(np.cumsum(e))


@pytest.mark.parametrize("backend", ["reactive", "sync", "iree"])
def test_stream_runs_one_tick_per_line(backend):
    r = _stream([INTEGRATOR, "--stream", "--backend", backend], "5\n-2\n\n# comment\n10,\n")
    assert r.code == 0, r.err
    assert r.out == "tick 0: 5\ntick 1: 3\ntick 2: 13\n"


def test_stream_stops_after_ticks():
    r = _stream([INTEGRATOR, "--stream", "--ticks", "2"], "1\n2\n3\n")
    assert r.code == 0 and r.out == "tick 0: 1\ntick 1: 3\n"


def test_stream_bad_line_is_located_after_the_good_ticks():
    r = _stream([INTEGRATOR, "--stream"], "1\n2 3\n")
    assert r.code == 1
    assert r.out == "tick 0: 1\n"
    assert r.err.strip() == "<stdin>:2: error: expected 1 value(s), i (1); got 2"
    r = _stream([INTEGRATOR, "--stream"], "2.5\n")
    assert r.code == 1 and r.err.startswith("<stdin>:1:1: error: input 'i' expects i32")
    r = _stream([INTEGRATOR, "--stream"], "__import__('os')\n")
    assert r.code == 1 and "is not a number" in r.err


def test_stream_input_of_dynamic_shape_is_a_usage_error(tmp_path):
    """A line's values cannot tell the shape of a tensor<?xf32> input: a
    one-line error (exit 2), not an internal TypeError from the line parser."""
    prog = tmp_path / "dyn.mlir"
    prog.write_text("lus.node @id(%i: tensor<?xf32>) -> (tensor<?xf32>) {\n"
                    "  lus.yield (%i : tensor<?xf32>)\n}\n")
    r = _stream([str(prog), "--stream"], "1 2 3\n")
    assert r.code == 2 and r.out == ""
    assert r.err.strip() == ("step-run: error: --stream cannot read input 'i' of dynamic "
                             "shape [ticks, ?]: run without --stream and give it as a file "
                             "(--input)")


def test_stream_and_per_tick_misuse_are_usage_errors(tmp_path):
    r = _stream([INTEGRATOR, "--stream", "--input", "i=x.csv"], "")
    assert r.code == 2 and "takes no --input" in r.err
    r = run_tool(main, [INTEGRATOR, "--ticks", "1", "--per-tick", "--input", "i=x.csv"])
    assert r.code == 2 and "--per-tick applies to --backend iree" in r.err
