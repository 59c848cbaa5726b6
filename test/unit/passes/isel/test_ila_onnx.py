"""The ONNX-produced model (examples/isel/onnx): regeneration, isel, ILA execution."""

import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO
from steplus.dialects.ila import InvokeOp
from steplus.runtime.ila.host import run_function
from steplus.tools.loading import load_module

ONNX_DIR = REPO / "examples" / "isel" / "onnx"
MLIR = ONNX_DIR / "onnx_mlp.mlir"


def _script():
    spec = importlib.util.spec_from_file_location("make_onnx_mlp", ONNX_DIR / "make_onnx_mlp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _have(tool: str) -> bool:
    return (Path(sys.executable).parent / tool).exists() or shutil.which(tool) is not None


@pytest.mark.skipif(not (_have("iree-import-onnx") and _have("iree-opt")),
                    reason="iree-import-onnx/iree-opt not installed (pip install iree-base-compiler)")
def test_regenerating_gives_the_committed_file(tmp_path):
    pytest.importorskip("onnx", reason="the onnx package is not installed (pip install -e '.[test]')")
    out = _script().generate(tmp_path)
    assert out.read_text() == MLIR.read_text()


def _invokes(module):
    return [op for op in module.walk() if isinstance(op, InvokeOp)]


def test_flexible_isel_folds_the_generic_bias_adds():
    m = load_module(str(MLIR), "isel{targets=flexasr,hlscnn,vta mode=flexible}")
    inv = _invokes(m)
    assert [op.callee.data for op in inv] == ["flexasr.linear", "flexasr.linear"]
    # the biases are the function arguments b1, b2 (not inserted zeros)
    assert [op.args[2].index for op in inv] == [2, 4]
    assert not any(op.name == "linalg.fill" for op in m.walk())
    exact = load_module(str(MLIR), "isel{targets=flexasr mode=exact}")
    assert _invokes(exact) == []


def test_onnx_mlp_runs_on_flexasr():
    src = load_module(str(MLIR))
    rng = np.random.default_rng(0)
    shapes = [(16, 64), (64, 128), (128,), (64, 128), (64,)]
    args = [(rng.standard_normal(s) / (np.sqrt(s[0]) if k in (1, 3) else 1)).astype(np.float32)
            for k, s in enumerate(shapes)]
    (r,), _ = run_function(src, "onnx_mlp", args, backend="reference")
    x, w1, b1, w2, b2 = args
    np.testing.assert_allclose(r, x + np.maximum(x @ w1 + b1, 0) @ w2.T + b2, rtol=1e-5, atol=1e-5)
    m = load_module(str(MLIR), "isel,ila-cancel-store-load,convert-ila-to-commands")
    (y,), stats = run_function(m, "onnx_mlp", args)
    assert stats.invocations == {"flexasr": 2}
    assert 0 < np.linalg.norm(y - r) / np.linalg.norm(r) < 0.05
