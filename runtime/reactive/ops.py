"""numpy semantics of the ordinary ops a lus node body may contain.

`evaluate(op, args)` returns the results of one op on present operand values.
Integers wrap like the machine types (numpy fixed-width scalars); `i1` is
`numpy.bool_`. Unsupported ops raise `ReactiveError` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import functools
import weakref

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation


@functools.lru_cache(maxsize=256)
def numpy_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype of a scalar (or tensor element) type."""
    if isinstance(t, TensorType):
        t = t.element_type
    if isinstance(t, IntegerType):
        width = t.width.data
        return np.dtype(np.bool_) if width == 1 else np.dtype(f"int{max(8, width)}")
    name = str(t)
    return np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(name, np.float32))


_CONSTANTS: weakref.WeakKeyDictionary[Operation, object] = weakref.WeakKeyDictionary()


def _constant(op: Operation) -> object:
    """The value of a constant op (decoded once: dense weights are large)."""
    cached = _CONSTANTS.get(op)
    if cached is None:
        cached = _CONSTANTS[op] = _decode_constant(op)
        if isinstance(cached, np.ndarray):
            cached.flags.writeable = False
    return cached


def _decode_constant(op: Operation) -> object:
    value = op.properties.get("value")
    if value is None:
        value = op.attributes.get("value")
    t = op.results[0].type
    if isinstance(value, IntegerAttr):
        return numpy_dtype(t).type(value.value.data)
    if isinstance(value, FloatAttr):
        return numpy_dtype(t).type(value.value.data)
    if isinstance(value, DenseIntOrFPElementsAttr):
        shape = t.get_shape() if isinstance(t, TensorType) else ()
        data = np.array(value.get_values(), dtype=numpy_dtype(t))
        return data.reshape(shape) if data.size == int(np.prod(shape)) else np.full(shape, data[0])
    raise _error(op, "unsupported constant")


_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
_CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
         6: np.not_equal, 8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less,
         12: np.less_equal, 13: np.not_equal}


def _int_div(a, b):
    q = np.trunc(np.true_divide(a, b))
    return np.asarray(q).astype(np.result_type(a, b))[()]


def _int_rem(a, b):
    return np.fmod(a, b)


_BINARY: dict[str, Callable] = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.divsi": _int_div, "arith.remsi": _int_rem,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
}
_UNARY: dict[str, Callable] = {
    "arith.negf": np.negative, "math.exp": np.exp, "math.tanh": np.tanh,
    "math.sqrt": np.sqrt, "math.absf": np.abs,
}


def _error(op: Operation, msg: str) -> Exception:
    from steplus.runtime.reactive.interpreter import ReactiveError

    return ReactiveError(f"{op.name}: {msg}")


def evaluate(op: Operation, args: Sequence[object]) -> list[object]:
    """The results of `op` on present operand values."""
    name = op.name
    out_t = op.results[0].type if op.results else None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if name == "arith.constant":
            return [_constant(op)]
        if name in _BINARY:
            r = _BINARY[name](args[0], args[1])
            return [np.asarray(r).astype(numpy_dtype(out_t))[()]]
        if name in _UNARY:
            return [np.asarray(_UNARY[name](args[0])).astype(numpy_dtype(out_t))[()]]
        if name == "arith.cmpi":
            pred = op.properties["predicate"].value.data
            a, b = args
            if pred >= 6:  # unsigned predicates
                a, b = np.asarray(a).astype(np.uint64), np.asarray(b).astype(np.uint64)
            return [np.bool_(_CMPI[pred](a, b))]
        if name == "arith.cmpf":
            pred = op.properties["predicate"].value.data
            if pred not in _CMPF:
                raise _error(op, f"unsupported predicate {pred}")
            return [np.bool_(_CMPF[pred](args[0], args[1]))]
        if name == "arith.select":
            if np.ndim(args[0]):
                return [np.where(args[0], args[1], args[2])]
            return [args[1] if bool(args[0]) else args[2]]
        if name == "linalg.matmul":  # C + A @ B on the `outs` accumulator
            acc = np.matmul(args[0], args[1]).astype(numpy_dtype(out_t)) + args[2]
            return [acc.astype(numpy_dtype(out_t))]
        if name == "linalg.fill":
            return [np.full_like(args[1], args[0])]
        if name == "tensor.empty":
            return [np.zeros(out_t.get_shape(), numpy_dtype(out_t))]
        if name in ("arith.extsi", "arith.trunci", "arith.sitofp", "arith.fptosi",
                    "arith.extf", "arith.truncf", "arith.index_cast"):
            return [np.asarray(args[0]).astype(numpy_dtype(out_t))[()]]
    raise _error(op, "not supported by the reactive runtime")
