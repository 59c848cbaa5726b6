"""step-run --stream: run a node tick by tick on input lines read from stdin.

    printf '1 0\\n2 1\\n' | step-run prog.lus --node counter --stream [--backend iree]

Each line of stdin is one tick: the values of every input in input order,
separated by spaces or commas (a tensor input gives its elements flattened in
row-major order; a bool is 0 or 1). The outputs of the tick are printed (and
flushed) as soon as the line is read, `tick t: ...` as in step-run, so
another program can drive the node interactively. The run stops at the end
of stdin, or after `--ticks` ticks if given; at most `--max-ticks` ticks.
Lines are at most 1 MiB; an empty line or a line starting with `#` is
skipped. A malformed line is an error `<stdin>:LINE: error: ...` (exit 1)
after the ticks before it were printed.

With `--backend iree` this is the per-tick path (`@<node>_step` per line):
inputs that are not known ahead cannot use the batched `@<node>_run`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import numpy as np

from steplus.tools.cli import InputError, UsageError
from steplus.tools.inputs import InputSignature, check_array

MAX_LINE = 1 << 20


def _parse_line(text: str, sigs: Sequence[InputSignature], where: str) -> list[object]:
    tokens = [t for t in text.replace(",", " ").split() if t]
    widths = [int(np.prod(s.dims)) if s.dims else 1 for s in sigs]
    if len(tokens) != sum(widths):
        want = " + ".join(f"{s.name} ({w})" for s, w in zip(sigs, widths)) or "nothing"
        raise InputError([f"{where}: error: expected {sum(widths)} value(s), "
                          f"{want}; got {len(tokens)}"])
    try:
        numbers = _numbers(tokens)
    except ValueError:
        bad = next(t for t in tokens if not _is_number(t))
        raise InputError([f"{where}: error: '{bad[:40]}' is not a number"]) from None
    values: list[object] = []
    k = 0
    for sig, w in zip(sigs, widths):
        arr = numbers[k:k + w].reshape((1, *sig.dims)) if sig.dims else numbers[k:k + 1]
        k += w
        values.append(check_array(sig, arr, where)[0])
    return values


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _numbers(tokens: list[str]) -> np.ndarray:
    """Integers exactly when every token is one in the int64 range (a float64
    rounds past 2**53), else float64; ValueError for a token that is no number."""
    if all(_INTEGER.fullmatch(t) and len(t) <= 20 for t in tokens):
        values = [int(t) for t in tokens]
        if all(-(2**63) <= v < 2**63 for v in values):
            return np.array(values, dtype=np.int64)
    return np.array([float(t) for t in tokens], dtype=np.float64)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def stream(sigs: Sequence[InputSignature], step: Callable[[list[object]], list[object]],
           fmt: Callable[[object], str], ticks: int | None, max_ticks: int,
           source: TextIO | None = None, out: TextIO | None = None) -> int:
    """Run `step` once per input line of `source` (stdin), printing each tick."""
    for sig in sigs:
        if None in sig.dims:  # a line's element count cannot tell its shape
            raise UsageError(f"--stream cannot read input '{sig.name}' of dynamic shape "
                             f"{sig.shape_text()}: run without --stream and give it "
                             "as a file (--input)")
    source = sys.stdin if source is None else source
    out = sys.stdout if out is None else out
    limit = max_ticks if ticks is None else min(ticks, max_ticks)
    t = line_no = 0
    while t < limit:
        line = source.readline(MAX_LINE + 1)
        if not line:
            break
        line_no += 1
        where = f"<stdin>:{line_no}"
        if len(line) > MAX_LINE:
            raise InputError([f"{where}: error: line longer than {MAX_LINE} characters"])
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        outputs = step(_parse_line(text, sigs, where))
        out.write(f"tick {t}: " + " ".join(fmt(v) for v in outputs) + "\n")
        out.flush()
        t += 1
    return 0
