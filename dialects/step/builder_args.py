"""Argument checks of the Python graph frontend (`steplus.dialects.step.builder`).

One helper per kind of argument. Each takes `where` (the method, e.g.
`"Stream.map"`) and `arg` (the parameter name) and returns the value in the
form the builder needs, or raises `TypeError` (wrong kind of value) or
`BuilderError`, a `ValueError` (right kind, bad value), with a message that
names both and says what was expected:

```python
from steplus.dialects.step.builder_args import int_arg
int_arg("Stream.repeat", "count", "4", minimum=1)
# TypeError: Stream.repeat: count must be an int, got str '4'
```

Sizes a caller chooses (fan-out, selector choices, list lengths) are bounded
so a typo cannot make a builder allocate without limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType
from xdsl.ir import Attribute, Block, BlockArgument, SSAValue

from steplus.dialects.step.functions import StepFunction, all_functions, get_function
from steplus.dialects.step.types import DimError, StreamType, TileType, as_dim

_T = TypeVar("_T")

MAX_I64 = (1 << 63) - 1
MAX_COUNT = 1 << 16
"""Bound on a fan-out, a number of selector choices or of operands."""
MAX_LENGTH = 1 << 24
"""Bound on the length of a list of integers (shapes, strides, generator values)."""


class BuilderError(ValueError):
    """A builder argument has the right kind but a bad value, or a graph under
    construction is inconsistent (`step_frontend.FrontendError` is this class)."""


def show(value: object) -> str:
    """`type 'repr'` of a user value, shortened, for messages."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def int_arg(where: str, arg: str, value: object, minimum: int = 0,
            maximum: int = MAX_I64) -> int:
    """An integer in `minimum..maximum` (an `int` or numpy integer, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where}: {arg} must be an int, got {show(value)}")
    v = int(value)
    if not minimum <= v <= maximum:
        bound = f">= {minimum}" if maximum == MAX_I64 else f"in {minimum}..{maximum}"
        raise BuilderError(f"{where}: {arg} must be {bound}, got {v}")
    return v


def sequence_arg(where: str, arg: str, value: object, nonempty: bool = True,
                 max_length: int = MAX_LENGTH) -> list[object]:
    """A list or tuple (or a numpy array, read flattened), not a string, of bounded length."""
    if isinstance(value, np.ndarray):
        if value.size > max_length:
            raise BuilderError(f"{where}: {arg} has {value.size} entries, at most {max_length}")
        value = list(value.ravel())
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{where}: {arg} must be a list or tuple, got {show(value)}")
    if nonempty and not value:
        raise BuilderError(f"{where}: {arg} must not be empty")
    if len(value) > max_length:
        raise BuilderError(f"{where}: {arg} has {len(value)} entries, at most {max_length}")
    return list(value)


def ints_arg(where: str, arg: str, value: object, minimum: int = 0, nonempty: bool = True,
             length: int | None = None) -> list[int]:
    """A list of integers, each `>= minimum` (of `length` entries if given)."""
    items = sequence_arg(where, arg, value, nonempty=nonempty)
    if length is not None and len(items) != length:
        raise BuilderError(f"{where}: {arg} must have {length} entries, got {len(items)}")
    return [int_arg(where, f"{arg}[{i}]", v, minimum) for i, v in enumerate(items)]


def tile_arg(where: str, arg: str, value: object) -> tuple[int, int]:
    """A static tile shape `(rows, cols)`, both positive."""
    rows, cols = ints_arg(where, arg, value, minimum=1, length=2)
    return rows, cols


def tile_type_arg(where: str, tile: object, dtype: object) -> TileType:
    """The static tile type of arguments `tile` (rows, cols) and `dtype`."""
    rows, cols = tile_arg(where, "tile", tile)
    return TileType(rows, cols, dtype_arg(where, "dtype", dtype))


def dtype_arg(where: str, arg: str, value: object) -> Attribute:
    """A tile scalar type: an xDSL integer, index or float type (`f32`, `bf16`, `i64`)."""
    if isinstance(value, (IntegerType, IndexType)) or isinstance(value, AnyFloat):
        return value
    hint = " (use the type object, e.g. f32 from xdsl.dialects.builtin)" \
        if isinstance(value, str) else ""
    raise TypeError(f"{where}: {arg} must be an integer or float type{hint}, got {show(value)}")


def name_arg(where: str, arg: str, value: object) -> str | None:
    """An optional SSA name hint: None, or a valid MLIR value name (`x`, `acc0`)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{where}: {arg} must be a string or None, got {show(value)}")
    if value and not SSAValue.is_valid_name(value):
        raise BuilderError(f"{where}: {arg} {value!r} is not a valid value name "
                         "(letters, digits, '_', '$', '.', '-'; not starting with a digit)")
    return value or None


