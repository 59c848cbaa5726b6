"""Builtin-attribute helpers used across steplus (one home; the layers above import these).

>>> int_of(i64_attr(3)), ints_of(i64_array([1, 2])), ints_of(None)
(3, [1, 2], [])
>>> int_values(i64_array([2, 2])), int_values(i64_attr(3))
((2, 2), None)
>>> ints_array(i64_array([0, 1, 1])).tolist(), ints_array(None).tolist()
([0, 1, 1], [])
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    ShapedType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue


def i64_attr(value: int) -> IntegerAttr:
    """`value : i64`."""
    return IntegerAttr(int(value), i64)


def i64_array(values: Iterable[int] | np.ndarray) -> DenseArrayBase:
    """`array<i64: ...>`; numpy arrays are packed directly (`from_list` normalizes
    each value in Python: seconds for a B=1024 routing matrix)."""
    if isinstance(values, np.ndarray):
        return DenseArrayBase(i64, BytesAttr(np.ascontiguousarray(values, dtype="<i8").tobytes()))
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def int_of(attr: IntegerAttr) -> int:
    """The Python int of an integer attribute."""
    return attr.value.data


def ints_of(attr: DenseArrayBase | None) -> list[int]:
    """The Python ints of a dense array (an absent optional property is `[]`)."""
    # the element type's unpack: `get_values` is typed for arrays whose element type is
    # known statically, and most properties here are declared as any `DenseArrayBase`
    return [] if attr is None else [int(v) for v in attr.elt_type.unpack(attr.data.data, len(attr))]


def ints_array(attr: DenseArrayBase | None) -> np.ndarray:
    """The ints of an integer dense array as a numpy array of its element type, read from
    the bytes directly (`ints_of` makes one Python int per element: ~0.1 s for the
    1,048,576 one-hot selectors of a Qwen B=1024 trace); an absent property is empty."""
    if attr is None:
        return np.zeros(0, dtype=np.int64)
    elt = attr.elt_type
    if not isinstance(elt, IntegerType):
        return np.array(ints_of(attr), dtype=np.int64)
    return np.frombuffer(attr.data.data, dtype=np.dtype(elt.format), count=len(attr))


def int_values(attr: Attribute | None) -> tuple[int, ...] | None:
    """The ints of an array attribute (`array<i64: ...>` or `dense<...>`), None for any other
    attribute or none."""
    if isinstance(attr, DenseArrayBase | DenseIntOrFPElementsAttr):
        return tuple(int(v) for v in attr.get_values())
    return None


def int_prop(op: Operation, name: str) -> tuple[int, ...]:
    """The ints of `op`'s array property `name`, for ops whose definition requires it; a
    KeyError naming it if it is absent or not an integer array."""
    values = int_values(op.properties.get(name))
    if values is None:
        raise KeyError(f"{op.name} has no integer array property '{name}'")
    return values


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The shape of a value of shaped type (tensor, memref, vector), for operands whose op's
    constraints have fixed that type; a TypeError naming the type otherwise."""
    t = value.type
    if not isinstance(t, ShapedType):
        raise TypeError(f"expected a value of shaped type, got {t}")
    return tuple(t.get_shape())
