"""The `step.regroup` context: a stream dim exchanged with a tile axis in an on-chip buffer.

A block is the `m x inner` input tiles of one element of the dims outside the
exchanged one (`m` the exchanged dim, `inner` the product of the dims inside
it). The context buffers a block, then emits its `extent x inner` output
tiles (`extent` the tile's rows for `axis=0`, columns for `axis=1`), one per
cycle, read from the buffer (`mu`: the consumer pays the PMU read of each
tile). The buffer is double: while it emits block `b` it dequeues the tiles
of block `b + 1` in proportion (`n_in / n_out` inputs per output), as the
seed's transposing stage buffers do (Fig. 4, `T0*`, `T1*`); no off-chip
traffic. Output levels: the inner dims' levels of the block's first
sub-block, `dim` at the end of each exchanged-dim element, and the block's
last input level at its end.

Functional mode: `out[r, q][i, c] = in[i, q][r, c]` (`axis=0`) or
`out[c, q][r, i] = in[i, q][r, c]` (`axis=1`).

It lives in its own module (not compiled by mypyc, `native.MODULES`): the
FFT graphs that use it have few, large blocks.

Example:

```python
RegroupCtx("t1", dim=1, axis=0, m=32, inner=32, extent=32)
```
"""

from __future__ import annotations

from typing import Any

import numpy as np

from steplus.runtime.fabric.channel import Element, Tile
from steplus.runtime.fabric.context import DEQ, ENQ, Body, SimulationError, StreamCtx


class RegroupCtx(StreamCtx):
    """Regroup(dim, axis): buffer a block, emit it with a stream dim and a tile axis exchanged."""

    __slots__ = ("dim", "axis", "m", "inner", "extent")

    def __init__(self, name: str, dim: int, axis: int, m: int, inner: int, extent: int):
        super().__init__(name)
        self.dim, self.axis = dim, axis
        self.m, self.inner, self.extent = m, inner, extent

    def _tile(self, block: list[Any], r: int, q: int) -> Tile:
        """Output tile `(r, q)` of a block of input elements."""
        t0: Tile = block[0].data
        rows, cols = (self.m, t0.cols) if self.axis == 0 else (t0.rows, self.m)
        value = None
        if t0.value is not None:
            parts = [np.asarray(block[i * self.inner + q].data.value) for i in range(self.m)]
            if self.axis == 0:
                value = np.stack([p[r, :] for p in parts])
            else:
                value = np.stack([p[:, r] for p in parts], axis=1)
        return Tile(rows, cols, t0.nb, True, value=value)

    def _level(self, block: list[Any], r: int, q: int) -> int:
        if q < self.inner - 1:
            return block[q].level
        return self.dim if r < self.extent - 1 else block[-1].level

    def body(self) -> Body:
        n_in, n_out = self.m * self.inner, self.extent * self.inner
        nxt: list[Any] = []
        ended = False
        while True:
            while not ended and len(nxt) < n_in:
                el = yield (DEQ, self.inp)
                if el is None:
                    ended = True
                else:
                    nxt.append(el)
            if not nxt:
                return
            if len(nxt) < n_in:
                raise SimulationError(f"{self.name}: the stream ends inside a block "
                                      f"({len(nxt)} of {n_in} tiles)")
            block, nxt = nxt, []
            self.firings += n_in
            for k in range(n_out):
                r, q = divmod(k, self.inner)
                self.work(1)
                if self.out is not None:
                    yield (ENQ, self.out, Element(self._tile(block, r, q),
                                                  self._level(block, r, q)), self.clock)
                want = min(n_in, (k + 1) * n_in // n_out)
                while not ended and len(nxt) < want:  # the other half of the double buffer
                    el = yield (DEQ, self.inp)
                    if el is None:
                        ended = True
                    else:
                        nxt.append(el)
