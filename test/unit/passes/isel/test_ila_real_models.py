"""D2A's six applications from examples/isel/models: committed scripts reproduce their .mlir, the
imports run in step-run like the torch modules they come from, and isel maps their real forms."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from conftest import REPO
from steplus.dialects.ila import InvokeOp
from steplus.runtime.ila.host import run_function
from steplus.tools.loading import load_module

MODELS = REPO / "examples" / "isel" / "models"
NAMES = ("efficientnet_b0", "lstm_wlm", "mobilenetv2", "resmlp", "resnet20", "transformer")


def _script(name):
    sys.path.insert(0, str(MODELS))
    try:
        spec = importlib.util.spec_from_file_location(f"isel_model_{name}", MODELS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(MODELS))


def test_every_application_is_committed_and_under_2_mb():
    for name in NAMES:
        assert (MODELS / f"{name}.py").exists()
        assert (MODELS / f"{name}.mlir").stat().st_size < 2_000_000, name


def test_regenerating_resmlp_gives_the_committed_file(tmp_path):
    pytest.importorskip("torch_mlir", reason="torch-mlir is not installed")
    mod, exp = _script("resmlp"), _script("_export")
    out = exp.generate("resmlp", mod.build, mod.HEADER, tmp_path)
    assert out.read_bytes() == (MODELS / "resmlp.mlir").read_bytes()


def test_a_torch_version_mismatch_is_reported_as_such(monkeypatch):
    torch = pytest.importorskip("torch")
    exp = _script("_export")
    monkeypatch.setattr(torch, "__version__", "2.99.0+cu999")
    with pytest.raises(SystemExit, match="torch 2.99.0\\+cu999 does not match the pinned torch==2.13.0"):
        exp.check_frontends()


@pytest.mark.parametrize("name", ["resmlp", "transformer"])
def test_the_import_computes_what_the_torch_module_computes(name):
    torch = pytest.importorskip("torch")
    mod = _script(name)
    torch.manual_seed(0)
    module, example = mod.build()
    module.eval()
    with torch.no_grad():
        want = module(*example).numpy()
    m = load_module(str(MODELS / f"{name}.mlir"))
    (got,), _ = run_function(m, "forward", [e.numpy() for e in example], backend="reference")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_resnet20_padded_convs_go_to_hlscnn_after_a_host_pad():
    src = load_module(str(MODELS / "resnet20.mlir"))
    convs = [op for op in src.walk() if op.name == "linalg.conv_2d_nchw_fchw"]
    assert len(convs) == 21  # 1 stem + 18 block convs + 2 projections
    # HLSCNN's SPAD1 holds one 16-byte word per filter and input pixel: K*H*W*16 <= 128 KiB (spec 2.1)
    fits = [op for op in convs
            if op.operands[1].type.get_shape()[0] * np.prod(op.operands[0].type.get_shape()[2:]) * 16 <= 128 * 1024]
    assert len(fits) == 11  # stages 2 and 3 but their first (strided) convs, plus the stage-3 projection
    m = load_module(str(MODELS / "resnet20.mlir"), "isel{targets=hlscnn mode=exact}")
    inv = [op for op in m.walk() if isinstance(op, InvokeOp)]
    assert [op.callee.data for op in inv] == ["hlscnn.conv2d"] * len(fits)
    # a 3x3 conv reads a tensor.pad result: the host pads, HLSCNN has no padding
    threes = [op for op in inv if op.args[1].type.get_shape()[2:] == (3, 3)]
    assert len(threes) == 10 and all(op.args[0].owner.name == "tensor.pad" for op in threes)
