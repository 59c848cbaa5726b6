"""`isel{offload=profitable}`: a FlexASR linear call is selected only when it costs less than the host's
GEMM (`passes/isel/offload.py`).  The cost's command counts are the driver's (checked against
`flexasr_driver.run_linear`'s counts, tiled calls included); the decisions are checked against the
model's closed form, written out here from the ILA spec's fragment: a call over T rows of nvi input
vectors and nvo (a multiple of 4) output vectors writes 16·nvo·nvi weight rows, nvo bias vectors,
T·nvi input vectors and 19 configuration/start commands, reads T·nvo vectors, and its 4 PEs take
T·nvo·nvi/4 tile steps; the host takes T·n·ceil(k/16) 16-wide steps."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.passes.isel import IselPass
from steplus.passes.isel.offload import (cost_model_for, flexasr_linear_calls, flexasr_linear_commands,
                                         flexasr_linear_cost, flexasr_linear_pays, host_gemm_cost)
from steplus.runtime.ila import flexasr_driver as fd
from steplus.tools.registry import get_all_dialects
from steplus.utils.diagnostics import collecting_diagnostics


def _one_call(t: int, k: int, n: int) -> tuple[int, int]:
    nvi, nvo = -(-k // 16), 4 * -(-n // 64)
    cost = (16 * nvo * nvi + nvo + t * nvi + 19) + t * nvo + t * nvo * nvi // 4
    return cost, t * n * nvi


@pytest.mark.parametrize(("m", "k", "n", "calls"), [(1, 64, 10, 1), (3, 27, 10, 1), (35, 200, 4100, 2),
                                                    (5000, 200, 64, 2), (16, 4080, 200, 4)])
def test_command_counts_are_the_drivers(m, k, n, calls):
    rng = np.random.default_rng(0)
    _, counts = fd.run_linear(rng.standard_normal((m, k)), rng.standard_normal((n, k)), rng.standard_normal(n))
    assert flexasr_linear_commands(m, k, n) == (counts["writes"], counts["reads"])
    assert len(flexasr_linear_calls(m, k, n)) == calls == counts.get("linear_calls", 1)


def test_one_call_costs_follow_the_closed_form():
    for m, k, n in [(1, 64, 10), (1, 1280, 10), (1024, 27, 16), (16, 256, 256), (384, 4, 4), (7, 100, 1)]:
        assert (flexasr_linear_cost(m, k, n), host_gemm_cost(m, k, n)) == _one_call(m, k, n)
    assert _one_call(1, 64, 10) == (291, 40)  # ResNet-20's classifier: 283 writes, 4 reads, 4 PE steps


def test_a_one_row_call_or_a_one_filter_gemm_never_pays():
    """One row: the padded weights alone (16·nvo·nvi >= n·nvi writes) outnumber the host's steps.  One
    output (a grouped convolution's one-filter GEMM): the input rows alone (T·nvi) equal them."""
    for k in (1, 16, 27, 200, 1280, 4080):
        for n in (1, 10, 64, 1000, 4100):
            assert not flexasr_linear_pays(1, k, n), (k, n)
        for m in (1, 16, 196, 1024, 12544):
            assert not flexasr_linear_pays(m, k, 1), (m, k)
    # ResMLP's cross-patch linears (4 patches -> 4): 6 commands a row against 4 host steps
    assert not any(flexasr_linear_pays(m, 4, 4) for m in (16, 384, 4096))


def test_larger_gemms_pay():
    # a Transformer's projections, ResNet-20's stem via im2col, LSTM-WLM's decoder
    for shape in [(16, 256, 256), (16, 256, 2048), (1024, 27, 16), (35, 200, 33278)]:
        assert flexasr_linear_pays(*shape), shape
    # a 10-class head pays from 10 rows: 16·4·4 + 4 + 19 + T·(4 + 4 + 4) < 10·4·T, i.e. 279 < 28·T
    assert [t for t in range(1, 12) if flexasr_linear_pays(t, 64, 10)] == list(range(10, 12))


def test_the_break_even_row_count_of_a_head_is_the_closed_forms():
    for t in range(1, 40):
        cost, host = _one_call(t, 64, 10)
        assert flexasr_linear_pays(t, 64, 10) == (cost < host)


def _dense(m: int, k: int, n: int) -> str:
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


def _isel(text: str, targets: tuple[str, ...], offload: str):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, text).parse_module()
    with collecting_diagnostics() as engine:
        IselPass(targets=targets, mode="flexible", offload=offload).apply(ctx, module)
    callees = [op.callee.data for op in module.walk() if op.name == "ila.invoke"]
    return module, callees, [d.message for d in engine.diagnostics if d.severity == "remark"]


@pytest.mark.parametrize(("shape", "paid"), [((1, 64, 10), False), ((16, 256, 256), True), ((10, 64, 10), True),
                                             ((9, 64, 10), False), ((16, 36, 1), False)])
def test_isel_keeps_an_unpaid_call_on_the_host(shape, paid):
    _, always, _ = _isel(_dense(*shape), ("flexasr",), "always")
    assert always == ["flexasr.linear"]  # D2A's counts: the driver pads any out
    _, callees, remarks = _isel(_dense(*shape), ("flexasr",), "profitable")
    assert callees == (["flexasr.linear"] if paid else [])
    if not paid:
        m, k, n = shape
        cost, host = _one_call(m, k, n)
        assert remarks == [f"isel: 'linalg.matmul' stays on the host: [{m}, {k}] x [{k}, {n}] fails flexasr: the "
                           f"padded call does not pay (offload=profitable): {cost} MMIO commands and PE steps vs "
                           f"{host} host vector steps"]


@pytest.mark.slow  # ~13 s on the loaded 2-core machine (a torch-mlir export); the GEMM alone: (16, 36, 1) above
def test_a_one_filter_grouped_convolution_stays_on_the_host():
    """torch's Conv2d(8, 2, 3, groups=2): one filter per group, a [16, 36] x [36, 1] GEMM each; FlexASR would
    run each padded to 64 outputs.  Profitable isel keeps it on the host, and the program still equals torch."""
    torch = pytest.importorskip("torch")
    fx = pytest.importorskip("torch_mlir.fx")
    from steplus.runtime.ila.host import run_function

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 2, 3, groups=2, bias=False).eval()
    x = torch.randn(1, 8, 6, 6)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(conv, x, output_type="linalg-on-tensors", func_name="f"))
        want = conv(x).numpy()
    assert "linalg.conv_2d_ngchw_gfchw" in text
    assert not flexasr_linear_pays(16, 36, 1)
    _, callees, _ = _isel(text, ("flexasr",), "always")
    assert callees == ["flexasr.linear"] * 2
    module, callees, _ = _isel(text, ("flexasr",), "profitable")
    assert callees == []
    (y,), _ = run_function(module, "f", [x.numpy()], backend="ila")
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)


def test_unknown_offload_mode_is_a_usage_error():
    with pytest.raises(ValueError, match="offload must be one of always, profitable, got 'never'"):
        IselPass(offload="never")
    with pytest.raises(ValueError, match="offload must be one of always, profitable"):
        cost_model_for("never")
