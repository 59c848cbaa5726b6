"""Symbol bindings `NAME=INTEGER,...`: the `bind=` option of `step-specialize` /
`step-metrics` and the `step.bind` attribute of a graph.

A binding text is untrusted (a command line or a `.mlir` file). Every entry is
`NAME=INTEGER` with `NAME` an identifier (an optional leading `?` marks a
ragged symbol and is dropped) and `INTEGER` written in decimal digits, at most
`MAX_BINDING` (2**63 - 1, the int64 range): a negative, fractional, empty,
duplicated or huge value is an error that names the entry (1-based) and its
text.

Example:

```python
from steplus.passes.step.bindings import parse_bindings
parse_bindings("B=64, ?C=3")   # {"B": 64, "C": 3}
parse_bindings("B=64,B=32")    # BindingError: entry 2 'B=32': 'B' is bound twice ...
```
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation

from steplus.utils.diagnostics import OpDiagnosticError

MAX_BINDING = 2**63 - 1
"""The largest value a symbol may be bound to (a static dimension is an int64)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VALUE = re.compile(r"[0-9]+")


class BindingError(ValueError):
    """A binding text is malformed (the message names the entry)."""


def parse_bindings(text: str) -> dict[str, int]:
    """`"B=64, C=3"` -> {"B": 64, "C": 3}; empty entries (`"B=1,"`) are skipped."""
    out: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, part in enumerate((p.strip() for p in text.split(",")), start=1):
        if not part:
            continue
        name, value = _entry(i, part)
        if name in out:
            raise BindingError(f"bad binding entry {i} '{part}': '{name}' is bound twice "
                               f"(first in entry {first[name]})")
        out[name] = value
        first[name] = i
    return out


def _entry(i: int, part: str) -> tuple[str, int]:
    name, sep, value = (s.strip() for s in part.partition("="))
    name = name.removeprefix("?")
    where = f"bad binding entry {i} '{_short(part)}'"
    if not sep:
        raise BindingError(f"{where}: expected NAME=INTEGER")
    if not name:
        raise BindingError(f"{where}: the symbol name is empty")
    if not _NAME.fullmatch(name):
        raise BindingError(f"{where}: '{_short(name)}' is not a symbol name")
    if value.startswith("-") and _VALUE.fullmatch(value[1:]):
        raise BindingError(f"{where}: the value must be non-negative")
    if not _VALUE.fullmatch(value):
        raise BindingError(f"{where}: the value must be a non-negative integer")
    if len(value) > 20 or int(value) > MAX_BINDING:
        raise BindingError(f"{where}: the value exceeds the limit 2**63 - 1 = {MAX_BINDING}")
    return name, int(value)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def parse_bind_attr(attr: Attribute, op: Operation | None = None) -> dict[str, int]:
    """The bindings recorded in a graph's `step.bind` attribute; a malformed
    one is an error located at `op` (the graph)."""
    if not isinstance(attr, StringAttr):
        raise OpDiagnosticError(op, f"step.bind must be a string \"NAME=INTEGER,...\", got {attr}")
    try:
        return parse_bindings(attr.data)
    except BindingError as e:
        raise OpDiagnosticError(op, f"step.bind: {e}") from None
