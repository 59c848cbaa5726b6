"""Routing contexts (reference spec §4; the step dialect's routing ops): partition,
reassemble, eager_merge, parallelize, broadcast, consume.

None of these spends roofline cycles unless stated; outputs are stamped at
the current clock. Polling waits ("add 1 cycle and peek again") are counted
as input stalls, not as busy cycles (`Context.poll_wait`).

Example (what `runtime/fabric/build.py` builds for a two-way
`step.parallelize {rank=0}`):

```python
ParallelizeCtx("par", rank=0, switch=[0, 0])
```
"""

from __future__ import annotations

from steplus.runtime.fabric.channel import CLOSED, NOTHING, Channel, Element, Selector, Tile
from steplus.runtime.fabric.context import (
    DEQ, ENQ, NBPEEK, PEEK, ROOM, WAIT, Body, SimulationError, StreamCtx,
)


class ParallelizeCtx(StreamCtx):
    """Parallelize(rank, switch): round-robin groups over the outputs."""

    __slots__ = ("rank", "switch", "outs_list")

    def __init__(self, name: str, rank: int, switch: list[int]):
        super().__init__(name)
        self.rank, self.switch = rank, switch
        self.outs_list: list[Channel | None] = []

    def body(self) -> Body:
        i = 0
        n = len(self.outs_list)
        inp = self.inp
        assert inp is not None
        while True:
            while True:
                el = self.deq_now(inp)
                if el is WAIT:
                    el = yield (DEQ, inp)
                if el is None:
                    return
                self.firings += 1
                out = self.outs_list[i]
                assert out is not None
                stamp = self.clock + self.switch[i]
                if not self.enq_now(out, el, stamp):
                    yield (ENQ, out, el, stamp)
                if self.rank == 0 or el.level >= self.rank:
                    break
            i = (i + 1) % n


