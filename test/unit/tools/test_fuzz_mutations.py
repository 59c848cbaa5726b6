"""Property tests: hostile inputs never yield a traceback, an internal error or a hang.

- Mutated programs: the seeds are every round-trip test input of the
  repository (the dialect `ops.mlir` files), so the property covers the
  steplus dialects as they grow.  Each mutated input must either be accepted
  (exit 0) or rejected with a located `file:line:col: error:` diagnostic
  (exit 1), within a time limit.
- Pass pipelines: registry pass names, their option names (dashed and
  underscored), hostile values and stray punctuation.
- step-run command lines: random flags and random `.npy` / `.csv` input files
  (wrong shapes and dtypes, NaN, strings, 0-d arrays).

Those must give exit 0, exit 1 with a located diagnostic, or exit 2 with a
one-line usage error `<tool>: error: ...`.
"""

from __future__ import annotations

import os
import re
import signal
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO, run_tool

DIAG = re.compile(r"^[^\n]+:\d+:\d+: error: .+")
# step-run also reports errors about a whole file (an input, the simulation).
FILE_DIAG = re.compile(r"^[^\n]+: error: .+")
SEEDS = sorted((REPO / "test" / "filecheck").rglob("ops.mlir")) + sorted(
    (REPO / "test" / "filecheck" / "tools").glob("*.mlir")
)
SEED_TEXTS = [p.read_bytes() for p in SEEDS]
TOKENS = [b"{", b"}", b"(", b")", b"<", b">", b"[", b"]", b":", b",", b"%", b"@",
          b"!", b"#", b"\"", b"->", b"=", b"0", b"-1", b"99999999999999999999",
          b"i32", b"f32", b"?", b"x", b"\xff", b"\n", b"// -----\n", b"step.", b"lus."]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEED_TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "truncate"]))
        i = draw(st.integers(0, max(0, n - 1)))
        j = min(n, i + draw(st.integers(1, 40)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i]
    return text


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _run_with_alarm(tool, argv: list[str], what: object):
    """Run in a scratch directory: fuzzed options name output files
    (`step-metrics{out="B=64,B=2"}`), which must not land in the repository."""
    old = signal.signal(signal.SIGALRM, _alarm)
    cwd = os.getcwd()
    signal.alarm(20)
    try:
        with tempfile.TemporaryDirectory(prefix="steplus-fuzz-") as scratch:
            os.chdir(scratch)
            try:
                return tool(argv)
            finally:
                os.chdir(cwd)
    except _Timeout:
        raise AssertionError(f"hung on {what!r}") from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _assert_clean(result, prog: str, codes=(0, 1, 2), diag=DIAG) -> None:
    assert "Traceback (most recent call last)" not in result.err, result.err
    assert "internal error" not in result.err, result.err
    assert result.code in codes, (result.code, result.err)
    if result.code == 1:
        assert diag.match(result.err.splitlines()[0]), result.err
        assert not result.err.startswith(f"{prog}:"), result.err
    if result.code == 2:
        assert result.err.startswith(f"{prog}: error: "), result.err
        assert result.err.count("\n") == 1, result.err


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_inputs_fail_cleanly(tmp_path_factory, step_opt, data):
    path = tmp_path_factory.mktemp("fuzz") / "input.mlir"
    path.write_bytes(data)
    result = _run_with_alarm(step_opt, [str(path), "--split-input-file"], data)
    _assert_clean(result, "step-opt", codes=(0, 1))


def test_there_are_seeds():
    assert SEED_TEXTS


# -- pass pipelines -----------------------------------------------------------

def _pass_options() -> dict[str, list[str]]:
    from xdsl.passes import get_pass_option_infos

    from steplus.tools.registry import get_all_passes

    options = {}
    for name, factory in get_all_passes().items():
        fields = [info.name for info in get_pass_option_infos(factory())]
        options[name] = fields + [f.replace("_", "-") for f in fields if "_" in f]
    return options


PASS_OPTIONS = _pass_options()
OPTION_VALUES = ["", "0", "-1", "1", "3", "true", "false", "x", '"x"', '""', '"/nonexistent"',
                 '"a b"', '"-16x16"', '"16x16"', '"B=64"', '"B=64,B=2"', '"B="', '"vta"',
                 '"\\"', "99999999999999999999", "1e999", "nan", "-0.5", "{", "}", ",",
                 "'", '"', "\\", "\u00e9", "[1,2]", "(1)", "=", "@"]
PUNCTUATION = [",", "{", "}", "=", '"', " ", "'", "\\", "[", "]", "-", "_"]
PIPELINE_INPUTS = ["", (REPO / "test" / "filecheck" / "tools" / "inputs"
                        / "step-small-matmul.mlir").read_text()]


@st.composite
def pipelines(draw) -> str:
    items = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(PASS_OPTIONS)) | st.sampled_from(["", "nope", "-p"]))
        known = PASS_OPTIONS.get(name, [])
        opts = []
        for _ in range(draw(st.integers(0, 3))):
            key = draw(st.sampled_from(known) if known and draw(st.booleans())
                       else st.sampled_from(["bogus", "", "x_y", "-"]))
            opts.append(f"{key}={draw(st.sampled_from(OPTION_VALUES))}")
        if opts or draw(st.booleans()):
            name += "{" + " ".join(opts) + "}"
        items.append(name)
    spec = ",".join(items)
    for _ in range(draw(st.integers(0, 2))):  # stray punctuation, or a cut
        i = draw(st.integers(0, len(spec)))
        spec = (spec[:i] + draw(st.sampled_from(PUNCTUATION)) + spec[i:]
                if draw(st.booleans()) else spec[:i])
    return spec


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=pipelines(), text=st.sampled_from(PIPELINE_INPUTS))
def test_hostile_pipelines_fail_cleanly(tmp_path_factory, step_opt, spec, text):
    path = tmp_path_factory.mktemp("pipe") / "input.mlir"
    path.write_text(text)
    result = _run_with_alarm(step_opt, [str(path), f"--passes={spec}"], spec)
    _assert_clean(result, "step-opt")


