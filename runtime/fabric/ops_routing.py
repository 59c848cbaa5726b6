"""Routing, shape and generator contexts (reference spec §4).

None of these spends roofline cycles unless stated; outputs are stamped at
the current clock. Polling waits ("add 1 cycle and peek again") are counted
as input stalls, not as busy cycles.

Example (what `convert-step-to-runtime` builds for `step.flatten {min=0,max=1}`):

```python
FlattenCtx("flat_in", lo=0, hi=1)
```
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.fabric.channel import CLOSED, NOTHING, Element, Selector, Tile
from steplus.runtime.fabric.engine import (
    DEQ, ENQ, NBPEEK, PEEK, ROOM, Context, SimulationError,
)
from steplus.runtime.fabric.ops_memory import walk_levels


def _addr(x: int) -> Tile:
    return Tile(1, 1, 8, False, value=np.array([[x]]))


def _int(el: Element) -> int:
    v = getattr(el.data, "value", None)
    if v is None:
        raise SimulationError("a metadata element carries no value (run in functional mode "
                              "or feed it from a generator)")
    return int(np.asarray(v).reshape(-1)[0])


class _Ctx(Context):
    def __init__(self, name: str):
        super().__init__(name)
        self.inp = None
        self.out = None

    def _poll_wait(self, cap: int | None = None) -> None:
        """After a round of polls that all answered Nothing: the next round.

        Every round before the earliest lower bound of the polled senders
        (recorded by the engine with each Nothing) would answer Nothing again
        — all other contexts are blocked when Nothing is answered — so the
        clock jumps there instead of stepping one cycle per round; `cap` is
        the clock at which the poller itself would act differently (an
        EagerMerge's earliest known head)."""
        lb = self.__dict__.pop("poll_lb", None)
        target = self.clock + 1
        if lb is not None and lb != float("inf"):
            if cap is not None and cap < lb:
                lb = cap
            target = max(target, int(lb))
        self.stall_in += target - self.clock
        self.clock = target


class FlattenCtx(_Ctx):
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


class ReshapeCtx(_Ctx):
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


class BroadcastCtx(_Ctx):
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


class RepeatCtx(_Ctx):
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


class ExpandCtx(_Ctx):
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


class PromoteCtx(_Ctx):
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


class ConsumeCtx(_Ctx):
    """Sink: dequeue, add 1 cycle, repeat."""

    def body(self):
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            self.firings += 1
            self.work(1)


class RetileStreamifyCtx(_Ctx):
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


class ParallelizeCtx(_Ctx):
    """Parallelize(rank, switch): round-robin groups over the outputs."""

    def __init__(self, name, rank, switch):
        super().__init__(name)
        self.rank, self.switch = rank, switch
        self.outs_list: list = []

    def body(self):
        i = 0
        n = len(self.outs_list)
        while True:
            while True:
                el = yield (DEQ, self.inp)
                if el is None:
                    return
                self.firings += 1
                yield (ENQ, self.outs_list[i], el, self.clock + self.switch[i])
                if self.rank == 0 or el.level >= self.rank:
                    break
            i = (i + 1) % n


class PartitionCtx(_Ctx):
    """FlatPartition(p, switch, write_back) driven by a selector stream (§4).

    `p` is the rank of a group (the input's dims below the selector's): one
    element for p = 0, else up to the first element with level >= p."""

    def __init__(self, name, rank, switch, write_back, pmu_bw):
        super().__init__(name)
        self.rank, self.switch, self.write_back, self.pmu_bw = rank, switch, write_back, pmu_bw
        self.sel = None
        self.outs_list: list = []

    def _load(self, data) -> int:
        if isinstance(data, Tile) and data.mu:
            return -(-data.nbytes // self.pmu_bw)
        return 0

    def body(self):
        p = self.rank
        while True:
            s = yield (PEEK, self.sel)
            if s is None:
                return
            self.work(self._load(s.data))
            yield (DEQ, self.sel)
            chosen = s.data.chosen
            sw = max((self.switch[j] for j in chosen), default=0)
            while True:
                el = yield (DEQ, self.inp)
                if el is None:
                    raise SimulationError(f"{self.name}: data stream ended before its selectors")
                self.firings += 1
                self.work(self._load(el.data))
                store = (-(-el.data.nbytes // self.pmu_bw)) if self.write_back else 0
                self.work(sw + store)
                # The group is the input's inner `p` dims: one element for
                # p = 0, else up to the first element closing level p. (The
                # reference's "level s + p" for a level-carrying selector is
                # the same element when the selector's levels match the
                # data's; an EagerMerge's selectors carry none.)
                last = el.level >= p
                if s.level:
                    level = p if last else (0 if p == 0 else min(el.level, p))
                else:
                    level = 0 if p == 0 else el.level
                data = el.data.with_mu(self.write_back) if isinstance(el.data, Tile) else el.data
                t = self.clock
                for j in chosen:
                    yield (ENQ, self.outs_list[j], Element(data, level), t)
                if last:
                    break


class ReassembleCtx(_Ctx):
    """FlatReassemble(p, switch, write_back): polls the selected inputs (§4)."""

    def __init__(self, name, rank, switch, write_back, pmu_bw):
        super().__init__(name)
        self.rank, self.switch, self.write_back, self.pmu_bw = rank, switch, write_back, pmu_bw
        self.sel = None
        self.ins_list: list = []

    def body(self):
        p = self.rank
        while True:
            s = yield (PEEK, self.sel)
            if s is None:
                return
            yield (DEQ, self.sel)
            chosen = list(s.data.chosen)
            heads: dict[int, int] = {}
            todo = list(chosen)
            while True:
                # The engine's lower bounds: nothing happens here before every
                # one of these inputs has a head.
                self.need_all = [self.ins_list[j] for j in todo]
                for j in todo:
                    r = yield (NBPEEK, self.ins_list[j])
                    if r is CLOSED:
                        raise SimulationError(
                            f"{self.name}: selected input {j} is closed (selector/data mismatch)")
                    if r is not NOTHING:
                        heads[j] = r[0]
                todo = [j for j in todo if j not in heads]
                if not todo:
                    self.need_all = None
                    break
                self._poll_wait()
            order = sorted(chosen, key=lambda j: (heads[j], chosen.index(j)))
            for n, j in enumerate(order):
                last_input = n == len(order) - 1
                while True:
                    el = yield (PEEK, self.ins_list[j])
                    if el is None:
                        raise SimulationError(f"{self.name}: input {j} ended inside a group")
                    t = el.data
                    load = -(-t.nbytes // self.pmu_bw) if isinstance(t, Tile) and t.mu else 0
                    target = heads[j] + self.switch[j] + load
                    if target > self.clock:
                        self.work(target - self.clock)
                    yield (DEQ, self.ins_list[j])
                    self.firings += 1
                    if self.write_back:
                        self.work(-(-t.nbytes // self.pmu_bw))
                    closing = p == 0 or el.level >= p
                    if p == 0:
                        level = (1 + s.level) if last_input else 0
                    else:
                        level = el.level + s.level + 1 if (last_input and closing) else el.level
                    if self.out is not None:
                        data = t.with_mu(self.write_back) if isinstance(t, Tile) else t
                        yield (ENQ, self.out, Element(data, level), self.clock)
                    if closing:
                        break


class EagerMergeCtx(_Ctx):
    """EagerMerge(p): forward groups in arrival order; emit a one-hot selector per group."""

    def __init__(self, name, rank):
        super().__init__(name)
        self.rank = rank
        self.ins_list: list = []
        self.sel_out = None

    def body(self):
        n = len(self.ins_list)
        closed = [False] * n
        while True:
            heads: dict[int, int] = {}
            undecided: list[int] = []
            todo = [i for i in range(n) if not closed[i]]
            choice = None
            while True:
                undecided = []
                for i in todo:
                    r = yield (NBPEEK, self.ins_list[i])
                    if r is CLOSED:
                        closed[i] = True
                    elif r is NOTHING:
                        undecided.append(i)
                    else:
                        heads[i] = r[0]
                if all(closed):
                    return
                if heads:
                    best = min(heads, key=lambda i: (heads[i], i))
                    if undecided and self.clock < heads[best]:
                        self._poll_wait(heads[best])
                        todo = undecided
                        continue
                    choice = best
                    break
                self._poll_wait()
                todo = [i for i in range(n) if not closed[i]]
            if self.sel_out is not None:
                yield (ENQ, self.sel_out, Element(Selector((choice,))), self.clock)
            first = True
            while True:
                if not first:
                    self.work(1)
                first = False
                el = yield (DEQ, self.ins_list[choice])
                if el is None:
                    closed[choice] = True
                    break
                self.firings += 1
                if self.out is not None:
                    yield (ENQ, self.out, el, self.clock)
                if self.rank == 0 or el.level >= self.rank:
                    break


class SelectGenCtx(_Ctx):
    """SelectGen: one selector per row, stamped clock + 1, one per cycle."""

    def __init__(self, name, rows: list[tuple[int, ...]], shape: tuple[int, ...]):
        super().__init__(name)
        self.rows, self.shape = rows, shape

    def body(self):
        levels = walk_levels(self.shape) if self.shape else [((), 1)] * len(self.rows)
        for chosen, (_, level) in zip(self.rows, levels):
            self.firings += 1
            if self.out is not None:
                yield (ENQ, self.out, Element(Selector(chosen), level), self.clock + 1)
            self.work(1)


class MetadataGenCtx(_Ctx):
    """MetadataGen: element i stamped start + i, no cycles; last with level 1."""

    def __init__(self, name, values: list[int]):
        super().__init__(name)
        self.values = values

    def body(self):
        start = self.clock
        n = len(self.values)
        for i, x in enumerate(self.values):
            self.firings += 1
            if self.out is not None:
                yield (ENQ, self.out, Element(_addr(x), 1 if i == n - 1 else 0), start + i)


class ExpertAddrGenCtx(_Ctx):
    """ExpertAddrGen(T): per selector, T addresses (level 1, the last level 2)."""

    def __init__(self, name, tiles_per_expert):
        super().__init__(name)
        self.T = tiles_per_expert

    def body(self):
        T = self.T
        while True:
            s = yield (DEQ, self.inp)
            if s is None:
                return
            e = s.data.chosen[0] if s.data.chosen else 0
            for k in range(T):
                self.firings += 1
                if self.out is not None:
                    yield (ENQ, self.out, Element(_addr(e * T + k), 2 if k == T - 1 else 1),
                           self.clock)


class CacheReadAddrGenCtx(_Ctx):
    """CacheReadAddrGen: seq_len addresses stamped start + k, the last with level L_idx+1."""

    def __init__(self, name):
        super().__init__(name)
        self.idx = self.seq = None

    def body(self):
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


class FilterLastTileCtx(_Ctx):
    """FilterLastTile: n-1 selectors for output 1, then one for output 0 (level L+1)."""

    def body(self):
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


class SplitTilesCtx(_Ctx):
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


class JoinTilesCtx(_Ctx):
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
