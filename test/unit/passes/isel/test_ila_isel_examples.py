"""The D2A worked examples, end to end: isel counts, cancellation, ILA execution."""

import numpy as np
import pytest

from conftest import REPO
from steplus.dialects.ila import ComputeOp, InvokeOp, LoadOp, StoreOp
from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila.host import run_function
from steplus.tools.loading import load_module

EX = REPO / "examples" / "isel"


def _count(module, cls, callee=None):
    return sum(1 for op in module.walk() if isinstance(op, cls)
               and (callee is None or op.callee.data == callee))


@pytest.mark.parametrize("mode,expected", [("flexible", 4), ("exact", 0)])
def test_maxpool_invocations(mode, expected):
    m = load_module(str(EX / "maxpool128.mlir"), f"isel{{targets=flexasr,hlscnn,vta mode={mode}}}")
    assert _count(m, InvokeOp, "flexasr.maxpool") == expected
    assert _count(m, InvokeOp) == expected


def test_maxpool_cancellation_and_simulation():
    m = load_module(str(EX / "maxpool128.mlir"), "isel{targets=flexasr},ila-cancel-store-load")
    assert (_count(m, StoreOp), _count(m, ComputeOp), _count(m, LoadOp)) == (1, 4, 1)
    x = np.random.default_rng(0).standard_normal((1, 128, 128, 1)).astype(np.float32)
    (y,), stats = run_function(m, "maxpool", [x])
    assert stats.invocations["flexasr"] == 4
    assert dict(stats.mmio) == {"flexasr.writes": 4096 + 24, "flexasr.reads": 256, "flexasr.waits": 8}
    q = af.quantize(x, af.bias_for(x)).astype(np.float32)
    ref = load_module(str(EX / "maxpool128.mlir"))
    (r,), _ = run_function(ref, "maxpool", [q], backend="reference")
    assert (y == r).all()


def test_maxpool_without_cancellation_counts():
    m = load_module(str(EX / "maxpool128.mlir"), "isel{targets=flexasr},ila-cancel-store-load{cancel=false}")
    assert (_count(m, StoreOp), _count(m, LoadOp)) == (4, 4)
    x = np.random.default_rng(1).standard_normal((1, 128, 128, 1)).astype(np.float32)
    _, stats = run_function(m, "maxpool", [x])
    assert stats.mmio["flexasr.writes"] == (16 + 8 + 4 + 2) * 256 + 24
    assert stats.mmio["flexasr.reads"] == (8 + 4 + 2 + 1) * 256


@pytest.mark.parametrize("mode,expected", [("flexible", 1), ("exact", 0)])
def test_linear_add_reshape_dense(mode, expected):
    m = load_module(str(EX / "linear_reshape.mlir"), f"isel{{targets=flexasr mode={mode}}}")
    assert _count(m, InvokeOp, "flexasr.linear") == expected


def test_linear_runs_on_flexasr():
    m = load_module(str(EX / "linear_reshape.mlir"), "isel{targets=flexasr}")
    rng = np.random.default_rng(2)
    args = [rng.standard_normal((10, 256)) * 0.5, rng.standard_normal((64, 256)) * 0.1, rng.standard_normal(64) * 0.1]
    (y,), stats = run_function(m, "linear", args)
    assert dict(stats.mmio) == {"flexasr.writes": 1207, "flexasr.reads": 40, "flexasr.waits": 1}
    (r,), _ = run_function(load_module(str(EX / "linear_reshape.mlir")), "linear", args, backend="reference")
    err = np.linalg.norm(y - r) / np.linalg.norm(r)
    assert 0 < err < 0.05


def test_conv_maps_to_vta_gemm_via_im2col():
    m = load_module(str(EX / "conv_im2col.mlir"), "isel{targets=vta}")
    assert _count(m, InvokeOp, "vta.dense") == 1
    assert any(op.name == "ila.im2col" for op in m.walk())
    exact = load_module(str(EX / "conv_im2col.mlir"), "isel{targets=vta mode=exact}")
    assert _count(exact, InvokeOp) == 0
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((1, 16, 10, 10)), rng.standard_normal((32, 16, 3, 3)) * 0.2]
    (y,), stats = run_function(m, "conv", args)
    (r,), _ = run_function(load_module(str(EX / "conv_im2col.mlir")), "conv", args, backend="reference")
    assert stats.invocations["vta"] == 1
    assert np.linalg.norm(y - r) / np.linalg.norm(r) < 0.05
