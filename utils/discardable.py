# pyright: strict
"""Registered discardable attributes: a name, its type and range, a verifier and one typed accessor.

MLIR lets a dialect own the discardable attributes named after it (`sn40l.tier`,
`runtime.context`) and verify them wherever they appear
(`Dialect::verifyOperationAttribute`). xDSL has no such hook, so a steplus
dialect lists its attributes as specs of this module and the op that encloses
them (`step.graph`) checks every registered one present on itself and on its
operators. Passes and runtimes never read such an attribute with
`op.attributes.get(...)`: they call the spec's `get` (the typed value, or None
when absent) and write it with `set` (which checks the range), so the name and
the type are written once.

Four kinds, the printed form being the builtin attribute MLIR would print:

- `IntDiscardable`: `name = 3 : i64`, optionally bounded below and above;
- `IntArrayDiscardable`: `name = array<i64: 1, 2>`, each element bounded the same way
  (how many elements an op needs is the reader's to check: it knows the op);
- `StrDiscardable`: `name = "ddr"`, optionally one of a set of choices;
- `UnitDiscardable`: `name` alone (a flag).

A reader that must not fall back silently on a malformed value (IR built in
Python and never verified) calls `check_on(op)` first: a ValueError with the
verifier's message when the attribute is there but invalid; `get` then
returns the typed value, or None when it is absent.

Example:

```python
from xdsl.dialects.builtin import ModuleOp
DEPTH = IntDiscardable("runtime.depth", on_graph=True, lo=1)
m = ModuleOp([])
DEPTH.set(m, 2)
DEPTH.get(m)          # 2
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, IntegerType, StringAttr, UnitAttr, i1, i64
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException


def _count(attr: Attribute) -> int | None:
    """An integer attribute's value; None for any other attribute and for a boolean
    (`true` is i1's -1, not a count)."""
    if not isinstance(attr, IntegerAttr):
        return None
    value = cast(IntegerAttr[IntegerType], attr)
    return None if value.type == i1 else value.value.data


@dataclass(frozen=True)
class DiscardableSpec:
    """What every registered attribute has: its name and where it lives (on the
    enclosing container -- a `step.graph` -- or on one of its operators)."""

    name: str
    on_graph: bool

    def describe(self) -> str:
        """What a value must be, as the verifier's message says it."""
        raise NotImplementedError

    def check(self, attr: Attribute) -> str | None:
        """None when `attr` is a valid value, else what was found instead."""
        raise NotImplementedError

    def message(self, got: str) -> str:
        """What is wrong with a value shown as `got` (the verifier's and the readers' words)."""
        return f"'{self.name}' must be {self.describe()}, got {got}"

    def verify(self, owner: Operation, attr: Attribute) -> None:
        """VerifyException naming `owner`, the attribute and the bad value."""
        got = self.check(attr)
        if got is not None:
            raise VerifyException(f"{owner.name}: {self.message(got)}")

    def check_on(self, op: Operation) -> None:
        """ValueError (the verifier's message, without the op) when `op` carries the
        attribute with an invalid value; nothing when it is absent or valid."""
        attr = op.attributes.get(self.name)
        got = None if attr is None else self.check(attr)
        if got is not None:
            raise ValueError(self.message(got))

    def present(self, op: Operation) -> bool:
        return self.name in op.attributes

    def clear(self, op: Operation) -> None:
        op.attributes.pop(self.name, None)


def _bounds(lo: int | None, hi: int | None) -> str:
    """` in [lo, hi]`, ` >= lo`, ` <= hi` or nothing."""
    if lo is not None and hi is not None:
        return f" in [{lo}, {hi}]"
    if lo is not None:
        return f" >= {lo}"
    if hi is not None:
        return f" <= {hi}"
    return ""


@dataclass(frozen=True)
class IntDiscardable(DiscardableSpec):
    """An integer (`: i64` when written), at least `lo` / at most `hi` when they are set."""

    lo: int | None = None
    hi: int | None = None

    def describe(self) -> str:
        return "an integer" + _bounds(self.lo, self.hi)

    def in_range(self, v: int) -> bool:
        return (self.lo is None or v >= self.lo) and (self.hi is None or v <= self.hi)


    def check(self, attr: Attribute) -> str | None:
        v = _count(attr)
        if v is None:
            return str(attr)
        return None if self.in_range(v) else str(v)

    def get(self, op: Operation) -> int | None:
        """The value on `op` (None when absent or not a valid value)."""
        a = op.attributes.get(self.name)
        v = None if a is None else _count(a)
        return v if v is not None and self.in_range(v) else None

    def require(self, op: Operation) -> int:
        """The value on `op`; ValueError naming the attribute when it is absent or invalid."""
        v = self.get(op)
        if v is None:
            raise ValueError(f"{op.name}: no valid '{self.name}' (expected {self.describe()})")
        return v

    def set(self, op: Operation, value: int) -> None:
        """Write `value : i64` on `op`; ValueError when out of range."""
        if not self.in_range(value):
            raise ValueError(f"'{self.name}' must be {self.describe()}, got {value}")
        op.attributes[self.name] = IntegerAttr(value, i64)

    def attr(self, value: int) -> IntegerAttr:
        """The attribute `set` writes (for an op built with its attributes)."""
        if not self.in_range(value):
            raise ValueError(f"'{self.name}' must be {self.describe()}, got {value}")
        return IntegerAttr(value, i64)


@dataclass(frozen=True)
class IntArrayDiscardable(DiscardableSpec):
    """An array of integers (`array<i64: 1, 2>`), each at least `lo` / at most `hi` when set."""

    lo: int | None = None
    hi: int | None = None

    def describe(self) -> str:
        return "an array of integers" + _bounds(self.lo, self.hi)

    def in_range(self, v: int) -> bool:
        return (self.lo is None or v >= self.lo) and (self.hi is None or v <= self.hi)

    @staticmethod
    def _ints(attr: Attribute) -> list[int] | None:
        if not isinstance(attr, DenseArrayBase):
            return None
        arr = cast(DenseArrayBase[Any], attr)  # either element kind: checked next
        if not isinstance(arr.elt_type, IntegerType):
            return None
        values: tuple[int | float, ...] = arr.get_values()
        return [int(v) for v in values]

    def check(self, attr: Attribute) -> str | None:
        vs = self._ints(attr)
        if vs is None:
            return str(attr)[:80]
        if all(self.in_range(v) for v in vs):
            return None
        return "[" + ", ".join(map(str, vs[:8])) + (", ...]" if len(vs) > 8 else "]")

    def get(self, op: Operation) -> list[int] | None:
        """The values on `op` (None when absent or not a valid value)."""
        a = op.attributes.get(self.name)
        vs = None if a is None else self._ints(a)
        return vs if vs is not None and all(self.in_range(v) for v in vs) else None


    def attr(self, values: Iterable[int]) -> DenseArrayBase:
        vs = list(values)
        if not all(self.in_range(v) for v in vs):
            raise ValueError(self.message(str(vs)))
        return DenseArrayBase.from_list(i64, vs)

    def set(self, op: Operation, values: Iterable[int]) -> None:
        """Write `array<i64: values>` on `op`; ValueError when one is out of range."""
        op.attributes[self.name] = self.attr(values)


@dataclass(frozen=True)
class StrDiscardable(DiscardableSpec):
    """A string, one of `choices` when they are given."""

    choices: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        return "a string"

    def check(self, attr: Attribute) -> str | None:
        if not isinstance(attr, StringAttr):
            return str(attr)
        if self.choices and attr.data not in self.choices:
            return f'"{attr.data}"'
        return None

    def get(self, op: Operation) -> str | None:
        """The value on `op` (None when absent or not a valid value)."""
        a = op.attributes.get(self.name)
        if isinstance(a, StringAttr) and self.check(a) is None:
            return a.data
        return None


    def attr(self, value: str) -> StringAttr:
        a = StringAttr(value)
        if self.check(a) is not None:
            raise ValueError(f"'{self.name}' must be {self.describe()}, got \"{value}\"")
        return a

    def set(self, op: Operation, value: str) -> None:
        """Write `value` on `op`; ValueError when it is not one of the choices."""
        op.attributes[self.name] = self.attr(value)


@dataclass(frozen=True)
class UnitDiscardable(DiscardableSpec):
    """A flag: present (`name` alone, a unit attribute) or absent."""

    def describe(self) -> str:
        return "a unit attribute (the name alone)"

    def check(self, attr: Attribute) -> str | None:
        return None if isinstance(attr, UnitAttr) else str(attr)

    def get(self, op: Operation) -> bool:
        return isinstance(op.attributes.get(self.name), UnitAttr)


    def set(self, op: Operation, flag: bool = True) -> None:
        if flag:
            op.attributes[self.name] = UnitAttr()
        else:
            self.clear(op)


def registry(specs: Iterable[DiscardableSpec]) -> dict[str, DiscardableSpec]:
    """Name -> spec; ValueError on a name registered twice."""
    out: dict[str, DiscardableSpec] = {}
    for s in specs:
        if s.name in out:
            raise ValueError(f"discardable attribute '{s.name}' registered twice")
        out[s.name] = s
    return out


def verify_registered(op: Operation, specs: Mapping[str, DiscardableSpec], *,
                      is_graph: bool) -> None:
    """Check the registered attributes `op` carries (a graph's or one of its operators')."""
    for name, attr in op.attributes.items():
        spec = specs.get(name)
        if spec is not None and spec.on_graph == is_graph:
            spec.verify(op, attr)
