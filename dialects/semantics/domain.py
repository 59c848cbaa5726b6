# pyright: strict
"""Value domains of the tensor-op semantics: what a scalar is and how arithmetic combines scalars.

An op's meaning is written once (`tensor_ops.TensorSemantics`) in terms of a `Domain`'s
primitives: elementwise `unary` / `binary` / `compare` / `select` by kind name, `matmul`,
`einsum`, `reduce`, `conv2d`, constants (`lift`, `scalar`, `full`, `empty`) and casts.  Layout
ops (reshape, transpose, slices, pads, windows) need no primitive: they are numpy indexing, which
works on float arrays and on object arrays of terms alike.  `NumpyDomain` is float32 numpy
(step-run); the symbolic domain of isel-verify (`passes/isel/symbolic.py`) overrides the
primitives with z3 terms where an operand is symbolic.

Example::

    d = NumpyDomain()
    d.binary("add", d.unary("exp", x), y)     # float32 exp(x) + y
    d.reduce("max", x, (1,), keepdims=True)
"""

# pyright: strict

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute

from steplus.dialects.semantics.integers import INTEGER_BINARY


def _erf(x: Any) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": np.negative, "exp": np.exp, "tanh": np.tanh, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "abs": np.abs, "log": np.log, "erf": _erf, "floor": np.floor, "ceil": np.ceil, "cos": np.cos,
    "sin": np.sin, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "recip": lambda x: 1 / x,
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
    "min": np.minimum, "maxnum": np.fmax, "minnum": np.fmin, "pow": np.power,
    "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
}
INTEGER: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, **INTEGER_BINARY,
}
"""Integer primitives: wrapping elementwise ops, bitwise logic, MLIR's division and shifts (`integers.py`)."""
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    ">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal,
}
REDUCE: dict[str, Callable[..., Any]] = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
                                         "all": np.all, "any": np.any}


