"""FlexASR's linear layer at any size: zero padding of in (% 16) and out (% 64), and several calls when
one call's buffers cannot hold the layer (`flexasr_driver.linear_tiles`).

The expected codes come from a numpy AdaptivFloat reference of the linear layer written from the
spec's datapath (§1.4.3: ProductSum accumulation wrapped to 32 bits, the shift by 14 - bw - bi, the
bias in Q6.14, the act clamp, the output bias calibrated on the quantised product), on the UNPADDED
tensors: padding and tiling must give every output exactly the code one call would; both the
per-command simulation (`reference=True`) and the whole-tensor path are checked against it."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila import flexasr_vec as vec
from steplus.runtime.ila.core import IlaError


def _numpy_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The FlexASR linear layer in numpy on the given (unpadded) shapes."""
    bw, bi, bb = af.bias_for(w), af.bias_for(x), af.bias_for(b)
    xc, wc, bc = af.encode(x, bi), af.encode(w, bw), af.encode(b, bb)
    acc = af.wrap(af.product_sum(wc[None], xc[:, None, :]).sum(-1), 32)
    lanes = af.wrap(af.clamp_act((acc >> (14 - bw - bi)) + af.to_fixed14(bc, bb)), 20)
    bo = af.bias_for(af.decode(xc, bi) @ af.decode(wc, bw).T + af.decode(bc, bb))
    return af.decode(af.from_fixed14(lanes, bo), bo)


def _layer(rng, t: int, k: int, n: int):
    return rng.standard_normal((t, k)), rng.standard_normal((n, k)) * 0.2, rng.standard_normal(n) * 0.3


def _check(x, w, b, calls: int) -> None:
    want = _numpy_linear(x, w, b)
    ref = x @ w.T + b
    for reference in (True, False):
        y, counts = fd.run_linear(x, w, b, reference=reference)
        assert y.shape == want.shape and np.array_equal(y, want)
        assert counts.get("linear_calls", 1) == calls and counts["waits"] == calls
        # AdaptivFloat<8,3>: 4 mantissa bits on operands and result, a few percent on the whole layer
        assert np.linalg.norm(y - ref) / np.linalg.norm(ref) < 0.05


@pytest.mark.parametrize(("t", "k", "n"), [(3, 27, 10),    # the stem of a conv net's im2col (27) to 10 outputs
                                           (5, 200, 100),  # LSTM-WLM's 200 features
                                           (2, 16, 64)])   # no padding
def test_padding_is_exact(t, k, n):
    _check(*_layer(np.random.default_rng(k + n), t, k, n), calls=1)


def test_padded_reads_and_writes_are_counted():
    x, w, b = _layer(np.random.default_rng(0), 3, 27, 10)   # padded to in 32 (2 vectors), out 64 (4 vectors)
    _, counts = fd.run_linear(x, w, b)
    assert counts == {"writes": 16 * 4 * 2 + 4 + 3 * 2 + 16 + 3, "reads": 3 * 4, "waits": 1}


def test_tiles_cover_the_layer_and_fit_the_buffers():
    for t, nvi, nvo in [(10, 16, 4), (16, 255, 16), (12544, 2, 4), (35, 13, 2080), (70000, 1, 4), (5, 128, 252)]:
        tiles = fd.linear_tiles(t, nvi, nvo)
        cover = np.zeros((t, nvo), np.int64)
        for t0, t1, v0, v1 in tiles:
            npe = (v1 - v0) // 4
            assert (v1 - v0) % 4 == 0 and nvi + npe <= vec.PE_INPUT_VECTORS and npe * nvi * 256 <= 1 << 20
            assert v1 - v0 <= 255 and vec._fits_gb(t1 - t0, nvi, v1 - v0)
            cover[t0:t1, v0:v1] += 1
        assert (cover == 1).all()
    assert fd.linear_tiles(10, 16, 4) == [(0, 10, 0, 4)]
    assert len(fd.linear_tiles(16, 255, 16)) == 4      # one bias vector per PE beside 255 input vectors
    assert len(fd.linear_tiles(12544, 2, 4)) == 2      # 12544 rows of 2 + 4 vectors pass the 1 MiB buffer
    assert len(fd.linear_tiles(35, 13, 2080)) == 9     # LSTM-WLM's decoder: 33278 outputs, 252 vectors a call


