"""Shape and tiling contexts (reference spec §4): flatten, reshape, broadcast,
repeat, expand, promote, consume, retile_streamify, split_tiles, join_tiles.

None of these spends roofline cycles; outputs are stamped at the current
clock (split_tiles/join_tiles are zero-cycle re-tilings, step-hierarchical-tiling).

Example (what `convert-step-to-runtime` builds for `step.flatten {min=0,max=1}`):

```python
FlattenCtx("flat_in", lo=0, hi=1)
```
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.fabric.channel import Element, Tile
from steplus.runtime.fabric.engine import DEQ, ENQ, PEEK, ROOM, Context


class StreamCtx(Context):
    """A context with one input channel `inp` and one output channel `out`
    (wired by `convert-step-to-runtime`; routing contexts add more)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.inp = None
        self.out = None


class FlattenCtx(StreamCtx):
    """Flatten(min a, max b): level L -> L (L<=a), a (a<L<=b), L-(b-a) (L>b)."""

    def __init__(self, name, lo, hi):
        super().__init__(name)
        self.lo, self.hi = lo, hi

    def body(self):
        a, b = self.lo, self.hi
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            L = el.level
            L = L if L <= a else (a if L <= b else L - (b - a))
            self.firings += 1
            if self.out is not None:
                yield (ENQ, self.out, Element(el.data, L), self.clock)


class ReshapeCtx(StreamCtx):
    """Reshape(split_dim, chunk_size, pad, add_outer_dim) — see §4."""

    def __init__(self, name, split_dim, chunk, add_outer_dim=False, pad_shape=(1, 1), nb=4):
        super().__init__(name)
        self.split_dim, self.chunk = split_dim, chunk
        self.add_outer = add_outer_dim
        self.pad_shape, self.nb = pad_shape, nb

    def _pad(self) -> Tile:
        r, c = self.pad_shape
        return Tile(r, c, self.nb, False, valid=0, value=np.zeros((r, c)))

    def _emit(self, data, level):
        if self.out is not None:
            return (ENQ, self.out, Element(data, level), self.clock)
        return None

    def body(self):
        S = self.chunk
        count = 0
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                break
            self.firings += 1
            s = el.level
            if self.split_dim > 0:
                if s >= self.split_dim:
                    count += 1
                    if count == S:
                        count = 0
                        s += 1
                cmd = self._emit(el.data, s)
                if cmd:
                    yield cmd
                continue
            count += 1
            if s == 0:
                level = 0
                if count == S:
                    count = 0
                    level = 1
                    if self.add_outer:
                        nxt = yield (PEEK, self.inp)
                        level = 1 if nxt is not None else 2
                cmd = self._emit(el.data, level)
                if cmd:
                    yield cmd
            else:
                if count == S:
                    cmd = self._emit(el.data, s + 1)
                    if cmd:
                        yield cmd
                else:
                    cmd = self._emit(el.data, 0)
                    if cmd:
                        yield cmd
                    for k in range(S - count):
                        cmd = self._emit(self._pad(), s + 1 if k == S - count - 1 else 0)
                        if cmd:
                            yield cmd
                count = 0
        if self.split_dim == 0 and count:
            for k in range(S - count):
                last = k == S - count - 1
                cmd = self._emit(self._pad(), (2 if self.add_outer else 1) if last else 0)
                if cmd:
                    yield cmd


class BroadcastCtx(StreamCtx):
    """Broadcast(n): dequeue, wait for room on every output, enqueue to all at one stamp."""

    def __init__(self, name):
        super().__init__(name)
        self.outs_list: list = []

    def body(self):
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            self.firings += 1
            for ch in self.outs_list:
                yield (ROOM, ch)
            t = self.clock
            for ch in self.outs_list:
                yield (ENQ, ch, el, t)


class RepeatCtx(StreamCtx):
    """RepeatStatic(R): R copies stamped clock+0..R-1 (last with L+1), R cycles, dequeue."""

    def __init__(self, name, count):
        super().__init__(name)
        self.count = count

    max_rows = 0  # largest tile repeated (on-chip metric of dynamic tiles)

    def body(self):
        R = self.count
        while True:
            el = yield (PEEK, self.inp)
            if el is None:
                return
            self.firings += 1
            rows = getattr(el.data, "rows", 0)
            if rows > self.max_rows:
                self.max_rows = rows
            t0 = self.clock
            for k in range(R):
                level = (el.level + 1) if k == R - 1 else 0
                if self.out is not None:
                    yield (ENQ, self.out, Element(el.data, level), t0 + k)
            self.work(max(0, t0 + R - self.clock))
            yield (DEQ, self.inp)


