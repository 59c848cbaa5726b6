"""Issue 32 item 4: the vectorized ILA drivers equal the per-command simulation bit for bit.

The reference is each driver's fragment stepped command by command on its ILA simulator
(`reference=True`, or `STEPLUS_ILA_REFERENCE=1`); the vectorized path computes the read-back from
whole tensors.  Compared: the raw read-back (AdaptivFloat codes, HLSCNN int16 lanes, VTA int8)
with `np.array_equal`, and the command counts.  FlexASR runners are compared on their decoded
outputs where the runner builds its commands inline: the encoder never emits 0x80 (-0), so decoding
is one-to-one on the codes a fragment reads back and equal floats mean equal codes.
Inputs include the edges of the number formats: values that saturate AdaptivFloat, the act
range (±2^19 in Q6.14), HLSCNN's 16-bit lanes and VTA's int8/int32, values that flush to zero,
exact zeros, -inf in a max pool; NaN is refused (IlaError) by both paths alike.
The six D2A applications (reduced) are compared call by call (slow: isel on each)."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila import flexasr_vec as vec
from steplus.runtime.ila.core import REFERENCE_ENV, IlaError, reference_mode
from steplus.runtime.ila.hlscnn import FixedFormats
from steplus.runtime.ila.hlscnn_driver import run_conv2d
from steplus.runtime.ila.vta_driver import run_dense


def _both(f, *args, **kw):
    """(reference result, vectorized result) of a runner."""
    return f(*args, reference=True, **kw), f(*args, reference=False, **kw)


def _same(f, *args, **kw):
    (r, rc), (v, vc) = _both(f, *args, **kw)
    assert r.dtype == v.dtype and r.shape == v.shape
    assert np.array_equal(r, v), np.argwhere(r != v)[:5]
    assert rc == vc


def _edges(rng, shape, scale):
    """N(0, scale²) with saturating, flushed and zero entries."""
    a = rng.standard_normal(shape) * scale
    flat = a.reshape(-1)
    k = flat.size
    flat[rng.integers(0, k, max(1, k // 50))] = 0.0
    flat[rng.integers(0, k, max(1, k // 50))] *= 1e-6   # below the bias's range: flushed
    flat[rng.integers(0, k, max(1, k // 100))] *= 1e3   # past the act range: saturated
    return a


def test_reference_mode_switch(monkeypatch):
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    assert not reference_mode() and reference_mode(True)
    monkeypatch.setenv(REFERENCE_ENV, "1")
    assert reference_mode() and not reference_mode(False)
    monkeypatch.setenv(REFERENCE_ENV, "0")
    assert not reference_mode()


@pytest.mark.parametrize("seed", range(4))
def test_linear_codes_equal_the_fragment(seed):
    rng = np.random.default_rng(seed)
    T, nvi, nvo = int(rng.integers(1, 40)), int(rng.integers(1, 9)), 4 * int(rng.integers(1, 4))
    x, w, b = _edges(rng, (T, 16 * nvi), 2.0), _edges(rng, (16 * nvo, 16 * nvi), 0.3), _edges(rng, 16 * nvo, 1.0)
    bw, bi, bb = af.bias_for(w), af.bias_for(x), af.bias_for(b)
    xc, wc, bc = af.encode(x, bi), af.encode(w, bw), af.encode(b, bb)
    bo = int(rng.integers(0, 8))
    _, reads, _ = fd.execute(fd.linear_fragment(xc, wc, bc, bw, bi, bb, bo))
    want = np.stack(reads).reshape(T, 16 * nvo)
    got = vec.linear_codes(xc, wc, bc, bw, bi, bb, bo)
    assert got is not None and got.dtype == want.dtype and np.array_equal(got, want)
    _same(fd.run_linear, x, w, b)


def test_linear_saturates_the_act_range_alike():
    x = np.full((3, 16), 7.5)
    w = np.full((64, 16), 7.5)  # every dot product is 900: far past ±32 (Q6.14's 20 bits)
    w[1] *= -1
    (r, _), (v, _) = _both(fd.run_linear, x, w, np.zeros(64), out_bias=7)
    assert np.array_equal(r, v) and r[0, 0] == -r[0, 1] == af.decode(af.from_fixed14(np.array(af.ACT_MAX), 7), 7)


def test_lstm_codes_equal_the_fragment_from_zero_and_from_a_state():
    rng = np.random.default_rng(5)
    T, n_in, H = 6, 32, 64
    x, wi, wh, b = _edges(rng, (T, n_in), 1.0), _edges(rng, (4 * H, n_in), 0.3), _edges(rng, (4 * H, H), 0.3), \
        _edges(rng, 4 * H, 0.5)
    bw = af.bias_for(np.concatenate([wi.ravel(), wh.ravel()]))
    bi, bb = af.bias_for(x), af.bias_for(b)
    xc, wic, whc, bc = af.encode(x, bi), af.encode(wi, bw), af.encode(wh, bw), af.encode(b, bb)
    for h0c, c0c in ((None, None), (af.encode(rng.standard_normal(H) * 0.5, 4), af.encode(rng.standard_normal(H) * 3, 4))):
        _, reads, _ = fd.execute(fd.lstm_fragment(xc, wic, whc, bc, bw, bi, bb, 4, h0c, c0c))
        got = vec.lstm_codes(xc, wic, whc, bc, bw, bi, bb, 4, fd.LSTM_PROGRAM, h0c, c0c)
        assert got is not None and np.array_equal(got, np.stack(reads).reshape(got.shape))
    _same(fd.run_lstm, x, wi, wh, b)


def test_lstm_runner_chunked_from_a_growing_state():
    rng = np.random.default_rng(7)
    T, n_in, H = 20, 16, 64
    b = rng.standard_normal(4 * H) * 0.2
    b[:H] += 2.0
    b[H:2 * H] += 5.0  # an open forget gate: |c| grows and the act bias with it (three calls)
    b[2 * H:3 * H] += 1.0
    args = (rng.standard_normal((T, n_in)), rng.standard_normal((4 * H, n_in)) * 0.3, rng.standard_normal((4 * H, H)) * 0.2, b)
    kw = {"h0": rng.standard_normal(H) * 0.3, "c0": rng.standard_normal(H) * 0.1}
    assert len(fd.lstm_chunks(*args, kw["h0"], kw["c0"])) > 1  # the chunked call, each chunk its bias
    _same(fd.run_lstm, *args, **kw)
    _same(fd.run_lstm, args[0][:1], *args[1:], **kw)  # one step from a state: the non-chunked call


def test_layernorm_attention_and_pools():
    rng = np.random.default_rng(9)
    _same(fd.run_layernorm, _edges(rng, (9, 64), 3.0), rng.standard_normal(64), rng.standard_normal(64))
    q, k, v = _edges(rng, (5, 48), 1.0), _edges(rng, (17, 48), 1.0), _edges(rng, (17, 48), 1.0)
    _same(fd.run_attention_rows, q, k, v)
    _same(fd.run_attention, q[0], k, v)
    a = _edges(rng, (16, 784), 1.0)
    a[3, :5] = -np.inf  # torch-mlir's max-pool padding
    _same(fd.run_pool, a, 4)
    _same(fd.run_pool, _edges(rng, (13, 48), 1.0), 2, 1)   # mean, odd T
    _same(fd.run_pool, _edges(rng, (9, 48), 50.0), 3, 2)   # sum: saturates
    _same(fd.run_pool, rng.standard_normal((4, 16 * 300)), 1)  # 300 vectors: two chunks


def test_nan_is_refused_by_both_paths():
    x = np.ones((2, 16))
    x[0, 0] = np.nan
    for reference in (True, False):
        with pytest.raises(IlaError, match="NaN"):
            fd.run_linear(x, np.ones((64, 16)), reference=reference)


def test_shapes_outside_the_model_fall_back_to_the_commands():
    # base1 = (T//16 + 2)·16·nvi past the 16-bit base_large field: the fragment's regions wrap
    xc = np.zeros((4096, 16 * 20), np.uint8)
    assert vec.linear_codes(xc, np.zeros((64, 320), np.uint8), np.zeros(64, np.uint8), 0, 0, 0, 0) is None
    assert vec.pool_codes(np.zeros((3, 2, 16), np.uint8), 2, 0) is None  # T >> pools == 0
    # the boundary: the largest T whose regions still fit at nvi = nvo = 4
    T = next(t for t in range(4000, 0, -16) if vec._fits_gb(t, 4, 4))
    assert vec.linear_codes(np.zeros((T, 64), np.uint8), np.zeros((64, 64), np.uint8),
                            np.zeros(64, np.uint8), 0, 0, 0, 0) is not None


@pytest.mark.parametrize("C,H,W,K,KH,KW,stride,bits,relu", [
    (16, 10, 10, 32, 3, 3, (1, 1), 8, False),
    (3, 12, 9, 5, 3, 2, (2, 1), 16, True),    # C not a multiple of 8, strides, ReLU
    (20, 8, 8, 16, 1, 1, (1, 1), 8, False),
    (9, 7, 11, 8, 2, 3, (3, 2), 16, False),
])
def test_conv2d_equals_the_commands(C, H, W, K, KH, KW, stride, bits, relu):
    rng = np.random.default_rng(C * K)
    x, w = _edges(rng, (C, H, W), 3.0), _edges(rng, (K, C, KH, KW), 0.5)
    x[0, 0, :2] = (1e6, -np.inf)   # saturate the 16-bit activations
    w[0, 0, 0, 0] = 1e3            # and the weights
    _same(run_conv2d, x, w, stride, FixedFormats(wgt_bits=bits), relu)


@pytest.mark.parametrize("shift,relu,bias", [(None, False, None), (0, False, None), (8, False, None),
                                             (20, False, None), (5, True, "array"), (3, False, -(2 ** 40) + 7)])
def test_vta_dense_equals_the_commands(shift, relu, bias):
    rng = np.random.default_rng(11)
    x = rng.integers(-128, 128, (8, 64)).astype(np.int8)
    w = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    x[0, :] = -128  # int32 and int8 wrap-around
    b = rng.integers(-2 ** 31, 2 ** 31, (8, 32)) if bias == "array" else bias
    _same(run_dense, x, w, b, shift, relu)


def test_vta_shape_errors_alike():
    for reference in (True, False):
        with pytest.raises(IlaError, match="multiples of 16"):
            run_dense(np.zeros((2, 20), np.int8), np.zeros((16, 20), np.int8), reference=reference)


APPS = ["efficientnet_b0", "lstm_wlm", "mobilenetv2", "resmlp", "resnet20", "transformer"]


@pytest.mark.slow  # isel on each application: 5-20 s each
@pytest.mark.parametrize("name", APPS)
def test_d2a_application_call_by_call(name, monkeypatch):
    """Every accelerator call of the compiled application (isel onto all three, flexible) gives the
    same result and counts on both paths, and so does the whole run."""
    from conftest import REPO
    from steplus.runtime.ila import accel, fragments, host
    from steplus.runtime.ila.host import random_arguments, run_function
    from steplus.tools.loading import load_module

    pipeline = "isel{targets=flexasr,hlscnn,vta mode=flexible},ila-cancel-store-load,convert-ila-to-commands"
    compiled = load_module(str(REPO / "examples" / "isel" / "models" / f"{name}.mlir"), pipeline)
    calls: list[str] = []

    def checked(callee, args, attrs, reference=None):
        (r, rc), (v, vc) = (accel.run_accel(callee, args, attrs, reference=flag) for flag in (True, False))
        assert np.array_equal(r, v) and rc == vc, callee
        calls.append(callee)
        return v, vc

    monkeypatch.setattr(fragments, "run_accel", checked)
    monkeypatch.setattr(host, "run_accel", checked)
    inputs = random_arguments(compiled, "forward", 0)
    if name == "lstm_wlm":  # token ids
        inputs[0] = np.random.default_rng(0).integers(0, 256, inputs[0].shape).astype(np.int64)
    outs, stats = run_function(compiled, "forward", inputs, backend="ila")
    assert calls and sum(stats.invocations.values()) >= len(calls)
    monkeypatch.setenv(REFERENCE_ENV, "1")
    monkeypatch.setattr(fragments, "run_accel", accel.run_accel)
    monkeypatch.setattr(host, "run_accel", accel.run_accel)
    ref_outs, ref_stats = run_function(compiled, "forward", inputs, backend="ila")
    assert all(np.array_equal(a, b) for a, b in zip(outs, ref_outs)) and stats == ref_stats
