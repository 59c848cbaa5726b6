"""isel-verify proves the mappings and catches a wrong accelerator specification."""

import re

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


def test_time_budget_bounds_the_symbolic_evaluation(step_opt):
    """issue 24: isel-verify on the shipped im2col example ran for minutes inside the symbolic
    evaluation of its 16x16x3x3 convolution, which no clock bounded.  The budget now covers it:
    a clear "not proven within" warning naming where the time ran out, exit 0."""
    f = REPO / "examples" / "isel" / "conv_im2col.mlir"
    r = step_opt([str(f), "-p", "isel-verify{timeout-ms=300}", "-o", "/dev/null"])
    assert r.code == 0
    assert r.err.splitlines()[0] == (
        f"{f}:2:1: warning: isel-verify: @conv: not proven within timeout-ms=300 (the time ran out while "
        "evaluating the input program symbolically, op 2 of 3 ('linalg.conv_2d_nchw_fchw')); raise "
        "isel-verify{timeout-ms=...} or verify at smaller shapes")


def _pool_pair(tmp_path):
    from steplus.passes.isel import select_function

    f = tmp_path / "pool.mlir"
    f.write_text(POOL)
    fn = next(op for op in load_module(str(f)).walk() if op.name == "func.func")
    sel = fn.clone()
    select_function(sel, ("flexasr",), True)
    return fn, sel


def test_time_budget_bounds_the_queries_and_progress_is_reported(tmp_path):
    """A spent budget leaves every differing output unchecked ("with 0 of the N ... checked"),
    and the progress lines (every `every` seconds, here every call) say how far the proof is."""
    import io
    import time

    from steplus.passes.isel.equivalence import Progress, prove

    fn, sel = _pool_pair(tmp_path)
    verdict, n = prove(fn, sel, "uf", deadline=time.monotonic())
    assert (verdict.status, n, verdict.queries) == ("unknown", 16, 0)
    assert re.fullmatch(r"the time ran out with 0 of the (\d+) outputs that differ as terms checked \(0 z3 queries\)",
                        verdict.reason)
    out = io.StringIO()
    verdict, n = prove(fn, sel, "uf", progress=Progress("pool", every=0.0, stream=out))
    assert verdict.status == "unsat"
    lines = out.getvalue().splitlines()
    assert lines and all(re.fullmatch(r"isel-verify: @pool: progress after \d+ s: \d+ of \d+ differing outputs "
                                      r"checked \(\d+ z3 queries\)", ln) for ln in lines)
    assert re.search(r": 0 of \d+ differing outputs checked \(0 z3 queries\)$", lines[0])
