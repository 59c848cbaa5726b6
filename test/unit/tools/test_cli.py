"""The command-line plumbing of step-opt and step-run (tools/cli.py): one-line
pipeline errors, Ctrl-C, a closed stdout, and no traceback on any of them."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_tool
from steplus.tools import step_opt as opt_module
from steplus.tools import step_run
from steplus.tools.cli import UsageError, parse_pass_pipeline
from steplus.tools.registry import get_all_passes

BIN = REPO / ".venv" / "bin"
PASSES = get_all_passes()


@pytest.mark.parametrize(
    "spec, message",
    [
        (",", "invalid pass pipeline at column 1: Expected pass name here"),
        ("step-metrics{", "invalid pass pipeline at column 14: Expected argument name here"),
        ("step-metrics{bind=}", "invalid pass pipeline at column 19: Unknown argument value, "
                                "wrap argument in quotes to pass arbitrary string values"),
        ("step-specialize{routing=/x}", "invalid pass pipeline at column 25: Unknown token"),
        ('step-metrics{bind="B=64}', "invalid pass pipeline at column 19: Unknown token"),
        ("nope", "invalid pass pipeline: Unrecognized passes: ['nope']"),
        ("isel{nodelimit=3}", "invalid options for pass 'isel': unknown option 'nodelimit' "
                              "(options: targets, mode, iterations, node-limit, time-limit, lstm, offload)"),
        ("isel{node-limit=x}", "invalid options for pass 'isel': option 'node-limit' expects an "
                               "integer, got 'x'"),
        ("step-metrics{annotate=1}", "invalid options for pass 'step-metrics': option 'annotate' "
                                     "expects true or false, got 1"),
    ],
)
def test_malformed_pipelines_are_one_line_usage_errors(spec: str, message: str):
    with pytest.raises(UsageError) as info:
        parse_pass_pipeline(PASSES, spec)
    assert str(info.value) == message


def test_option_names_take_dashes_or_underscores():
    (dashed,) = parse_pass_pipeline(PASSES, "isel{node-limit=7 time_limit=2.0}").passes
    assert (dashed.node_limit, dashed.time_limit) == (7, 2.0)


def test_a_pass_raising_anything_while_built_is_reported_with_its_name():
    class Exploding:
        name = "boom"

        @classmethod
        def from_pass_spec(cls, spec):
            raise KeyError("no such thing")

    with pytest.raises(UsageError, match=r"^invalid options for pass 'boom': 'no such thing'$"):
        parse_pass_pipeline({"boom": lambda: Exploding}, "boom")


def test_step_opt_reports_pipeline_errors_without_traceback(step_opt, tmp_path: Path):
    src = tmp_path / "in.mlir"
    src.write_text("")
    result = step_opt([str(src), "-p", "step-metrics{"])
    assert result.code == 2
    assert result.err == ("step-opt: error: invalid pass pipeline at column 14: "
                          "Expected argument name here\n")


def test_ctrl_c_in_step_opt(monkeypatch, step_opt, tmp_path: Path):
    def interrupt(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(opt_module.StepOptMain, "run", interrupt)
    result = step_opt([str(tmp_path / "x.mlir")])
    assert (result.code, result.err) == (130, "step-opt: interrupted\n")


def test_ctrl_c_in_step_run(monkeypatch):
    def interrupt(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(step_run, "_run", interrupt)
    result = run_tool(step_run.main, ["x.mlir"])
    assert (result.code, result.out, result.err) == (130, "", "step-run: interrupted\n")


class _ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def _with_closed_stdout(main, argv: list[str]) -> tuple[int, str]:
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _ClosedPipe(), io.StringIO()
    try:
        code = main(argv)
        err = sys.stderr.getvalue()
    finally:
        sys.stdout, sys.stderr = old_out, old_err
    return code, err


def test_closed_stdout_ends_quietly():
    counter = str(REPO / "test" / "filecheck" / "tools" / "inputs" / "counter.mlir")
    assert _with_closed_stdout(step_run.main, [counter, "--ticks", "3"]) == (141, "")
    assert _with_closed_stdout(opt_module.main, [counter]) == (141, "")


def test_help_exits_zero(step_opt):
    result = step_opt(["--help"])
    assert result.code == 0 and "usage: step-opt" in result.out
    result = run_tool(step_run.main, ["--help"])
    assert result.code == 0 and "--max-ticks N" in result.out


def _wait_until(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _reads_stdin(pid: int) -> bool:
    """True once a thread of `pid` is blocked in read(0, ...) (syscall 0 on x86-64)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                if f.read().startswith("0 0x0 "):
                    return True
        except OSError:
            pass
    return False


def _interrupt(argv: list[str], ready) -> tuple[int | None, bytes, bytes]:
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert _wait_until(lambda: ready(proc.pid), timeout=60), "tool did not start"
        proc.send_signal(signal.SIGINT)
        # Wait for the exit before closing stdin: `communicate` closes it at
        # once, and an end of file that beats the signal would let the tool
        # finish normally.
        proc.wait(timeout=60)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


LINUX_X86_64 = pytest.mark.skipif(
    not (sys.platform == "linux" and os.uname().machine == "x86_64"),
    reason="watches the process through Linux x86-64 /proc (syscall numbers)")


@LINUX_X86_64
def test_real_sigint_in_step_opt_blocked_on_stdin():
    """A real SIGINT (as Ctrl-C sends) while step-opt's worker reads stdin."""
    code, out, err = _interrupt([str(BIN / "step-opt")], _reads_stdin)
    assert (code, out, err) == (130, b"", b"step-opt: interrupted\n")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@LINUX_X86_64
def test_real_sigint_in_a_long_step_run():
    """SIGINT while ticking (imports take about 1 s of CPU; wait for 3 s of it).
    A Ctrl-C during the imports themselves still shows Python's traceback."""
    counter = REPO / "test" / "filecheck" / "tools" / "inputs" / "counter.mlir"
    code, out, err = _interrupt(
        [str(BIN / "step-run"), str(counter), "--ticks", "5000000"],
        lambda pid: _cpu_seconds(pid) >= 3.0)
    assert (code, out, err) == (130, b"", b"step-run: interrupted\n")


@pytest.mark.parametrize("flag", ["--ticks", "--max-ticks", "--runs", "--seed", "--random", "--depth"])
@pytest.mark.parametrize("value", ["1_000", "0x10", "+5", " 7", "1e3", "12345678901234567890"])
def test_step_run_integer_flags_take_plain_decimal_only(flag, value):
    """MLIR tools read integer flags as decimal digits; Python's int() also takes `1_000`."""
    result = run_tool(step_run.main, [str(REPO / "examples/lus/integrator.mlir"), flag, value])
    assert result.code == 2 and result.out == ""
    assert f"argument {flag}: invalid integer value: '{value}' (expected decimal digits)" in result.err


def test_decimal_int_reads_plain_decimal():
    from steplus.tools.cli import decimal_int

    assert [decimal_int(t) for t in ("0", "12", "-3", "007")] == [0, 12, -3, 7]
