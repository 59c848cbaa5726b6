"""im2col on torch's 2-D convolutions (issue 29 item 1): strided, 1x1 (a plain GEMM) and strided 1x1
convolutions exported by torch-mlir become VTA GEMMs and FlexASR linear layers in flexible mode,
and agree with `torch.nn.functional.conv2d`; so do grouped convolutions (one GEMM per group),
including a depthwise one with a channel multiplier whose per-group GEMM fits (4x4 kernel, 16
filters per channel).  A depthwise convolution of multiplier 1 (MobileNet's, EfficientNet's) has a
one-column GEMM per channel, which no target takes: it stays on the host.

The accelerators' own arithmetic is checked against torch with tolerances (VTA: int8 operands;
FlexASR: AdaptivFloat<8,3>); the rebuilt host part (im2col gather, reshapes, transposes) with
exact float accelerator functions (`backend="reference"`) equals torch's convolution to f32
rounding.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.dialects.ila import InvokeOp
from steplus.passes.isel import IselPass
from steplus.runtime.ila.host import run_function
from steplus.tools.registry import get_all_dialects

torch = pytest.importorskip("torch")
fx = pytest.importorskip("torch_mlir.fx")

# (name, in channels, filters, kernel, stride, input size): every GEMM dimension a multiple of 16 and
# 64 filters, so both VTA (every dim % 16) and FlexASR's linear layer (any shape with in <= 4080) take it
FORMS = [("strided_3x3", 16, 64, 3, 2, 9),     # 4x4 = 16 positions, 16*3*3 = 144 columns
         ("pointwise_1x1", 16, 64, 1, 1, 4),   # the plain GEMM W[64,16] . x[16,16]
         ("strided_1x1", 32, 64, 1, 2, 8)]     # ResNet's projection shortcut: im2col of 1x1 windows
# the relative error each accelerator's arithmetic may add (VTA: int8 per-tensor quantisation of both
# operands; FlexASR: AdaptivFloat<8,3> with 4 mantissa bits); measured 2.2-3.7 % and 2.4-2.5 %
TOLERANCE = {"vta": 0.05, "flexasr": 0.1}


def _export(cin, cout, kernel, stride, size, groups=1):
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(cin, cout, kernel, stride=stride, groups=groups, bias=False).eval()
    x = torch.randn(1, cin, size, size)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(conv, x, output_type="linalg-on-tensors", func_name="f"))
        want = torch.nn.functional.conv2d(x, conv.weight, stride=stride, groups=groups).numpy()
    return text, x.numpy(), want


def _isel(text, target, mode):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    m = Parser(ctx, text).parse_module()
    IselPass(targets=(target,), mode=mode).apply(ctx, m)
    return m


@pytest.mark.parametrize("target,callee", [("vta", "vta.dense"), ("flexasr", "flexasr.linear")])
@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
def test_conv_form_is_one_gemm_and_agrees_with_torch(form, target, callee):
    _, cin, cout, kernel, stride, size = form
    text, x, want = _export(cin, cout, kernel, stride, size)
    assert "linalg.conv_2d_nchw_fchw" in text
    # D2A's exact matching: no accelerator operator is a 2-D convolution here (HLSCNN is not targeted)
    assert not [op for op in _isel(text, target, "exact").walk() if isinstance(op, InvokeOp)]
    m = _isel(text, target, "flexible")
    assert [op.callee.data for op in m.walk() if isinstance(op, InvokeOp)] == [callee]
    assert not any(op.name == "linalg.conv_2d_nchw_fchw" for op in m.walk())
    (ref,), _ = run_function(m, "f", [x], backend="reference")
    np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-5)
    (y,), stats = run_function(m, "f", [x], backend="ila")
    assert stats.invocations == {target: 1}
    assert np.linalg.norm(y - want) / np.linalg.norm(want) < TOLERANCE[target]


def test_pointwise_conv_needs_no_im2col_gather():
    """A 1x1 stride-1 convolution is a GEMM on the image reshaped to [C, H*W]: no `ila.im2col`."""
    text, _, _ = _export(16, 64, 1, 1, 4)
    for target in ("vta", "flexasr"):
        m = _isel(text, target, "flexible")
        assert not any(op.name == "ila.im2col" for op in m.walk())
    text, _, _ = _export(16, 64, 3, 2, 9)
    assert any(op.name == "ila.im2col" for op in _isel(text, "vta", "flexible").walk())


# (name, in channels, filters, kernel, groups, input size, targets whose guards the per-group GEMM passes)
GROUPED = [("grouped_2", 32, 128, 3, 2, 6, ("vta", "flexasr")),       # per group 16 -> 64, 144 columns
           # per channel 1 -> 16, 16 columns: FlexASR pads the 16 outputs to 64 (flexasr_driver.run_linear)
           ("depthwise_x16", 4, 64, 4, 4, 7, ("vta", "flexasr"))]


@pytest.mark.parametrize("form", GROUPED, ids=[f[0] for f in GROUPED])
def test_grouped_conv_is_one_gemm_per_group_and_agrees_with_torch(form):
    _, cin, cout, kernel, groups, size, targets = form
    text, x, want = _export(cin, cout, kernel, 1, size, groups)
    assert "linalg.conv_2d_ngchw_gfchw" in text
    callee = {"vta": "vta.dense", "flexasr": "flexasr.linear"}
    for target in ("vta", "flexasr"):
        m = _isel(text, target, "flexible")
        calls = [op.callee.data for op in m.walk() if isinstance(op, InvokeOp)]
        if target not in targets:
            assert calls == []
            continue
        assert calls == [callee[target]] * groups
        (ref,), _ = run_function(m, "f", [x], backend="reference")
        np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-5)
        (y,), stats = run_function(m, "f", [x], backend="ila")
        assert stats.invocations == {target: groups}
        assert np.linalg.norm(y - want) / np.linalg.norm(want) < TOLERANCE[target]


def test_conv_forms_example():
    """examples/isel/conv_forms.mlir, as docs/guide/isel.md shows it."""
    from pathlib import Path

    from steplus.tools.loading import load_module

    ex = Path(__file__).resolve().parents[4] / "examples" / "isel" / "conv_forms.mlir"
    for target, callees, gathers in (("vta", ["vta.dense"] * 2, 1), ("flexasr", ["flexasr.linear"] * 2, 1)):
        m = load_module(str(ex), f"isel{{targets={target}}}")
        assert [op.callee.data for op in m.walk() if isinstance(op, InvokeOp)] == callees
        assert sum(op.name == "ila.im2col" for op in m.walk()) == gathers  # the 1x1 needs none
