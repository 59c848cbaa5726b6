"""Helpers shared by the step op verifiers (shape-rule checks of tables 2-6)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import DenseArrayBase, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step_types import SelectorType, TileType, StreamType, is_static

# The custom form of most step ops: `step.op %a, %b {props} : (A, B) -> R`.
FMT = "operands attr-dict `:` functional-type(operands, results)"
# The custom form of generators (no operands): `step.op {props} : R`.
GEN_FMT = "attr-dict `:` type($output)"


def stream_of(op: Operation, value: SSAValue, what: str) -> StreamType:
    """The stream type of `value`, or a verifier error naming the operand."""
    t = value.type
    if not isinstance(t, StreamType):
        raise VerifyException(f"{op.name}: {what} must be a !step.stream, got {t}")
    return t


def int_of(attr) -> int:
    return attr.value.data


def ints_of(attr: DenseArrayBase | None) -> list[int]:
    return [] if attr is None else list(attr.get_values())


def check_dim(op: Operation, got, expected, what: str) -> None:
    """Reject a dimension that contradicts the tables where both are static."""
    got, expected = sympy.sympify(got), sympy.sympify(expected)
    if is_static(got) and is_static(expected) and got != expected:
        raise VerifyException(f"{op.name}: {what} is {got}, expected {expected}")


def same_dims(op: Operation, a: Sequence, b: Sequence, what: str) -> None:
    for i, (x, y) in enumerate(zip(a, b)):
        check_dim(op, x, y, f"{what} dimension {i}")


def is_address(t: Attribute) -> bool:
    return isinstance(t, TileType) and t.is_address


def is_i1(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def selector_of(op, s: StreamType, n: int | None = None) -> SelectorType:
    """The selector element type of the stream `s` (choosing among `n`, if given)."""
    if not isinstance(s.element, SelectorType):
        raise VerifyException(f"{op.name}: sel elements must be !step.selector")
    if n is not None and s.element.choices.data != n:
        raise VerifyException(
            f"{op.name}: selector chooses among {s.element.choices.data}, expected {n}"
        )
    return s.element
