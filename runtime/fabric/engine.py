"""The event-driven engine: contexts with their own clocks, channels, deadlock detection.

Every context is a Python generator that yields channel commands:

| command | meaning |
|---|---|
| `(DEQ, ch)` | blocking dequeue; returns the `Element` (None at end of stream) |
| `(PEEK, ch)` | blocking peek-next (same clock update, frees nothing) |
| `(ENQ, ch, el, stamp)` | enqueue with back-pressure (ack latency 1) |
| `(ROOM, ch)` | wait until `ch` has room (Broadcast), without enqueueing |
| `(NBPEEK, ch)` | non-blocking peek: `(v, el)`, `CLOSED` or `NOTHING` |
| `(HBM, n_req)` | move one tile through HBM (`n_req` 64-byte requests); returns when done |

Scheduling is deterministic: a FIFO run queue, each context runs until it
blocks. When nothing can run, the engine (1) answers pending non-blocking
peeks with `NOTHING` where the sender provably cannot produce anything visible
at or before the peeker's clock, (2) lets the HBM model advance up to the
earliest cycle at which an idle memory operator could issue a request, and
(3) if neither makes progress, reports a deadlock (cycle, blocked contexts and
channels) instead of hanging.

Lower bounds on a blocked context's future clock follow the channel it waits
on: a receiver waiting on an empty channel will not run before its sender's
bound + 1; a sender waiting on a full channel not before its receiver's
bound + 1; a memory operator waiting on HBM not before its tile's earliest
possible completion. A context blocked on one channel keeps its bound's
*form* along its chain of waits, `max(fa, bound(anchor) + fk)`, valid until a
context on that chain runs (not when the anchor, a context many others wait
on, does), so a polling round or an HBM advance evaluates most bounds in O(1)
(`Simulator.lower_bounds`).

Example:

```python
sim = Simulator(STEP_EVAL)
a, b = sim.add(Source(...)), sim.add(Sink(...))
ch = sim.connect(a, b, cap=1)
result = sim.run()
```
"""

from __future__ import annotations

import gc
import math
from collections.abc import Generator
from typing import Any, ClassVar, Final

try:  # read by mypyc when it compiles this module (runtime/fabric/native.py)
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - pure Python without mypy_extensions
    def mypyc_attr(*_a: str, **_k: Any) -> Any:  # type: ignore[misc]
        return lambda cls: cls

from steplus.passes.step.sim_estimate import SimulationError
from steplus.runtime.fabric.channel import CLOSED, NOTHING, Channel
from steplus.runtime.fabric.hbm import HBMServer

# Final: mypyc inlines them (a plain module global is a dict look-up on every use)
DEQ: Final = 0
PEEK: Final = 1
ENQ: Final = 2
ROOM: Final = 3
NBPEEK: Final = 4
HBM: Final = 5
_KIND = {DEQ: "dequeue from", PEEK: "peek", ENQ: "enqueue to", ROOM: "room on",
         NBPEEK: "poll", HBM: "HBM"}
INF: Final = math.inf
NEVER: Final = 1 << 60
"""The engine's INF inside the lower bounds (native ints): a context that never acts again."""
Command = tuple
"""A channel command a context yields: `(DEQ, ch)`, `(ENQ, ch, element, stamp)`, ... (module doc)."""
Body = Generator[Command, Any, None]
"""A context's `body()`: yields commands, is sent each command's result."""
_DEADLOCK_LINES = 40  # blocked contexts listed in a deadlock report
_ANCHOR_CHANNELS = 8  # channels of a context at which wait-chain forms stop (lower_bounds)
_STARVE_CHECK = 1024  # polling rounds in a row between two checks for a starved poller


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
        # the wait-chain form (Simulator._form): bound = max(fa, bound(fanc) + fk)
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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} @{self.clock}>"


def _parked_on(ctx: Context) -> Channel:
    """The channel a parked context waits on (a poller in `Simulator.pollers`)."""
    blk = ctx.block
    assert blk is not None, ctx.name
    return blk[1]


@mypyc_attr(allow_interpreted_subclasses=True)
class StreamCtx(Context):
    """A context with one input channel `inp` and one output channel `out`
    (wired by `runtime/fabric/build.py`; routing contexts add more)."""

    __slots__ = ("inp", "out")

    def __init__(self, name: str):
        super().__init__(name)
        self.inp: Channel | None = None
        self.out: Channel | None = None


