"""Located diagnostics for steplus passes and verifiers.

A pass or analysis that rejects a program raises `OpDiagnosticError` naming the
operation at fault (and optional notes on other operations).  Warnings and
remarks that do not stop compilation go through `emit(...)`, which records them
in the active `DiagnosticEngine`.  `step-opt` turns both into MLIR-style lines,
`file:line:col: error: message`, using the source location of each operation;
`--verify-diagnostics` checks them against `// expected-error {{...}}`
annotations.

Example (inside a pass)::

    from steplus.utils.diagnostics import OpDiagnosticError, emit

    emit(op, "remark", "dynamic tiling does not apply: no reshape on tokens")
    raise OpDiagnosticError(use, "expected clock base, found base on %c",
                            notes=[(defn, "clock inferred here")])
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

SEVERITIES = ("error", "warning", "remark", "note")


class OpDiagnosticError(PassFailedException):
    """An error attached to an operation, with optional notes on other operations."""

    def __init__(
        self,
        op: Operation | None,
        message: str,
        notes: Sequence[tuple[Operation | None, str]] = (),
    ):
        super().__init__(message)
        self.op = op
        self.message = message
        self.notes = list(notes)


@dataclass
class Diagnostic:
    """One diagnostic: severity, message and the operation it is attached to."""

    severity: str
    message: str
    op: Operation | None = None


@dataclass
class DiagnosticEngine:
    """Collects non-fatal diagnostics (warnings, remarks) emitted by passes."""

    diagnostics: list[Diagnostic] = field(default_factory=list[Diagnostic])


_ENGINE: contextvars.ContextVar[DiagnosticEngine | None] = contextvars.ContextVar(
    "steplus_diagnostic_engine", default=None
)


@contextmanager
def collecting_diagnostics() -> Iterator[DiagnosticEngine]:
    """Install a fresh engine for the duration of a `with` block."""
    engine = DiagnosticEngine()
    token = _ENGINE.set(engine)
    try:
        yield engine
    finally:
        _ENGINE.reset(token)


def emit(op: Operation | None, severity: str, message: str) -> None:
    """Record a non-fatal diagnostic; without an active engine it is dropped
    (library use from Python stays silent)."""
    if severity not in SEVERITIES:
        raise ValueError(f"unknown severity {severity!r}")
    engine = _ENGINE.get()
    if engine is not None:
        engine.diagnostics.append(Diagnostic(severity, message, op))


class NotApplicable(Exception):
    """A transformation does not apply to this input; the message says why.

    Passes raise it from their matchers and report it as a remark ("nothing to do:
    <why>"), instead of returning a reason string in place of a result."""
