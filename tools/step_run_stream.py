"""step-run --stream: run a node tick by tick on input lines read from stdin.

    printf '1 0\\n2 1\\n' | step-run prog.lus --node counter --stream [--backend iree]

Each line of stdin is one tick: the values of every input in input order,
separated by ASCII spaces, tabs or commas (a tensor input gives its elements flattened in
row-major order; a bool is 0 or 1). The outputs of the tick are printed (and
flushed) as soon as the line is read, `tick t: ...` as in step-run, so
another program can drive the node interactively. The run stops at the end
of stdin, or after `--ticks` ticks if given; at most `--max-ticks` ticks.
Each value is parsed by its input's declared element type: an integer or a
bool (0 or 1) is decimal ASCII digits with an optional sign, read exactly
(an i64 never goes through a float64) and range-checked; a real is decimal or
exponent notation, `inf` or `nan`, and must fit its type. `1_000`, non-ASCII
digits, hex and `2.5` for an integer are errors.
Lines are at most 1 MiB; an empty line or a line starting with `#` is
skipped. A malformed line is an error `<stdin>:LINE: error: ...` (a wrong
number of values) or `<stdin>:LINE:COL: error: ...` (at the bad value),
exit 1, after the ticks before it were printed.

With `--backend iree` this is the per-tick path (`@<node>_step` per line):
inputs that are not known ahead cannot use the batched `@<node>_run`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import numpy as np

from steplus.tools.cli import InputError, UsageError
from steplus.tools.inputs import InputSignature, check_array

MAX_LINE = 1 << 20


_INTEGER = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)",
                   re.IGNORECASE)
_TOKEN = re.compile(r"[^ \t,]+")  # separators: ASCII space, tab, comma (no other whitespace)
MAX_TOKEN = 400
"""Longest value text (an integer literal of any supported type has at most 20 characters)."""


_INT_TYPE = re.compile(r"(s|u)?i([0-9]+)")


def _integer_range(element: str) -> tuple[int, int] | None:
    """The values of a declared integer type (`i8`, `si16`, `ui8`, `i1`, `index`), None if not one."""
    if element == "index":
        return -(2**63), 2**63 - 1
    m = _INT_TYPE.fullmatch(element)
    if m is None:
        return None
    width = int(m.group(2))
    if width == 1:
        return 0, 1
    if m.group(1) == "u":
        return 0, 2**width - 1
    return -(2 ** (width - 1)), 2 ** (width - 1) - 1


def _parse_value(token: str, sig: InputSignature) -> int | float | bool:
    """One value of `sig`'s element type, parsed by that declared type (ValueError: why not),
    as the runtime holds it (`sig.dtype`).

    Integers and booleans are decimal ASCII digits with an optional sign, read
    exactly (never through a float64) and checked against the declared type's
    range (`ui8`: 0..255, held as the same bits of an int8); reals are decimal or
    exponent notation, `inf` or `nan`. No `_` separators, no non-ASCII digits, no
    hex. A value the runtime's representation cannot hold exactly is refused."""
    if len(token) > MAX_TOKEN:
        raise ValueError(f"a value of {len(token)} characters is too long")
    bounds = _integer_range(sig.element_text)
    kind = sig.dtype.kind
    if bounds is None and kind in "iub":  # an integer dtype for a type not named above
        bounds = (0, 1) if kind == "b" else (int(np.iinfo(sig.dtype).min), int(np.iinfo(sig.dtype).max))
    if bounds is not None:
        if not _INTEGER.fullmatch(token):
            what = "an integer" if _REAL.fullmatch(token) else "a number"
            raise ValueError(f"{token[:40]!r} is not {what}")
        v = int(token)
        lo, hi = bounds
        if not lo <= v <= hi:
            raise ValueError(f"{v} is not 0 or 1" if (lo, hi) == (0, 1)
                             else f"{v} is out of range for {sig.element_text}")
        if kind == "b":
            return bool(v)
        if kind in "iu":  # the same bits in the runtime's integer of that width
            bits = sig.dtype.itemsize * 8
            v &= (1 << bits) - 1
            return v - (1 << bits) if kind == "i" and v >> (bits - 1) else v
        if int(np.array(v, dtype=sig.dtype).item()) != v:
            raise ValueError(f"{v} cannot be held exactly: {sig.element_text} values run as "
                             f"{sig.dtype.name} here")
        return float(v)
    if not _REAL.fullmatch(token):
        raise ValueError(f"{token[:40]!r} is not a number")
    v = float(token)
    if np.isfinite(v):
        with np.errstate(over="ignore"):
            if not np.isfinite(np.array(v).astype(sig.dtype)):
                raise ValueError(f"{token[:40]} is out of range for {sig.element_text}")
    return v


def _parse_line(line: str, sigs: Sequence[InputSignature], where: str) -> list[object]:
    """The values of one tick: each input's tokens parsed by its declared element type."""
    spans = [(m.group(), m.start() + 1) for m in _TOKEN.finditer(line)]
    widths = [math.prod(d for d in s.dims if d is not None) if s.dims else 1 for s in sigs]
    if len(spans) != sum(widths):
        want = " + ".join(f"{s.name} ({w})" for s, w in zip(sigs, widths)) or "nothing"
        raise InputError([f"{where}: error: expected {sum(widths)} value(s), "
                          f"{want}; got {len(spans)}"])
    values: list[object] = []
    k = 0
    for sig, w in zip(sigs, widths):
        parsed = []
        for token, col in spans[k:k + w]:
            try:
                parsed.append(_parse_value(token, sig))
            except ValueError as e:
                raise InputError([f"{where}:{col}: error: input '{sig.name}' expects "
                                  f"{sig.describe()}; {e}"]) from None
        k += w
        arr = np.array(parsed, dtype=sig.dtype)
        dims = [d for d in sig.dims if d is not None]  # all of them: `stream` refuses a dynamic one
        arr = arr.reshape((1, *dims)) if sig.dims else arr
        values.append(check_array(sig, arr, where)[0])
    return values


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
    if source is None or out is None:  # the interpreter was started without them
        raise UsageError("--stream needs a standard input and output")
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
        outputs = step(_parse_line(line.rstrip("\r\n"), sigs, where))
        out.write(f"tick {t}: " + " ".join(fmt(v) for v in outputs) + "\n")
        out.flush()
        t += 1
    return 0
