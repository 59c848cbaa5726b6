"""Tensor constants (issue 26 item 1): torch-mlir puts a module's parameters and buffers in
`arith.constant dense_resource<...>` (and small ones in `dense<...>`);
`convert-linalg-to-step` makes each an off-chip tensor, numbered after the function's
arguments in the memory layout (`memory=argN=` places it), its values carried in
`Lowered.constants`, so `run_function` needs only the real inputs; a constant of equal
values that initializes a matmul or a reduction is a fill (no load). A missing blob is a
located error."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from steplus.dialects.step import ops as so
from steplus.lowering.linalg_to_step import lower_module
from steplus.tools.loading import new_context
from steplus.tools.step_run_linalg import run_function
from steplus.utils.diagnostics import OpDiagnosticError


def _lower(text: str, **kw):
    ctx = new_context()
    module = Parser(ctx, text).parse_module()
    (low,) = lower_module(module, ctx=ctx, **kw)
    return module, low


def _loads(module) -> list:
    return [o for o in module.walk() if isinstance(o, so.LinearOffChipLoadOp)]


@pytest.fixture(scope="module")
def mlp_import():
    """A module with parameters and a zero buffer, through torch-mlir's FX importer."""
    torch = pytest.importorskip("torch")
    fx = pytest.importorskip("torch_mlir.fx")
    import warnings

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 4)
            self.register_buffer("bias0", torch.zeros(4, 4))

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x))) + self.bias0

    torch.manual_seed(0)
    m = MLP().eval()
    x = torch.randn(4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(m, x, output_type="linalg-on-tensors", func_name="mlp"))
    return m(x).detach().numpy(), x.numpy(), text


def test_parameters_are_off_chip_tensors_with_their_values(mlp_import):
    expected, x, text = mlp_import
    assert "dense_resource" in text
    module, low = _lower(text, tile="4x4x8")
    # one argument (x) and five constants (buffer, two weights, two biases) after it
    assert sorted(low.constants) == [1, 2, 3, 4, 5]
    assert sorted(low.addresses) == ["arg0", "arg1", "arg2", "arg3", "arg4", "arg5",
                                     "result0"]
    (got,) = run_function(module, low, [x])  # only the real input: the weights are carried
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_a_constant_is_placed_by_the_memory_option(mlp_import):
    _expected, _x, text = mlp_import
    module, low = _lower(text, tile="4x4x8", memory="arg3=0x80000000")
    assert low.addresses["arg3"] == 0x80000000
    assert any(o.base_addr.value.data == 0x80000000 for o in _loads(module))


SPLAT = """func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 8.0]]> : tensor<8x8xf32>
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
"""


def test_a_splat_zero_init_is_a_fill_and_dense_values_load():
    module, low = _lower(SPLAT, tile="4x8x8")
    a = np.arange(32, dtype=np.float64).reshape(4, 8)
    (got,) = run_function(module, low, [a])
    np.testing.assert_array_equal(got, a * np.arange(1, 9))
    # a and the weight are loaded; the zero splat only initializes the accumulator
    assert [arg for arg, _view in low.loads] == [0, 1]
    np.testing.assert_array_equal(low.constants[2], np.zeros((4, 8)))


def test_a_missing_resource_blob_is_a_located_error():
    text = """func.func @f(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense_resource<missing_blob> : tensor<4x4xf32>
  %z0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%z0 : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
"""
    with pytest.raises(OpDiagnosticError, match="dense_resource<missing_blob> has no blob"):
        _lower(text, tile="2x4x4")


@pytest.fixture(scope="module")
def block_import():
    """A ViT-style MLP block with a ReLU6 head and softmax, through torch-mlir: its
    parameters are dense_resource constants, ReLU6 a select against 0-D constants,
    LayerNorm's statistics computed in f64."""
    torch = pytest.importorskip("torch")
    fx = pytest.importorskip("torch_mlir.fx")
    import warnings

    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)
            self.norm, self.head, self.head_act = nn.LayerNorm(16), nn.Linear(16, 8), nn.ReLU6()

        def forward(self, x):
            h = self.norm(self.fc2(self.act(self.fc1(x))) + x)
            return self.head_act(self.head(h) * 4).softmax(dim=-1)

    torch.manual_seed(2)
    m = Block().eval()
    x = torch.randn(8, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(m, x, output_type="linalg-on-tensors", func_name="blk"))
    return m(x).detach().numpy(), x.numpy(), text


def test_torch_mlir_block_lowers_and_equals_torch(block_import):
    expected, x, text = block_import
    assert "tensor<f32>" in text and "f64" in text  # the forms this test is about
    module, low = _lower(text, tile="8x32x16")
    (got,) = run_function(module, low, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    fns = {a.fn.data for a in module.walk() if isinstance(a, so.ApplyOp)}
    assert {"gelu", "max_scalar[0.0]", "min_scalar[6.0]", "rsqrt", "row_max"} <= fns


SPLAT_DATA = """func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %h = arith.constant dense<0.5> : tensor<8xf32>
  %c = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %two = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %1 = arith.maximumf %in, %in_0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %h, %two : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
    %3 = arith.subf %in, %in_0 : f32
    %4 = arith.mulf %in_1, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""


def test_a_splat_or_fill_read_as_data_is_a_scalar_of_the_body():
    """`max(x, zeros)` (torch's relu against a zero tensor), `x - full(0.5)` and `2 * x`
    with the 2 a linalg.fill: no load of the constants, no tile stream of them: the
    operations take them as scalars (`max_scalar[0.0]`, `sub_scalar[0.5]`,
    `mul_scalar[2.0]`)."""
    module, low = _lower(SPLAT_DATA, tile="4x8")
    a = np.linspace(-2, 2, 32).reshape(4, 8)
    (got,) = run_function(module, low, [a])
    np.testing.assert_allclose(got, 2 * (np.maximum(a, 0) - 0.5), rtol=1e-7)
    assert [arg for arg, _view in low.loads] == [0]  # only a
    fns = [x.fn.data for x in module.walk() if isinstance(x, so.ApplyOp)]
    assert fns == ["max_scalar[0.0]", "sub_scalar[0.5]", "mul_scalar[2.0]"]
