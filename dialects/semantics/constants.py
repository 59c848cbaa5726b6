# pyright: strict
"""The value of a constant op (`arith.constant`, `tosa.const`) as a numpy array.

Constants carry their value in several attribute shapes: a dense elements
attribute (splat `dense<0.0>` or one value per element), or a scalar
`FloatAttr` / `IntegerAttr` for a scalar result.  `constant_array` returns the
value broadcast to the result type's shape (a `dense_resource<...>` is read from the
file's resource blob, `dialects/resources.py`); an attribute it cannot read
(a missing blob, a dynamic shape, a mismatched element count) raises
`ConstantError` with a one-line message naming the op, which callers turn into
a located diagnostic.

Example::

    arr = constant_array(op)          # np.ndarray of the result type's shape
    vals = splat_value(op)            # float for a splat constant, else None
"""

# pyright: strict

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, FloatAttr, IntegerAttr, ShapedType
from xdsl.ir import Operation

from steplus.dialects import resources
from steplus.dialects.resources import ResourceError

# the blob of a `dense_resource` (dialects/resources.py, not typed strictly)
_resource_array = cast(Callable[[DenseResourceAttr], np.ndarray], resources.resource_array)

CONSTANT_OPS = ("arith.constant", "tosa.const")


class ConstantError(ValueError):
    """A constant whose value attribute cannot be read."""


def value_attr(op: Operation):
    """The value attribute of a constant op (`value` or TOSA's `values`)."""
    found = (op.properties.get("value"), op.properties.get("values"), op.attributes.get("value"),
             op.attributes.get("values"))
    attr = next((a for a in found if a is not None), None)  # not `or`: attributes may be falsy
    if attr is None:
        raise ConstantError(f"'{op.name}' has no value attribute")
    return attr


def _result_shape(op: Operation) -> tuple[int, ...]:
    t = op.results[0].type if op.results else None
    shape = tuple(t.get_shape()) if isinstance(t, ShapedType) else ()
    if any(d < 0 for d in shape):
        raise ConstantError(f"'{op.name}' has a dynamic shape")
    return shape


def _is_float(op: Operation) -> bool:
    t = op.results[0].type
    elt = getattr(t, "element_type", t)
    return str(elt).startswith(("f", "bf"))


def constant_array(op: Operation, max_elements: int | None = None) -> np.ndarray:
    """The constant's value, broadcast to its result shape (float64 or int64).

    `max_elements` bounds the size of the array built (a `ConstantError` past it)."""
    attr = value_attr(op)
    shape = _result_shape(op)
    size = int(np.prod(shape, dtype=np.int64))
    if max_elements is not None and size > max_elements:
        raise ConstantError(f"'{op.name}' has {size} elements, more than the limit {max_elements}")
    dtype = np.float64 if _is_float(op) else np.int64
    if isinstance(attr, DenseIntOrFPElementsAttr):
        vals = np.asarray(attr.get_values(), dtype=dtype)
    elif isinstance(attr, (FloatAttr, IntegerAttr)):
        vals = np.asarray([attr.value.data], dtype=dtype)
    elif isinstance(attr, DenseResourceAttr):
        try:
            vals = _resource_array(attr).astype(dtype)
        except ResourceError as e:
            raise ConstantError(f"'{op.name}': {e}") from None
    else:
        raise ConstantError(f"'{op.name}': cannot read a value attribute of kind '{attr.name}'")
    if vals.size == 1:
        return np.broadcast_to(vals.reshape(()), shape).copy()
    if vals.size != size:
        raise ConstantError(f"'{op.name}' has {vals.size} values for {size} elements")
    return vals.reshape(shape)


def splat_value(op: Operation) -> float | None:
    """The single value of a splat or scalar constant, or None (not a constant, several values, unreadable)."""
    if op.name not in CONSTANT_OPS or len(op.results) != 1:
        return None
    try:
        attr = value_attr(op)
    except ConstantError:
        return None
    if isinstance(attr, (FloatAttr, IntegerAttr)):
        return float(attr.value.data)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        vals = set(float(x) for x in attr.get_values())
        return vals.pop() if len(vals) == 1 else None
    return None
