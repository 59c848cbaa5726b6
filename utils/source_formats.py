"""Which input files are Lustre source, and in which dialect they are read.

One table for the tools (step-opt, step-run, lus-translate read a file as
Lustre by its suffix, or as told by `--format`) and the Lustre frontend
(whose rules differ per dialect where Lustre V6 / Kind 2 and Heptagon do).

Example::

    lustre_dialect_of("prog.ept")   # "heptagon"
    lustre_dialect_of("prog.mlir")  # None
"""

from __future__ import annotations

__all__ = ["FORMATS", "LUSTRE_SUFFIXES", "lustre_dialect_of"]

LUSTRE_SUFFIXES = {".lus": "lustre", ".ept": "heptagon"}
"""File suffixes read as Lustre source, and the dialect each is read as."""

FORMATS = ("mlir", "lustre", "lustre-v6", "heptagon")
"""The values of the tools' `--format` option (stdin has no suffix; on a file it
overrides the suffix). `lustre` is Kind 2's reading of Lustre (a `pre` read in
its first cycle is undefined: an oracle), `lustre-v6` Lustre V6's (an
initialization error, as in Heptagon)."""


def lustre_dialect_of(filename: str, fmt: str | None = None) -> str | None:
    """`lustre` (Kind 2), `lustre-v6` or `heptagon` for a Lustre input, None for
    MLIR: by `fmt` when given, else by the file's suffix."""
    if fmt is not None:
        return None if fmt == "mlir" else fmt
    for suffix, dialect in LUSTRE_SUFFIXES.items():
        if filename.endswith(suffix):
            return dialect
    return None
