"""Generator contexts (reference spec §4; the step dialect's generator ops):
select_gen, metadata_gen, expert_addr_gen, cache_read_addr_gen,
filter_last_tile. Outputs are stamped at the current clock unless stated.

Example (what `runtime/fabric/build.py` builds for `step.metadata_gen` of 3 values):

```python
MetadataGenCtx("lens", [5, 2, 9])
```
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.fabric.channel import Channel, Element, Selector, Tile
from steplus.runtime.fabric.contexts.memory import walk_levels
from steplus.runtime.fabric.context import DEQ, ENQ, WAIT, Body, SimulationError, StreamCtx


def _addr(x: int) -> Tile:
    return Tile(1, 1, 8, False, value=np.array([[x]]))


def _int(el: Element) -> int:
    v = getattr(el.data, "value", None)
    if v is None:
        raise SimulationError("a metadata element carries no value (run in functional mode "
                              "or feed it from a generator)")
    return int(np.asarray(v).reshape(-1)[0])


class SelectGenCtx(StreamCtx):
    """SelectGen: one selector per row, stamped clock + 1, one per cycle."""

    __slots__ = ("rows", "shape")

    def __init__(self, name: str, rows: list[tuple[int, ...]], shape: tuple[int, ...]):
        super().__init__(name)
        self.rows, self.shape = rows, shape

    def body(self) -> Body:
        levels = walk_levels(self.shape) if self.shape else [((), 1)] * len(self.rows)
        for chosen, (_, level) in zip(self.rows, levels):
            self.firings += 1
            if self.out is not None:
                oel = Element(Selector(chosen), level)
                if not self.enq_now(self.out, oel, self.clock + 1):
                    yield (ENQ, self.out, oel, self.clock + 1)
            self.work(1)


class MetadataGenCtx(StreamCtx):
    """MetadataGen: element i stamped start + i, no cycles; last with level 1."""

    __slots__ = ("values")

    def __init__(self, name: str, values: list[int]):
        super().__init__(name)
        self.values = values

    def body(self) -> Body:
        start = self.clock
        n = len(self.values)
        for i, x in enumerate(self.values):
            self.firings += 1
            if self.out is not None:
                yield (ENQ, self.out, Element(_addr(x), 1 if i == n - 1 else 0), start + i)


class ExpertAddrGenCtx(StreamCtx):
    """ExpertAddrGen(T): per selector, T addresses (level 1, the last level 2)."""

    __slots__ = ("T")

    def __init__(self, name: str, tiles_per_expert: int):
        super().__init__(name)
        self.T = tiles_per_expert

    def body(self) -> Body:
        T = self.T
        inp = self.inp
        assert inp is not None
        while True:
            s = self.deq_now(inp)
            if s is WAIT:
                s = yield (DEQ, inp)
            if s is None:
                return
            e = s.data.chosen[0] if s.data.chosen else 0
            for k in range(T):
                self.firings += 1
                if self.out is not None:
                    oel = Element(_addr(e * T + k), 2 if k == T - 1 else 1)
                    if not self.enq_now(self.out, oel, self.clock):
                        yield (ENQ, self.out, oel, self.clock)


class CacheReadAddrGenCtx(StreamCtx):
    """CacheReadAddrGen: seq_len addresses stamped start + k, the last with level L_idx+1."""

    __slots__ = ("idx", "seq")

    def __init__(self, name: str):
        super().__init__(name)
        self.idx: Channel | None = None
        self.seq: Channel | None = None

    def body(self) -> Body:
        while True:
            i = yield (DEQ, self.idx)
            n = yield (DEQ, self.seq)
            if i is None or n is None:
                return
            cnt, base, start = _int(n), _int(i), self.clock
            for k in range(cnt):
                self.firings += 1
                level = (i.level + 1) if k == cnt - 1 else 0
                if self.out is not None:
                    yield (ENQ, self.out, Element(_addr(base * 1_000_000 + k), level), start + k)


class FilterLastTileCtx(StreamCtx):
    """FilterLastTile: n-1 selectors for output 1, then one for output 0 (level L+1)."""

    __slots__ = ()

    def body(self) -> Body:
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            cnt = _int(el)
            for k in range(cnt):
                self.firings += 1
                last = k == cnt - 1
                sel = Selector((0,) if last else (1,))
                if self.out is not None:
                    yield (ENQ, self.out, Element(sel, (el.level + 1) if last else 0), self.clock)
