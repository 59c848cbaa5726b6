"""`terms.gemm_guard_failures` states the guards of the e-graph's GEMM rules (vta.dense, FlexASR's
linear layer) again in Python, for isel's host remarks and `bench/isel_models.py --explain`: here a
dense of each shape goes through isel, and it is offloaded exactly when the Python guards hold."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.passes.isel import IselPass
from steplus.passes.isel.terms import gemm_guard_failures
from steplus.tools.registry import get_all_dialects
from steplus.utils.diagnostics import collecting_diagnostics


def _dense(m: int, k: int, n: int) -> str:
    """torch's `x @ w.T` as torch-mlir writes it (Relay's nn.dense)."""
    return f"""
func.func @f(%a: tensor<{m}x{k}xf32>, %w: tensor<{n}x{k}xf32>) -> tensor<{m}x{n}xf32> {{
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<{k}x{n}xf32>
  %wt = linalg.transpose ins(%w : tensor<{n}x{k}xf32>) outs(%e : tensor<{k}x{n}xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<{m}x{n}xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %s = linalg.matmul ins(%a, %wt : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%z : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  func.return %s : tensor<{m}x{n}xf32>
}}
"""


def _isel(text: str, target: str, mode: str):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, text).parse_module()
    with collecting_diagnostics() as engine:
        IselPass(targets=(target,), mode=mode).apply(ctx, module)
    callees = [op.callee.data for op in module.walk() if op.name == "ila.invoke"]
    return callees, [d.message for d in engine.diagnostics if d.severity == "remark"]


# (m, k, n) and the guard each breaks (VTA: 16x16 blocks; a dense past the 2048x16 input and accumulator
# rows or the 1023 weight blocks runs as tiled programs over m and n, but K is not split: K/16 <= 1023;
# FlexASR: in <= 16 x 255 = 4080, one PE's input; the driver pads in to % 16 and out to % 64 and tiles
# rows and outputs past one call's buffers)
VTA_CASES = [((16, 32, 16), []), ((8, 32, 16), ["m = 8 % 16 != 0"]), ((16, 24, 16), ["k = 24 % 16 != 0"]),
             ((16, 32, 24), ["n = 24 % 16 != 0"]),
             ((2048, 32, 16), []),     # m*k = 65536 > the input buffer's 2048x16: tiled over m
             ((16, 2048, 256), []),    # n*k = 524288 > 1023 weight blocks of 16x16: tiled over n
             ((2048, 16, 32), []),     # m*n = 65536 > the accumulator's 2048x16: tiled over m
             ((16, 16 * 1023, 16), []),
             ((16, 16 * 1024, 16), ["k = 16384 > one block column of 1023 weight blocks of 16x16"])]
FLEXASR_CASES = [((16, 64, 64), []), ((16, 8, 64), []), ((16, 64, 96), []), ((3, 27, 10), []),
                 ((1, 4080, 64), []), ((1, 64, 4096), []),
                 ((1, 4096, 64), ["in = 4096 > 4080 (255 vectors of a PE's input)"])]


@pytest.mark.parametrize(("shape", "fails"), VTA_CASES)
def test_vta_dense_is_offloaded_exactly_when_the_python_guards_hold(shape, fails):
    assert gemm_guard_failures("vta", *shape) == fails
    callees, remarks = _isel(_dense(*shape), "vta", "exact")  # a dense is VTA's exact pattern
    assert callees == ([] if fails else ["vta.dense"])
    if fails:
        m, k, n = shape
        assert remarks == [f"isel: 'linalg.matmul' stays on the host: [{m}, {k}] x [{k}, {n}] fails vta: {fails[0]}"]


@pytest.mark.parametrize(("shape", "fails"), FLEXASR_CASES)
def test_flexasr_linear_is_offloaded_exactly_when_the_python_guards_hold(shape, fails):
    assert gemm_guard_failures("flexasr", *shape) == fails
    # flexible: the zero-bias rewrite makes the dense FlexASR's linear layer (bias_add(dense))
    callees, _ = _isel(_dense(*shape), "flexasr", "flexible")
    assert callees == ([] if fails else ["flexasr.linear"])


def test_unknown_target_has_no_gemm_rule():
    with pytest.raises(ValueError, match="no GEMM rule for target 'hlscnn'"):
        gemm_guard_failures("hlscnn", 16, 16, 16)


def test_torch_linear_past_vtas_buffers_is_offloaded_exactly_and_runs_tiled():
    """nn.Linear(512, 2048) on 16 rows (a Transformer's feed-forward shape): n*k = 1048576 > VTA's 1023
    weight blocks of 16x16, yet exact isel offloads its dense to one vta.dense (the bias add stays on
    the host) and the ILA runs it as 5 programs (32 block rows of K: 31 blocks of n a program)."""
    import warnings

    import numpy as np

    torch = pytest.importorskip("torch")
    fx = pytest.importorskip("torch_mlir.fx")
    from steplus.runtime.ila.host import run_function

    torch.manual_seed(0)
    fc = torch.nn.Linear(512, 2048).eval()
    x = torch.randn(16, 512)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(fc, x, output_type="linalg-on-tensors", func_name="f"))
        want = fc(x).numpy()
    assert gemm_guard_failures("vta", 16, 512, 2048) == []
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, text).parse_module()
    IselPass(targets=("vta",), mode="exact").apply(ctx, module)
    assert [op.callee.data for op in module.walk() if op.name == "ila.invoke"] == ["vta.dense"]
    (y,), stats = run_function(module, "f", [x.numpy()], backend="ila")
    assert stats.invocations == {"vta": 1} and stats.mmio["vta.programs"] == 5
    # int8 operands with per-tensor scales and a power-of-two requantisation: a few percent
    err = float(np.linalg.norm(y - want) / np.linalg.norm(want))
    assert err < 0.05, err


def test_flexasr_linear_past_the_old_guards_runs_padded_and_tiled():
    """LSTM-WLM's 200 features to 4100 outputs on 35 rows: in % 16 and out % 64 failed, and out > 4080,
    before the driver padded and tiled; now one flexasr.linear, run as 2 calls of the padded layer
    (in 208, out 4160 = 260 vectors: at most 252 a call), within AdaptivFloat's error of numpy."""
    import numpy as np

    from steplus.runtime.ila.host import run_function

    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, _dense(35, 200, 4100)).parse_module()
    IselPass(targets=("flexasr",), mode="flexible").apply(ctx, module)
    assert [op.callee.data for op in module.walk() if op.name == "ila.invoke"] == ["flexasr.linear"]
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((35, 200)).astype(np.float32), (rng.standard_normal((4100, 200)) * 0.1).astype(np.float32)
    (y,), stats = run_function(module, "f", [x, w], backend="ila")
    assert stats.invocations == {"flexasr": 1} and stats.mmio["flexasr.linear_calls"] == 2
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    assert float(np.linalg.norm(y - want) / np.linalg.norm(want)) < 0.05
