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
from xdsl.ir import Operation

from steplus.dialects.semantics import (IntegerDivisionByZero, SemanticsError, TensorSemantics, TypedNumpyDomain,
                                        impl, numpy_dtype, register_semantics)
from steplus.dialects.semantics.registry import OpImpl
from steplus.dialects.semantics.constants import ConstantError, constant_array
from steplus.dialects.semantics.errors import located
from steplus.runtime.reactive.errors import ReactiveError, RuntimeArithmeticError

__all__ = ["ReactiveSemantics", "evaluate", "numpy_dtype"]

_CONSTANTS: weakref.WeakKeyDictionary[Operation, object] = weakref.WeakKeyDictionary()


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
    return RuntimeArithmeticError(f"{msg} {located(op)}")


_PLANS: weakref.WeakKeyDictionary[Operation, tuple[OpImpl, tuple[np.dtype, ...]]] = weakref.WeakKeyDictionary()


def _plan(op: Operation) -> tuple[OpImpl, tuple[np.dtype, ...]]:
    """`op`'s implementation and result dtypes, looked up once per op (a reaction re-runs its ops)."""
    plan = _PLANS.get(op)
    if plan is None:
        f = ReactiveSemantics.lookup(type(op))
        if f is None:
            raise _error(op, "not supported by the reactive runtime")
        plan = _PLANS[op] = (f, tuple(numpy_dtype(r.type) for r in op.results))
    return plan


def evaluate(op: Operation, args: Sequence[object]) -> list[object]:
    """The results of `op` on present operand values (each of its result type's dtype)."""
    f, dtypes = _plan(op)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            results = f(_SEMANTICS, op, list(args))
        except IntegerDivisionByZero as e:
            raise _arith_error(op, e.message) from None
        except SemanticsError as e:
            raise _error(op, e.message) from None
    return [v.astype(want) if isinstance(v, np.ndarray) and v.dtype != want else v
            for v, want in zip(results, dtypes)]
