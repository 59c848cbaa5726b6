"""Routing and generator contexts (reference spec §4): parallelize, partition,
reassemble, eager_merge, and the select/metadata/address generators.

None of these spends roofline cycles unless stated; outputs are stamped at
the current clock. Polling waits ("add 1 cycle and peek again") are counted
as input stalls, not as busy cycles (`Context.poll_wait`).

Example (what `convert-step-to-runtime` builds for a two-way
`step.parallelize {rank=0}`):

```python
ParallelizeCtx("par", rank=0, switch=2)
```
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.fabric.channel import CLOSED, NOTHING, Element, Selector, Tile
from steplus.runtime.fabric.engine import DEQ, ENQ, NBPEEK, PEEK, SimulationError
from steplus.runtime.fabric.ops_memory import walk_levels
from steplus.runtime.fabric.ops_shape import StreamCtx


def _addr(x: int) -> Tile:
    return Tile(1, 1, 8, False, value=np.array([[x]]))


def _int(el: Element) -> int:
    v = getattr(el.data, "value", None)
    if v is None:
        raise SimulationError("a metadata element carries no value (run in functional mode "
                              "or feed it from a generator)")
    return int(np.asarray(v).reshape(-1)[0])


class ParallelizeCtx(StreamCtx):
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


class PartitionCtx(StreamCtx):
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
                # §4: peek the element, spend its load time, then dequeue (the
                # input slot stays taken while the tile is read), switch, enqueue.
                el = yield (PEEK, self.inp)
                if el is None:
                    raise SimulationError(f"{self.name}: data stream ended before its selectors")
                self.firings += 1
                self.work(self._load(el.data))
                yield (DEQ, self.inp)
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


class ReassembleCtx(StreamCtx):
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
                self.poll_wait()
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


class EagerMergeCtx(StreamCtx):
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
                        self.poll_wait(heads[best])
                        todo = undecided
                        continue
                    choice = best
                    break
                self.poll_wait()
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


class SelectGenCtx(StreamCtx):
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


class MetadataGenCtx(StreamCtx):
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


class ExpertAddrGenCtx(StreamCtx):
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


class CacheReadAddrGenCtx(StreamCtx):
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


class FilterLastTileCtx(StreamCtx):
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
