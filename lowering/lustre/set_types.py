"""Kind 2 set and map *types* (`sets.py` lowers their values): the slots
of a `set<T>` or `map<K, V>`, its capacity K and the scalar leaves of its
keys and values, registered per program by name (`set<int>`,
`map<int, [int, bool]>`).

Example::

    with capacity(16):          # sets and maps of 16 slots
        c = coll_of_type(prog, ast.TypeRef(0, "set", args=[ast.TypeRef(0, "int")]))
    c.name, c.cap, len(c.leaves)   # ('set<int>', 16, 33): a header, then per slot
                                   # a valid bit and an element
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.transform import LustreError, _unsupported

if TYPE_CHECKING:
    from steplus.lowering.lustre.program import Program

CAPACITY = 8
"""Slots of a set or map value by default (K): union and membership cost K^2 comparisons."""
MAX_CAPACITY = 64
"""The largest K `capacity` takes (`step-run --set-capacity`, `lus-translate --set-capacity`)."""
MAX_COMPARISONS = 1 << 16
"""Scalar comparisons one equality of two set or map values may take (`_comparisons`):
`set<set<int>>` at K = 8 takes 16,384, `set<set<set<int>>>` 2,097,152 (minutes to lower)."""
_capacity: ContextVar[int] = ContextVar("set capacity", default=CAPACITY)


def capacity(slots: int | None) -> AbstractContextManager[None]:
    """Import Lustre with sets and maps of `slots` slots (None: `CAPACITY`),
    `with capacity(16): ...`; ValueError outside 1..MAX_CAPACITY."""
    if slots is not None and not 1 <= slots <= MAX_CAPACITY:
        raise ValueError(f"the set capacity must be 1 to {MAX_CAPACITY}, not {slots}")
    return _using(CAPACITY if slots is None else slots)


@contextmanager
def _using(slots: int) -> Iterator[None]:
    token = _capacity.set(slots)
    try:
        yield
    finally:
        _capacity.reset(token)
KINDS = ("set", "map")
SET_LIT = "$set"
"""The node name of a set literal `{a, b}` (an `ast.Call`) and of `{}@<T>` (`ast.Var`)."""
FITS = "$fits"
"""`$fits(s)`: s has not overflowed (the capacity properties)."""
SMALL = "$small"
"""`$small(s)`: s has at most K/2 elements (the capacity assumption on inputs)."""
EMPTY_MAP = "$map"
"""`map[]@<K, V>` (an `ast.Var` with the two type arguments)."""


@dataclass
class Coll:
    """A set or map type: its name (`set<int>`), kind, capacity and the
    scalar leaves (path suffix, type) of its keys and values."""

    name: str
    kind: str
    cap: int
    key: list[tuple[str, ast.TypeRef]]
    val: list[tuple[str, ast.TypeRef]]

    @property
    def width(self) -> int:
        return 1 + len(self.key) + len(self.val)

    @property
    def leaves(self) -> list[tuple[str, ast.TypeRef]]:
        out: list[tuple[str, ast.TypeRef]] = [("", ast.TypeRef(0, self.name, tag=True))]
        for i in range(self.cap):
            out.append((f".has{i}", ast.TypeRef(0, "bool")))
            out += [(f".key{i}{s}", t) for s, t in self.key]
            out += [(f".val{i}{s}", t) for s, t in self.val]
        return out


def _registry(prog: Program) -> dict[str, Coll]:
    return prog.__dict__.setdefault("_colls", {})


def _leaf_name(prog: Program, leaves: list[tuple[str, ast.TypeRef]]) -> str:
    names = [prog.resolve_type(t) for _, t in leaves]
    return names[0] if len(names) == 1 else "[" + ", ".join(names) + "]"


def _make(prog: Program, kind: str, key: list[tuple[str, ast.TypeRef]],
          val: list[tuple[str, ast.TypeRef]], pos: int) -> Coll:
    name = f"{kind}<{_leaf_name(prog, key)}" + (f", {_leaf_name(prog, val)}>" if kind == "map"
                                                else ">")
    known = _registry(prog).get(name)
    if known is None:
        known = Coll(name, kind, _capacity.get(), key, val)
        shown = name if len(name) < 60 else name[:50] + "..."
        if len(known.leaves) > 4096:
            raise LustreError(pos, _unsupported(  # the type shows its K slots' sizes
                f"sets and maps of more than 4096 scalars ('{shown}')"))
        work = _comparisons(prog, known)
        if work > MAX_COMPARISONS:
            raise LustreError(pos, f"comparing two values of type {shown} takes {work} "
                              f"scalar comparisons (more than {MAX_COMPARISONS}): sets "
                              "nested too deeply")
        _registry(prog)[name] = known
    return known


def _comparisons(prog: Program, c: Coll) -> int:
    """Scalar comparisons of `c`'s set equality (`_coll_equal`): each slot of
    either side against each of the other, a nested set or map compared as one
    (a union or an insertion takes fewer). Grows as K^(2 * nesting)."""
    per_slot = 0
    for leaves in (c.key, c.val):
        j = 0
        while j < len(leaves):
            t = leaves[j][1]
            inner = coll_named(prog, prog.resolve_type(t)) if t.tag else None
            if inner is not None and j + len(inner.leaves) <= len(leaves):
                per_slot += _comparisons(prog, inner)
                j += len(inner.leaves)
            else:
                per_slot += 1
                j += 1
    return 2 * c.cap * c.cap * per_slot


def coll_of_type(prog: Program, ref: ast.TypeRef, depth: int = 0) -> Coll | None:
    """The set or map type `ref` names (`set<T>`, `map<K, V>`), else None."""
    if ref.name not in KINDS or ref.args is None or ref.tag:
        return None
    want = 1 if ref.name == "set" else 2
    if len(ref.args) != want:
        raise LustreError(ref.pos, f"'{ref.name}' takes {want} type argument(s), not "
                          f"{len(ref.args)}")
    key = prog.leaves(ref.args[0], depth + 1)
    val = prog.leaves(ref.args[1], depth + 1) if want == 2 else []
    return _make(prog, ref.name, key, val, ref.pos)


def coll_named(prog: Program, name: str) -> Coll | None:
    return _registry(prog).get(name)


__all__ = ["CAPACITY", "EMPTY_MAP", "FITS", "KINDS", "MAX_CAPACITY", "MAX_COMPARISONS",
           "SET_LIT", "SMALL", "Coll", "capacity", "coll_named", "coll_of_type"]