class PausedGC:
    """`with PausedGC():` runs its body with Python's cyclic garbage collector
    paused, and restores the collector's state on the way out (also on an
    exception; a caller that had paused it keeps it paused).

    Building and simulating a fabric allocate hundreds of thousands of small
    objects (commands, elements, bound sets) that reference counting frees,
    while the heap holds a large, long-lived object graph (the xDSL module,
    the contexts): every automatic collection re-traverses that graph for
    nothing. Pausing it changes no result (cycles are freed at the next
    collection after the block) and made lowering a Qwen B=1024 graph ~2x
    and its simulation ~1.3x faster (docs/fabric.md, *Speed*).
    """

    __slots__ = ("was",)

    def __init__(self) -> None:
        self.was = False

    def __enter__(self) -> PausedGC:
        self.was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.was:
            gc.enable()


class Simulator:
    """Runs a network of contexts to completion (or reports a deadlock)."""

    def __init__(self, config, trace: bool = False, hbm_factory=None,
                 shuffle_seed: int | None = None):
        self.config = config
        self.contexts: list[Context] = []
        self.channels: list[Channel] = []
        self.hbm = (hbm_factory or HBMServer)(config.hbm)
        self.trace = trace
        self.runq: list[Context] = []
        self.pollers: list[Context] = []
        self.n_done = 0  # finished contexts (the run ends when all are)
        self.qid = 0  # the current lower-bounds query (see lower_bounds)
        self.shuffle_seed = shuffle_seed  # permute the initial run order (tests)

    def add(self, ctx: Context) -> Context:
        ctx.sim = self
        if ctx.events is None and self.trace:
            ctx.events = []
        self.contexts.append(ctx)
        return ctx

    def connect(self, src: Context, dst: Context, cap: int | None, name: str | None = None) -> Channel:
        ch = Channel(name or f"{src.name}->{dst.name}", cap)
        ch.sender, ch.receiver = src, dst
        src.outs.append(ch)
        dst.ins.append(ch)
        self.channels.append(ch)
        return ch

    # -- running ----------------------------------------------------------
    def run(self) -> None:
        with PausedGC():
            self._run()

    def _run(self) -> None:
        for ctx in self.contexts:
            if ctx.hbm_role is not None:
                self.hbm.register(ctx)
        for ctx in self.contexts:
            # many contexts may wait on one with many channels (a partition's
            # outputs): the wait-chain forms stop there (see lower_bounds)
            ctx.anchor = len(ctx.ins) + len(ctx.outs) >= _ANCHOR_CHANNELS
            ctx.gen = ctx.body()
            self.runq.append(ctx)
        if self.shuffle_seed is not None:
            import random

            random.Random(self.shuffle_seed).shuffle(self.runq)
        self.hbm.start()
        runq = self.runq
        poll_rounds = 0  # polling rounds in a row (see _pollers_starved)
        while True:
            i = 0
            while i < len(runq):
                ctx = runq[i]
                i += 1
                self._step(ctx)
                if i > 4096:
                    del runq[:i]
                    i = 0
            runq.clear()
            if self.n_done == len(self.contexts):
                return
            poll_rounds += 1
            if poll_rounds % _STARVE_CHECK == 0 and self._pollers_starved():
                self._deadlock()
            if self._resolve_pollers():
                continue
            poll_rounds = 0
            if self._advance_hbm():
                continue
            self._deadlock()

    def _wake(self, ctx: Context | None) -> None:
        if ctx is not None and ctx.pending is not None and not ctx.done and ctx.block is not None:
            ctx.block = None
            if ctx.pending[0] == NBPEEK:
                self.pollers.remove(ctx)
            self.runq.append(ctx)

    def _step(self, ctx: Context) -> None:
        if ctx.done or ctx.block is not None:
            return
        # The wait-chain form of a context that runs is stale, and so are the
        # forms that went through it (only a context blocked on one channel has one).
        if ctx.fa >= 0:
            self._invalidate(ctx)
        gen = ctx.gen
        if gen is None:  # pragma: no cover - run() starts every body first
            raise SimulationError(f"{ctx.name}: stepped before the run started")
        send = gen.send
        cmd = ctx.pending
        ctx.pending = None
        value = ctx.resume
        ctx.resume = None
        while True:
            if cmd is None:
                try:
                    cmd = send(value)
                except StopIteration:
                    self._finish(ctx)
                    return
            op: int = cmd[0]
            arg = cmd[1]  # a Channel, or HBM's request count
            # Channel.pop / has_room / ack_time / push, inlined (the hottest path)
            if op == DEQ or op == PEEK:
                ch: Channel = arg  # typed: mypyc reads its fields directly
                q = ch.q
                if q:
                    head = q[0]
                    v = head[0]
                    if v > ctx.clock:
                        ctx.stall_in += v - ctx.clock
                        ctx.clock = v
                    value = head[1]
                    if op == DEQ:
                        q.popleft()
                        ch.n_deq += 1
                        if ch.cap is not None:
                            ch.deq_times.append(ctx.clock)
                        w = ch.waiting
                        if w is not None and w is ch.sender:
                            ch.waiting = None
                            self._wake(w)
                elif ch.closed:
                    t = ch.final + 1
                    if t > ctx.clock:
                        ctx.stall_in += t - ctx.clock
                        ctx.clock = t
                    value = None
                else:
                    self._park(ctx, cmd, ch)
                    return
            elif op == ENQ or op == ROOM:
                ch = arg
                cap = ch.cap
                acked = cap is not None and ch.n_enq >= cap
                if acked:
                    dt = ch.deq_times
                    if not dt:  # full: wait for the receiver's dequeue
                        self._park(ctx, cmd, ch)
                        return
                    a = dt[0] + 1  # ack latency 1
                    if a > ctx.clock:
                        ctx.stall_out += a - ctx.clock
                        ctx.clock = a
                if op == ENQ:
                    if acked:
                        dt.popleft()
                    stamp = cmd[3]
                    t = ctx.clock + 1
                    q = ch.q
                    q.append((stamp if stamp > t else t, cmd[2]))
                    ch.n_enq += 1
                    if len(q) > ch.peak:
                        ch.peak = len(q)
                    w = ch.waiting
                    if w is not None and w is ch.receiver:
                        ch.waiting = None
                        self._wake(w)
                value = None
            elif op == NBPEEK:
                ch = arg
                if ch.q:
                    value = ch.q[0]
                elif ch.closed:
                    value = CLOSED
                else:
                    self._park(ctx, cmd, ch)
                    self.pollers.append(ctx)
                    return
            elif op == HBM:
                n_req = arg
                if n_req > 0:
                    ctx.pending = cmd
                    ctx.block = (HBM, None)
                    self.hbm.issue(ctx, ctx.clock, n_req)
                    return
                value = None
            else:  # pragma: no cover
                raise SimulationError(f"{ctx.name}: unknown command {cmd!r}")
            cmd = None

    def _park(self, ctx: Context, cmd, ch: Channel) -> None:
        ctx.pending = cmd
        ctx.block = (cmd[0], ch)
        ch.waiting = ctx

    def _finish(self, ctx: Context) -> None:
        ctx.done = True
        self.n_done += 1
        ctx.block = None
        for ch in ctx.outs:
            ch.close(ctx.clock)
            w = ch.waiting
            if w is not None and w is ch.receiver:
                ch.waiting = None
                self._wake(w)
        if ctx.hbm_role is not None:
            self.hbm.unregister(ctx)

    def hbm_done(self, ctx: Context, completion: int) -> None:
        """Called by the HBM model when `ctx`'s tile transfer has completed."""
        if ctx.events is not None:
            ctx.events.append((ctx.clock, max(completion - ctx.clock, 0)))
        if completion > ctx.clock:
            ctx.stall_mem += completion - ctx.clock
            ctx.clock = completion
        ctx.pending = None
        ctx.block = None
        self.runq.append(ctx)

    # -- progress when nothing runs ------------------------------------------
    @staticmethod
    def _invalidate(ctx: Context) -> None:
        """`ctx` is about to change: drop its wait-chain form and, transitively,
        the forms that went through it (recorded in `fdeps`)."""
        stack = [ctx]
        while stack:
            c = stack.pop()
            c.fa = -1
            rd = c.fdeps
            if rd is not None:
                c.fdeps = None
                for r in rd:
                    if r.fa >= 0:
                        stack.append(r)

    def lower_bounds(self, starts=None) -> dict[Context, int | float]:
        """A lower bound of the future clock of `starts` (default: every context).

        A context's bound is `max(clock, bound(dep) + 1)` over what it waits
        on: the peer of its channel, or — for a poller that needs *every* one of
        a set of inputs before it acts again (FlatReassemble, `need_all`) —
        the senders of those inputs that are still empty. A context waiting for
        HBM is bounded by its tile's earliest completion (`hbm_lb`), a runnable
        one or another poller (EagerMerge) by its own clock, a finished one by
        INF. A wait cycle through such dependencies can never resolve (every
        member needs the next one), so its members and whatever waits on them
        are bounded by INF (a deadlock).

        Computed without re-walking the wait graph at every query (each
        polling round and HBM advance is one): a context blocked on one
        channel keeps its *form* `(fa, fk, fanc)` — bound = `max(fa,
        bound(fanc) + fk)`, `fanc` the first context down its wait chain that
        is not blocked on one channel or is an `anchor` (one many contexts
        wait on, like the MoE token partition) — which stays valid until a
        context on that chain runs (`_invalidate`, through `fdeps`), not when
        the anchor does. A query then evaluates each start in O(1) plus the
        anchors and other chain ends it reaches, each once (memo `lb`, `qid`).
        Inside, bounds are native ints and INF is `NEVER`. Returns the bounds
        of `starts` (INF for NEVER)."""
        self.qid += 1
        qid = self.qid
        out: dict[Context, int | float] = {}
        for c in (self.contexts if starts is None else starts):
            v = self._bound(c, qid)
            out[c] = INF if v >= NEVER else v
        return out

    def _bound(self, c: Context, qid: int) -> int:
        """The bound of `c` in query `qid` (NEVER: INF). Follows the forms
        down the chain (`c`, its `fanc`, that one's `fanc`, ...) to a context
        whose bound is known in this query or that waits on nothing, then sets
        the bounds back up the chain; a FlatReassemble that needs several
        inputs is left to `_walk`. A context on the chain is marked in
        progress (`lb` = -1): met again, it is on a wait cycle (NEVER)."""
        path: list[Context] | None = None
        d = c
        res: int
        while True:
            if d.qid == qid:
                v = d.lb
                res = NEVER if v < 0 else v
                break
            own: int = d.clock
            if d.done:
                own = NEVER
            else:
                blk = d.block
                if blk is not None:
                    kind = blk[0]
                    if kind == HBM:
                        if d.hbm_lb > own:
                            own = d.hbm_lb
                    elif kind == NBPEEK:
                        if d.need_all is not None:
                            res = self._walk(d, qid)
                            break
                    else:  # blocked on one channel: its form
                        if d.fa < 0:
                            self._form(d)
                        own = d.fa
                        anc = d.fanc
                        if anc is not None and own < NEVER:
                            d.qid = qid
                            d.lb = -1  # in progress
                            if path is None:
                                path = [d]
                            else:
                                path.append(d)
                            d = anc
                            continue
            d.qid = qid
            d.lb = res = own
            break
        if path is not None:
            i = len(path)
            while i:
                i -= 1
                e = path[i]
                b = res + e.fk
                if b > NEVER:
                    b = NEVER
                if e.fa > b:
                    b = e.fa
                e.lb = res = b
        return res

    def _walk(self, start: Context, qid: int) -> int:
        """The bound of `start` in query `qid` (see `lower_bounds`): an
        iterative DFS over chain ends and anchors; a frame is [context, what
        it waits on, next index, bound so far, distance to them]."""
        stack: list[list[Any]] = []
        d: Context | None = start
        res = -1  # -1: no result to fold into the top frame
        while True:
            if d is not None:
                d.qid = qid
                d.lb = -1  # in progress: reached again, it is on a wait cycle
                own: int = d.clock
                deps: list[Context] | None = None
                off = 1
                if d.done:
                    own = NEVER
                else:
                    blk = d.block
                    if blk is not None:
                        kind = blk[0]
                        if kind == HBM:
                            if d.hbm_lb > own:
                                own = d.hbm_lb
                        elif kind == NBPEEK:
                            need = d.need_all
                            if need is not None:
                                deps = [ch.sender for ch in need if not ch.q and not ch.closed]
                        else:  # blocked on one channel: its form
                            if d.fa < 0:
                                self._form(d)
                            fa = d.fa
                            own = fa
                            anc = d.fanc
                            if anc is not None and fa < NEVER:
                                deps = [anc]
                                off = d.fk
                if deps:
                    stack.append([d, deps, 0, own, off])
                else:
                    d.lb = res = own
                d = None
            if not stack:
                return res
            top = stack[-1]
            if res >= 0:
                b: int = res + top[4]
                if b > NEVER:
                    b = NEVER
                if b > top[3]:
                    top[3] = b
                res = -1
            waits: list[Context] = top[1]
            i: int = top[2]
            if i < len(waits):
                nd: Context = waits[i]
                top[2] = i + 1
                if nd.qid == qid:
                    v = nd.lb
                    res = NEVER if v < 0 else v
                else:
                    d = nd
                continue
            stack.pop()
            c: Context = top[0]
            c.lb = res = top[3]

    @staticmethod
    def _form(start: Context) -> None:
        """Set the form of `start`, blocked on one channel, and of the contexts
        down its chain of single waits: `fa` = the largest `clock + distance`
        along the chain before `fanc`, `fk` = the distance to `fanc`, where
        `fanc` is the first context that is an anchor or not blocked on one
        channel (None after a wait cycle: `fa` = NEVER). A walk that meets a
        context with a form uses it; each context records in the next one's
        `fdeps` that its form went through it. A context on the walk is
        marked by `fk = -1`."""
        path: list[Context] = []
        d = start
        fa: int
        fk: int
        anc: Context | None
        while True:
            path.append(d)
            d.fk = -1  # on the walk
            blk = d.block
            assert blk is not None
            kind = blk[0]
            ch: Channel = blk[1]
            dep: Context = ch.sender if kind == DEQ or kind == PEEK else ch.receiver
            dblk = dep.block
            if dep.anchor or dep.done or dblk is None or dblk[0] == HBM or dblk[0] == NBPEEK:
                fa, fk, anc = d.clock, 1, dep  # a chain end: evaluated at each query
                break
            dfa = dep.fa
            if dfa >= 0 or dep.fk == -1:
                rd = dep.fdeps
                if rd is None:
                    dep.fdeps = [d]
                else:
                    rd.append(d)
                if dfa < 0:  # on the walk: a wait cycle, never resolves
                    fa, fk, anc = NEVER, 0, None
                else:
                    b = dfa + 1 if dfa < NEVER else NEVER
                    fa = d.clock if d.clock > b else b
                    fk, anc = dep.fk + 1, dep.fanc
                break
            d = dep
        # the tail's form is set; each earlier context waits on the next
        i = len(path) - 1
        nxt = path[i]
        nxt.fa, nxt.fk, nxt.fanc = fa, fk, anc
        while i:
            i -= 1
            c = path[i]
            rd = nxt.fdeps
            if rd is None:
                nxt.fdeps = [c]
            else:
                rd.append(c)
            b = fa + 1 if fa < NEVER else NEVER
            fa = c.clock if c.clock > b else b
            fk += 1
            c.fa, c.fk, c.fanc = fa, fk, anc
            nxt = c

    @staticmethod
    def _deps(c: Context):
        """What a blocked context waits on (None: a terminal, bound = the start value)."""
        if c.done:
            return None
        blk = c.block
        if blk is None:
            return None
        kind = blk[0]
        if kind == DEQ or kind == PEEK:
            return [blk[1].sender]
        if kind == ENQ or kind == ROOM:
            return [blk[1].receiver]
        if kind == NBPEEK:
            need = c.need_all
            if need is None:
                return None
            return [ch.sender for ch in need if not ch.q and not ch.closed]
        return None  # HBM: handled by the caller's start value

    def _pollers_starved(self) -> bool:
        """True when only the pollers could act and they never will: every
        channel into a poller is empty and open, and the chain of waits from
        each of their senders ends at a poller (or cycles) instead of at a
        context that can act (ready, or waiting for an HBM transfer).

        Then no channel into a poller can receive an element, so the pollers
        would be answered Nothing forever, their clocks advancing without end:
        a poller in a wait cycle through itself (an EagerMerge whose inputs
        wait for its own selector output, a feedback edge without a seed) is
        a deadlock, not a hang. The lower bounds cannot see this: an
        EagerMerge is bounded by its own clock, which its empty polling rounds
        keep advancing. Checked every `_STARVE_CHECK` polling rounds in a row
        (cheap; a hang is caught within that many rounds)."""
        pollers = set(self.pollers)
        if not pollers:
            return False
        for ctx in pollers:
            for ch in ctx.ins:
                if ch.q or ch.closed:
                    return False
        for ctx in pollers:
            for ch in ctx.ins:
                c, seen = ch.sender, set()
                while c not in pollers and c not in seen:
                    if c.done or c.block is None or c.block[0] == HBM:
                        return False  # it can still act
                    seen.add(c)
                    deps = self._deps(c)
                    if not deps:
                        return False
                    c = deps[0]
        return True

    def _resolve_pollers(self) -> bool:
        """Answer `NOTHING` to the pollers whose senders provably cannot
        produce before their clock; True if any was answered. (Every bound is
        taken before any poller is answered: an answer changes the wait graph.)"""
        if not self.pollers:
            return False
        self.qid += 1
        qid = self.qid
        pollers = list(self.pollers)
        lbs = [self._bound(_parked_on(c).sender, qid) for c in pollers]
        progressed = False
        for ctx, lb in zip(pollers, lbs):
            if lb >= NEVER and ctx.need_all is not None:
                continue  # waits on a wait cycle through itself: a deadlock
            if lb >= ctx.clock:
                ch = _parked_on(ctx)
                ch.waiting = None
                self.pollers.remove(ctx)
                ctx.block = None
                ctx.pending = None
                ctx.resume = NOTHING
                # Nothing can change before the sender's lower bound: the
                # poller may skip its empty polling rounds up to it.
                if ctx.poll_lb < 0 or lb < ctx.poll_lb:
                    ctx.poll_lb = lb
                self.runq.append(ctx)
                progressed = True
        return progressed

    def _advance_hbm(self) -> bool:
        hbm = self.hbm
        if not hbm.busy():
            return False
        horizon: int | float
        if type(hbm) is HBMServer:  # `HBMServer.horizon` without the dict
            self.qid += 1
            qid = self.qid
            h = NEVER
            for c in hbm.idle_set:
                v = self._bound(c, qid)
                if v < h:
                    h = v
            horizon = INF if h >= NEVER else h + 1
        else:
            horizon = hbm.horizon(self.lower_bounds(hbm.idle()))
        # (a model that raises the `hbm_lb` of transfers in flight, like the
        # request-level one, needs nothing more: a context waiting for HBM
        # ends its chain's form, so its bound is read afresh at each query)
        return bool(hbm.advance(horizon, self.hbm_done))

    def _deadlock(self) -> None:
        blocked = [c for c in self.contexts if not c.done]
        cycle = min(c.clock for c in blocked)
        lines = [f"deadlock at cycle {cycle}: {len(blocked)} context(s) blocked"]
        shown = blocked
        if len(blocked) > _DEADLOCK_LINES:  # the wait cycle(s) first, then the rest
            on_cycle = self._wait_cycles()
            shown = [c for c in blocked if c in on_cycle] + \
                [c for c in blocked if c not in on_cycle]
            shown = shown[:max(_DEADLOCK_LINES, len(on_cycle))]
        for c in shown:
            if c.block is None:
                what = "runnable"
            elif c.block[0] == HBM:
                what = "waiting for HBM"
            else:
                ch = c.block[1]
                what = f"{_KIND[c.block[0]]} channel '{ch.name}' ({len(ch.q)}/{ch.cap or 'inf'} full)"
            lines.append(f"  {c.name} @ cycle {c.clock}: {what}")
        if len(shown) < len(blocked):
            lines.append(f"  ... and {len(blocked) - len(shown)} more blocked context(s)")
        raise DeadlockError("\n".join(lines))

    def _wait_cycles(self) -> set[Context]:
        """The contexts on a cycle of the wait graph (`_deps`)."""
        color: dict[Context, int] = {}
        found: set[Context] = set()
        for s in self.contexts:
            if s in color:
                continue
            path = [s]
            color[s] = 1
            stack = [iter(self._deps(s) or ())]
            while stack:
                d = next(stack[-1], None)
                if d is None:
                    stack.pop()
                    color[path.pop()] = 2
                elif d not in color:
                    color[d] = 1
                    path.append(d)
                    stack.append(iter(self._deps(d) or ()))
                elif color[d] == 1:
                    found.update(path[path.index(d):])
        return found
