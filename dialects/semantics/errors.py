"""The errors of the op semantics (a module of their own: the domains and the registry both raise them)."""

# pyright: strict

from __future__ import annotations

from xdsl.ir import Operation


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
