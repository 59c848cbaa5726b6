"""Contexts of the fabric simulator: what a context is, the commands it yields.

Every context is a Python generator that yields channel commands:

| command | meaning |
|---|---|
| `(DEQ, ch)` | blocking dequeue; returns the `Element` (None at end of stream) |
| `(PEEK, ch)` | blocking peek-next (same clock update, frees nothing) |
| `(ENQ, ch, el, stamp)` | enqueue with back-pressure (ack latency 1) |
| `(ROOM, ch)` | wait until `ch` has room (Broadcast), without enqueueing |
| `(NBPEEK, ch)` | non-blocking peek: `(v, el)`, `CLOSED` or `NOTHING` |
| `(HBM, n_req)` | move one tile through HBM (`n_req` 64-byte requests); returns when done |

The engine that runs them is `engine.Simulator`; the lower bounds of a blocked
context's future clock (the wait-chain forms whose fields `Context` declares)
are `bounds`.

A command that would not block can also be carried out by the context itself,
without yielding (`deq_now`, `peek_now`, `enq_now`, `room_now`, `nbpeek_now`):
each does exactly what the engine does with the yielded command (the same
clock, counters, acks and wake-ups, in the same order, since the engine runs
a context until it blocks), or nothing and answers `WAIT` when the command
would block, and the context then yields it. So a context whose inputs are
there and whose outputs have room runs many firings in one resumption
(`Simulator.steps` and the cycles are the same either way; the engine's own
handling of a yielded command calls these same methods).

Example:

```python
class Source(StreamCtx):
    def body(self):
        for i in range(4):
            self.work(2)
            yield (ENQ, self.out, Element(Tile(16, 64, 2)), self.clock)

class Copy(StreamCtx):
    def body(self):
        while True:
            el = self.deq_now(self.inp)
            if el is WAIT:
                el = yield (DEQ, self.inp)
            if el is None:
                return
            out = Element(el.data, el.level)
            if not self.enq_now(self.out, out, self.clock):
                yield (ENQ, self.out, out, self.clock)
```
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, ClassVar, Final

try:  # read by mypyc when it compiles this module (runtime/fabric/native.py)
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - pure Python without mypy_extensions
    def mypyc_attr(*_a: str, **_k: Any) -> Any:  # type: ignore[misc]
        return lambda cls: cls

from steplus.passes.step.sim_estimate import SimulationError
from steplus.runtime.fabric.channel import CLOSED, Channel

if TYPE_CHECKING:
    from steplus.runtime.fabric.engine import Simulator

# Final: mypyc inlines them (a plain module global is a dict look-up on every use)
DEQ: Final = 0
PEEK: Final = 1
ENQ: Final = 2
ROOM: Final = 3
NBPEEK: Final = 4
HBM: Final = 5
INF: Final = math.inf
NEVER: Final = 1 << 60
"""The engine's INF inside the lower bounds (native ints): a context that never acts again."""
WAIT: Final = False
"""What `deq_now`, `peek_now` and `nbpeek_now` answer when the command would
block (never an element, `None`, a head, `CLOSED` or `NOTHING`): yield it instead."""
Command = tuple
"""A channel command a context yields: `(DEQ, ch)`, `(ENQ, ch, element, stamp)`, ... (module doc)."""
Body = Generator[Command, Any, None]
"""A context's `body()`: yields commands, is sent each command's result."""


