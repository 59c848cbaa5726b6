"""The status line of long runs (tools/progress.py; issue 28 item 4): drawn on a
terminal after the delay, redrawn with the elapsed seconds, erased at the end;
nothing when stderr is not a terminal or with --quiet."""

from __future__ import annotations

import io
import time

from conftest import run_tool
from steplus.tools.progress import enabled, status


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_line_is_drawn_then_erased_on_a_terminal():
    tty = Terminal()
    with status("step-run", "simulating @g on the fabric", stream=tty, delay=0.05,
                period=0.05) as line:
        time.sleep(0.3)
        line.set("writing the trace")
        time.sleep(0.3)
    text = tty.getvalue()
    assert "\r\x1b[Kstep-run: simulating @g on the fabric ... 0 s" in text
    assert "step-run: writing the trace ... 0 s" in text
    assert text.endswith("\r\x1b[K")  # the line is gone when the stage ends


def test_a_callable_label_is_read_at_each_redraw():
    tty = Terminal()
    current = ["running isel"]
    with status("step-opt", lambda: current[0], stream=tty, delay=0.05, period=0.05):
        time.sleep(0.2)
        current[0] = "running convert-ila-to-commands"
        time.sleep(0.2)
    assert "step-opt: running isel ... " in tty.getvalue()
    assert "step-opt: running convert-ila-to-commands ... " in tty.getvalue()


def test_no_line_when_quick_quiet_or_not_a_terminal():
    tty = Terminal()
    with status("step-run", "x", stream=tty, delay=5.0):
        time.sleep(0.05)
    assert tty.getvalue() == ""  # done before the delay
    quiet = Terminal()
    with status("step-run", "x", quiet=True, stream=quiet, delay=0.0):
        time.sleep(0.1)
    assert quiet.getvalue() == ""
    pipe = io.StringIO()
    with status("step-run", "x", stream=pipe, delay=0.0):
        time.sleep(0.1)
    assert pipe.getvalue() == ""
    assert not enabled(False, pipe) and not enabled(True, tty) and enabled(False, tty)


def test_tools_take_quiet(step_opt):
    from steplus.tools.step_run import main as step_run

    r = step_opt(["--quiet", "--version"])
    assert r.code == 0 and r.out.startswith("step-opt (steplus ")
    r = run_tool(step_run, ["--quiet", "--help"])
    assert r.code == 0 and "-q, --quiet" in r.out
