"""Sizes in bytes as users write them in pass options (`hbm=64GiB`, `ddr=1.5TiB`, `4096`).

One grammar, matched against the whole text (nothing is trimmed, truncated or
rounded):

```
size  := digits [ "." digits ] [ unit ]       (ASCII digits only, no spaces, no "_")
unit  := B | KB | MB | GB | TB | KiB | MiB | GiB | TiB | EiB   (any letter case)
```

The value is exact (a decimal fraction times the unit, never through a float)
and must be a whole number of bytes between 1 and `MAX_SIZE` (1 EiB); the text
is at most `MAX_SIZE_TEXT` characters. Anything else is a `ValueError` that
names the option and quotes the text (shortened for display only).

Example:

```python
from steplus.utils.sizes import parse_size
parse_size("1.5TiB", "ddr")   # 1649267441664
```
"""

from __future__ import annotations

import re
from fractions import Fraction

UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40, "EIB": 1 << 60}
"""Multipliers by upper-cased unit."""
MAX_SIZE = 1 << 60
"""Largest size accepted (1 EiB)."""
MAX_SIZE_TEXT = 64
"""Longest size text accepted (characters)."""

_SIZE = re.compile(r"([0-9]+)(?:\.([0-9]+))?([A-Za-z]*)", re.ASCII)


def _shown(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def parse_size(text: str, what: str) -> int:
    """`64GiB`, `1.5TiB`, `4096` -> bytes; a `ValueError` naming `what` otherwise."""
    text = str(text)
    example = "a size like 64GiB or 4096"
    if len(text) > MAX_SIZE_TEXT:
        raise ValueError(f"{what} must be {example} of at most {MAX_SIZE_TEXT} characters, "
                         f"got {len(text)} characters ('{_shown(text)}')")
    m = _SIZE.fullmatch(text)
    if not m or m.group(3).upper() not in UNITS:
        why = ""
        if any(c.isspace() for c in text):
            why = " (no spaces)"
        elif m is not None:
            why = f" (unknown unit '{m.group(3)}'; units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, EiB)"
        raise ValueError(f"{what} must be {example}{why}, got '{_shown(text)}'")
    whole, frac, unit = m.groups()
    value = (Fraction(int(whole)) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)) \
        * UNITS[unit.upper()]
    if value.denominator != 1:
        raise ValueError(f"{what} must be a whole number of bytes, got '{text}' = {float(value)} B")
    if not 1 <= value <= MAX_SIZE:
        raise ValueError(f"{what} must be between 1 B and 1 EiB, got '{text}'")
    return int(value)
