"""Shape contexts (reference spec §4; the step dialect's shape ops): flatten,
reshape, promote, expand, repeat. `step.zip` has no context of its own: the
placement fuses it into the map/accum/scan it feeds, which peeks the zipped
inputs itself.

None of these spends roofline cycles (Repeat spends one per copy); outputs are
stamped at the current clock.

Example (what `runtime/fabric/build.py` builds for `step.flatten {min=0,max=1}`):

```python
FlattenCtx("flat_in", lo=0, hi=1)
```
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.fabric.channel import Channel, Element, Tile
from steplus.runtime.fabric.context import DEQ, ENQ, PEEK, WAIT, Body, Command, StreamCtx


class FlattenCtx(StreamCtx):
    """Flatten(min a, max b): level L -> L (L<=a), a (a<L<=b), L-(b-a) (L>b)."""

    __slots__ = ("lo", "hi")

    def __init__(self, name: str, lo: int, hi: int):
        super().__init__(name)
        self.lo, self.hi = lo, hi

    def body(self) -> Body:
        a, b = self.lo, self.hi
        inp = self.inp
        assert inp is not None
        while True:
            el = self.deq_now(inp)
            if el is WAIT:
                el = yield (DEQ, inp)
            if el is None:
                return
            L = el.level
            L = L if L <= a else (a if L <= b else L - (b - a))
            self.firings += 1
            if self.out is not None:
                oel = Element(el.data, L)
                if not self.enq_now(self.out, oel, self.clock):
                    yield (ENQ, self.out, oel, self.clock)


class ReshapeCtx(StreamCtx):
    """Reshape(split_dim, chunk_size, pad, add_outer_dim) — see §4."""

    __slots__ = ("split_dim", "chunk", "add_outer", "pad_shape", "nb")

    def __init__(self, name: str, split_dim: int, chunk: int, add_outer_dim: bool = False,
                 pad_shape: tuple[int, int] = (1, 1), nb: int = 4):
        super().__init__(name)
        self.split_dim, self.chunk = split_dim, chunk
        self.add_outer = add_outer_dim
        self.pad_shape, self.nb = pad_shape, nb

    def _pad(self) -> Tile:
        r, c = self.pad_shape
        return Tile(r, c, self.nb, False, valid=0, value=np.zeros((r, c)))

    def _emit(self, data: object, level: int) -> Command | None:
        """Enqueue `(data, level)` in place; the command to yield if it blocks."""
        out = self.out
        if out is not None:
            el = Element(data, level)
            if not self.enq_now(out, el, self.clock):
                return (ENQ, out, el, self.clock)
        return None

    def body(self) -> Body:
        S = self.chunk
        count = 0
        inp = self.inp
        assert inp is not None
        while True:
            el = self.deq_now(inp)
            if el is WAIT:
                el = yield (DEQ, inp)
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
                        nxt = self.peek_now(inp)
                        if nxt is WAIT:
                            nxt = yield (PEEK, inp)
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


class RepeatCtx(StreamCtx):
    """RepeatStatic(R): R copies stamped clock+0..R-1 (last with L+1), R cycles, dequeue."""

    __slots__ = ("count")

    def __init__(self, name: str, count: int):
        super().__init__(name)
        self.count = count

    def body(self) -> Body:
        R = self.count
        inp = self.inp
        assert inp is not None
        while True:
            el = self.peek_now(inp)
            if el is WAIT:
                el = yield (PEEK, inp)
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
                    oel = Element(el.data, level)
                    if not self.enq_now(self.out, oel, t0 + k):
                        yield (ENQ, self.out, oel, t0 + k)
            self.work(max(0, t0 + R - self.clock))
            if self.deq_now(inp) is WAIT:
                yield (DEQ, inp)


class ExpandCtx(StreamCtx):
    """ExpandRef(rank): repeat the input element with each ref element's level."""

    __slots__ = ("rank", "ref")

    def __init__(self, name: str, rank: int):
        super().__init__(name)
        self.rank = rank
        self.ref: Channel | None = None

    def body(self) -> Body:
        inp, ref = self.inp, self.ref
        assert inp is not None and ref is not None
        while True:
            el = self.peek_now(inp)
            if el is WAIT:
                el = yield (PEEK, inp)
            if el is None:
                return
            rows = getattr(el.data, "rows", 0)
            if rows > self.max_rows:
                self.max_rows = rows
            while True:
                r = self.deq_now(ref)
                if r is WAIT:
                    r = yield (DEQ, ref)
                if r is None:
                    return
                self.firings += 1
                if self.out is not None:
                    oel = Element(el.data, r.level)
                    if not self.enq_now(self.out, oel, self.clock):
                        yield (ENQ, self.out, oel, self.clock)
                if r.level >= self.rank:
                    break
            if self.deq_now(inp) is WAIT:
                yield (DEQ, inp)


class PromoteCtx(StreamCtx):
    """Promote: a new outermost dimension (the last element's level + 1)."""

    __slots__ = ()

    def body(self) -> Body:
        inp = self.inp
        assert inp is not None
        while True:
            el = self.deq_now(inp)
            if el is WAIT:
                el = yield (DEQ, inp)
            if el is None:
                return
            nxt = self.peek_now(inp)
            if nxt is WAIT:
                nxt = yield (PEEK, inp)
            level = el.level + 1 if nxt is None else el.level
            if self.out is not None:
                oel = Element(el.data, level)
                if not self.enq_now(self.out, oel, self.clock):
                    yield (ENQ, self.out, oel, self.clock)
