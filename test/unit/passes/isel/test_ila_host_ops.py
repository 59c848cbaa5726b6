"""numpy semantics of the ops real frontends emit (the op-semantics table, dialects/semantics/), each
checked against torch or numpy written independently of the implementation."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.host import run_function
from steplus.tools.registry import get_all_dialects

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _parse(text: str):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    return Parser(ctx, text).parse_module()


def _run(text: str, *args):
    (y, *_), _ = run_function(_parse(text), "f", [np.asarray(a, np.float32) for a in args], backend="reference")
    return y


RNG = np.random.default_rng(7)


def _r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _t(x):
    return torch.from_numpy(np.asarray(x, np.float32))


def test_pad_expand_collapse():
    x = _r(1, 2, 3, 3)
    y = _run("""
func.func @f(%x: tensor<1x2x3x3xf32>) -> tensor<2x25xf32> {
  %c = arith.constant 2.5 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %d: index, %e: index):
    tensor.yield %c : f32
  } : tensor<1x2x3x3xf32> to tensor<1x2x5x5xf32>
  %k = tensor.collapse_shape %p [[0, 1], [2, 3]] : tensor<1x2x5x5xf32> into tensor<2x25xf32>
  %e2 = tensor.expand_shape %k [[0], [1, 2]] output_shape [2, 5, 5] : tensor<2x25xf32> into tensor<2x5x5xf32>
  %k2 = tensor.collapse_shape %e2 [[0], [1, 2]] : tensor<2x5x5xf32> into tensor<2x25xf32>
  func.return %k2 : tensor<2x25xf32>
}""", x)
    np.testing.assert_array_equal(y, F.pad(_t(x), (1, 1, 1, 1), value=2.5).reshape(2, 25).numpy())


def test_insert_slice_and_broadcast():
    x, d = _r(2, 3), _r(4, 5)
    y = _run("""
func.func @f(%x: tensor<2x3xf32>, %d: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = tensor.insert_slice %x into %d[1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}""", x, d)
    want = d.copy()
    want[1:3, 2:5] = x
    np.testing.assert_array_equal(y, want)
    b = _r(3)
    y = _run("""
func.func @f(%b: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %r = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<2x3x4xf32>) dimensions = [0, 2]
  func.return %r : tensor<2x3x4xf32>
}""", b)
    np.testing.assert_array_equal(y, np.broadcast_to(b[None, :, None], (2, 3, 4)))


def test_batch_matmul_accumulates_into_its_init():
    a, b, c = _r(3, 4, 5), _r(3, 5, 2), _r(3, 4, 2)
    y = _run("""
func.func @f(%a: tensor<3x4x5xf32>, %b: tensor<3x5x2xf32>, %c: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x4x5xf32>, tensor<3x5x2xf32>) outs(%c : tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  func.return %r : tensor<3x4x2xf32>
}""", a, b, c)
    np.testing.assert_allclose(y, (torch.bmm(_t(a), _t(b)) + _t(c)).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_conv_matches_torch_grouped_conv(stride):
    x, w = _r(1, 4, 7, 7), _r(4, 3, 3)
    o = (7 - 3) // stride + 1
    y = _run(f"""
func.func @f(%x: tensor<1x4x7x7xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x{o}x{o}xf32> {{
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x{o}x{o}xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<1x4x{o}x{o}xf32>) -> tensor<1x4x{o}x{o}xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {{dilations = dense<1> : vector<2xi64>, strides = dense<{stride}> : vector<2xi64>}} ins(%x, %w : tensor<1x4x7x7xf32>, tensor<4x3x3xf32>) outs(%z : tensor<1x4x{o}x{o}xf32>) -> tensor<1x4x{o}x{o}xf32>
  func.return %r : tensor<1x4x{o}x{o}xf32>
}}""", x, w)
    want = F.conv2d(_t(x), _t(w)[:, None], stride=stride, groups=4).numpy()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_conv1d_and_biased_conv2d():
    x, w, b = _r(1, 3, 6), _r(2, 3, 2), _r(1, 2, 5)
    y = _run("""
func.func @f(%x: tensor<1x3x6xf32>, %w: tensor<2x3x2xf32>, %b: tensor<1x2x5xf32>) -> tensor<1x2x5xf32> {
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%x, %w : tensor<1x3x6xf32>, tensor<2x3x2xf32>) outs(%b : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  func.return %r : tensor<1x2x5xf32>
}""", x, w, b)
    np.testing.assert_allclose(y, (F.conv1d(_t(x), _t(w)) + _t(b)).numpy(), rtol=1e-5, atol=1e-5)


def test_pooling_max_and_sum():
    x = _r(1, 2, 6, 6)
    text = """