def names_arg(where: str, arg: str, value: object, count: int) -> list[str | None]:
    """Optional names of `count` results (fewer is fine: the rest are unnamed)."""
    items = sequence_arg(where, arg, value, nonempty=False, max_length=count)
    return [name_arg(where, f"{arg}[{i}]", n) for i, n in enumerate(items)]


def dims_arg(where: str, arg: str, value: object, nonempty: bool = True) -> list:
    """Stream dimensions (ints, sympy expressions or dimension text, see `as_dim`)."""
    items = sequence_arg(where, arg, value, nonempty=nonempty)
    out = []
    for i, d in enumerate(items):
        try:
            out.append(as_dim(d))
        except DimError as e:
            cls = TypeError if not isinstance(d, (str, int, np.integer)) else BuilderError
            raise cls(f"{where}: {arg}[{i}]: {e}") from None
    return out


def function_arg(where: str, arg: str, value: object,
                 operands: int | Sequence[Attribute] | None = None,
                 extra: int = 0) -> StepFunction:
    """A library function name (`step_functions`) applied to `operands` tiles.

    `operands` is a count or the element types the function gets (each must
    be a tile), `extra` the operands added by the op (an accumulator)."""
    if operands is not None and not isinstance(operands, int):
        bad = [e for e in operands if not isinstance(e, TileType)]
        if bad:
            raise BuilderError(f"{where}: {arg} applies to tiles; the stream element "
                               f"{bad[0]} is not a tile")
        operands = len(operands)
    if not isinstance(value, str):
        raise TypeError(f"{where}: {arg} must be a step function name, got {show(value)}")
    f = get_function(value)
    if f is None:
        known = ", ".join(sorted(all_functions()))
        raise BuilderError(f"{where}: unknown step function '{value}' for {arg} (known: {known})")
    if operands is not None and f.arity != operands + extra:
        raise BuilderError(f"{where}: {arg} '{value}' takes {f.arity} tile operand(s), "
                           f"got {operands + extra}")
    return f


def stream_value_arg(where: str, arg: str, value: object, block: Block,
                     consumed: set[SSAValue]) -> SSAValue:
    """A stream SSA value of the graph whose body is `block`, not yet consumed."""
    if not isinstance(value, SSAValue) or not isinstance(value.type, StreamType):
        raise TypeError(f"{where}: {arg} must be a stream of this graph, got {show(value)}")
    owner = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
    if owner is not block:
        raise BuilderError(f"{where}: {arg} is a stream of another graph")
    if value in consumed:
        raise BuilderError(f"{where}: {arg} is already consumed; a stream has one consumer "
                         "(broadcast it to feed several)")
    return value


def symbol_arg(where: str, arg: str, value: object) -> str:
    """A non-empty symbol name (a graph's `@name`)."""
    if not isinstance(value, str):
        raise TypeError(f"{where}: {arg} must be a string, got {show(value)}")
    if not value:
        raise BuilderError(f"{where}: {arg} must not be empty")
    return value


def element_arg(where: str, arg: str, value: object) -> Attribute:
    """A stream element type: an xDSL attribute (`TileType(...)`, `SelectorType(n)`, `i1`)."""
    if not isinstance(value, Attribute):
        raise TypeError(f"{where}: {arg} must be a stream element type "
                        f"(e.g. TileType(16, 64, f32)), got {show(value)}")
    return value


def optional_arg(where: str, arg: str, value: object, cls: type[_T], what: str) -> _T | None:
    """None or an instance of `cls` (described as `what` in the message)."""
    if value is not None and not isinstance(value, cls):
        raise TypeError(f"{where}: {arg} must be {what} or None, got {show(value)}")
    return value
