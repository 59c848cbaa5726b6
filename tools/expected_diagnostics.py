"""`--verify-diagnostics`: check emitted diagnostics against source annotations.

The annotations follow mlir-opt::

    // expected-error @+1 {{operand must be a stream}}
    %0 = step.map ...
    %1 = lus.fby %a %b : i32  // expected-error {{types differ}}
    // expected-note @-2 {{clock inferred here}}

`@+N` / `@-N` are relative to the annotation's line, no offset means the same
line, `@above` / `@below` mean the previous / next line.  The message between
`{{` and `}}` must be a substring of the emitted message.  Every annotation must
be matched by a diagnostic of the same severity on that line, and every emitted
diagnostic must be expected; otherwise the check fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANNOTATION = re.compile(
    r"expected-(error|warning|remark|note)\s*"
    r"(@(?:[+-]\d+|above|below))?\s*"
    r"\{\{(.*?)\}\}"
)


@dataclass
class Expected:
    severity: str
    line: int
    message: str
    annotation_line: int
    matched: bool = False


@dataclass
class Emitted:
    severity: str
    line: int
    col: int
    message: str


def parse_annotations(text: str, line_offset: int) -> list[Expected]:
    """All `expected-*` annotations of a chunk, with file-numbered target lines."""
    expected: list[Expected] = []
    for index, line in enumerate(text.split("\n")):
        comment = line.find("//")
        if comment == -1:
            continue
        file_line = index + 1 + line_offset
        for m in _ANNOTATION.finditer(line, comment):
            severity, where, message = m.group(1), m.group(2), m.group(3)
            target = file_line
            if where == "@above":
                target = file_line - 1
            elif where == "@below":
                target = file_line + 1
            elif where:
                target = file_line + int(where[1:])
            expected.append(Expected(severity, target, message, file_line))
    return expected


_DIRECTIVE = re.compile(r"expected-(error|warning|remark|note)\b")


def annotation_errors(text: str, line_offset: int, name: str) -> list[str]:
    """Malformed annotations of a chunk: a directive without a `{{...}}`
    message (or with an unknown offset), or one whose offset points outside
    the chunk. Each would otherwise be silently ignored or never match."""
    lines = text.split("\n")
    first, last = line_offset + 1, line_offset + max(1, len(text.splitlines()))
    errors: list[str] = []
    for index, line in enumerate(lines):
        comment = line.find("//")
        if comment == -1:
            continue
        file_line = index + 1 + line_offset
        well_formed = {m.start() for m in _ANNOTATION.finditer(line, comment)}
        for d in _DIRECTIVE.finditer(line, comment):
            if d.start() not in well_formed:
                errors.append(f"{name}:{file_line}:{d.start() + 1}: error: malformed "
                              f"expected-{d.group(1)} annotation: expected an optional "
                              "@+N, @-N, @above or @below, then {{message}}")
    for e in parse_annotations(text, line_offset):
        if not first <= e.line <= last:
            errors.append(f"{name}:{e.annotation_line}:1: error: expected-{e.severity} "
                          f"annotation points to line {e.line}, outside lines "
                          f"{first}-{last}")
    return errors


def check(expected: list[Expected], emitted: list[Emitted], name: str) -> list[str]:
    """Match emitted against expected; return the failure messages (empty = ok)."""
    failures: list[str] = []
    for diag in emitted:
        match = next(
            (
                e
                for e in expected
                if not e.matched
                and e.severity == diag.severity
                and e.line == diag.line
                and e.message in diag.message
            ),
            None,
        )
        if match is None:
            failures.append(
                f"{name}:{diag.line}:{diag.col}: error: unexpected {diag.severity}: "
                f"{diag.message}"
            )
        else:
            match.matched = True
    for e in expected:
        if not e.matched:
            failures.append(
                f"{name}:{e.annotation_line}:1: error: expected {e.severity} "
                f'"{e.message}" on line {e.line} was not produced'
            )
    return failures
