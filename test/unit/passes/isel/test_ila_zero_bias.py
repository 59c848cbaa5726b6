"""D2A's zero-add rewrite (§4.3.1, MobileNet-V2's dense layers): `dense(x, w) == dense(x, w) + 0`, so a
linear layer without bias matches FlexASR's linear layer (which always adds a bias) with a zero bias.
Only in flexible mode: exact matching (no rewrite) finds no biased dense; VTA's GEMM has no bias
and matches the bare dense either way."""

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


def _export():
    torch.manual_seed(0)
    fc = torch.nn.Linear(64, 64, bias=False).eval()
    x = torch.randn(16, 64)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(fc, x, output_type="linalg-on-tensors", func_name="f"))
        want = (x @ fc.weight.T).numpy()
    return text, x.numpy(), want


def _isel(text, target, mode):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    m = Parser(ctx, text).parse_module()
    IselPass(targets=(target,), mode=mode).apply(ctx, m)
    return m


def _callees(m):
    return [op.callee.data for op in m.walk() if isinstance(op, InvokeOp)]


def test_linear_without_bias_maps_to_flexasr_linear_with_a_zero_bias():
    text, x, want = _export()
    assert "linalg.matmul" in text and "arith.addf" not in text  # no bias in torch's form
    assert _callees(_isel(text, "flexasr", "exact")) == []
    m = _isel(text, "flexasr", "flexible")
    (inv,) = [op for op in m.walk() if isinstance(op, InvokeOp)]
    assert inv.callee.data == "flexasr.linear"
    bias = inv.operands[2].owner
    assert bias.name == "arith.constant" and not np.any(np.asarray(bias.value.get_values()))
    assert bias.result.type.get_shape() == (64,)
    (ref,), _ = run_function(m, "f", [x], backend="reference")
    np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-5)
    (y,), stats = run_function(m, "f", [x], backend="ila")
    assert stats.invocations == {"flexasr": 1}
    assert np.linalg.norm(y - want) / np.linalg.norm(want) < 0.1  # AdaptivFloat<8,3>


def test_vta_takes_the_bare_dense_in_both_modes():
    text, _, _ = _export()
    assert _callees(_isel(text, "vta", "exact")) == ["vta.dense"]
    assert _callees(_isel(text, "vta", "flexible")) == ["vta.dense"]
