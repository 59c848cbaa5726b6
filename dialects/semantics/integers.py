# pyright: strict
"""MLIR's integer arithmetic on numpy fixed-width integers, written once.

Every function takes numpy integer values (scalars or arrays, one signed dtype: the operands'
common type) and computes in that width, never through float64 (2**53 + 1 stays exact):

- `divsi` truncates toward zero (`-7 / 2 = -3`), as `arith.divsi`, `tosa.intdiv` and C;
  `remsi` has the sign of the dividend (`-7 % 2 = -1`); `floordivsi` floors (`-7 // 2 = -4`);
  `ceildivsi` rounds up; `divui` / `remui` read the bits as unsigned.
- Division or remainder by zero raises `IntegerDivisionByZero` (MLIR: undefined behaviour;
  steplus: a run-time error of the program, reported at its tick by the reactive runtimes and,
  through a guard in `convert-sync-to-std`, by IREE).
- Signed overflow wraps: `INT_MIN / -1 = INT_MIN`, `INT_MIN % -1 = 0` (MLIR: poison for the
  division; steplus: the two's-complement value, the same on every backend).
- A shift by an amount (read as unsigned) of the bit width or more gives what shifting one bit
  at a time would: `shli` / `shrui` give 0, `shrsi` gives 0 or -1 by the sign (MLIR: poison).

Example::

    divsi(np.int32(-7), np.int32(2))          # -3
    remsi(np.int64(2**53 + 1), np.int64(1))   # 0 (exact)
"""

# pyright: strict

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from steplus.dialects.semantics.errors import IntegerDivisionByZero


DIVISION_BY_ZERO = "integer division by zero"
"""The error of a division or remainder by zero, worded the same by every backend (the IREE guards
of `lowering/arith_guards.py` assert with it)."""


def _quiet(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Run `f` with numpy's overflow warnings off: wrapping is the defined result."""

    @functools.wraps(f)
    def run(a: Any, b: Any) -> Any:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return f(a, b)

    return run


def _operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    x, y = np.asarray(a), np.asarray(b)
    dt = np.result_type(x, y)
    if dt.kind == "b":
        dt = np.dtype(np.int8)
    if dt.kind not in "iu":
        raise TypeError(f"integer arithmetic on {dt}")
    dt = np.dtype(f"int{dt.itemsize * 8}")
    return x.astype(dt), y.astype(dt), dt


def _shape(r: np.ndarray, a: Any, b: Any) -> Any:
    return r if np.ndim(a) or np.ndim(b) else r[()]


def _safe_divisor(x: np.ndarray, y: np.ndarray, dt: np.dtype) -> np.ndarray:
    """`y` with 1 where it is 0 (checked before) or where `x / y` overflows (INT_MIN / -1):
    `x / 1 = x` is then the wrapped quotient and `x % 1 = 0` the remainder."""
    if np.any(y == 0):
        raise IntegerDivisionByZero(DIVISION_BY_ZERO)
    lowest = np.iinfo(dt).min
    return np.where((x == lowest) & (y == -1), np.asarray(1, dt), y)


@_quiet
def floordivsi(a: Any, b: Any) -> Any:
    """`arith.floordivsi`: the quotient rounded toward negative infinity."""
    x, y, dt = _operands(a, b)
    return _shape(np.floor_divide(x, _safe_divisor(x, y, dt)), a, b)


@_quiet
def divsi(a: Any, b: Any) -> Any:
    """`arith.divsi` / `tosa.intdiv`: the quotient truncated toward zero."""
    x, y, dt = _operands(a, b)
    ys = _safe_divisor(x, y, dt)
    q = np.floor_divide(x, ys)
    r = x - q * ys
    q = q + ((r != 0) & ((x < 0) != (ys < 0))).astype(dt)  # floor -> trunc for a negative quotient
    return _shape(q.astype(dt), a, b)


@_quiet
def ceildivsi(a: Any, b: Any) -> Any:
    """`arith.ceildivsi`: the quotient rounded toward positive infinity."""
    x, y, dt = _operands(a, b)
    ys = _safe_divisor(x, y, dt)
    q = np.floor_divide(x, ys)
    return _shape((q + (x - q * ys != 0).astype(dt)).astype(dt), a, b)


@_quiet
def remsi(a: Any, b: Any) -> Any:
    """`arith.remsi`: the remainder of `divsi`, with the sign of the dividend."""
    x, y, dt = _operands(a, b)
    ys = _safe_divisor(x, y, dt)
    return _shape((x - divsi(x, ys) * ys).astype(dt), a, b)


def _unsigned(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    x, y, dt = _operands(a, b)
    u = np.dtype(f"uint{dt.itemsize * 8}")
    return x.astype(u), y.astype(u), dt


@_quiet
def divui(a: Any, b: Any) -> Any:
    """`arith.divui`: the operands' bits read as unsigned."""
    x, y, dt = _unsigned(a, b)
    if np.any(y == 0):
        raise IntegerDivisionByZero(DIVISION_BY_ZERO)
    return _shape(np.floor_divide(x, y).astype(dt), a, b)


@_quiet
def remui(a: Any, b: Any) -> Any:
    """`arith.remui`: the operands' bits read as unsigned."""
    x, y, dt = _unsigned(a, b)
    if np.any(y == 0):
        raise IntegerDivisionByZero(DIVISION_BY_ZERO)
    return _shape(np.remainder(x, y).astype(dt), a, b)


def _shift(a: Any, b: Any, kind: str) -> Any:
    x, y, dt = _operands(a, b)
    bits = dt.itemsize * 8
    u = np.dtype(f"uint{bits}")
    amount = y.astype(u)
    big = amount >= bits
    k = np.where(big, 0, amount).astype(dt)
    if kind == "shli":
        r = np.where(big, 0, np.left_shift(x, k))
    elif kind == "shrsi":
        r = np.where(big, np.where(x < 0, -1, 0), np.right_shift(x, k))
    else:
        r = np.where(big, 0, np.right_shift(x.astype(u), k.astype(u)).astype(dt))
    return _shape(np.asarray(r).astype(dt), a, b)


@_quiet
def shli(a: Any, b: Any) -> Any:
    """`arith.shli` (an amount >= the width gives 0)."""
    return _shift(a, b, "shli")


@_quiet
def shrsi(a: Any, b: Any) -> Any:
    """`arith.shrsi`: arithmetic shift (an amount >= the width gives the sign: 0 or -1)."""
    return _shift(a, b, "shrsi")


@_quiet
def shrui(a: Any, b: Any) -> Any:
    """`arith.shrui`: logical shift (an amount >= the width gives 0)."""
    return _shift(a, b, "shrui")


INTEGER_BINARY = {"divsi": divsi, "remsi": remsi, "floordivsi": floordivsi, "ceildivsi": ceildivsi,
                  "divui": divui, "remui": remui, "shli": shli, "shrsi": shrsi, "shrui": shrui}
"""The integer primitives (by kind name) that `Domain.integer` adds to the elementwise ones."""
