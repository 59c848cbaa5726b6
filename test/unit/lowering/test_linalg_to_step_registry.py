"""convert-linalg-to-step reads the op-semantics registry (dialects/semantics): a linalg.generic
body op lowers to the step library function its registry kind names, and an op whose kind has no
library function is a located error naming it (math.sqrt: there is no `sqrt` step function)."""

from __future__ import annotations

from xdsl.dialects import arith, math

from steplus.dialects.semantics.arith import FLOAT_BINARY, UNARY
from steplus.dialects.step.functions import get_function
from steplus.lowering.linalg_to_step.body import BODY

SQRT_BODY = """func.func @f(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sqrt %a : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  func.return %r : tensor<16x64xf32>
}
"""


def test_body_ops_are_the_registry_kinds_that_name_a_library_function():
    for cls, kind in BODY.items():
        assert kind == "pow" or get_function(kind) is not None, cls.name
        assert kind == "pow" or {**FLOAT_BINARY, **UNARY}[cls] in (kind, {"max": "maxnum", "min": "minnum"}.get(kind))
    assert BODY[arith.DivfOp] == "div" and BODY[math.ExpOp] == "exp" and BODY[arith.MaxnumfOp] == "max"
    assert math.SqrtOp not in BODY and math.LogOp not in BODY  # no step function to lower to


def test_a_body_op_without_a_library_function_is_a_located_error(tmp_path, step_opt):
    f = tmp_path / "sqrt.mlir"
    f.write_text(SQRT_BODY)
    r = step_opt([str(f), "-p", "convert-linalg-to-step", "-o", "/dev/null"])
    assert r.code == 1
    assert "'math.sqrt' in a linalg.generic body has no step library function" in r.err
    assert r.err.startswith(f"{f}:3:")
