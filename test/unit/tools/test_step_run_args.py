"""step-run's argument parser and its tensor-program hint come from `tools/step_run_args.py`, so a
run that is not a graph run imports neither the graph runner nor the linalg lowering (sympy, the
step dialect, the fabric simulator: ~0.5 CPU s of every `step-run --backend ila`)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from steplus.tools.step_run_args import LOWER_HINT, add_graph_arguments, add_lower_arguments, is_tensor_program
from steplus.tools.loading import load_module

ROOT = Path(__file__).parents[3]

HEAVY = ("sympy", "steplus.tools.step_run_graph", "steplus.tools.step_run_linalg", "steplus.dialects.step")


def test_an_ila_run_imports_no_graph_half(tmp_path):
    """`step-run --backend ila` on the max-pool, its output saved, in a fresh interpreter: none of the
    heavy modules (saving is `tools/outputs.py`, not `graph_io`)."""
    out = tmp_path / "y.npz"
    code = ("import sys\n"
            "from steplus.tools.step_run import _run\n"
            f"rc = _run([{str(ROOT / 'examples/isel/maxpool128.mlir')!r}, '--backend', 'ila', '--func', '@maxpool',"
            f" '--random', '0', '-q', '--output', {str(out)!r}])\n"
            f"print(rc, [m for m in {HEAVY!r} if m in sys.modules])\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert "invocations: flexasr=4" in run.stdout
    assert run.stdout.strip().splitlines()[-1] == "0 []"
    assert np.load(out)["out0"].shape == (1, 64, 64, 1)


def test_the_flags_parse_as_before():
    p = argparse.ArgumentParser()
    add_graph_arguments(p)
    add_lower_arguments(p)
    args = p.parse_args(["--preset", "sn40l", "--depth", "4", "--orchestration", "so", "--lower", ""])
    assert (args.preset, args.depth, args.orchestration, args.lower, args.graph) == ("sn40l", 4, "so", "", None)


def test_tensor_program_by_the_graph_op_name():
    linalg = load_module(str(ROOT / "examples/isel/maxpool128.mlir"))
    assert is_tensor_program(linalg)
    assert not is_tensor_program(ModuleOp([]))
    assert not is_tensor_program(load_module(str(ROOT / "examples/step/swiglu_tm32_tn128.mlir")))  # a step.graph
    assert "--lower" in LOWER_HINT
