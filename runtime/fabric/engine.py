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
possible completion. Bounds are cached on the contexts and invalidated
incrementally (a context that runs drops the bounds that went through it),
so a polling round or an HBM advance only re-walks what changed.

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
from collections.abc import Generator, Sequence
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
Command = tuple
"""A channel command a context yields: `(DEQ, ch)`, `(ENQ, ch, element, stamp)`, ... (module doc)."""
Body = Generator[Command, Any, None]
"""A context's `body()`: yields commands, is sent each command's result."""
_DEADLOCK_LINES = 40  # blocked contexts listed in a deadlock report
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
    bounds (`lb`, `rdeps`, `hbm_lb`, `poll_lb`, `need_all`) and the metrics
    (`flops`, `onchip_bytes`, `onchip_row_bytes`, `max_rows`). Subclasses
    declare their own fields in `__slots__` too.
    """

    hbm_role: ClassVar[str | None] = None
    is_memory: ClassVar[bool] = False
    __slots__ = ("name", "clock", "busy", "stall_in", "stall_out", "stall_mem", "firings",
                 "ins", "outs", "done", "pending", "block", "gen", "hbm_lb", "events", "sim",
                 "bytes_read", "bytes_written", "resume", "poll_lb", "need_all", "lb", "rdeps",
                 "flops", "onchip_bytes", "onchip_row_bytes", "max_rows")

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
    poll_lb: float | None
    need_all: list[Channel] | None
    lb: float | None
    rdeps: set[Context] | None
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
        self.poll_lb = None  # sender bound recorded with a Nothing answer (poll_wait)
        self.need_all = None  # a poller that needs every one of these channels (Reassemble)
        self.lb = None  # cached lower bound of the future clock (None: not known)
        self.rdeps = None  # contexts whose cached bound went through this one
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
        self.poll_lb = None
        target = self.clock + 1
        if lb is not None and lb != float("inf"):
            if cap is not None and cap < lb:
                lb = cap
            target = max(target, int(lb))
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
        # The cached bound of a context that runs is stale — except for a poller
        # that was told Nothing and only polls again at the same clock with
        # the same needs (its bound depends on nothing else); that is checked
        # when it parks again (`deferred`), the rest is invalidated now.
        deferred = False
        if ctx.lb is not None:
            if ctx.resume is NOTHING:
                deferred, c0, need0 = True, ctx.clock, ctx.need_all
            else:
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
                    if deferred:
                        self._invalidate(ctx)
                    self._finish(ctx)
                    return
            op: int = cmd[0]
            arg = cmd[1]  # a Channel, or HBM's request count
            if op != NBPEEK:
                if deferred:
                    self._invalidate(ctx)
                    deferred = False
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
                    if deferred and (ctx.clock != c0 or ctx.need_all != need0):
                        self._invalidate(ctx)
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
        """`ctx` is about to change: drop its cached bound and, transitively,
        the cached bounds that went through it (recorded in `rdeps`)."""
        stack = [ctx]
        while stack:
            c = stack.pop()
            c.lb = None
            rd = c.rdeps
            if rd:
                c.rdeps = None
                for r in rd:
                    if r.lb is not None:
                        stack.append(r)

    def lower_bounds(self, starts=None) -> dict[Context, float]:
        """A lower bound of the future clock of `starts` (default: every context)
        and of every context they wait on (see module doc).

        A context's bound is `max(clock, bound(dep) + 1)` over what it waits
        on: the peer of its channel, or — for a poller that needs *every* one of
        a set of inputs before it acts again (FlatReassemble, `need_all`) —
        the senders of those inputs that are still empty. A wait cycle through
        such dependencies can never resolve (every member needs the next one),
        so its members and whatever waits on them are bounded by INF (a
        deadlock). Other pollers (EagerMerge) are bounded by their own clock.

        Bounds are cached on the contexts (`lb`) across calls: a blocked
        context's bound only changes when it or something it waits on runs,
        and every context records who used its bound (`rdeps`), so a context
        that runs invalidates exactly the bounds that went through it
        (`_invalidate`). Returns the bounds of `starts`."""
        onstack: set[Context] = set()
        # An iterative DFS with `_own`/`_deps` inlined (this runs once per
        # polling round, the simulator's hottest loop); a frame is
        # [context, its dependencies, next index, bound so far].
        starts = self.contexts if starts is None else starts
        chain = self._chain_bound
        for start in starts:
            if start.lb is not None or chain(start):
                continue
            stack: list[list] = []
            d = start
            while d is not None:
                blk = d.block
                deps: Sequence[Context] = ()
                own: int | float
                if d.done:
                    own = INF
                elif blk is None:
                    own = d.clock
                else:
                    kind = blk[0]
                    own = d.clock
                    if kind == DEQ or kind == PEEK:
                        deps = (blk[1].sender,)
                    elif kind == ENQ or kind == ROOM:
                        deps = (blk[1].receiver,)
                    elif kind == HBM:
                        if d.hbm_lb > own:
                            own = d.hbm_lb
                    elif kind == NBPEEK:
                        need = d.need_all
                        if need is not None:
                            deps = [ch.sender for ch in need if not ch.q and not ch.closed]
                res = None
                if deps:
                    onstack.add(d)
                    stack.append([d, deps, 0, own])
                else:  # a terminal: its bound is its own
                    d.lb = res = own
                d = None
                while stack:
                    top = stack[-1]
                    if res is not None:
                        if res + 1 > top[3]:
                            top[3] = res + 1
                        res = None
                    deps, i = top[1], top[2]
                    if i < len(deps):
                        nd = deps[i]
                        top[2] = i + 1
                        rd = nd.rdeps
                        if rd is None:
                            nd.rdeps = {top[0]}
                        else:
                            rd.add(top[0])
                        res = nd.lb
                        if res is None:
                            if nd in onstack:  # a wait cycle: never resolves
                                top[3] = INF
                            else:
                                d = nd
                                break
                        continue
                    stack.pop()  # all dependencies seen: the bound is known
                    onstack.discard(top[0])
                    top[0].lb = res = top[3]
        return {c: c.lb for c in starts}

    @staticmethod
    def _chain_bound(start: Context) -> bool:
        """`lower_bounds` for the common case: `start` waits on one context,
        which waits on one, ... up to a terminal, a known bound or a context
        already on the chain (a wait cycle: INF). Sets the bounds along the
        chain and records who used them, exactly as the general walk does;
        returns False, having changed nothing, where a context waits on several
        (a FlatReassemble's `need_all`), for the general walk.

        This runs for every invalidated bound (the engine's hottest walk), so
        it allocates one list: a context on the walk is marked by a *negative*
        `lb` holding its own bound, `-1 - own` (bounds are >= 0, so a mark is
        never a bound), instead of a set of the walk and a list of the owns."""
        path: list[Context] = []
        d = start
        res: int | float = 0
        while True:
            own: int | float = d.clock
            dep: Context | None = None  # typed: mypyc reads its fields directly
            if d.done:
                own = INF
            else:
                blk = d.block
                if blk is not None:
                    kind = blk[0]
                    if kind == DEQ or kind == PEEK:
                        dep = blk[1].sender
                    elif kind == ENQ or kind == ROOM:
                        dep = blk[1].receiver
                    elif kind == HBM:
                        if d.hbm_lb > own:
                            own = d.hbm_lb
                    elif kind == NBPEEK:
                        need = d.need_all
                        if need is not None:
                            deps = [ch.sender for ch in need if not ch.q and not ch.closed]
                            if len(deps) > 1:
                                for c in path:  # unmark: nothing changed
                                    c.lb = None
                                return False
                            if deps:
                                dep = deps[0]
            path.append(d)
            if dep is None:  # a terminal: its bound is its own
                res = own
                break
            d.lb = -1 - own  # on the walk (see docstring)
            lbd = dep.lb
            if lbd is not None:
                rd = dep.rdeps
                if rd is None:
                    dep.rdeps = {d}
                else:
                    rd.add(d)
                if lbd < 0:  # on the walk: a wait cycle, never resolves
                    res = INF
                else:
                    res = own if own > lbd + 1 else lbd + 1
                break
            d = dep
        # the tail's bound is `res`; each earlier context waits on the next
        i = len(path) - 1
        nxt = path[i]
        nxt.lb = res
        while i:
            i -= 1
            c = path[i]
            rd = nxt.rdeps
            if rd is None:
                nxt.rdeps = {c}
            else:
                rd.add(c)
            mark = c.lb
            assert mark is not None
            own = -1 - mark
            b = res + 1
            res = own if own > b else b
            c.lb = res
            nxt = c
        return True

    @staticmethod
    def _own(c: Context) -> float:
        """The bound a context has by itself (before what it waits on)."""
        if c.done:
            return INF
        blk = c.block
        if blk is not None and blk[0] == HBM:
            return max(c.clock, c.hbm_lb)
        return c.clock

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
        produce before their clock; True if any was answered."""
        if not self.pollers:
            return False
        self.lower_bounds([_parked_on(c).sender for c in self.pollers])
        progressed = False
        for ctx in list(self.pollers):
            ch = _parked_on(ctx)
            lb = ch.sender.lb
            if lb == INF and ctx.need_all is not None:
                continue  # waits on a wait cycle through itself: a deadlock
            if lb >= ctx.clock:
                ch.waiting = None
                self.pollers.remove(ctx)
                ctx.block = None
                ctx.pending = None
                ctx.resume = NOTHING
                # Nothing can change before the sender's lower bound: the
                # poller may skip its empty polling rounds up to it.
                if ctx.poll_lb is None or lb < ctx.poll_lb:
                    ctx.poll_lb = lb
                self.runq.append(ctx)
                progressed = True
        return progressed

    def _advance_hbm(self) -> bool:
        if not self.hbm.busy():
            return False
        lbs = self.lower_bounds(self.hbm.idle())
        horizon = self.hbm.horizon(lbs)
        progressed = bool(self.hbm.advance(horizon, self.hbm_done))
        if getattr(self.hbm, "bumps_lb", False):
            # this model raises the `hbm_lb` of transfers still in flight
            for c in self.contexts:
                if c.lb is not None and c.block is not None and c.block[0] == HBM:
                    self._invalidate(c)
        return progressed

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
