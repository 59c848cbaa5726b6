"""isel's FlexASR patterns on the forms torch-mlir writes (examples/isel/forms/*.mlir, real exports):
layer norm (f32 mean, f64 variance), scaled dot-product attention (max-subtracted softmax with
torch's all -inf row guard, q and k scaled by d^-1/4, batch_matmul) and a sequence nn.LSTM."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO
from steplus.runtime.ila.host import run_function
from steplus.tools.loading import load_module

FORMS = REPO / "examples" / "isel" / "forms"
# a time limit far above saturation's (< 3 s here), so a loaded machine stops it by saturation, not by time
ISEL = "isel{{targets={t} mode={m} time-limit=120}}"
PIPE = ISEL + ",ila-cancel-store-load,convert-ila-to-commands"


def _select(name, targets="flexasr,hlscnn,vta", mode="flexible", extra=""):
    return load_module(str(FORMS / f"{name}.mlir"), ISEL.format(t=targets, m=mode).replace("}", extra + "}"))


def _callees(module):
    return sorted(op.callee.data for op in module.walk() if op.name == "ila.invoke")


def _torch_ref(name, inputs):
    torch = pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_forms", FORMS / "make_forms.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    module, _ = mod.build(name)
    with torch.no_grad():
        return module(*[torch.from_numpy(x) for x in inputs]).numpy()


def _run_ila(name, inputs, extra=""):
    pipe = PIPE.format(t="flexasr,hlscnn,vta", m="flexible").replace("}", extra + "}", 1)
    compiled = load_module(str(FORMS / f"{name}.mlir"), pipe)
    (y,), stats = run_function(compiled, "forward", inputs, backend="ila")
    return y, stats


def _rel(ref, y):
    return float(np.linalg.norm(y - ref) / np.linalg.norm(ref))


def test_torch_layer_norm_is_one_flexasr_layernorm_in_flexible_mode_only():
    assert _callees(_select("layernorm", mode="exact")) == []
    m = _select("layernorm")
    assert _callees(m) == ["flexasr.layernorm"]
    ln = next(op for op in m.walk() if op.name == "ila.invoke")
    assert ln.attributes["epsilon"].value.data == pytest.approx(1e-5)  # torch's eps, from the f64 constant
    # the whole f64 variance chain is gone: no generic, no f64 tensor left
    assert not any(op.name == "linalg.generic" for op in m.walk())


def test_torch_layer_norm_on_the_ila_agrees_with_torch():
    x = np.random.default_rng(0).standard_normal((1, 16, 64)).astype(np.float32)
    y, stats = _run_ila("layernorm", [x])
    assert stats.invocations == {"flexasr": 1}
    ref = _torch_ref("layernorm", [x])
    # adaptive-float activations (spec: 8-bit adpfloat): within 5 % of the float result
    assert _rel(ref, y) < 0.05


def test_torch_attention_is_one_flexasr_attention_per_head():
    assert _callees(_select("attention", mode="exact")) == []
    m = _select("attention")
    assert _callees(m) == ["flexasr.attention"] * 2  # 2 heads
    # the softmax (its max, exp, sum and division), its guard and both batched products are gone;
    # the scaling of q and k by d^-1/4 stays on the host (two elementwise generics)
    assert not any(op.name in ("linalg.batch_matmul", "math.exp", "arith.divf", "arith.select") for op in m.walk())
    assert sum(op.name == "linalg.generic" for op in m.walk()) == 2


def test_torch_attention_batches_go_to_vta_alone_as_per_batch_gemms():
    # q·kᵀ and p·v, 2 batches each; the softmax stays on the host
    assert _callees(_select("attention", targets="vta")) == ["vta.dense"] * 4


def test_torch_attention_on_the_ila_agrees_with_torch():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 2, 16, 16)).astype(np.float32) for _ in range(3))
    y, stats = _run_ila("attention", [q, k, v])
    assert stats.invocations == {"flexasr": 2}
    ref = _torch_ref("attention", [q, k, v])
    np.testing.assert_allclose(ref[0, 0], _sdpa(q[0, 0], k[0, 0], v[0, 0]), rtol=1e-4, atol=1e-5)
    assert _rel(ref, y) < 0.05


def _sdpa(q, k, v):
    """softmax(q kᵀ / sqrt(d)) v in float64 (an independent reference of torch's SDPA)."""
    s = q.astype(np.float64) @ k.T / np.sqrt(q.shape[-1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def test_torch_sequence_lstm_is_one_flexasr_lstm_per_step():
    """nn.LSTM over 4 steps: the input projection of all steps (one GEMM + per-step row slices),
    the recurrent GEMM and the 3-D cell generics of each step -> one flexasr.lstm per step
    (`lstm=step`), folded into one call over the 4 steps by default (`lstm=sequence`)."""
    assert _callees(_select("lstm_seq", mode="exact")) == []
    m = _select("lstm_seq", extra=" lstm=step")
    assert _callees(m) == ["flexasr.lstm"] * 4
    assert not any(op.name in ("linalg.matmul", "linalg.generic") for op in m.walk())
    m = _select("lstm_seq")
    assert _callees(m) == ["flexasr.lstm"]
    assert [op.results[0].type.get_shape() for op in m.walk() if op.name == "ila.invoke"] == [(5, 64)]


@pytest.mark.parametrize("form,calls", [("step", 4), ("sequence", 1)])
def test_torch_sequence_lstm_selection_computes_the_torch_lstm(form, calls):
    x = np.random.default_rng(2).standard_normal((4, 1, 16)).astype(np.float32)
    ref = _torch_ref("lstm_seq", [x])
    # the selected program with flexasr.lstm's float meaning (accel.lstm_reference): the mapping is exact
    (sel,), _ = run_function(_select("lstm_seq", extra=f" lstm={form}"), "forward", [x], backend="reference")
    np.testing.assert_allclose(sel, ref, rtol=1e-4, atol=1e-5)
    y, stats = _run_ila("lstm_seq", [x], extra=f" lstm={form}")
    assert stats.invocations == {"flexasr": calls}
    # on the ILA, h and c are AdaptivFloat<8,3> codes (per step: bias 3 from the state's bound; over the
    # sequence: calibrated on it): within 5 % of torch
    assert _rel(ref, y) < 0.05


def test_pointwise_conv1d_is_a_gemm_on_vta_and_flexasr():
    """ResMLP's cross-patch linear (nn.Conv1d(16, 16, 1), bias broadcast over the patches) is W·x."""
    assert _callees(_select("cross_patch", targets="vta", mode="exact")) == []
    assert _callees(_select("cross_patch", targets="vta")) == ["vta.dense"]
    assert _callees(_select("cross_patch", targets="flexasr")) == ["flexasr.linear"]
    x = np.random.default_rng(3).standard_normal((1, 16, 64)).astype(np.float32)
    ref = _torch_ref("cross_patch", [x])
    (sel,), _ = run_function(_select("cross_patch"), "forward", [x], backend="reference")
    np.testing.assert_allclose(sel, ref, rtol=1e-4, atol=1e-5)
    y, _ = _run_ila("cross_patch", [x])
    assert _rel(ref, y) < 0.05


def test_make_forms_reproduces_the_committed_files(tmp_path):
    pytest.importorskip("torch_mlir.fx")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_forms", FORMS / "make_forms.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(tmp_path)
    for name in mod.NAMES:
        assert (tmp_path / f"{name}.mlir").read_bytes() == (FORMS / f"{name}.mlir").read_bytes(), name


def test_unpadded_tosa_conv_goes_to_hlscnn_and_the_padded_one_stays_with_a_remark(tmp_path, step_opt):
    """torch-mlir's TOSA form: tosa.conv2d on NHWC between transposes; the 1x1 maps (exact mode too:
    it is literally a convolution), the padded 3x3 stays on the host (HLSCNN has no padding)."""
    assert _callees(_select("conv_tosa", targets="hlscnn", mode="exact")) == ["hlscnn.conv2d"]
    m = _select("conv_tosa")
    assert _callees(m) == ["hlscnn.conv2d"]
    assert sum(op.name == "tosa.conv2d" for op in m.walk()) == 1
    x = np.random.default_rng(4).standard_normal((1, 8, 8, 8)).astype(np.float32)
    ref = _torch_ref("conv_tosa", [x])
    (sel,), _ = run_function(m, "forward", [x], backend="reference")
    np.testing.assert_allclose(sel, ref, rtol=1e-4, atol=1e-4)
    y, stats = _run_ila("conv_tosa", [x])
    assert stats.invocations == {"hlscnn": 1}
    assert _rel(ref, y) < 0.05
    r = step_opt([str(FORMS / "conv_tosa.mlir"), "-p", "isel", "-o", str(tmp_path / "out.mlir")])
    assert r.code == 0
    assert "remark: isel: 'tosa.conv2d' stays on the host: it is padded" in r.err


def test_tosa_linear_batch_of_one_matmul_is_a_flexasr_linear():
    assert _callees(_select("linear_tosa", mode="exact")) == []
    m = _select("linear_tosa")
    assert _callees(m) == ["flexasr.linear"]  # the bias add folded in
    assert not any(op.name in ("tosa.matmul", "tosa.add") for op in m.walk())
    x = np.random.default_rng(5).standard_normal((16, 64)).astype(np.float32)
    ref = _torch_ref("linear_tosa", [x])
    (sel,), _ = run_function(m, "forward", [x], backend="reference")
    np.testing.assert_allclose(sel, ref, rtol=1e-4, atol=1e-4)
    y, _ = _run_ila("linear_tosa", [x])
    assert _rel(ref, y) < 0.05