# -- step-run flags and input files -------------------------------------------

INPUTS_DIR = REPO / "test" / "filecheck" / "tools" / "inputs"
# program -> (base flags, its input names)
RUN_PROGRAMS = {
    "typed-inputs.mlir": (["--ticks", "2"], ["i", "b", "v"]),
    "counter.mlir": (["--ticks", "3"], []),
    "step-small-matmul.mlir": ([], []),
    "two-funcs.mlir": (["--func", "@f"], ["x"]),
}
CSV_CELLS = ["1", "0", "2.5", "nan", "1e30", "-3", "x", "", "1,2", "1,2,3", "true", "\u00e9"]
NPY_DTYPES = ["int32", "int64", "float64", "float32", "bool", "complex128", "<U2", "uint8"]
HOSTILE_FLAGS = {
    "--ticks": ["-1", "0", "1", "5", "1000000000000", "x"],
    "--max-ticks": ["0", "1", "5", "-3"],
    "--backend": ["reactive", "sync", "ila", "gpu"],
    "--node": ["@typed", "@count", "@nope", "", "@"],
    "--graph": ["@g", "@nope"],
    "--func": ["@f", "@g", "@nope"],
    "--random": ["-1", "0", "3", "x"],
    "--depth": ["0", "1", "-2", "99999999999999999999"],
    "--preset": ["step-eval", "nope"],
    "--bind": ["B=64", "B=64\\", 'B="', "=", "B=-1"],
    "--output": ["out.npy", "out.npz", "no/out.npy"],
}


@st.composite
def input_file(draw, directory, index: int) -> str:
    if draw(st.integers(0, 3)) == 0:
        path = directory / f"in{index}.csv"
        rows = draw(st.lists(st.sampled_from(CSV_CELLS), max_size=6))
        path.write_text("\n".join(rows) + ("\n" if rows else ""))
        return str(path)
    path = directory / f"in{index}.npy"
    shape = draw(st.sampled_from([(2,), (2, 2), (4,), (3, 2)])
                 | st.lists(st.integers(0, 3), max_size=3).map(tuple))
    dtype = draw(st.sampled_from(NPY_DTYPES))
    value = draw(st.sampled_from([0.0, 1.0, 2.5, np.nan, np.inf, 1e30, -1.0]))
    with np.errstate(invalid="ignore"):  # NaN to int is the point
        array = np.full(shape, value).astype(dtype) if dtype != "<U2" else np.full(shape, "ab")
    np.save(path, array)
    return str(path)


@st.composite
def step_run_argv(draw, directory) -> list[str]:
    program = draw(st.sampled_from(sorted(RUN_PROGRAMS)))
    base, names = RUN_PROGRAMS[program]
    argv = [str(INPUTS_DIR / program), *base]
    for k, name in enumerate(names):
        if draw(st.integers(0, 5)) == 0:
            continue  # a missing input
        if draw(st.integers(0, 5)) == 0:
            name = draw(st.sampled_from(["nope", "", "%" + name, name + "=x"]))
        argv += ["--input", f"{name}={draw(input_file(directory, k))}"]
    for flag in draw(st.lists(st.sampled_from(sorted(HOSTILE_FLAGS)), max_size=2, unique=True)):
        value = draw(st.sampled_from(HOSTILE_FLAGS[flag]))
        argv += [flag, str(directory / value) if flag == "--output" else value]
    if draw(st.booleans()):
        argv.append(draw(st.sampled_from(["--functional", "--json", "--allow-unregistered-dialect"])))
    return argv


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hostile_step_run_command_lines_fail_cleanly(tmp_path_factory, data):
    from steplus.tools.step_run import main

    argv = data.draw(step_run_argv(tmp_path_factory.mktemp("run")))
    result = _run_with_alarm(lambda a: run_tool(main, a), argv, argv)
    _assert_clean(result, "step-run", diag=FILE_DIAG)
