"""isel's saturation reports its progress to a tool's status line (issue 28 item 4):
`passes.isel.saturation_progress` receives one line per saturation iteration; the
passes import no tool, step-opt's status line shows the line beside the pass."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import run_tool
from steplus.passes.isel import IselPass, saturation_progress
from steplus.tools.loading import load_module
from steplus.tools.step_opt import StepOptMain, main

MAXPOOL = Path(__file__).parents[3] / "examples/isel/maxpool128.mlir"
LINE = re.compile(r"@(\w+): saturating, iteration (\d+), (\d+) e-nodes, \d+ s$")


def test_each_saturation_iteration_is_reported():
    lines: list[str] = []
    with saturation_progress(lines.append):
        module = load_module(str(MAXPOOL), "isel{targets=flexasr mode=flexible}")
    assert "flexasr.maxpool" in str(module)
    assert lines, "isel reported no saturation iteration"
    parsed = [LINE.match(x) for x in lines]
    assert all(parsed), lines
    assert {m.group(1) for m in parsed if m} == {"maxpool"}
    # iterations count 1, 2, ... and the e-graph never shrinks
    assert [int(m.group(2)) for m in parsed if m] == list(range(1, len(lines) + 1))
    nodes = [int(m.group(3)) for m in parsed if m]
    assert nodes == sorted(nodes)


def test_nothing_is_reported_outside_the_block():
    lines: list[str] = []
    with saturation_progress(lines.append):
        pass
    res = run_tool(main, [str(MAXPOOL), "-p", "isel{targets=flexasr mode=flexible}"])
    assert res.code == 0 and "flexasr.maxpool" in res.out
    assert lines == []


def test_step_opt_status_names_the_pass_and_its_saturation():
    tool = StepOptMain([str(MAXPOOL), "-p", "isel"])
    running = IselPass()
    tool._tracker.current = running
    assert tool._stage() == "running isel"
    tool._pass_detail("@maxpool: saturating, iteration 3, 812 e-nodes, 0 s")
    assert tool._stage() == "running isel: @maxpool: saturating, iteration 3, 812 e-nodes, 0 s"
    # the next pass (another instance) does not inherit the detail
    tool._tracker.current = IselPass()
    assert tool._stage() == "running isel"
