"""Simulation-based validation of IR-accelerator mappings (D2A Table 2).

Each mapping runs on its ILA simulator for `n` random inputs and is compared
with the IR reference (float32 numpy; int8/int32 integer semantics for VTA)
by the relative Frobenius error `||ref - acc||_F / ||ref||_F`.

Example::

    rows = validate_all(n=100, seed=0)   # [(accelerator, operation, mean, std), ...]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila.accel import conv2d_nchw
from steplus.runtime.ila.hlscnn import FixedFormats
from steplus.runtime.ila.hlscnn_driver import run_conv2d
from steplus.runtime.ila.vta_driver import dense_reference, run_dense


# a mapping's check: one random input from the generator -> (accelerator result, IR reference)
Check = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]


def _sig(z: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
    return 1 / (1 + np.exp(-z))


def _gemm(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.integers(-127, 128, (16, 64), dtype=np.int8)
    w = rng.integers(-127, 128, (32, 64), dtype=np.int8)
    y, _ = run_dense(x, w, shift=10)
    return y.astype(np.float64), dense_reference(x, w, shift=10).astype(np.float64)


def _conv(bits: int) -> Check:
    def f(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        x, w = rng.uniform(-1, 1, (8, 6, 6)), rng.uniform(-0.5, 0.5, (8, 8, 3, 3))
        y, _ = run_conv2d(x, w, fmt=FixedFormats(wgt_bits=bits))
        return y, conv2d_nchw(x[None].astype(np.float32), w.astype(np.float32))[0]
    return f


def _linear(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x, w, b = rng.standard_normal((4, 64)), rng.standard_normal((64, 64)) * 0.1, rng.standard_normal(64) * 0.1
    y, _ = fd.run_linear(x, w, b)
    return y, (x.astype(np.float32) @ w.astype(np.float32).T + b.astype(np.float32))


def _lstm(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((3, 64)) * 0.5
    wi, wh, b = (rng.standard_normal((256, 64)) * 0.2, rng.standard_normal((256, 64)) * 0.2,
                 rng.standard_normal(256) * 0.1)
    y, _ = fd.run_lstm(x, wi, wh, b)
    h, c, ref = np.zeros(64, np.float32), np.zeros(64, np.float32), []
    for t in range(3):
        i, f, g, o = np.split((wi @ x[t] + wh @ h + b).astype(np.float32), 4)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        ref.append(h)
    return y, np.array(ref)


def _lstm_state(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """flexasr.lstm as isel emits it for an LSTM cell: one step from a given (h, c), rows h', c'."""
    from steplus.runtime.ila.accel import lstm_reference

    x, h0, c0 = rng.standard_normal((1, 64)) * 0.5, rng.uniform(-0.9, 0.9, 64), rng.standard_normal(64) * 0.5
    wi, wh, b = (rng.standard_normal((256, 64)) * 0.2, rng.standard_normal((256, 64)) * 0.2,
                 rng.standard_normal(256) * 0.1)
    y, _ = fd.run_lstm(x, wi, wh, b, h0=h0, c0=c0)
    return y, lstm_reference(*(a.astype(np.float32) for a in (x, h0[None], c0[None], wi, wh, b)))


def _layernorm(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x, g, b = rng.standard_normal((4, 64)), rng.uniform(0.5, 1.5, 64), rng.standard_normal(64) * 0.1
    y, _ = fd.run_layernorm(x, g, b)
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    return y, ((x - mu) / np.sqrt(var + 1e-5) * g + b).astype(np.float32)


def _pool(mode: int) -> Check:
    def f(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        a = rng.standard_normal((16, 64))
        y, _ = fd.run_pool(a, 1, mode=mode)
        a32 = a.astype(np.float32)
        ref = np.maximum(a32[0::2], a32[1::2]) if mode == 0 else (a32[0::2] + a32[1::2]) / 2
        return y, ref
    return f


def _attention(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    q, k, v = rng.standard_normal(64) * 0.3, rng.standard_normal((8, 64)) * 0.3, rng.standard_normal((8, 64))
    y, _ = fd.run_attention(q, k, v)
    s = (k @ q).astype(np.float32)
    w = np.exp(s - s.max())
    return y, (w / w.sum()) @ v.astype(np.float32)


def _attention_rows(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """flexasr.attention as isel emits it: 16 query rows over 16 keys/values, one fragment."""
    q, k, v = rng.standard_normal((16, 64)) * 0.3, rng.standard_normal((16, 64)) * 0.3, rng.standard_normal((16, 64))
    y, _ = fd.run_attention_rows(q, k, v)
    s = (q @ k.T).astype(np.float32)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return y, (w / w.sum(axis=1, keepdims=True)) @ v.astype(np.float32)


MAPPINGS: list[tuple[str, str, Check]] = [
    ("VTA", "GEMM", _gemm),
    ("HLSCNN", "Conv2D (8-bit wgt)", _conv(8)),
    ("HLSCNN", "Conv2D (16-bit wgt)", _conv(16)),
    ("FlexASR", "LinearLayer", _linear),
    ("FlexASR", "LSTM", _lstm),
    ("FlexASR", "LSTM cell (h, c)", _lstm_state),
    ("FlexASR", "LayerNorm", _layernorm),
    ("FlexASR", "MaxPool", _pool(0)),
    ("FlexASR", "MeanPool", _pool(1)),
    ("FlexASR", "Attention", _attention),
    ("FlexASR", "Attention (16 rows)", _attention_rows),
]


def rel_error(ref: npt.ArrayLike, acc: npt.ArrayLike) -> float:
    """Relative Frobenius error ||ref - acc||_F / ||ref||_F."""
    ref = np.asarray(ref, np.float64)
    return float(np.linalg.norm(ref - np.asarray(acc, np.float64)) / np.linalg.norm(ref))


def validate(fn: Check, n: int = 100, seed: int = 0) -> tuple[float, float]:
    """(mean, std) of the relative error of check `fn` over `n` random inputs."""
    rng = np.random.default_rng(seed)
    errs = [rel_error(ref, acc) for acc, ref in (fn(rng) for _ in range(n))]
    return float(np.mean(errs)), float(np.std(errs))