class ExpandCtx(StreamCtx):
    """ExpandRef(rank): repeat the input element with each ref element's level."""

    def __init__(self, name, rank):
        super().__init__(name)
        self.rank = rank
        self.ref = None

    max_rows = 0  # largest tile expanded (on-chip metric of dynamic tiles)

    def body(self):
        while True:
            el = yield (PEEK, self.inp)
            if el is None:
                return
            rows = getattr(el.data, "rows", 0)
            if rows > self.max_rows:
                self.max_rows = rows
            while True:
                r = yield (DEQ, self.ref)
                if r is None:
                    return
                self.firings += 1
                if self.out is not None:
                    yield (ENQ, self.out, Element(el.data, r.level), self.clock)
                if r.level >= self.rank:
                    break
            yield (DEQ, self.inp)


class PromoteCtx(StreamCtx):
    """Promote: a new outermost dimension (the last element's level + 1)."""

    def body(self):
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            nxt = yield (PEEK, self.inp)
            level = el.level + 1 if nxt is None else el.level
            if self.out is not None:
                yield (ENQ, self.out, Element(el.data, level), self.clock)


class ConsumeCtx(StreamCtx):
    """Sink: dequeue, add 1 cycle, repeat."""

    def body(self):
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            self.firings += 1
            self.work(1)


class RetileStreamifyCtx(StreamCtx):
    """RetileStreamify: one 1-row tile per valid row, the last with the input's level."""

    def body(self):
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            t = el.data
            for k in range(t.valid):
                v = t.value[k:k + 1] if t.value is not None else None
                row = Tile(1, t.cols, t.nb, t.mu, value=v)
                self.firings += 1
                if self.out is not None:
                    yield (ENQ, self.out, Element(row, el.level if k == t.valid - 1 else 0),
                           self.clock)


class SplitTilesCtx(StreamCtx):
    """SplitTiles (flat_map "split_tiles", step-hierarchical-tiling): each input
    tile becomes its `rows/r x cols/c` physical `r x c` tiles, row-major.

    With `rank` 2 the tiles form two new dims (the end of a row of tiles has
    level 1, the last tile level 2 + the input's); with `rank` 1 one dim (the
    last tile level 1 + the input's). Like RetileStreamify it spends no
    cycles; a physical tile keeps the valid rows of its part of the input."""

    def __init__(self, name: str, r: int, c: int, rank: int):
        super().__init__(name)
        self.r, self.c, self.rank = r, c, rank

    def body(self):
        r, c = self.r, self.c
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            t = el.data
            gi, gj = max(1, t.rows // r), max(1, t.cols // c)
            n = gi * gj
            for k in range(n):
                i, j = divmod(k, gj)
                if k == n - 1:
                    level = el.level + self.rank
                elif self.rank == 2 and j == gj - 1:
                    level = 1
                else:
                    level = 0
                v = t.value[i * r:(i + 1) * r, j * c:(j + 1) * c] if t.value is not None else None
                valid = min(r, max(0, t.valid - i * r))
                self.firings += 1
                if self.out is not None:
                    yield (ENQ, self.out, Element(Tile(r, c, t.nb, t.mu, valid, v), level),
                           self.clock)


class JoinTilesCtx(StreamCtx):
    """JoinTiles (accum "join_tiles" of `rank` 1 or 2): the physical tiles of
    a group (up to the first with level >= rank) are placed row-major into
    one `rows x cols` logical tile, emitted with level - rank. No cycles (like
    a retile accumulator: no FLOPs); holds one logical tile on chip."""

    def __init__(self, name: str, rank: int, rows: int, cols: int, functional: bool = False):
        super().__init__(name)
        self.rank, self.rows, self.cols, self.functional = rank, rows, cols, functional

    def body(self):
        k, valid, value, nb, mu = 0, 0, None, 4, False
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            t = el.data
            gj = max(1, self.cols // t.cols)
            i, j = divmod(k, gj)
            if t.valid:
                valid = max(valid, i * t.rows + t.valid)
            nb, mu = t.nb, t.mu
            if self.functional and t.value is not None:
                if value is None:
                    value = np.zeros((self.rows, self.cols), dtype=np.result_type(t.value))
                value[i * t.rows:(i + 1) * t.rows, j * t.cols:(j + 1) * t.cols] = t.value
            self.firings += 1
            k += 1
            if el.level >= self.rank:
                out = Tile(self.rows, self.cols, nb, mu, min(valid, self.rows), value)
                if self.out is not None:
                    yield (ENQ, self.out, Element(out, el.level - self.rank), self.clock)
                k, valid, value = 0, 0, None
