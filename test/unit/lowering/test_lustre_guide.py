"""docs/guide/lustre.md's "Examples" commands, run as written from the
repository's root (a counter and an automaton in Heptagon, a Kind 2 contract
checked by the falsifier), with outputs from closed forms."""

from __future__ import annotations

import io
import os
import shlex
import sys

from conftest import REPO, run_tool
from steplus.tools.step_run import main as step_run


def _commands() -> list[list[str]]:
    text = (REPO / "docs" / "guide" / "lustre.md").read_text()
    section = text.split("## Examples: a counter, an automaton, an array iterator, a contract "
                         "checked by the falsifier", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_guide_examples_run_as_written(monkeypatch):
    monkeypatch.chdir(REPO)
    cmds = _commands()
    assert [c[0] for c in cmds] == ["step-run"] * 4
    stream = cmds[2]
    assert stream[-2] == "<"  # stdin from a file
    cmds[2] = stream[:-2]
    x = [int(v) for v in (REPO / "examples/lustre/heptagon/x.csv").read_text().split()]
    assert x == [0, 0, 0, 0, 0, 0, 1, 0]
    counter, updown = (run_tool(step_run, c[1:]) for c in cmds[:2])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        (REPO / stream[-1]).read_bytes())))
    sums = run_tool(step_run, cmds[2][1:])
    check = run_tool(step_run, cmds[3][1:])
    # fold<<add, 4>> then map<<scale, 4>> of the two lines a[0..3] k
    assert sums.code == 0, sums.err
    assert sums.out.splitlines() == ["tick 0: 10 10 20 30 40", "tick 1: 26 -5 -6 -7 -8"]
    # n = if reset then 0 else (0 fby n) + 1, reset never true in ticks 0..3
    assert counter.code == 0 and counter.out.splitlines() == [
        f"tick {t}: n={t + 1}" for t in range(4)]
    # up to 3, entered Down anew (0, -1), x at tick 6: back Up, reset (0, 1)
    assert updown.code == 0
    assert updown.out.splitlines() == [f"tick {t}: o={v}" for t, v in
                                       enumerate([0, 1, 2, 3, 0, -1, 0, 1])]
    assert check.code == 0, check.err
    assert check.out == ("@has_been_true: 6 properties, 0 assumption(s): no violation in "
                         "50 random run(s) of up to 30 ticks (seed 0); 1500 tick(s) within "
                         "the assumptions\n")
    assert os.path.exists(REPO / "examples/lustre/heptagon/README.md")
