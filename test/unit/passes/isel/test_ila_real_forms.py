"""isel on the forms real frontends emit (torch-mlir linalg-on-tensors)."""

from __future__ import annotations

import numpy as np
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.dialects.ila import InvokeOp
from steplus.passes.isel import IselPass
from steplus.runtime.ila.host import run_function
from steplus.tools.registry import get_all_dialects

BMM = """
func.func @f(%a: tensor<4x16x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<4x16x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x16xf32>) outs(%z : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  func.return %c : tensor<4x16x16xf32>
}"""


def _parse(text):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    return ctx, Parser(ctx, text).parse_module()


def _isel(text, targets, mode):
    ctx, m = _parse(text)
    IselPass(targets=targets, mode=mode).apply(ctx, m)
    return m


def test_batch_matmul_becomes_one_vta_gemm_per_batch_in_flexible_mode():
    assert not [op for op in _isel(BMM, ("vta",), "exact").walk() if isinstance(op, InvokeOp)]
    m = _isel(BMM, ("vta",), "flexible")
    inv = [op for op in m.walk() if isinstance(op, InvokeOp)]
    assert [op.callee.data for op in inv] == ["vta.dense"] * 4
    assert not any(op.name == "linalg.batch_matmul" for op in m.walk())
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 16, 32)).astype(np.float32)
    b = rng.standard_normal((4, 32, 16)).astype(np.float32)
    # the rebuilt host part (slices, reshapes, concat) with exact float GEMMs is the batched product
    (ref,), _ = run_function(m, "f", [a, b], backend="reference")
    np.testing.assert_allclose(ref, np.einsum("bmk,bkn->bmn", a, b), rtol=1e-4, atol=1e-4)
    (y,), stats = run_function(m, "f", [a, b], backend="ila")
    assert stats.invocations == {"vta": 4}
    # int8 operands (spec 4.4): each batch within a few percent of the float product
    for i in range(4):
        want = a[i] @ b[i]
        assert np.linalg.norm(y[i] - want) / np.linalg.norm(want) < 0.05


def test_lstm_cell_from_torch_mlir_maps_to_one_flexasr_lstm_in_flexible_mode():
    """torch's nn.LSTMCell as torch-mlir writes it: fused-gate GEMMs, column slices, sigmoid as 1/(1+exp(-x))."""
    torch = __import__("pytest").importorskip("torch")
    fx = __import__("pytest").importorskip("torch_mlir.fx")
    import warnings

    torch.manual_seed(0)
    cell = torch.nn.LSTMCell(64, 64).eval()

    class Cell(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = cell

        def forward(self, x, h, c):
            return self.c(x, (h, c))

    rng = np.random.default_rng(1)
    x, h, c = (rng.standard_normal((1, 64)).astype(np.float32) for _ in range(3))
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(Cell(), *(torch.from_numpy(v) for v in (x, h, c)),
                                        output_type="linalg-on-tensors", func_name="f"))
        h_ref, c_ref = (t.numpy() for t in cell(torch.from_numpy(x), (torch.from_numpy(h), torch.from_numpy(c))))
    assert "math.exp" in text and "tensor.extract_slice" in text  # the real form, not tosa.sigmoid
    assert not [op for op in _isel(text, ("flexasr",), "exact").walk() if isinstance(op, InvokeOp)]
    m = _isel(text, ("flexasr",), "flexible")
    inv = [op for op in m.walk() if isinstance(op, InvokeOp)]
    assert [op.callee.data for op in inv] == ["flexasr.lstm"]
    (h_ila, c_ila), stats = run_function(m, "f", [x, h, c], backend="ila")
    assert stats.invocations == {"flexasr": 1}
    # AdaptivFloat<8,3> operands and PWL sigmoid/tanh: within 10% of torch (spec 4.1-4.2)
    assert np.linalg.norm(h_ila - h_ref) / np.linalg.norm(h_ref) < 0.1
    assert np.linalg.norm(c_ila - c_ref) / np.linalg.norm(c_ref) < 0.1
    (h_host, c_host), _ = run_function(m, "f", [x, h, c], backend="reference")
    np.testing.assert_allclose(h_host, h_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c_host, c_ref, rtol=1e-4, atol=1e-5)


HOST_CONVS = """
func.func @f(%x: tensor<1x8x34x34xf32>, %w: tensor<8x8x3x3xf32>, %d: tensor<8x3x3xf32>) -> (tensor<1x8x32x32xf32>, tensor<1x8x32x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x8x32x32xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x8x34x34xf32>, tensor<8x8x3x3xf32>) outs(%z : tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  %g = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %d : tensor<1x8x34x34xf32>, tensor<8x3x3xf32>) outs(%z : tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  func.return %c, %g : tensor<1x8x32x32xf32>, tensor<1x8x32x32xf32>
}
"""


def test_convs_left_on_the_host_get_a_remark_saying_why(tmp_path, step_opt):
    src = tmp_path / "convs.mlir"
    src.write_text(HOST_CONVS)
    r = step_opt([str(src), "-p", "isel{targets=hlscnn mode=exact}", "-o", str(tmp_path / "out.mlir")])
    assert r.code == 0
    # 8 filters x 34x34 input pixels x 16 B = 147968 B > HLSCNN's 128 KiB SPAD1 (spec 2.1)
    assert ("convs.mlir:6:3: remark: isel: 'linalg.conv_2d_nchw_fchw' stays on the host: HLSCNN's output "
            "scratchpad needs K*H*W*16 = 147968 B > 128 KiB") in r.err
    assert ("convs.mlir:7:3: remark: isel: 'linalg.depthwise_conv_2d_nchw_chw' stays on the host: no target has "
            "a grouped (depthwise) convolution") in r.err