class DeadlockError(SimulationError):
    """No context can make progress; the message names blocked contexts and channels."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Context:
    """A unit of the fabric (one per operator) with its own clock.

    Subclasses implement `body()` as a generator of channel commands and use
    `work(cycles)` to spend busy cycles. `hbm_role` is "r" or "w" for memory
    operators that talk to the HBM controller (None otherwise).

    Every field the engine, the HBM model or `Program` reads off a context is
    declared here (slots, no per-instance `__dict__`): clocks and counters,
    the engine's scheduling state (`pending`, `block`, `resume`), the lower
    bounds (`hbm_lb`, `poll_lb`, `need_all`, the wait-chain forms `fa`, `fk`,
    `fanc`, `fdeps`, `anchor` and the per-query memo `lb`, `qid`) and the metrics
    (`flops`, `onchip_bytes`, `onchip_row_bytes`, `max_rows`). Subclasses
    declare their own fields in `__slots__` too.
    """

    hbm_role: ClassVar[str | None] = None
    is_memory: ClassVar[bool] = False
    __slots__ = ("name", "clock", "busy", "stall_in", "stall_out", "stall_mem", "firings",
                 "ins", "outs", "done", "pending", "block", "gen", "hbm_lb", "events", "sim",
                 "bytes_read", "bytes_written", "resume", "poll_lb", "need_all", "lb", "qid",
                 "fa", "fk", "fanc", "fdeps", "anchor", "flops", "onchip_bytes", "onchip_row_bytes", "max_rows")

    name: str
    clock: int
    busy: int
    stall_in: int
    stall_out: int
    stall_mem: int
    firings: int
    ins: list[Channel]
    outs: list[Channel]
    done: bool
    pending: tuple | None
    block: tuple[int, Any] | None  # (kind, channel), or (HBM, None)
    gen: Body | None
    hbm_lb: int
    events: list[tuple[int, int]] | None
    sim: Simulator | None
    bytes_read: int
    bytes_written: int
    resume: object
    poll_lb: int
    need_all: list[Channel] | None
    lb: int
    qid: int
    fa: int
    fk: int
    fanc: Context | None
    fdeps: list[Context] | None
    anchor: bool
    flops: int
    onchip_bytes: int | None
    onchip_row_bytes: int | None
    max_rows: int

    def __init__(self, name: str):
        self.name = name
        self.clock = 0
        self.busy = 0
        self.stall_in = 0
        self.stall_out = 0
        self.stall_mem = 0
        self.firings = 0
        self.ins = []
        self.outs = []
        self.done = False
        self.pending = None
        self.block = None  # (kind, channel) while parked
        self.gen = None
        self.hbm_lb = 0
        self.events = None
        self.sim = None
        self.bytes_read = 0
        self.bytes_written = 0
        self.resume = None  # the value the engine hands the generator on its next step
        self.poll_lb = -1  # sender bound recorded with a Nothing answer (poll_wait; -1: none)
        self.need_all = None  # a poller that needs every one of these channels (Reassemble)
        self.lb = -1  # lower bound of the future clock in query `qid` (-1: being computed)
        self.qid = 0
        # the wait-chain form (bounds._form): bound = max(fa, bound(fanc) + fk)
        self.fa = -1  # -1: not known
        self.fk = 0
        self.fanc = None
        self.fdeps = None  # contexts whose form went through this one
        self.anchor = False  # forms stop here (many contexts may wait on it)
        self.flops = 0  # FLOPs computed (compute contexts)
        self.onchip_bytes = None  # declared on-chip tile (§5.2), set by the builder
        self.onchip_row_bytes = None  # bytes of one row of a dynamic-rows tile
        self.max_rows = 0  # largest tile seen (on-chip metric of dynamic tiles)

    def body(self) -> Body:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def work(self, cycles: int) -> None:
        if cycles > 0:
            if self.events is not None:
                self.events.append((self.clock, cycles))
            self.clock += cycles
            self.busy += cycles


    def poll_wait(self, cap: int | None = None) -> None:
        """After a round of polls that all answered Nothing: the next round.

        Every round before the earliest lower bound of the polled senders
        (recorded by the engine with each Nothing) would answer Nothing again
        — all other contexts are blocked when Nothing is answered — so the
        clock jumps there instead of stepping one cycle per round; `cap` is
        the clock at which the poller itself would act differently (an
        EagerMerge's earliest known head)."""
        lb = self.poll_lb
        self.poll_lb = -1
        target = self.clock + 1
        if 0 <= lb < NEVER:
            if cap is not None and cap < lb:
                lb = cap
            if lb > target:
                target = lb
        self.stall_in += target - self.clock
        self.clock = target

    # -- channel commands carried out without yielding (module doc) ------------
    def deq_now(self, ch: Channel) -> Any:
        """`(DEQ, ch)` if it does not block: the element (None at end of
        stream), the clock and the channel updated, a sender waiting for room
        woken; else `WAIT`, nothing changed."""
        q = ch.q
        if q:
            v, el = q.popleft()
            if v > self.clock:
                self.stall_in += v - self.clock
                self.clock = v
            j = ch.n_deq
            ch.n_deq = j + 1
            cap = ch.cap
            if cap is not None:  # element j's dequeue time: the ack of enqueue j + cap
                if j < cap:
                    ch.acks.append(self.clock)
                else:
                    ch.acks[j % cap] = self.clock
            w = ch.waiting
            if w is not None and w is ch.sender:
                ch.waiting = None
                sim = self.sim
                if sim is not None:
                    sim._wake(w)
            return el
        if ch.closed:
            t = ch.final + 1
            if t > self.clock:
                self.stall_in += t - self.clock
                self.clock = t
            return None
        return WAIT

    def peek_now(self, ch: Channel) -> Any:
        """`(PEEK, ch)` if it does not block: the head element (None at end of
        stream), the clock updated; else `WAIT`, nothing changed."""
        q = ch.q
        if q:
            head = q[0]
            v = head[0]
            if v > self.clock:
                self.stall_in += v - self.clock
                self.clock = v
            return head[1]
        if ch.closed:
            t = ch.final + 1
            if t > self.clock:
                self.stall_in += t - self.clock
                self.clock = t
            return None
        return WAIT

    def room_now(self, ch: Channel) -> bool:
        """`(ROOM, ch)` if it does not block (the clock waits for the ack of
        the element the next enqueue replaces): True; else False, nothing changed."""
        cap = ch.cap
        k = ch.n_enq
        if cap is not None and k >= cap:
            if ch.n_deq + cap <= k:  # full: wait for the dequeue of element k - cap
                return False
            a = ch.acks[k % cap] + 1  # its dequeue time, ack latency 1
            if a > self.clock:
                self.stall_out += a - self.clock
                self.clock = a
        return True

    def enq_now(self, ch: Channel, el: Any, stamp: int) -> bool:
        """`(ENQ, ch, el, stamp)` if it does not block: visible at
        `max(stamp, clock + 1)`, a receiver waiting on `ch` woken; True. Else
        False, nothing changed."""
        if not self.room_now(ch):
            return False
        t = self.clock + 1
        q = ch.q
        q.append((stamp if stamp > t else t, el))
        ch.n_enq += 1
        if len(q) > ch.peak:
            ch.peak = len(q)
        w = ch.waiting
        if w is not None and w is ch.receiver:
            ch.waiting = None
            sim = self.sim
            if sim is not None:
                sim._wake(w)
        return True

    def nbpeek_now(self, ch: Channel) -> Any:
        """`(NBPEEK, ch)` without yielding when it can be answered now: the head
        `(v, el)`, `CLOSED`, or `NOTHING` when this poll ends a polling round
        the engine resolves in place (`Simulator.poll_now`); else `WAIT`."""
        q = ch.q
        if q:
            return q[0]
        if ch.closed:
            return CLOSED
        sim = self.sim
        if sim is None:
            return WAIT
        return sim.poll_now(self, ch)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} @{self.clock}>"



@mypyc_attr(allow_interpreted_subclasses=True)
class StreamCtx(Context):
    """A context with one input channel `inp` and one output channel `out`
    (wired by `runtime/fabric/build.py`; routing contexts add more)."""

    __slots__ = ("inp", "out")

    def __init__(self, name: str):
        super().__init__(name)
        self.inp: Channel | None = None
        self.out: Channel | None = None
