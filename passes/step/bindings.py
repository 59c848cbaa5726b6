"""Symbol bindings: the `bind="NAME=INTEGER,..."` option of `step-specialize` /
`step-metrics` / `step-run --bind`, and the `step.bind` attribute of a graph.

A binding text is untrusted (a command line). Every entry is `NAME=INTEGER`
with `NAME` an identifier (an optional leading `?` marks a ragged symbol and is
dropped) and `INTEGER` written in decimal digits, at most `MAX_BINDING`
(2**63 - 1, the int64 range): a negative, fractional, empty, duplicated or huge
value is an error that names the entry (1-based) and its text.

The bindings a graph carries are a dictionary attribute of integers,
`step.bind = {B = 64 : i64, B_0 = 13 : i64}`: `step-specialize` writes it
(`set_graph_bindings`), `step-metrics` and `step-run` read it
(`graph_bindings`). It is untrusted too (a `.mlir` file): anything but a
dictionary of non-negative integers (at most `MAX_BINDING`) under symbol names
is an error located at the graph.

Example:

```python
from steplus.passes.step.bindings import bind_attr, parse_bindings
parse_bindings("B=64, ?C=3")   # {"B": 64, "C": 3}
parse_bindings("B=64,B=32")    # BindingError: entry 2 'B=32': 'B' is bound twice ...
bind_attr({"B": 64})           # {B = 64 : i64}, the value of a graph's step.bind
```
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, IntegerType, i64
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


BIND_ATTR = "step.bind"
"""The name of the attribute that records a graph's bindings."""


def bind_attr(values: dict[str, int]) -> DictionaryAttr:
    """The `step.bind` value recording `values`: `{B = 64 : i64, ...}`, in the given order."""
    return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in values.items()})


def parse_bind_attr(attr: Attribute, op: Operation | None = None) -> dict[str, int]:
    """The bindings recorded in a `step.bind` attribute (see `bind_attr`); a
    malformed one (not a dictionary, a key that is not a symbol name, a value
    that is not a non-negative integer of at most 2**63 - 1) is an error located
    at `op` (the graph)."""
    if not isinstance(attr, DictionaryAttr):
        raise OpDiagnosticError(
            op, f"step.bind must be a dictionary of integers {{NAME = INTEGER : i64, ...}}, "
            f"got {_short(str(attr))}")
    out: dict[str, int] = {}
    for name, value in attr.data.items():
        where = f"step.bind: entry '{_short(name)}'"
        if not _NAME.fullmatch(name):
            raise OpDiagnosticError(op, f"{where}: '{_short(name)}' is not a symbol name")
        if not (isinstance(value, IntegerAttr) and isinstance(value.type, IntegerType)
                and value.type.width.data > 1):
            raise OpDiagnosticError(
                op, f"{where}: the value must be an integer (NAME = 64 : i64), "
                f"got {_short(str(value))}")
        v = value.value.data
        if v < 0:
            raise OpDiagnosticError(op, f"{where}: the value must be non-negative, got {v}")
        if v > MAX_BINDING:
            raise OpDiagnosticError(
                op, f"{where}: the value exceeds the limit 2**63 - 1 = {MAX_BINDING}")
        out[name] = v
    return out


def graph_bindings(graph: Operation) -> dict[str, int]:
    """The bindings a graph records in `step.bind` ({} without one); a malformed
    attribute is an error located at the graph."""
    attr = graph.attributes.get(BIND_ATTR)
    return parse_bind_attr(attr, graph) if attr is not None else {}


def set_graph_bindings(graph: Operation, values: dict[str, int]) -> None:
    """Record `values` as the graph's `step.bind` (none: the attribute goes)."""
    if values:
        graph.attributes[BIND_ATTR] = bind_attr(values)
    else:
        graph.attributes.pop(BIND_ATTR, None)
