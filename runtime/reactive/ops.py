"""The ordinary ops of a lus / sync node body, evaluated through the one op-semantics registry.

`evaluate(op, args)` returns the results of one op on present operand values: the meaning of
every `arith` / `math` / `tensor` / `linalg` op is `dialects/semantics`' (`TensorSemantics`)
over `TypedNumpyDomain`, numpy values of the program's own types: integers wrap like the
machine types (numpy fixed-width scalars), `i1` is `numpy.bool_`, integer division truncates
and never goes through float64.  A division or remainder by zero is a `RuntimeArithmeticError`
naming the op and its source location (the steppers add the tick); an op without semantics is a
`ReactiveError` naming the op.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from steplus.dialects.semantics import (IntegerDivisionByZero, SemanticsError, TensorSemantics, TypedNumpyDomain,
                                        impl, numpy_dtype, register_semantics)
from steplus.dialects.semantics.constants import ConstantError, constant_array
from steplus.runtime.reactive.errors import ReactiveError, RuntimeArithmeticError

__all__ = ["ReactiveSemantics", "evaluate", "numpy_dtype", "op_location"]

_CONSTANTS: weakref.WeakKeyDictionary[Operation, object] = weakref.WeakKeyDictionary()


def op_location(op: Operation) -> str:
    """` at file:line:col` when `op` carries a source location (ops loaded by step-run do), else ''."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f" at {loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return ""


@register_semantics
class ReactiveSemantics(TensorSemantics):
    """The registry's meaning over the program's own types; constants are decoded once per op."""

    @impl(arith.ConstantOp)
    def constant(self, op: Operation, a: list[Any]) -> list[Any]:
        cached = _CONSTANTS.get(op)
        if cached is None:
            try:
                arr = constant_array(op)
            except ConstantError as e:
                raise SemanticsError(str(e), op) from None
            cached = _CONSTANTS[op] = self.d.typed(arr, op.results[0].type)
            if isinstance(cached, np.ndarray):
                cached.flags.writeable = False  # dense weights are shared by every tick
        return [cached]


_SEMANTICS = ReactiveSemantics(TypedNumpyDomain())


def _error(op: Operation, msg: str) -> ReactiveError:
    return ReactiveError(f"{op.name}: {msg}")


def _arith_error(op: Operation, msg: str) -> RuntimeArithmeticError:
    return RuntimeArithmeticError(f"{msg} ({op.name}{op_location(op)})")


def evaluate(op: Operation, args: Sequence[object]) -> list[object]:
    """The results of `op` on present operand values (each of its result type's dtype)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            results = _SEMANTICS.apply(op, list(args))
        except IntegerDivisionByZero as e:
            raise _arith_error(op, e.message) from None
        except SemanticsError as e:
            if e.message.startswith("no numpy semantics"):
                raise _error(op, "not supported by the reactive runtime") from None
            raise _error(op, e.message) from None
    out = []
    for r, v in zip(op.results, results):
        want = numpy_dtype(r.type)
        if isinstance(v, np.ndarray) and v.dtype != want:
            v = v.astype(want)
        out.append(v)
    return out
