"""AdaptivFloat<8,3> and the FlexASR fixed-point datapath, bit-accurate.

Code layout: `[7]` sign, `[6:4]` exponent field `e`, `[3:0]` mantissa `m`; a
per-tensor exponent bias `b` in [0, 7] with a fixed offset of -10.  Decoding:
`(-1)^s (1 + m/16) 2^(e + b - 10)`, and both 0x00 and 0x80 are zero.  Encoding
is the hardware's (ac_float AC_RND): round to nearest, ties toward +inf of the
signed value, flush below the range, saturate above it.

Q6.14 values (`to_fixed14`) are 20-bit signed integers with 14 fraction bits.

Example::

    >>> encode(0.2, 0), encode(-0.12890625, 0), encode(3.0, 7)
    (122, 240, 72)
"""

from __future__ import annotations

from typing import overload

import numpy as np
import numpy.typing as npt

# Arrays of codes, of decoded values and of Q6.14 / wrapped integers.
Codes = npt.NDArray[np.uint8]
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

Q = 14
ACT_MAX = (1 << 19) - 1


def bias_for(x: npt.ArrayLike) -> int:
    """The hardware exponent bias for a tensor, from its max finite magnitude (clamped to [0,7])."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    ax = ax[np.isfinite(ax)]
    mx = float(np.max(ax)) if ax.size else 0.0
    if mx == 0.0:
        return 0
    _, e = np.frexp(mx)
    return int(min(7, max(0, (int(e) - 1) + 3)))


@overload
def encode(x: float, b: int) -> int: ...
@overload
def encode(x: npt.ArrayLike, b: int) -> Codes: ...
def encode(x: npt.ArrayLike, b: int) -> int | Codes:
    """Float (array) -> AdaptivFloat codes (uint8) with bias b (hardware encoder).

    A scalar (or 0-d array) gives an int code, an array a uint8 array of its shape."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    mant, ex = np.frexp(np.where((a > 0) & np.isfinite(a), a, 1.0))  # a = mant * 2^ex, mant in [0.5,1)
    E = ex.astype(np.int64) - 1
    s16 = mant * 32.0  # 16*q with q = a / 2^E in [1,2): exact
    r = np.where(x >= 0, np.floor(s16 + 0.5), np.ceil(s16 - 0.5)).astype(np.int64)
    carry = r == 32
    r = np.where(carry, 16, r)
    E = E + carry
    ef = E - b + 10
    code = np.where((ef >= 8) | np.isinf(a), 0x7F, (np.clip(ef, 0, 7) << 4) | (r - 16))
    code = np.where(ef < 0, 0, code)
    code = np.where((code & 0x7F) == 0, 0, code)
    sign = (x < 0) & (code != 0)
    code = np.where(sign, code | 0x80, code)
    code = np.where(a == 0, 0, code).astype(np.uint8)
    return int(code) if code.ndim == 0 else code


def fields(code: npt.ArrayLike) -> tuple[Ints, Ints, Ints, npt.NDArray[np.bool_]]:
    """(sign, exponent field, mantissa, is_zero) of codes."""
    c = np.asarray(code, dtype=np.int64)
    s, e, m = (c >> 7) & 1, (c >> 4) & 7, c & 15
    return s, e, m, (e == 0) & (m == 0)


@overload
def decode(code: int, b: int) -> float: ...
@overload
def decode(code: npt.ArrayLike, b: int) -> Floats: ...
def decode(code: npt.ArrayLike, b: int) -> float | Floats:
    """AdaptivFloat codes -> float64 values (exact); an int code (or 0-d array) gives a float."""
    s, e, m, z = fields(code)
    v = (16 + m) * np.exp2(e + b - 14)
    v = np.where(z, 0.0, np.where(s == 1, -v, v))
    return float(v) if v.ndim == 0 else v


@overload
def quantize(x: float, b: int | None = None) -> float: ...
@overload
def quantize(x: npt.ArrayLike, b: int | None = None) -> Floats: ...
def quantize(x: npt.ArrayLike, b: int | None = None) -> float | Floats:
    """Round-trip a float tensor through the encoder (b from its max when omitted)."""
    b = bias_for(x) if b is None else b
    return decode(encode(x, b), b)


def to_fixed14(code: npt.ArrayLike, b: int) -> Ints:
    """Codes -> Q6.14 integers `±(16+m) << (e+b)` (0 for zero codes)."""
    s, e, m, z = fields(code)
    v = (16 + m) << (e + b)
    return np.where(z, 0, np.where(s == 1, -v, v)).astype(np.int64)


def from_fixed14(v: npt.NDArray[np.integer], b: int) -> Codes:
    """Q6.14 integers -> codes with bias b (value v / 2^14)."""
    return encode(np.asarray(v, dtype=np.float64) / (1 << Q), b)


def wrap(v: npt.ArrayLike, bits: int) -> Ints:
    """Two's-complement wrap of integers to `bits` bits."""
    v = np.asarray(v, dtype=np.int64)
    m = 1 << bits
    return ((v + (m >> 1)) % m) - (m >> 1)


def product_sum(w: npt.ArrayLike, x: npt.ArrayLike) -> Ints:
    """ProductSum: `±((16+m_w)(16+m_x)) << (e_w+e_x)` per pair, 0 for zero codes."""
    sw, ew, mw, zw = fields(w)
    sx, ex, mx, zx = fields(x)
    p = ((16 + mw) * (16 + mx)) << (ew + ex)
    p = np.where(zw | zx, 0, p)
    return np.where((sw ^ sx) == 1, -p, p).astype(np.int64)


def clamp_act(v: npt.ArrayLike) -> Ints:
    """Saturate Q6.14 integers to the 20-bit activation range ±ACT_MAX."""
    return np.clip(np.asarray(v, dtype=np.int64), -ACT_MAX, ACT_MAX)


# ac_math PWL tables (in units of 2^-10).
_SIG_M = np.array([155, 130, 92, 58, 34, 19, 10, 6], np.int64)
_SIG_C = np.array([513, 668, 798, 890, 948, 982, 1001, 1012], np.int64)
_TANH_M = np.array([251, 224, 177, 129, 88, 57, 37, 23, 14, 9, 5, 3], np.int64)
_TANH_C = np.array([1, 252, 476, 653, 783, 871, 928, 965, 988, 1002, 1011, 1016], np.int64)


def _pwl(a: Ints, xs_q10: Ints, m_tab: Ints, c_tab: Ints, limit_q14: int) -> Ints:
    idx = np.minimum(xs_q10 >> 10, len(m_tab) - 1)
    f = xs_q10 & 1023
    y = (m_tab[idx] * f + (c_tab[idx] << 10)) >> 6
    return np.where(a >= limit_q14, (1 << Q) - 1, y)


def sigmoid14(v: npt.ArrayLike) -> Ints:
    """FlexASR SIGM on Q6.14 lanes (PWL on |x|, mirrored: 1 - y for x < 0)."""
    v = np.asarray(v, dtype=np.int64)
    a = np.abs(v)
    y = _pwl(a, (a * 1638) >> 14, _SIG_M, _SIG_C, 5 << Q)
    return np.where(v < 0, (1 << Q) - y, y)


def tanh14(v: npt.ArrayLike) -> Ints:
    """FlexASR TANH on Q6.14 lanes (PWL on |x|, odd)."""
    v = np.asarray(v, dtype=np.int64)
    a = np.abs(v)
    y = _pwl(a, a >> 2, _TANH_M, _TANH_C, 3 << Q)
    return np.where(v < 0, -y, y)
