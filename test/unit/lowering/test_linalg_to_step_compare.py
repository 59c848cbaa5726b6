"""The library's compares (`eq`/`ne`/`lt`/`le`/`gt`/`ge` of two tiles, `eq_scalar[c]`, ...):
a 0/1 mask in the tile's dtype, against numpy's comparison; and `convert-linalg-to-step`
reading a 0/1 mask of an `arith.cmpf` in a `linalg.generic` body (`arith.uitofp`, `arith.select`
of 1.0 and 0.0, either way round; a constant on either side) into them, run on the fabric's
functional mode against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.step.ops.compute import ApplyOp
from steplus.dialects.step.functions import all_families, get_function
from steplus.lowering.linalg_to_step import lower_module
from steplus.tools.loading import load_module
from steplus.tools.step_run_linalg import run_function

RNG = np.random.default_rng(7)
A = RNG.integers(-2, 3, (4, 8)).astype(np.float32)  # small integers: equal elements occur
B = RNG.integers(-2, 3, (4, 8)).astype(np.float32)
REL = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("name", sorted(REL))
def test_compare_functions_are_a_mask_in_the_tile_dtype(name):
    f = get_function(name)
    got = f.numpy(A, B)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.where(REL[name](A, B), 1.0, 0.0))
    col = B[:, :1]
    np.testing.assert_array_equal(f.numpy(A, col), np.where(REL[name](A, col), 1.0, 0.0))
    assert f.out_shape([(4, 8), (4, 1)]) == (4, 8)
    assert f.flops([(4, 8), (4, 1)]) == 32  # one per output element
    s = get_function(f"{name}_scalar[1.0]")
    np.testing.assert_array_equal(s.numpy(A), np.where(REL[name](A, 1.0), 1.0, 0.0))
    assert s.flops([(4, 8)]) == 32 and s.out_shape([(4, 8)]) == (4, 8)
    assert f"{name}_scalar" in all_families()


BODY = """#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @mask(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1.000000e+00 : f32
  %c = arith.constant 5.000000e-01 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %2 = arith.cmpf ogt, %x, %c : f32
    %3 = arith.select %2, %c1, %c0 : f32
    %4 = arith.cmpf oeq, %x, %y : f32
    %5 = arith.uitofp %4 : i1 to f32
    %6 = arith.cmpf olt, %c, %y : f32
    %7 = arith.select %6, %c0, %c1 : f32
    %8 = arith.mulf %5, %7 : f32
    %9 = arith.addf %3, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"""  # (x > 0.5) + (x == y) * !(0.5 < y)


def test_a_cmpf_mask_in_a_body_is_the_librarys_compares(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(BODY)
    module = load_module(str(path), None, False)
    (low,) = lower_module(module, tile="2x8x8", schedule="mnk")
    names = sorted(o.fn.data for o in module.walk() if isinstance(o, ApplyOp))
    # 0.5 < y selected to 0: y <= 0.5
    assert names == ["add", "eq", "gt_scalar[0.5]", "le_scalar[0.5]", "mul"]
    x, y = A, B
    (got,) = run_function(module, low, [x, y])
    want = (x > 0.5) + (x == y) * (y <= 0.5)
    np.testing.assert_array_equal(got, want.astype(np.float64))
