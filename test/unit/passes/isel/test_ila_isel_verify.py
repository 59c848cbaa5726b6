"""isel-verify proves the mappings and catches a wrong accelerator specification."""

import numpy as np
import pytest

from conftest import REPO
from steplus.passes.isel import symbolic as S
from steplus.tools.cli import InputError
from steplus.tools.loading import load_module

SMALL = str(REPO / "test" / "filecheck" / "passes" / "inputs" / "isel-small.mlir")
POOL = """
func.func @pool(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %y : tensor<1x4x4x1xf32>
}
"""


def test_pool_mapping_proven(tmp_path, step_opt):
    """A proof, not just no counterexample: z3 says unsat (an `unknown` would be a
    warning and exit 0 too) for the D2A §5.1 mapping, four temporal FlexASR pools
    (the 16 window rows halved to 1), on all 1x4x4x1 = 16 outputs."""
    f = tmp_path / "pool.mlir"
    f.write_text(POOL)
    r = step_opt([str(f), "-p", "isel-verify{targets=flexasr}", "-o", "/dev/null"])
    assert r.code == 0
    assert r.err.splitlines()[0] == (
        f"{f}:2:1: remark: isel-verify: @pool: 4 invocations (flexasr=4) equivalent to "
        "the input on all 16 outputs (z3: unsat)")


def test_wrong_spec_gives_counterexample(tmp_path, monkeypatch):
    f = tmp_path / "pool.mlir"
    f.write_text(POOL)
    real = S.accel_spec

    def wrong(callee, args, attrs):
        if callee == "flexasr.maxpool":  # forgets the odd timestep
            a = args[0]
            return a[0:2 * (a.shape[0] // 2):2].copy()
        return real(callee, args, attrs)

    monkeypatch.setattr(S, "accel_spec", wrong)
    with pytest.raises(InputError) as e:
        load_module(str(f), "isel-verify{targets=flexasr}")
    assert "selected program differs from the input (z3: sat)" in "\n".join(e.value.lines)


def test_bv_mode_sums_wrap_exactly():
    ctx = S.Ctx("bv")
    a, b = S.tensor(ctx, "a", (1, 2)), S.tensor(ctx, "b", (2, 1))
    y = S.matmul(a, b)[0, 0]
    assert str(y.t) == "a_0*b_0 + a_1*b_1"
