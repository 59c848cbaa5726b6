"""Exact-mode isel rebuilds torch's softmax guard when a GEMM under it goes to an accelerator (issue 29).

Exact mode does not rewrite the guard away (only flexible mode knows it is the identity on finite
scores), so when the scores under it come from a matched GEMM the guard itself is rebuilt on the
new scores: `tosa.equal` with -inf, `tosa.reduce_all` over the row, `tosa.select` of zero.  Before,
isel warned `cannot rebuild a 'guard' term here` and left the value, and the GEMMs under it, on
the host (the full-size Transformer's exact VTA count was 21 of the 42 GEMMs that fit)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.passes.isel import IselPass
from steplus.runtime.ila.host import run_function
from steplus.tools.registry import get_all_dialects
from steplus.utils.diagnostics import collecting_diagnostics

# a 16x32 · (16x32)ᵀ score GEMM (Relay's dense: matched exactly by VTA) under torch's guard, whose
# operand p is an input (the guard zeroes the rows of p whose scores are all -inf)
GUARD = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0, 0)>
func.func @f(%a: tensor<16x32xf32>, %w: tensor<16x32xf32>, %p: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %true = arith.constant true
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zeros = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %e = tensor.empty() : tensor<32x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x32xf32>) outs(%e : tensor<32x16xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%a, %wt : tensor<16x32xf32>, tensor<32x16xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eb = tensor.empty() : tensor<16x16xi1>
  %cmp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x16xf32>) outs(%eb : tensor<16x16xi1>) {
  ^bb0(%in: f32, %out: i1):
    %x = arith.extf %in : f32 to f64
    %c = arith.cmpf oeq, %x, %ninf : f64
    linalg.yield %c : i1
  } -> tensor<16x16xi1>
  %er = tensor.empty() : tensor<16x1xi1>
  %t = linalg.fill ins(%true : i1) outs(%er : tensor<16x1xi1>) -> tensor<16x1xi1>
  %all = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]} ins(%cmp : tensor<16x16xi1>) outs(%t : tensor<16x1xi1>) {
  ^bb0(%in: i1, %out: i1):
    %r = arith.andi %in, %out : i1
    linalg.yield %r : i1
  } -> tensor<16x1xi1>
  %g = linalg.generic {indexing_maps = [#col, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%all, %zeros, %p : tensor<16x1xi1>, tensor<16x16xf32>, tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%in: i1, %z0: f32, %pv: f32, %out: f32):
    %y = arith.select %in, %z0, %pv : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  func.return %g : tensor<16x16xf32>
}
"""


def _parse(text):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    return ctx, Parser(ctx, text).parse_module()


def _isel(text, targets, mode):
    """The module after isel, and its warnings (none may say a value could not be rebuilt)."""
    ctx, m = _parse(text)
    with collecting_diagnostics() as engine:
        IselPass(targets=targets, mode=mode).apply(ctx, m)
    warns = [d.message for d in engine.diagnostics if d.severity == "warning"]
    assert warns == []
    return m


def _names(m):
    return [op.name for op in m.walk()]


def test_exact_mode_rebuilds_the_guard_over_a_matched_gemm():
    m = _isel(GUARD, ("vta",), "exact")
    assert [op.callee.data for op in m.walk() if op.name == "ila.invoke"] == ["vta.dense"]
    names = _names(m)
    # the guard, rebuilt on the GEMM's result; the torch generics are gone
    assert names.count("tosa.equal") == names.count("tosa.reduce_all") == names.count("tosa.select") == 1
    assert "linalg.generic" not in names and "linalg.matmul" not in names
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    w = np.abs(rng.standard_normal((16, 32))).astype(np.float32) + 0.1  # positive: a -inf row stays -inf
    p = rng.standard_normal((16, 16)).astype(np.float32)
    a[3] = -np.inf  # row 3's scores are all -inf: the guard zeroes p's row 3
    want = p.copy()
    want[3] = 0.0
    (y,), stats = run_function(m, "f", [a, w, p], backend="reference")
    assert stats.invocations == {"vta": 1}
    np.testing.assert_array_equal(y, want)
    (orig,), _ = run_function(_parse(GUARD)[1], "f", [a, w, p], backend="reference")
    np.testing.assert_array_equal(orig, want)  # the input program means the same


class _Cross:
    """Cross-attention (torch's nn.MultiheadAttention, query x, key/value memory): the scores come from
    two linear layers that VTA matches exactly, so exact mode rebuilds the softmax guard over them."""

    @staticmethod
    def export(torch, fx):
        from torch import nn

        class Cross(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.MultiheadAttention(32, 2, batch_first=True)

            def forward(self, x, mem):
                return self.a(x, mem, mem, need_weights=False)[0]

        torch.manual_seed(0)
        module = Cross().eval()
        rng = np.random.default_rng(1)
        x, mem = (rng.standard_normal((1, 16, 32)).astype(np.float32) for _ in range(2))
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            text = str(fx.export_and_import(module, torch.from_numpy(x), torch.from_numpy(mem),
                                            output_type="linalg-on-tensors", func_name="forward"))
            ref = module(torch.from_numpy(x), torch.from_numpy(mem)).numpy()
        return text, x, mem, ref


def test_torch_cross_attention_through_exact_mode_equals_pytorch():
    torch = pytest.importorskip("torch")
    fx = pytest.importorskip("torch_mlir.fx")
    text, x, mem, ref = _Cross.export(torch, fx)
    assert text.count("arith.andi") == 1  # torch's guard is in the export
    m = _isel(text, ("vta",), "exact")
    # q, k and v projections and the output projection: torch-mlir writes k and v as one GEMM on
    # the memory (the packed in_proj weight's last 2/3), so 3 dense ops, all matched as written
    assert [op.callee.data for op in m.walk() if op.name == "ila.invoke"] == ["vta.dense"] * 3
    assert _names(m).count("tosa.select") == 1
    (y,), stats = run_function(m, "forward", [x, mem], backend="reference")
    assert stats.invocations == {"vta": 3}
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)  # exact float GEMMs: torch's result
    (y_ila,), _ = run_function(m, "forward", [x, mem], backend="ila")
    # int8 VTA GEMMs (spec 4.4): within a few percent of torch
    assert np.linalg.norm(y_ila - ref) / np.linalg.norm(ref) < 0.05
