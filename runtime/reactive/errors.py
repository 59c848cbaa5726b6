"""The run-time errors of the reactive runtimes (lus, sync, and the IREE and modular drivers)."""

from __future__ import annotations


class ReactiveError(Exception):
    """A runtime error of a reactive program (absent or undefined value read)."""


class RuntimeArithmeticError(ReactiveError):
    """An integer division or remainder by zero in a reaction: the program's error at that tick.

    The op's semantics raise it without the tick (`runtime/reactive/ops.py`); the stepper that
    runs tick `t` adds it (`at_tick`), so every backend reports `tick t: integer division by zero
    (arith.divsi at file:line:col)`."""

    def at_tick(self, tick: int) -> RuntimeArithmeticError:
        """This error, located at `tick` (once: a nested stepper does not add its own)."""
        text = str(self)
        return self if text.startswith("tick ") else RuntimeArithmeticError(f"tick {tick}: {text}")