@functools.lru_cache(maxsize=256)
def numpy_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype of a scalar (or tensor element) type: `iN` as the smallest `intM` (M >= 8)
    holding it, `i1` as `bool`, `f16`/`f32`/`f64` as themselves (anything else as float32)."""
    if isinstance(t, TensorType):
        t = cast(TensorType[Attribute], t).element_type
    if isinstance(t, IntegerType):
        width = cast(IntegerType[int], t).bitwidth
        return np.dtype(np.bool_) if width == 1 else np.dtype(f"int{max(8, width)}")
    name = str(t)
    return np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(name, np.float32))


class NumpyDomain:
    """float32 numpy arrays (integer and boolean arrays where the op computes indices or masks).

    Its methods are the primitives an op's meaning is written in, each documented here; the other
    domains subclass it and override the primitives they compute differently (`Domain` names the
    interface: `TypedNumpyDomain` below, isel-verify's `SymbolicDomain`)."""

    name = "numpy"
    lowest = -np.inf  # the identity of max, used to pad max-pooling windows

    # -- values ---------------------------------------------------------------------------------
    def lift(self, arr: np.ndarray, what: str) -> Any:
        """A constant's value (`what` names the op for errors): float64 becomes float32."""
        return arr.astype(np.float32) if arr.dtype == np.float64 else arr

    def scalar(self, v: float | int) -> Any:
        """A scalar constant of a `linalg.generic` body (or a pad value)."""
        return np.float32(v) if isinstance(v, float) else np.int64(v)

    def full(self, shape: Sequence[int], v: Any, like: Any = None) -> np.ndarray:
        """A tensor of `shape` filled with `v` (dtype of `like` if given, else float32)."""
        return np.full(tuple(shape), v, np.asarray(like).dtype if like is not None else np.float32)

    def empty(self, shape: Sequence[int]) -> np.ndarray:
        """`tensor.empty`: contents unspecified (zeros)."""
        return np.zeros(tuple(shape), np.float32)

    def f32(self, x: Any) -> Any:
        """Round a float result to float32 (integer and boolean results stay as they are)."""
        x = np.asarray(x)
        return x.astype(np.float32) if x.dtype.kind == "f" else x

    def to_float(self, x: Any) -> np.ndarray:
        """Any value as float32 (a generic's inputs and reduction results, an accelerator's result)."""
        return np.asarray(x, np.float32)

    def convert(self, kind: str, x: Any) -> Any:
        """Scalar casts: `float`, `ufloat` (from unsigned), `int` (truncating a float toward zero),
        `index` (an integer, sign-extended) or `uint` (zero-extended)."""
        if kind in ("ufloat", "uint"):  # the bits of a signed integer read as unsigned
            a = np.asarray(x)
            x = a.astype(np.dtype(f"uint{a.dtype.itemsize * 8}")) if a.dtype.kind == "i" else a
            kind = "float" if kind == "ufloat" else "index"
        if kind == "float":
            return np.asarray(x, np.float32)
        if kind == "int":
            return np.trunc(x).astype(np.int64)
        return np.asarray(x, np.int64)

    def cast(self, x: Any, element_type: str) -> Any:
        """`tosa.cast` to `element_type` (f*: float32, i1: nonzero, else integer rounding to nearest)."""
        x = np.asarray(x)
        if element_type.startswith("f"):
            return x.astype(np.float32)
        if element_type == "i1":
            return x != 0
        return np.rint(x).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)

    # -- arithmetic -----------------------------------------------------------------------------
    def unary(self, kind: str, x: Any) -> Any:
        return self.f32(UNARY[kind](x))

    def binary(self, kind: str, x: Any, y: Any) -> Any:
        return self.f32(BINARY[kind](x, y))

    def integer(self, kind: str, x: Any, y: Any) -> Any:
        """Integer / index arithmetic (no float rounding): `INTEGER`'s kinds, MLIR's division,
        remainder and shifts among them (`integers.py`: truncating, exact in 64 bits)."""
        return INTEGER[kind](x, y)

    def typed(self, x: Any, t: Attribute) -> Any:
        """A scalar op's result as a value of MLIR type `t`: unchanged here (float32 / int64 values)."""
        return x

    def unsigned(self, x: Any) -> Any:
        """An integer value's bits read as unsigned (for `arith.cmpi`'s unsigned predicates)."""
        a = np.asarray(x)
        return a.astype(np.dtype(f"uint{a.dtype.itemsize * 8}")) if a.dtype.kind in "iu" else x

    def compare(self, rel: str, x: Any, y: Any) -> Any:
        return COMPARE[rel](x, y)

    def select(self, c: Any, x: Any, y: Any) -> Any:
        return np.where(np.asarray(c), np.asarray(x), np.asarray(y))

    def matmul(self, a: Any, b: Any) -> np.ndarray:
        """Matrix product over the last two axes (leading axes batched)."""
        return self.f32(np.matmul(a, b))

    def einsum(self, spec: str, *xs: Any) -> np.ndarray:
        return self.f32(np.einsum(spec, *xs))

    def reduce(self, kind: str, x: Any, axis: tuple[int, ...], keepdims: bool = False) -> Any:
        return self.f32(REDUCE[kind](x, axis=axis, keepdims=keepdims))

    def conv2d(self, x: Any, w: Any, strides: tuple[int, int]) -> np.ndarray:
        """Valid NCHW/FCHW convolution, no dilation (the accelerators' reference summation)."""
        return conv2d_nchw(np.asarray(x), np.asarray(w), strides)


def conv2d_nchw(x: np.ndarray, w: np.ndarray, strides: Sequence[int] = (1, 1)) -> np.ndarray:
    """Valid NCHW/FCHW convolution in numpy (float32), summed over (c, kh, kw) as one GEMM."""
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    sh, sw = strides
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    cols = np.stack([x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)], axis=2)
    cols = cols.reshape(n, c * kh * kw, oh * ow)
    return np.einsum("kq,nqp->nkp", w.reshape(k, -1), cols).reshape(n, k, oh, ow).astype(np.float32)


Domain = NumpyDomain
"""The interface of a value domain: `NumpyDomain`'s primitives (a domain subclasses it)."""


class TypedNumpyDomain(NumpyDomain):
    """numpy values of the program's own types (the reactive runtimes): each scalar op's result
    is cast to its MLIR type's dtype (`numpy_dtype`: int32 wraps at 32 bits, f64 stays f64),
    floats are not rounded to float32, and a scalar `select` returns the chosen operand itself."""

    name = "numpy"

    def f32(self, x: Any) -> Any:
        return x

    def typed(self, x: Any, t: Attribute) -> Any:
        return np.asarray(x).astype(numpy_dtype(t))[()]

    def convert(self, kind: str, x: Any) -> Any:
        if kind in ("ufloat", "uint"):
            a = np.asarray(x)
            return a.astype(np.dtype(f"uint{a.dtype.itemsize * 8}")) if a.dtype.kind == "i" else a
        return x  # `typed` casts to the result type (numpy's astype truncates a float toward zero)

    def select(self, c: Any, x: Any, y: Any) -> Any:
        if np.ndim(c):
            return np.where(np.asarray(c), np.asarray(x), np.asarray(y))
        return x if bool(c) else y
