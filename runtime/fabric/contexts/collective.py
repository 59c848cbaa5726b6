"""Collective contexts (the step dialect's `all_reduce` / `all_gather`): one socket's end of a
ring over the peer-to-peer network of a tensor-parallel group.

Per input tile of `B` bytes the socket's links carry `2 (R - 1) / R x B`
(ring all-reduce: reduce-scatter then all-gather) or `(R - 1) x B`
(all-gather) bytes at `bytes_per_cycle` (links x link bandwidth / clock):
the context is busy that long (tiles queue on the links), and the combined
tile leaves `latency` cycles after its transfer ends, so the latency of one
tile overlaps the transfer of the next and the compute around it (the
collective is pipelined like any other operator, SN40L seed §VII). A group of
one socket costs nothing.

Functional mode runs one socket of an SPMD program: the other sockets' tiles
are taken equal to this one's (symmetric shards), so an all-reduce yields `R`
times the tile and an all-gather the tile repeated `R` times along the columns.

Example (what `runtime/fabric/build.py` builds for a TP8 all-reduce on one
200 GB/s link at 1.6 GHz with 1 us of latency):

```python
CollectiveCtx("ar0", ranks=8, gather=False, bytes_per_cycle=125.0, latency=1600)
```
"""

from __future__ import annotations

import math

import numpy as np

from steplus.runtime.fabric.channel import Element, Tile
from steplus.runtime.fabric.context import DEQ, ENQ, Body, StreamCtx


class CollectiveCtx(StreamCtx):
    """All-reduce or all-gather of every tile over `ranks` sockets (module doc)."""

    __slots__ = ("ranks", "gather", "bytes_per_cycle", "latency", "p2p_bytes")

    def __init__(self, name: str, ranks: int, gather: bool, bytes_per_cycle: float,
                 latency: int):
        super().__init__(name)
        self.ranks, self.gather = ranks, gather
        self.bytes_per_cycle, self.latency = bytes_per_cycle, latency
        self.p2p_bytes = 0  # bytes this socket sent over its links

    def traffic(self, nbytes: int) -> float:
        """Bytes one socket sends for one tile of `nbytes`."""
        r = self.ranks
        return (r - 1) * nbytes if self.gather else 2 * (r - 1) / r * nbytes

    def combine(self, t: Tile) -> Tile:
        r = self.ranks
        if self.gather:
            v = None if t.value is None else np.tile(t.value, (1, r))
            return Tile(t.rows, t.cols * r, t.nb, False, t.valid, v)
        return Tile(t.rows, t.cols, t.nb, False, t.valid, None if t.value is None
                    else t.value * r)

    def body(self) -> Body:
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            self.firings += 1
            t = el.data
            if self.ranks > 1:
                sent = self.traffic(t.nbytes)
                self.p2p_bytes += math.ceil(sent)
                self.work(math.ceil(sent / self.bytes_per_cycle))
                stamp = self.clock + self.latency
            else:
                stamp = self.clock
            if self.out is not None:
                yield (ENQ, self.out, Element(self.combine(t) if self.ranks > 1 else t,
                                              el.level), stamp)