func.func @f(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %c = arith.constant INIT : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %r = linalg.OP {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %r : tensor<1x2x3x3xf32>
}"""
    y = _run(text.replace("INIT", "-3.0e+38").replace("OP", "pooling_nchw_max"), x)
    np.testing.assert_array_equal(y, F.max_pool2d(_t(x), 2).numpy())
    y = _run(text.replace("INIT", "0.0").replace("OP", "pooling_nchw_sum"), x)
    np.testing.assert_allclose(y, 4 * F.avg_pool2d(_t(x), 2).numpy(), rtol=1e-5, atol=1e-6)


def test_generic_embedding_lookup_with_index_and_extract():
    table = _r(5, 3)
    ids = np.array([[4], [0], [2]], np.int64)
    text = """
#m0 = affine_map<(d0, d1, d2) -> (d0, d1)>
#m1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @f(%ids: tensor<3x1xi64>, %t: tensor<5x3xf32>) -> tensor<3x1x3xf32> {
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<3x1x3xf32>
  %r = linalg.generic {indexing_maps = [#m0, #m1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<3x1xi64>) outs(%e : tensor<3x1x3xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %ok = arith.cmpi slt, %i, %c5 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %t[%i, %j] : tensor<5x3xf32>
    linalg.yield %v : f32
  } -> tensor<3x1x3xf32>
  func.return %r : tensor<3x1x3xf32>
}"""
    (y,), _ = run_function(_parse(text), "f", [ids, table], backend="reference")
    np.testing.assert_array_equal(y, F.embedding(torch.from_numpy(ids), _t(table)).numpy())


def test_generic_max_with_unused_argmax_and_constant_map():
    x = _r(2, 4)
    text = """
#m0 = affine_map<(d0, d1) -> (d0, d1)>
#m1 = affine_map<(d0, d1) -> (d0)>
#m2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %ei = tensor.empty() : tensor<2xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2xi64>) -> tensor<2xi64>
  %r:2 = linalg.generic {indexing_maps = [#m0, #m1, #m1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x4xf32>) outs(%m0, %i0 : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %out: f32, %oi: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %mx = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %s = arith.select %gt, %ki, %oi : i64
    linalg.yield %mx, %s : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  %m = tensor.expand_shape %r#0 [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  %o = tensor.empty() : tensor<2x4xf32>
  %d = linalg.generic {indexing_maps = [#m0, #m2, #m0], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<2x4xf32>, tensor<2x1xf32>) outs(%o : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  func.return %d : tensor<2x4xf32>
}"""
    np.testing.assert_array_equal(_run(text, x), x - x.max(axis=1, keepdims=True))


def test_dense_resource_constant_is_read_from_the_blob():
    vals = np.array([1.5, -2.0, 0.25], np.float32)
    blob = "0x04000000" + vals.tobytes().hex().upper()
    text = f"""
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %c = arith.constant dense_resource<h5_test_blob> : tensor<3xf32>
  %y = tosa.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
      h5_test_blob: "{blob}"
    }}
  }}
#-}}
"""
    x = _r(3)
    for _ in range(2):  # a second parse of the same text keeps the link (xDSL renamed the key)
        np.testing.assert_array_equal(_run(text, x), x + vals)


def test_tosa_transpose_slice_conv():
    x = _r(1, 5, 5, 2)
    w, b = _r(3, 3, 3, 2), _r(3)
    text = """
func.func @f(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>) -> tensor<1x3x5x5xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %z, %z {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x5x5x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x5x3xf32>
  %t = tosa.transpose %c {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x5x5x3xf32>) -> tensor<1x3x5x5xf32>
  func.return %t : tensor<1x3x5x5xf32>
}"""
    y = _run(text, x, w, b)
    want = F.conv2d(_t(x).permute(0, 3, 1, 2), _t(w).permute(0, 3, 1, 2), _t(b), padding=1).numpy()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_unknown_body_op_is_a_located_error():
    text = """
#m0 = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %e = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#m0, #m0], iterator_types = ["parallel"]} ins(%x : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.atan %in : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}"""
    with pytest.raises(IlaError, match="no numpy semantics for 'math.atan'") as e:
        _run(text, _r(3))
    assert e.value.op is not None and e.value.op.name == "linalg.generic"


def test_tosa_batched_matmul_and_reduce_all():
    a, b = _r(2, 3, 4), _r(2, 4, 5)
    text = """
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.matmul %a, %b, %z, %z : (tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x5xf32>
  func.return %c : tensor<2x3x5xf32>
}"""
    np.testing.assert_allclose(_run(text, a, b), torch.bmm(_t(a), _t(b)).numpy(), rtol=1e-5, atol=1e-5)
    x = np.array([[1.0, 0.0], [2.0, 3.0]], np.float32)
    text = """
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x1xi1> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %g = tosa.greater %x, %z : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
  %r = tosa.reduce_all %g {axis = 1 : i32} : (tensor<2x2xi1>) -> tensor<2x1xi1>
  func.return %r : tensor<2x1xi1>
}"""
    np.testing.assert_array_equal(_run(text, x), [[False], [True]])