class PartitionCtx(StreamCtx):
    """FlatPartition(p, switch, write_back) driven by a selector stream (§4).

    `p` is the rank of a group (the input's dims below the selector's): one
    element for p = 0, else up to the first element with level >= p."""

    __slots__ = ("rank", "switch", "write_back", "pmu_bw", "sel", "outs_list")

    def __init__(self, name: str, rank: int, switch: list[int], write_back: bool,
                 pmu_bw: int):
        super().__init__(name)
        self.rank, self.switch, self.write_back, self.pmu_bw = rank, switch, write_back, pmu_bw
        self.sel: Channel | None = None
        self.outs_list: list[Channel | None] = []

    def _load(self, data: object) -> int:
        if isinstance(data, Tile) and data.mu:
            return -(-data.nbytes // self.pmu_bw)
        return 0

    def body(self) -> Body:
        p = self.rank
        sel, inp = self.sel, self.inp
        assert sel is not None and inp is not None
        while True:
            s = self.peek_now(sel)
            if s is WAIT:
                s = yield (PEEK, sel)
            if s is None:
                return
            self.work(self._load(s.data))
            if self.deq_now(sel) is WAIT:
                yield (DEQ, sel)
            chosen = s.data.chosen
            sw = max((self.switch[j] for j in chosen), default=0)
            while True:
                # §4: peek the element, spend its load time, then dequeue (the
                # input slot stays taken while the tile is read), switch, enqueue.
                el = self.peek_now(inp)
                if el is WAIT:
                    el = yield (PEEK, inp)
                if el is None:
                    raise SimulationError(f"{self.name}: data stream ended before its selectors")
                self.firings += 1
                self.work(self._load(el.data))
                if self.deq_now(inp) is WAIT:
                    yield (DEQ, inp)
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
                    out = self.outs_list[j]
                    assert out is not None
                    oel = Element(data, level)
                    if not self.enq_now(out, oel, t):
                        yield (ENQ, out, oel, t)
                if last:
                    break


class ReassembleCtx(StreamCtx):
    """FlatReassemble(p, switch, write_back): polls the selected inputs (§4)."""

    __slots__ = ("rank", "switch", "write_back", "pmu_bw", "sel", "ins_list")

    def __init__(self, name: str, rank: int, switch: list[int], write_back: bool,
                 pmu_bw: int):
        super().__init__(name)
        self.rank, self.switch, self.write_back, self.pmu_bw = rank, switch, write_back, pmu_bw
        self.sel: Channel | None = None
        self.ins_list: list[Channel | None] = []

    def body(self) -> Body:
        p = self.rank
        sel = self.sel
        assert sel is not None
        while True:
            s = self.peek_now(sel)
            if s is WAIT:
                s = yield (PEEK, sel)
            if s is None:
                return
            if self.deq_now(sel) is WAIT:
                yield (DEQ, sel)
            chosen: list[int] = list(s.data.chosen)
            heads: dict[int, int] = {}
            todo = list(chosen)
            while True:
                # The engine's lower bounds: nothing happens here before every
                # one of these inputs has a head.
                need: list[Channel] = []
                for j in todo:
                    ch = self.ins_list[j]
                    assert ch is not None
                    need.append(ch)
                self.need_all = need
                for j in todo:
                    ch = self.ins_list[j]
                    assert ch is not None
                    r = self.nbpeek_now(ch)
                    if r is WAIT:
                        r = yield (NBPEEK, ch)
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
                ch = self.ins_list[j]
                assert ch is not None
                while True:
                    el = self.peek_now(ch)
                    if el is WAIT:
                        el = yield (PEEK, ch)
                    if el is None:
                        raise SimulationError(f"{self.name}: input {j} ended inside a group")
                    t = el.data
                    load = -(-t.nbytes // self.pmu_bw) if isinstance(t, Tile) and t.mu else 0
                    target = heads[j] + self.switch[j] + load
                    if target > self.clock:
                        self.work(target - self.clock)
                    if self.deq_now(ch) is WAIT:
                        yield (DEQ, ch)
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
                        oel = Element(data, level)
                        if not self.enq_now(self.out, oel, self.clock):
                            yield (ENQ, self.out, oel, self.clock)
                    if closing:
                        break


class EagerMergeCtx(StreamCtx):
    """EagerMerge(p): forward groups in arrival order; emit a one-hot selector per group."""

    __slots__ = ("rank", "ins_list", "sel_out")

    def __init__(self, name: str, rank: int):
        super().__init__(name)
        self.rank = rank
        self.ins_list: list[Channel | None] = []
        self.sel_out: Channel | None = None

    def body(self) -> Body:
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
                    ch = self.ins_list[i]
                    assert ch is not None
                    r = self.nbpeek_now(ch)
                    if r is WAIT:
                        r = yield (NBPEEK, ch)
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
                sel = Element(Selector((choice,)))
                if not self.enq_now(self.sel_out, sel, self.clock):
                    yield (ENQ, self.sel_out, sel, self.clock)
            chosen = self.ins_list[choice]
            assert chosen is not None
            first = True
            while True:
                if not first:
                    self.work(1)
                first = False
                el = self.deq_now(chosen)
                if el is WAIT:
                    el = yield (DEQ, chosen)
                if el is None:
                    closed[choice] = True
                    break
                self.firings += 1
                if self.out is not None and not self.enq_now(self.out, el, self.clock):
                    yield (ENQ, self.out, el, self.clock)
                if self.rank == 0 or el.level >= self.rank:
                    break


class BroadcastCtx(StreamCtx):
    """Broadcast(n): dequeue, wait for room on every output, enqueue to all at one stamp."""

    __slots__ = ("outs_list")

    def __init__(self, name: str):
        super().__init__(name)
        self.outs_list: list[Channel | None] = []

    def body(self) -> Body:
        inp = self.inp
        assert inp is not None
        while True:
            el = self.deq_now(inp)
            if el is WAIT:
                el = yield (DEQ, inp)
            if el is None:
                return
            self.firings += 1
            for ch in self.outs_list:
                assert ch is not None
                if not self.room_now(ch):
                    yield (ROOM, ch)
            t = self.clock
            for ch in self.outs_list:
                assert ch is not None
                if not self.enq_now(ch, el, t):
                    yield (ENQ, ch, el, t)


class ConsumeCtx(StreamCtx):
    """Sink: dequeue, add 1 cycle, repeat."""

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
            self.firings += 1
            self.work(1)
