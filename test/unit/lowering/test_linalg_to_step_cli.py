"""`step-run FILE --lower OPTIONS`: a linalg file lowered by convert-linalg-to-step and
simulated (issue 18 item 5); without --lower step-run names the flag."""

from __future__ import annotations

import pytest

from conftest import REPO, run_tool
from golden import SWIGLU_HDL_CYCLES

LINALG = REPO / "examples" / "linalg"


def _step_run(argv):
    from steplus.tools.step_run import main

    return run_tool(main, argv)


def test_step_run_lowers_and_simulates_a_linalg_file():
    # the lowered graph is op for op the reference swiglu_tm32_tn128 graph
    # (test_linalg_to_step), so it simulates to that graph's cycles on swiglu-hdl
    r = _step_run([str(LINALG / "swiglu_ffn.mlir"), "--lower", 'tile="32x128" schedule="mn_mk"',
                   "--preset", "swiglu-hdl", "--json"])
    assert r.code == 0, r.err
    import json

    metrics = json.loads(r.out)
    assert metrics["cycles"] == SWIGLU_HDL_CYCLES[(32, 128)]
    # spec §5.5, nb = 4: X per N tile (F/tn = 4), 3 weights per M tile (B/tm = 2), output
    B, D, F = 64, 256, 512
    assert metrics["offchip_traffic_bytes"] == 4 * B * D * 4 + 3 * 4 * D * F * 2 + 4 * B * D


def test_a_linalg_file_without_lower_names_the_flag():
    path = str(LINALG / "swiglu_ffn_small.mlir")
    r = _step_run([path])
    assert r.code == 2 and r.out == ""
    assert r.err.startswith(f"step-run: error: {path} is a tensor program (func.func on "
                            "tensors), not a step graph: lower it with --lower ")
    assert r.err.count("\n") == 1


@pytest.mark.parametrize("argv,code,first", [
    (['--lower', 'tile="3x8"'], 1, "swiglu_ffn_small.mlir:10:5: error: linalg.matmul #0: tile "
                                  "size 3 does not divide M=8 (option tile; padding is not "
                                  "supported)"),
    (['--lower', 'tile="4x8"', '--ticks', '3'], 2,
     "step-run: error: --ticks does not apply with --lower: the lowered step graph runs on "
     "the fabric simulator"),
    (['--lower', 'tile="4x8"', '--backend', 'ila'], 2,
     "step-run: error: --backend does not apply with --lower: the lowered step graph runs on "
     "the fabric simulator"),
    (['--lower', 'tile="4x8"}{'], 2, "step-run: error: --lower takes convert-linalg-to-step "
                                     "options (tile=... schedule=... memory=...), got "
                                     "'tile=\"4x8\"}{'"),
])
def test_bad_lower_requests_are_one_line_errors(argv, code, first):
    r = _step_run([str(LINALG / "swiglu_ffn_small.mlir"), *argv])
    assert r.code == code and r.out == ""
    assert r.err.splitlines()[0].endswith(first)


def test_step_run_lowers_torch_mlirs_rmsnorm():
    """The RMSNorm of the forms FileCheck test (torch-mlir's linalg) through step-run:
    its traffic is x twice, w per row tile, the f32 result: 4 (2MN + (M/tm) N + MN)."""
    import json

    forms = (REPO / "test" / "filecheck" / "lowering" / "convert-linalg-to-step-forms.mlir")
    chunk = next(c for c in forms.read_text().split("// -----") if "func.func @rms" in c)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "rms.mlir"
        path.write_text(chunk)
        r = _step_run([str(path), "--lower", 'tile="2x8"', "--json"])
    assert r.code == 0, r.err
    M, N, tm = 8, 16, 2
    assert json.loads(r.out)["offchip_traffic_bytes"] == 4 * (2 * M * N + (M // tm) * N + M * N)


def _blob(a) -> str:
    """A `dialect_resources` blob as torch-mlir writes it: the alignment word 4, then the
    little-endian f32 values."""
    import numpy as np

    return "0x04000000" + np.asarray(a, "<f4").tobytes().hex()


def _linear_file(path, w, b) -> None:
    """`nn.Linear(4, 3)` on `[2, 4]` as torch-mlir's linalg: the weight and bias are
    `dense_resource` constants, the weight transposed by `linalg.transpose`."""
    path.write_text(f"""func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {{
  %w = arith.constant dense_resource<torch_tensor_3_4_torch.float32> : tensor<3x4xf32>
  %b = arith.constant dense_resource<torch_tensor_3_torch.float32> : tensor<3xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x3xf32>
  %t = linalg.transpose ins(%w : tensor<3x4xf32>) outs(%0 : tensor<4x3xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2x3xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = linalg.matmul ins(%arg0, %t : tensor<2x4xf32>, tensor<4x3xf32>) outs(%2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins(%3, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%1 : tensor<2x3xf32>) {{
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.addf %in, %in_0 : f32
    linalg.yield %5 : f32
  }} -> tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}}

{{-#
  dialect_resources: {{
    builtin: {{
      torch_tensor_3_4_torch.float32: "{_blob(w)}",
      torch_tensor_3_torch.float32: "{_blob(b)}"
    }}
  }}
#-}}
""")


def test_step_run_lower_input_reads_dense_resource_weights(tmp_path):
    """`--lower --input` binds the file's `dense_resource` parameters from their blobs:
    only the real input is given, the output is x W^T + b (numpy)."""
    import numpy as np

    rng = np.random.default_rng(0)
    w, b, x = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (3,), (2, 4)))
    path = tmp_path / "linear.mlir"
    _linear_file(path, w, b)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npy"
    r = _step_run([str(path), "--lower", 'tile="2x3x4"', "--input", f"arg0={tmp_path}/x.npy",
                   "--output", str(out)])
    assert r.code == 0, r.err
    np.testing.assert_allclose(np.load(out), x.astype(np.float64) @ w.T + b, rtol=1e-6)


def test_step_run_lower_functional_loads_the_constants(tmp_path):
    """`--lower --functional`: the constants' loads get their blob values (the argument
    is seeded random); the bound tensors are the weight (read transposed) and the bias."""
    import numpy as np
    from xdsl.parser import Parser

    from steplus.lowering.linalg_to_step import lower_module
    from steplus.tools.loading import new_context
    from steplus.tools.step_run_linalg import bind_constants

    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(
        np.float32)
    path = tmp_path / "linear.mlir"
    _linear_file(path, w, b)
    r = _step_run([str(path), "--lower", 'tile="2x3x4"', "--functional", "--json"])
    assert r.code == 0, r.err
    ctx = new_context()
    module = Parser(ctx, path.read_text()).parse_module()
    (low,) = lower_module(module, tile="2x3x4", ctx=ctx)
    bound = bind_constants(module, low)
    assert len(bound) == 2  # x (arg0) is not a constant: left to the random inputs
    got = sorted(bound.values(), key=lambda a: a.size)
    np.testing.assert_array_equal(got[0].ravel(), b)
    np.testing.assert_array_equal(np.sort(got[1].ravel()), np.sort(w.ravel()))


def test_step_run_lower_functional_error_is_located(tmp_path):
    import numpy as np

    path = tmp_path / "linear.mlir"
    _linear_file(path, np.zeros((3, 4)), np.zeros(3))
    r = _step_run([str(path), "--lower", 'tile="2x2x4"', "--functional"])
    assert r.code == 1 and r.out == ""
    assert r.err.splitlines()[0] == (f"{path}:9:3: error: linalg.matmul #0: tile size 2 does "
                                     "not divide N=3 (option tile; padding is not supported)")