def test_tiled_calls_equal_one_call(monkeypatch):
    """Buffers shrunk so that a small layer needs 2 x 3 calls (the real limits need layers too large for
    the per-command simulation in the default suite): the assembled result is the one-call numpy layer."""
    x, w, b = _layer(np.random.default_rng(4), 40, 40, 330)     # in 48 (3 vectors), out 384 (24 vectors)
    monkeypatch.setattr(vec, "PE_INPUT_VECTORS", 3 + 2)           # 2 outputs per PE: 8 vectors a call
    fits = vec._fits_gb
    monkeypatch.setattr(vec, "_fits_gb", lambda t, nvi, nvo: t <= 32 and fits(t, nvi, nvo))
    assert len(fd.linear_tiles(40, 3, 24)) == 2 * 3
    _check(x, w, b, calls=6)


def test_in_past_one_pe_input_is_refused():
    x, w, b = _layer(np.random.default_rng(1), 1, 4096, 64)
    for reference in (True, False):
        with pytest.raises(IlaError, match="in at most 4080"):
            fd.run_linear(x, w, b, reference=reference)
    with pytest.raises(IlaError, match="are not"):
        fd.run_linear(np.ones((2, 16)), np.ones((64, 32)))


def test_in_of_4080_runs_as_four_calls_vectorized():
    """255 input vectors leave one vector per PE for the bias: 200 outputs (padded to 256) are 4 calls."""
    x, w, b = _layer(np.random.default_rng(2), 2, 4080, 200)
    y, counts = fd.run_linear(x, w, b, reference=False)
    assert counts["linear_calls"] == 4 and np.array_equal(y, _numpy_linear(x, w, b))


@pytest.mark.slow  # the per-command simulation of 67412 writes: ~20 s
def test_in_of_4080_runs_as_four_calls_per_command():
    _check(*_layer(np.random.default_rng(2), 2, 4080, 200), calls=4)


def _gate_padded(m: np.ndarray, h: int, hp: int, cols: int) -> np.ndarray:
    """Each of the 4 gate blocks of h rows of m padded with zero rows to hp, and columns to `cols`."""
    out = np.zeros((4 * hp, cols) if m.ndim == 2 else 4 * hp)
    for g in range(4):
        if m.ndim == 2:
            out[g * hp:g * hp + h, :m.shape[1]] = m[g * h:(g + 1) * h]
        else:
            out[g * hp:g * hp + h] = m[g * h:(g + 1) * h]
    return out


@pytest.mark.parametrize("state", [False, True])
def test_lstm_padding_is_exact_for_the_real_units(state):
    """An LSTM of 20 features and 40 hidden units (in % 16 and H % 64 fail) equals, on its 40 units,
    the 32 -> 64 LSTM padded by hand, and agrees with the float LSTM (accel.lstm_reference) within
    AdaptivFloat's error; both paths."""
    from steplus.runtime.ila.accel import lstm_reference

    rng = np.random.default_rng(11)
    T, n_in, H = 6, 20, 40
    x, wi, wh = rng.standard_normal((T, n_in)), rng.standard_normal((4 * H, n_in)) * 0.3, rng.standard_normal((4 * H, H)) * 0.3
    b = rng.standard_normal(4 * H) * 0.3
    h0, c0 = (rng.standard_normal(H) * 0.3, rng.standard_normal(H) * 0.3) if state else (np.zeros(H), np.zeros(H))
    kw = {"h0": h0, "c0": c0} if state else {}
    xp = np.zeros((T, 32))
    xp[:, :n_in] = x
    kwp = {k: np.concatenate([v, np.zeros(64 - H)]) for k, v in kw.items()}
    padded = (xp, _gate_padded(wi, H, 64, 32), _gate_padded(wh, H, 64, 64), _gate_padded(b, H, 64, 0))
    want = lstm_reference(x, h0[None], c0[None], wi, wh, b)
    for reference in (True, False):
        y, counts = fd.run_lstm(x, wi, wh, b, reference=reference, **kw)
        yp, counts_p = fd.run_lstm(*padded, reference=reference, **kwp)
        assert y.shape == (T + state, H) and np.array_equal(y, yp[:, :H]) and counts == counts_p
        rows = want if state else want[:-1]
        assert np.linalg.norm(y - rows) / np.linalg.norm(rows) < 0.06
