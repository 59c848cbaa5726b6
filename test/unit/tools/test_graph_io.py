"""Data in and out of step graphs, linalg functions and ILA functions through
step-run's --input/--output (tools/graph_io.py; issue 28 item 2).

Expected values are numpy's: the SwiGLU FFN (silu(X Wg) * (X Wu)) Wd on the
bound tensors, exp on the bound tile values, the integer tile unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import run_tool
from steplus.tools.step_run import main as step_run

REPO = Path(__file__).resolve().parents[3]
GRAPH_IO = REPO / "test/filecheck/tools/inputs/graph-io.mlir"


def run(*argv: str | Path):
    return run_tool(step_run, [str(a) for a in argv])


def swiglu(x, wg, wu, wd):
    g = x @ wg
    return (g / (1 + np.exp(-g)) * (x @ wu)) @ wd


def test_swiglu_graph_reads_bound_tensors_and_writes_its_store(tmp_path):
    rng = np.random.default_rng(1)
    shapes = {"X": (64, 256), "Wg": (256, 512), "Wu": (256, 512), "Wd": (512, 256)}
    arrays = {k: (rng.standard_normal(s) / 16).astype(np.float32) for k, s in shapes.items()}
    for k, a in arrays.items():
        np.save(tmp_path / f"{k}.npy", a)
    # by SSA name (with or without %), by base address, by context name
    r = run(REPO / "examples/step/swiglu_tm16_tn16.mlir", "--input", f"X={tmp_path}/X.npy",
            "--input", f"16777216={tmp_path}/Wg.npy", "--input", f"%Wu={tmp_path}/Wu.npy",
            "--input", f"linear_offchip_load3={tmp_path}/Wd.npy",
            "--output", tmp_path / "y.npz")
    assert r.code == 0, r.err
    assert "cycles" in r.out  # the metrics table still prints
    with np.load(tmp_path / "y.npz") as out:
        assert list(out) == ["down"]
        down = out["down"]
    assert down.dtype == np.float32 and down.shape == (64, 256)
    ref = swiglu(*(arrays[k].astype(np.float64) for k in ("X", "Wg", "Wu", "Wd")))
    np.testing.assert_allclose(down, ref, rtol=1e-5, atol=1e-6)


def test_names_and_dtypes_of_every_store(tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
    n = np.array([[1, -2], [3, 2**31 - 1]], dtype=np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "n.npy", n)
    r = run(GRAPH_IO, "--input", f"x={tmp_path}/x.npy", "--input", f"0x2000={tmp_path}/n.npy",
            "--output", tmp_path / "o.npz")
    assert r.code == 0, r.err
    with np.load(tmp_path / "o.npz") as out:
        assert sorted(out) == ["n", "y"]
        assert out["y"].dtype == np.float32 and out["n"].dtype == np.int32
        np.testing.assert_allclose(out["y"], np.exp(x), rtol=1e-6)
        assert out["n"].tolist() == n.tolist()


def test_npy_output_needs_a_single_store(tmp_path):
    r = run(GRAPH_IO, "--output", tmp_path / "o.npy")
    assert r.code == 2
    assert r.err == (f"step-run: error: --output {tmp_path}/o.npy: there are 2 outputs (y, n); "
                     "an .npy file holds one: use an .npz --output\n")
    assert not (tmp_path / "o.npy").exists()


@pytest.mark.parametrize("flag, array, message", [
    ("q", np.zeros((4, 2)), "step-run: error: --input: @io has no off-chip load 'q' (loads: "
     "x (linear_offchip_load0, base_addr 0), n (linear_offchip_load1, base_addr 8192))"),
    ("x", np.zeros((2, 2)), "{path}: error: input 'x' expects a 4x2xf32 off-chip tensor "
     "(shape [4, 2]); got an array of shape [2, 2]"),
    ("n", np.array([[1, 2.5], [3, 4]]), "{path}: error: input 'n' expects a 2x2xi32 off-chip "
     "tensor (shape [2, 2]); got 2.5 at index [0, 1], not an integer"),
])
def test_input_errors(tmp_path, flag, array, message):
    path = tmp_path / "a.npy"
    np.save(path, array)
    r = run(GRAPH_IO, "--input", f"{flag}={path}")
    assert r.code in (1, 2)
    assert r.err == message.format(path=path) + "\n"


def test_the_same_load_twice_is_an_error(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((4, 2)))
    r = run(GRAPH_IO, "--input", f"x={tmp_path}/x.npy", "--input", f"0={tmp_path}/x.npy")
    assert r.code == 2
    assert r.err == ("step-run: error: --input: load x (linear_offchip_load0, base_addr 0) "
                     "is given twice\n")


def test_linalg_function_in_and_out(tmp_path):
    rng = np.random.default_rng(2)
    shapes = {"arg0": (8, 16), "arg1": (16, 32), "arg2": (16, 32), "arg3": (32, 16)}
    arrays = {k: (rng.standard_normal(s) / 4).astype(np.float32) for k, s in shapes.items()}
    argv: list[str | Path] = [REPO / "examples/linalg/swiglu_ffn_small.mlir", "--lower",
                              'tile="8x16"']
    for k, a in arrays.items():
        np.save(tmp_path / f"{k}.npy", a)
        argv += ["--input", f"{k}={tmp_path}/{k}.npy"]
    r = run(*argv, "--output", tmp_path / "y.npy")
    assert r.code == 0, r.err
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.float32 and y.shape == (8, 16)
    ref = swiglu(*(arrays[f"arg{k}"].astype(np.float64) for k in range(4)))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


def test_linalg_needs_every_argument(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((8, 16), np.float32))
    r = run(REPO / "examples/linalg/swiglu_ffn_small.mlir", "--lower", "",
            "--input", f"arg0={tmp_path}/a.npy")
    assert r.code == 2
    assert r.err.startswith("step-run: error: missing --input for @swiglu_ffn: arg1: ")


def test_ila_output_npy_is_written_as_named(tmp_path):
    """It wrote y.npy.npz (np.savez appends .npz)."""
    r = run(REPO / "examples/isel/maxpool128.mlir", "--backend", "ila", "--func", "@maxpool",
            "--random", "0", "--output", tmp_path / "y.npy")
    assert r.code == 0, r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.npy"]
    y = np.load(tmp_path / "y.npy")
    assert y.shape == (1, 64, 64, 1) and y.dtype == np.float32
    r = run(REPO / "examples/isel/maxpool128.mlir", "--backend", "ila", "--func", "@maxpool",
            "--random", "0", "--output", tmp_path / "y.txt")
    assert r.code == 2 and "expected an .npz (or, for one output, .npy) file" in r.err


def _guide_block(page: Path, heading: str) -> list[str]:
    """The command lines of the first ```sh block after `heading` in `page`."""
    text = page.read_text(encoding="utf-8")
    after = text[text.index(heading):]
    block = after[after.index("```sh\n") + len("```sh\n"):]
    return [line for line in block[:block.index("```")].splitlines() if line.strip()]


def test_guide_commands_put_data_in_and_out_of_a_graph(tmp_path):
    """docs/guide/simulate.md's "Data in and out of a graph" commands, run as written
    (from a folder where examples/ is the repository's), print what the guide says."""
    import os
    import subprocess
    import sys

    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    lines = _guide_block(REPO / "docs/guide/simulate.md", "## Data in and out of a graph")
    assert [line.split()[0] for line in lines] == ["python", "step-run", "python"]
    outputs = [subprocess.run(line, shell=True, cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120) for line in lines]
    assert [p.returncode for p in outputs] == [0, 0, 0], [p.stderr for p in outputs]
    assert outputs[1].stdout.startswith("hardware               step-eval\ncycles ")
    assert outputs[2].stdout == "float32 (64, 64) True\n"
    x = np.load(tmp_path / "x.npy")
    with np.load(tmp_path / "y.npz") as out:
        np.testing.assert_allclose(out["y"], np.exp(x), rtol=1e-6)
