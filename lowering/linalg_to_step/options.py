"""The options of `convert-linalg-to-step`: tile sizes, loop schedule, memory layout.

- `tile="MxN[xK][;I=MxN[xK]...]"`: the default matmul tile (rows of the left
  operand x columns of the result [x reduction]) and per-matmul overrides by
  index in program order (`tile="32x128;2=32x256"`). Element-wise ops on
  function arguments alone use `MxN`.
- `schedule="mn_mk"`: per matmul chain depth (0: the left operand is a
  function argument; d: it streams from a depth d-1 matmul), the dims that are
  tiled (letters of `mnk`); the last entry applies to deeper matmuls. A dim
  not tiled is one tile (size = the dim). Spec §8.1's "mn_mk": gate/up tiled
  along M and N, down along M and K.
- `memory="arg0=0,result0=1073741824,..."`: base addresses (bytes); the rest
  follows the default layout: arguments in order from 0, results from 1 GiB,
  each at the next 16 MiB boundary after the previous one
  (`memory="align=4096"` changes the boundary).

Example: `parse_tiles("32x128;2=32x256x64")` -> `({None: (32, 128, None), 2: (32, 256, 64)})`.
"""

from __future__ import annotations

import re

MAX_TILE = 1 << 20
ARG_ALIGN = 1 << 24  # 16 MiB: the reference graphs' layout (X 0, Wg 16 MiB, ...)
RESULT_BASE = 1 << 30
MAX_ADDR = 1 << 62

Tile = tuple[int, int, int | None]

_TILE = re.compile(r"^(\d+)x(\d+)(?:x(\d+))?$", re.ASCII)  # ASCII digits only


def _tile(text: str, where: str) -> Tile:
    m = _TILE.match(text.strip())
    if not m:
        raise ValueError(f"{where}: expected MxN or MxNxK, got '{text.strip()}'")
    sizes = [int(g) if g is not None else None for g in m.groups()]
    for s in sizes:
        if s is not None and not 1 <= s <= MAX_TILE:
            raise ValueError(f"{where}: tile sizes must be in 1..{MAX_TILE}, got {s}")
    return sizes[0], sizes[1], sizes[2]  # type: ignore[return-value]


def parse_tiles(text: str) -> dict[int | None, Tile]:
    """`tile=` -> {None: default, matmul index: override}."""
    parts = [p for p in text.split(";")]
    out: dict[int | None, Tile] = {None: _tile(parts[0], "tile")}
    for p in parts[1:]:
        key, eq, val = p.partition("=")
        if not eq or not re.fullmatch(r"[0-9]+", key.strip()):
            raise ValueError(f"tile: expected an override I=MxN[xK], got '{p.strip()}'")
        idx = int(key)
        if idx in out:
            raise ValueError(f"tile: matmul {idx} is overridden twice")
        out[idx] = _tile(val, f"tile override {idx}")
    return out


def parse_schedule(text: str) -> list[str]:
    """`schedule=` -> the tiled dims per chain depth."""
    tokens = text.strip().split("_")
    for t in tokens:
        if not t or any(c not in "mnk" for c in t) or len(set(t)) != len(t):
            raise ValueError(f"schedule: '{text}' is not a list of tiled dims like 'mn_mk' "
                             f"(letters m, n, k once each, '_' between matmul levels)")
    return tokens


def parse_memory(text: str) -> dict[str, int]:
    """`memory=` -> {"argI"/"resultI"/"align": bytes}."""
    out: dict[str, int] = {}
    for p in [p for p in text.split(",") if p.strip()]:
        key, eq, val = p.partition("=")
        key = key.strip()
        if not eq or not re.fullmatch(r"(arg|result)\d+|align", key):
            raise ValueError(f"memory: expected argI=ADDR, resultI=ADDR or align=BYTES, "
                             f"got '{p.strip()}'")
        try:
            if not re.fullmatch(r"-?(?:[0-9]+|0[xX][0-9a-fA-F]+)", val.strip()):
                raise ValueError  # int(_, 0) would also take 1_000, 0b101 and non-ASCII digits
            v = int(val.strip(), 0)
        except ValueError:
            raise ValueError(f"memory: '{val.strip()}' is not an integer address") from None
        if not 0 <= v < MAX_ADDR:
            raise ValueError(f"memory: {key}={v} is out of range 0..2^62")
        if key == "align" and (v < 1 or v & (v - 1)):
            raise ValueError(f"memory: align={v} is not a power of two")
        if key in out:
            raise ValueError(f"memory: {key} given twice")
        out[key] = v
    return out


def _align(x: int, a: int) -> int:
    return -(-x // a) * a


def layout(sizes: dict[str, int], memory: dict[str, int]) -> dict[str, int]:
    """Base address per tensor ("arg0", ..., "result0", ...; `sizes` in bytes, in
    order). Explicit addresses from `memory`; the others: arguments packed from
    0, results from 1 GiB (or past the arguments), at `align` boundaries.
    Raises ValueError on an unknown name or overlapping tensors."""
    align = memory.get("align", ARG_ALIGN)
    unknown = sorted(set(memory) - set(sizes) - {"align"})
    if unknown:
        raise ValueError(f"memory: no tensor {unknown[0]} (have {', '.join(sizes)})")
    out: dict[str, int] = {}
    nxt = 0
    for name, size in sizes.items():
        if name.startswith("result") and not any(k.startswith("result") for k in out):
            nxt = max(RESULT_BASE, _align(nxt, RESULT_BASE))
        base = memory.get(name, _align(nxt, align))
        if base + size > MAX_ADDR:
            raise ValueError(f"{name} needs {size} bytes at address {base}, past the end of "
                             f"the address space (2^62 bytes)")
        out[name] = base
        nxt = max(nxt, base + size)
    spans = sorted((b, b + sizes[n], n) for n, b in out.items())
    for (b0, e0, n0), (b1, _e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise ValueError(f"memory: {n1} at {b1} overlaps {n0} [{b0}, {e0})")
    return out
