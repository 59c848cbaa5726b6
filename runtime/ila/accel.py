"""Accelerator functions on float tensors: ILA execution and float32 references.

`run_accel(callee, args, attrs)` runs one accelerator function (`flexasr.linear`,
`flexasr.maxpool`, `flexasr.lstm`, `flexasr.layernorm`, `flexasr.attention`, `vta.dense`, `hlscnn.conv2d`) on its ILA simulator through
the driver fragments and returns `(result, counts)`; `reference(callee, args,
attrs)` is its float32 numpy meaning.  VTA operands are quantised to int8 per
tensor (scale max|x|/127) and the requantisation shift is calibrated on the
host from the integer product, as the 3LA driver does.

Example::

    y, counts = run_accel("flexasr.maxpool", [a], {})   # a[T,H] -> y[T/2,H]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from steplus.dialects.semantics.domain import conv2d_nchw  # one float convolution for host and references
from steplus.runtime.ila.core import IlaError


# accelerator-function results: the float array and the command counts of its run
Result = tuple[np.ndarray, dict[str, int]]


def _windows_max(a: np.ndarray) -> np.ndarray:
    t = a.shape[0] // 2
    return np.maximum(a[0:2 * t:2], a[1:2 * t:2])


def reference(callee: str, args: Sequence[npt.ArrayLike], attrs: Mapping[str, Any]) -> np.ndarray:
    """float32 numpy semantics of an accelerator function."""
    args = [np.asarray(a, np.float32) for a in args]
    if callee == "flexasr.maxpool":
        return _windows_max(args[0])
    if callee == "flexasr.meanpool":
        t = args[0].shape[0] // 2
        return (args[0][0:2 * t:2] + args[0][1:2 * t:2]) / np.float32(2)
    if callee == "flexasr.linear":
        x, w, b = args
        return x @ w.T + b.reshape(-1)
    if callee == "vta.dense":
        return args[0] @ args[1].T
    if callee == "flexasr.lstm":
        return lstm_reference(*args)
    if callee == "flexasr.layernorm":
        x, g, b = args
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
        eps = np.float32(attrs.get("epsilon", 2.0 ** -14))
        return ((x - mu) / np.sqrt(var + eps) * g + b).astype(np.float32)
    if callee == "flexasr.attention":
        q, k, v = args
        s = q @ k.T
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return ((e / e.sum(axis=1, keepdims=True)) @ v).astype(np.float32)
    if callee == "hlscnn.conv2d":
        x, w = args
        s = attrs.get("strides", (1, 1))
        return conv2d_nchw(x, w, s)
    raise IlaError(f"no reference for accelerator function '{callee}'")


def lstm_reference(x: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray,
                   b: np.ndarray) -> np.ndarray:
    """flexasr.lstm's meaning: the LSTM over x[T,I] from (h0, c0) [1,H], PyTorch i,f,g,o gate rows
    of w_ih[4H,I], w_hh[4H,H], b[4H]; rows h[0..T-1], then the final c."""
    def sig(z: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-z))

    h, c, out = h0.reshape(-1), c0.reshape(-1), []
    for t in range(x.shape[0]):
        i, f, g, o = np.split(x[t] @ w_ih.T + h @ w_hh.T + b, 4)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        out.append(h)
    return np.stack([*out, c]).astype(np.float32)


def quant8(x: np.ndarray) -> tuple[npt.NDArray[np.int8], float]:
    """Per-tensor symmetric int8 quantisation: (int8 values, scale)."""
    m = float(np.max(np.abs(x))) if x.size else 0.0
    s = m / 127 if m > 0 else 1.0
    return np.clip(np.round(x / s), -127, 127).astype(np.int8), s


def vta_dense_float(x: np.ndarray, w: np.ndarray, reference: bool | None = None) -> Result:
    """x·wᵀ on VTA: int8 operands, calibrated requantisation shift."""
    from steplus.runtime.ila.vta_driver import run_dense

    xq, sx = quant8(x)
    wq, sw = quant8(w)
    acc = xq.astype(np.int64) @ wq.astype(np.int64).T
    mx = int(np.max(np.abs(acc))) if acc.size else 0
    shift = max(0, mx.bit_length() - 7)
    y, counts = run_dense(xq, wq, shift=shift, reference=reference)
    return y.astype(np.float64) * (2.0 ** shift) * sx * sw, counts


def run_accel(callee: str, args: Sequence[npt.ArrayLike], attrs: Mapping[str, Any],
              reference: bool | None = None) -> Result:
    """Run an accelerator function on its ILA simulator; (float result, counts).

    `reference=True` (default: `core.reference_mode`, i.e. `STEPLUS_ILA_REFERENCE=1`) steps every
    command of the driver's fragment; otherwise the drivers compute the same raw outputs and counts
    on whole tensors (bit for bit: `test/unit/runtime/ila/test_ila_vectorized.py`)."""
    from steplus.runtime.ila import flexasr_driver as fd
    from steplus.runtime.ila.hlscnn_driver import run_conv2d

    args = [np.asarray(a, np.float64) for a in args]
    if callee in ("flexasr.maxpool", "flexasr.meanpool"):
        n = int(attrs.get("pools", 1))
        return fd.run_pool(args[0], n, mode=0 if callee.endswith("maxpool") else 1, reference=reference)
    if callee == "flexasr.linear":
        x, w, b = args
        return fd.run_linear(x, w, b.reshape(-1), reference=reference)
    if callee == "vta.dense":
        return vta_dense_float(*args, reference=reference)
    if callee == "flexasr.lstm":
        x, h0, c0, w_ih, w_hh, b = args
        return fd.run_lstm(x, w_ih, w_hh, b, h0=h0, c0=c0, reference=reference)
    if callee == "flexasr.layernorm":
        return fd.run_layernorm(*args, reference=reference)
    if callee == "flexasr.attention":
        return fd.run_attention_rows(*args, reference=reference)
    if callee == "hlscnn.conv2d":
        x, w = args
        if x.shape[0] != 1:
            raise IlaError("hlscnn.conv2d: batch must be 1")
        y, counts = run_conv2d(x[0], w, tuple(attrs.get("strides", (1, 1))), reference=reference)
        return y[None], counts
    raise IlaError(f"accelerator function '{callee}' has no ILA runner")
