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

Three kinds, the printed form being the builtin attribute MLIR would print:

- `IntDiscardable`: `name = 3 : i64`, optionally bounded below and above;
- `StrDiscardable`: `name = "ddr"`, optionally one of a set of choices;
- `UnitDiscardable`: `name` alone (a flag).

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

from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException


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

    def verify(self, owner: Operation, attr: Attribute) -> None:
        """VerifyException naming `owner`, the attribute and the bad value."""
        got = self.check(attr)
        if got is not None:
            raise VerifyException(f"{owner.name}: '{self.name}' must be {self.describe()}, "
                                  f"got {got}")

    def present(self, op: Operation) -> bool:
        return self.name in op.attributes

    def clear(self, op: Operation) -> None:
        op.attributes.pop(self.name, None)


@dataclass(frozen=True)
class IntDiscardable(DiscardableSpec):
    """An integer (`: i64` when written), at least `lo` / at most `hi` when they are set."""

    lo: int | None = None
    hi: int | None = None

    def describe(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"an integer in [{self.lo}, {self.hi}]"
        if self.lo is not None:
            return f"an integer >= {self.lo}"
        if self.hi is not None:
            return f"an integer <= {self.hi}"
        return "an integer"

    def _in_range(self, v: int) -> bool:
        return (self.lo is None or v >= self.lo) and (self.hi is None or v <= self.hi)

    def check(self, attr: Attribute) -> str | None:
        if not isinstance(attr, IntegerAttr):
            return str(attr)
        v = attr.value.data
        return None if self._in_range(v) else str(v)

    def get(self, op: Operation) -> int | None:
        """The value on `op` (None when absent or not a valid value)."""
        a = op.attributes.get(self.name)
        if isinstance(a, IntegerAttr) and self._in_range(a.value.data):
            return a.value.data
        return None

    def require(self, op: Operation) -> int:
        """The value on `op`; ValueError naming the attribute when it is absent or invalid."""
        v = self.get(op)
        if v is None:
            raise ValueError(f"{op.name}: no valid '{self.name}' (expected {self.describe()})")
        return v

    def set(self, op: Operation, value: int) -> None:
        """Write `value : i64` on `op`; ValueError when out of range."""
        if not self._in_range(value):
            raise ValueError(f"'{self.name}' must be {self.describe()}, got {value}")
        op.attributes[self.name] = IntegerAttr(value, i64)

    def attr(self, value: int) -> IntegerAttr:
        """The attribute `set` writes (for an op built with its attributes)."""
        if not self._in_range(value):
            raise ValueError(f"'{self.name}' must be {self.describe()}, got {value}")
        return IntegerAttr(value, i64)


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
