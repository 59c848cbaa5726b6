# pyright: strict
"""The errors of the op semantics (a module of their own: the domains and the registry both raise them)."""

# pyright: strict

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


def located(op: Operation) -> str:
    """`(arith.divsi at prog.lus:3:7)`: the op and its source location when it has one (ops
    loaded by the tools do), as every backend words a run-time error of the program."""
    loc = op.location
    where = f" at {loc.filename.data}:{loc.line.data}:{loc.column.data}" if isinstance(loc, FileLineColLoc) else ""
    return f"({op.name}{where})"


class SemanticsError(Exception):
    """An op the semantics cannot evaluate (no implementation, or an unsupported form).

    `op`, when set, is the op at fault; the caller adds its tool's prefix and location."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.message = message
        self.op = op


class IntegerDivisionByZero(SemanticsError):
    """An integer division or remainder by zero: a run-time error of the program, not of the
    semantics (the reactive runtime reports it at the tick; see docs/guide/op-semantics.md)."""
