"""Values given to Kind 2 free constants on the command line: `step-run
--const N=4` and `lus-translate --const N=4`.

A free constant `const N: int;` has no value in the program: Kind 2 treats it
as a symbolic parameter, steplus as a *held oracle* (an input, `oracles.py`).
Where its value must be known when the program is compiled — an array sized
by it, `A: int^N` — the program cannot be lowered without one; `--const
N=VALUE` gives it, and the constant is then `const N: int = VALUE;` for the
whole program (every node reads the same value; it is no input any more).

A value is an integer (decimal, within `int`'s 32 bits),
`true` / `false` or a decimal real; a subrange type's literal bounds are
checked (`const N: subrange [1, *] of int` refuses 0). A name the program
does not declare as a free constant is a located error at the start of the
program, naming the option.

Example::

    with bound(["N=4"]):            # ValueError for a malformed binding
        import_lustre(text, "prog.lus")
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.transform import LustreError

MAX_BINDINGS = 256
"""`--const` options one command line may give."""

_bound: ContextVar[dict[str, ast.Const] | None] = ContextVar("free constant values",
                                                             default=None)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"-?[0-9]{1,19}")
_REAL = re.compile(r"-?[0-9]{1,38}\.[0-9]{0,38}([eE][+-]?[0-9]{1,2})?")


def parse(binding: str) -> tuple[str, ast.Const]:
    """`NAME=VALUE` as a name and its constant; ValueError if malformed."""
    name, eq, value = binding.partition("=")
    name, value = name.strip(), value.strip()
    if not eq or not _NAME.fullmatch(name):
        raise ValueError(f"'{binding[:60]}' is not NAME=VALUE")
    if _INT.fullmatch(value):
        v = int(value)
        if not -(2 ** 31) <= v < 2 ** 31:
            raise ValueError(f"{name}: {value} does not fit an int (32 bits)")
        return name, ast.Const(0, v, "int")
    if value in ("true", "false"):
        return name, ast.Const(0, value == "true", "bool")
    if _REAL.fullmatch(value):
        return name, ast.Const(0, float(value), "real")
    raise ValueError(f"{name}: '{value[:40]}' is not an integer, true, false or a decimal "
                     "real")


def bound(bindings: Sequence[str] | None) -> AbstractContextManager[None]:
    """Import Lustre with these free constants given values (`NAME=VALUE`
    each): `with bound(["N=4"]): ...`; ValueError for a malformed or
    repeated binding (raised here, before the `with`)."""
    values: dict[str, ast.Const] = {}
    if len(bindings or ()) > MAX_BINDINGS:
        raise ValueError(f"at most {MAX_BINDINGS} constants")
    for b in bindings or ():
        name, c = parse(b)
        if name in values:
            raise ValueError(f"{name} is given twice")
        values[name] = c
    return _using(values or None)


@contextmanager
def _using(values: dict[str, ast.Const] | None) -> Iterator[None]:
    token = _bound.set(values)
    try:
        yield
    finally:
        _bound.reset(token)


def apply(prog: ast.Program) -> None:
    """Give the free constants of `prog` (top level and node-local) the values
    bound by `bound`, in place."""
    values = _bound.get()
    if not values:
        return
    free = [c for c in prog.consts if isinstance(c.value, ast.Any)]
    free += [c for n in prog.nodes for c in n.consts if isinstance(c.value, ast.Any)]
    names = {c.name for c in free}
    for name in values:
        if name not in names:
            raise LustreError(0, f"--const {name}=...: the program declares no free "
                              f"constant '{name}' ('const {name}: T;')")
    aliases = {t.name: t.alias for t in prog.types if t.alias is not None}
    for c in free:
        if c.name not in values:
            continue
        value = ast.Const(c.pos, values[c.name].value, values[c.name].kind)
        _check(c, value, aliases)
        c.value = value


def _spelling(value: ast.Const) -> str:
    """The value as Lustre writes it: `true`, not Python's `True`."""
    if value.kind == "bool":
        return "true" if value.value else "false"
    return str(value.value)


def _check(c: ast.ConstDecl, value: ast.Const, aliases: dict[str, ast.TypeRef]) -> None:
    """The value's kind against the constant's declared type, and a subrange's
    literal bounds (through aliases)."""
    ty = c.type
    seen: set[str] = set()
    while ty is not None and ty.name in aliases and ty.name not in seen:
        seen.add(ty.name)
        ty = aliases[ty.name]
    if ty is None:
        return
    if ty.name == "|" and ty.elem is not None:  # a refinement: its base type
        ty = ty.elem
    if ty.name in ("int", "real", "bool") and ty.name != value.kind:
        raise LustreError(c.pos, f"--const {c.name}={_spelling(value)}: '{c.name}' is of type "
                          f"{ty.name}, not {value.kind}")
    lo, hi = ty.bounds or (None, None)
    for bound_, ok in ((lo, lambda b: value.value >= b), (hi, lambda b: value.value <= b)):
        if isinstance(bound_, ast.Const) and isinstance(bound_.value, int) and \
                not ok(bound_.value):
            raise LustreError(c.pos, f"--const {c.name}={_spelling(value)}: outside the "
                              f"subrange type of '{c.name}'")
