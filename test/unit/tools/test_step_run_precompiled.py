"""Compile once, run many: `step-run --backend ila` on a module `step-opt` already selected runs it
without selecting it again (tools/step_run_ila.default_pipeline).  Its output is the one the
end-to-end run writes, bit for bit, and its printed invocations and command counts are the same
(its relative error is against the float32 references of the accelerator ops it holds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import run_tool
from steplus.passes.isel import IselPass
from steplus.tools.loading import load_module
from steplus.tools.step_opt import main as step_opt
from steplus.tools.step_run import main as step_run
from steplus.tools.step_run_ila import DEFAULT_PIPELINE, SELECTED_PIPELINE, default_pipeline

REPO = Path(__file__).resolve().parents[3]
MAXPOOL = REPO / "examples/isel/maxpool128.mlir"
ISEL_ONLY = DEFAULT_PIPELINE.removesuffix("," + SELECTED_PIPELINE)


@pytest.fixture(scope="module")
def precompiled(tmp_path_factory) -> dict[str, Path]:
    """The max-pool compiled by step-opt: `compiled` (the default pipeline), `selected` (isel only)."""
    out = {}
    for name, pipeline in [("compiled", DEFAULT_PIPELINE), ("selected", ISEL_ONLY)]:
        out[name] = tmp_path_factory.mktemp("pre") / f"{name}.mlir"
        r = run_tool(step_opt, [str(MAXPOOL), "-p", pipeline, "-o", str(out[name])])
        assert r.code == 0, r.err
    return out


def _run(path: Path, out: Path):
    r = run_tool(step_run, [str(path), "--backend", "ila", "--func", "@maxpool", "--random", "0",
                            "--output", str(out)])
    assert r.code == 0, r.err
    return r.out, np.load(out)["out0"]


def _fn(path: Path):
    from xdsl.dialects import func

    return next(f for f in load_module(str(path)).walk() if isinstance(f, func.FuncOp))


def test_a_selected_function_gets_the_passes_after_isel_only(precompiled):
    assert default_pipeline(_fn(MAXPOOL)) == DEFAULT_PIPELINE
    assert default_pipeline(_fn(precompiled["selected"])) == SELECTED_PIPELINE
    assert default_pipeline(_fn(precompiled["compiled"])) == SELECTED_PIPELINE


@pytest.mark.parametrize("kind", ["compiled", "selected"])
def test_a_precompiled_module_runs_as_the_end_to_end_run_without_isel(tmp_path, monkeypatch, precompiled, kind):
    text, y = _run(MAXPOOL, tmp_path / "e2e.npz")
    assert text.startswith("invocations: flexasr=4\n")  # the max-pool was selected end to end
    pre = precompiled[kind]

    def no_isel(*_):
        raise AssertionError("isel ran on a precompiled module")

    monkeypatch.setattr(IselPass, "apply", no_isel)
    text2, y2 = _run(pre, tmp_path / "pre.npz")
    # the same calls and commands; the error line compares with the float32 meaning of the program
    # given, here the accelerator ops' references (the original program is not at hand)
    lines, lines2 = text.splitlines(), text2.splitlines()
    assert lines2[:-1] == lines[:-1] and len(lines2) == len(lines) == 3
    assert lines2[-1].startswith("output 0: shape [1, 64, 64, 1], relative error vs float32 numpy ")
    assert y2.dtype == y.dtype and np.array_equal(y2, y)
