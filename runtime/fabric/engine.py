"""The engine: runs a network of contexts to completion or reports a deadlock.

Contexts (`context.Context`) are generators of channel commands (`DEQ`, `PEEK`,
`ENQ`, `ROOM`, `NBPEEK`, `HBM`; table in `context`). Scheduling is
deterministic: a FIFO run queue, each context runs until it blocks. When
nothing can run, the engine (1) answers pending non-blocking peeks with
`NOTHING` where the sender provably cannot produce anything visible at or
before the peeker's clock, (2) lets the HBM model advance up to the earliest
cycle at which an idle memory operator could issue a request, and (3) if
neither makes progress, reports a deadlock (cycle, blocked contexts and
channels) instead of hanging. A round that ends at a poller's own peek (the
last context of the drain, and the only poller) is resolved right there
(`_poll_inline`: same round, bound and answer, without re-queueing it). Both (1) and (2) ask for lower bounds of
blocked contexts' future clocks, kept incrementally along the wait graph by
`bounds`.

Example:

```python
sim = Simulator(STEP_EVAL)
a, b = sim.add(Source(...)), sim.add(Sink(...))
ch = sim.connect(a, b, cap=1)
result = sim.run()
```
"""

from __future__ import annotations

from steplus.passes.step.sim_estimate import SimulationError
from steplus.runtime.fabric.bounds import bound, invalidate, pollers_starved, wait_cycles
from steplus.runtime.fabric.channel import CLOSED, NOTHING, Channel
from steplus.runtime.fabric.context import (
    DEQ, ENQ, HBM, INF, NBPEEK, NEVER, PEEK, ROOM, WAIT, Context, DeadlockError,
)
from steplus.runtime.fabric.hbm import HBMServer
from steplus.utils.gc_pause import PausedGC

_KIND = {DEQ: "dequeue from", PEEK: "peek", ENQ: "enqueue to", ROOM: "room on",
         NBPEEK: "poll", HBM: "HBM"}
_DEADLOCK_LINES = 40  # blocked contexts listed in a deadlock report
_ANCHOR_CHANNELS = 8  # channels of a context at which wait-chain forms stop (bounds)
_STARVE_CHECK = 1024  # polling rounds in a row between two checks for a starved poller


def _parked_on(ctx: Context) -> Channel:
    """The channel a parked context waits on (a poller in `Simulator.pollers`)."""
    blk = ctx.block
    assert blk is not None, ctx.name
    return blk[1]



class Simulator:
    """Runs a network of contexts to completion (or reports a deadlock)."""

    def __init__(self, config, trace: bool = False, hbm_factory=None,
                 shuffle_seed: int | None = None):
        self.config = config
        self.contexts: list[Context] = []
        self.channels: list[Channel] = []
        self.hbm = (hbm_factory or HBMServer)(config.hbm)
        # the closed-form server, typed: compiled, its calls are native (another
        # model, like the request-level one or a test's wrapper, goes through `hbm`)
        self.fast_hbm: HBMServer | None = self.hbm if type(self.hbm) is HBMServer else None
        self.trace = trace
        self.runq: list[Context] = []
        self.pollers: list[Context] = []
        self.n_done = 0  # finished contexts (the run ends when all are)
        self.qid = 0  # the current lower-bounds query (see lower_bounds)
        self.shuffle_seed = shuffle_seed  # permute the initial run order (tests)
        self.ri = 0  # the run queue's next index in the current drain (see _step's NBPEEK)
        self.poll_rounds = 0  # polling rounds in a row (see pollers_starved)
        self.noop_round = False  # this drain's round already resolved, answering nothing
        self.rounds = 0  # polling rounds (queries answering Nothing), inline ones included
        self.inline_rounds = 0  # of which resolved inside `_step` (see _poll_inline)
        self.steps = 0  # contexts stepped (each runs until it blocks)
        self.resumes = 0  # generator resumptions (a command carried out in place needs none)
        self.inline_polls = True  # False: every round through _run (tests compare both)

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
        self.poll_rounds = 0
        while True:
            i = 0
            while i < len(runq):
                ctx = runq[i]
                i += 1
                self.ri = i
                self._step(ctx)
                if i > 4096:
                    del runq[:i]
                    i = 0
            runq.clear()
            if self.n_done == len(self.contexts):
                return
            if self.noop_round:  # resolved in _step (_poll_inline): nothing answered
                self.noop_round = False
            else:
                self.poll_rounds += 1
                self.rounds += 1
                if self.poll_rounds % _STARVE_CHECK == 0 and pollers_starved(self.pollers):
                    self._deadlock()
                if self._resolve_pollers():
                    continue
            self.poll_rounds = 0
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
        self.steps += 1
        # The wait-chain form of a context that runs is stale, and so are the
        # forms that went through it (only a context blocked on one channel has one).
        if ctx.fa >= 0:
            invalidate(ctx)
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
                self.resumes += 1
                try:
                    cmd = send(value)
                except StopIteration:
                    self._finish(ctx)
                    return
            op: int = cmd[0]
            arg = cmd[1]  # a Channel, or HBM's request count
            # the command carried out by the context's own methods (context
            # module doc): the same code whether it yielded the command or not
            if op == DEQ:
                value = ctx.deq_now(arg)
                if value is WAIT:
                    self._park(ctx, cmd, arg)
                    return
            elif op == PEEK:
                value = ctx.peek_now(arg)
                if value is WAIT:
                    self._park(ctx, cmd, arg)
                    return
            elif op == ENQ:
                if not ctx.enq_now(arg, cmd[2], cmd[3]):
                    self._park(ctx, cmd, arg)
                    return
                value = None
            elif op == ROOM:
                if not ctx.room_now(arg):
                    self._park(ctx, cmd, arg)
                    return
                value = None
            elif op == NBPEEK:
                ch: Channel = arg
                if ch.q:
                    value = ch.q[0]
                elif ch.closed:
                    value = CLOSED
                else:
                    self._park(ctx, cmd, ch)
                    self.pollers.append(ctx)
                    if not self._poll_inline(ctx, ch):
                        return
                    value = NOTHING
            elif op == HBM:
                n_req = arg
                if n_req > 0:
                    ctx.pending = cmd
                    ctx.block = (HBM, None)
                    fh = self.fast_hbm
                    if fh is not None:
                        fh.issue(ctx, ctx.clock, n_req)
                    else:
                        self.hbm.issue(ctx, ctx.clock, n_req)
                    return
                value = None
            else:  # pragma: no cover
                raise SimulationError(f"{ctx.name}: unknown command {cmd!r}")
            cmd = None

    def _poll_inline(self, ctx: Context, ch: Channel) -> bool:
        """`ctx` has just parked on a non-blocking peek of the empty `ch`.
        If it is the last context of this drain and the only poller, the
        polling round ends now with this state: resolve it here, exactly as
        `_run` then `_resolve_pollers` would (same round count, starvation
        check, bound and answer), and return True if `ctx` is answered
        Nothing (unparked: `_step` goes on with it instead of re-queueing
        it). False: it stays parked (the round answered nothing when
        `noop_round` is set, and `_run` goes on to the HBM advance)."""
        if not self.inline_polls or self.ri < len(self.runq) or len(self.pollers) != 1:
            return False
        self.poll_rounds += 1
        self.rounds += 1
        if self.poll_rounds % _STARVE_CHECK == 0 and pollers_starved(self.pollers):
            self._deadlock()
        self.qid += 1
        lb = bound(ch.sender, self.qid)
        if (lb >= NEVER and ctx.need_all is not None) or lb < ctx.clock:
            self.noop_round = True
            return False
        self.inline_rounds += 1
        ch.waiting = None
        self.pollers.clear()
        ctx.block = None
        ctx.pending = None
        if ctx.poll_lb < 0 or lb < ctx.poll_lb:
            ctx.poll_lb = lb
        return True

    def poll_now(self, ctx: Context, ch: Channel) -> object:
        """`ctx`, running, polls the empty, open `ch` (`Context.nbpeek_now`).
        If the engine would resolve that round in place (`_poll_inline`: the
        last context of the drain, no other poller, no starvation check due)
        and answer it Nothing, do so without parking `ctx`: the same round
        count, bound (taken with `ctx` marked as polling, as when parked) and
        `poll_lb`; return `NOTHING`. Otherwise change nothing and return
        `WAIT`: `ctx` yields the poll and `_step` handles it as before."""
        if not self.inline_polls or self.ri < len(self.runq) or self.pollers \
                or (self.poll_rounds + 1) % _STARVE_CHECK == 0:
            return WAIT
        ctx.block = (NBPEEK, ch)  # what the bounds see of a parked poller
        self.qid += 1
        lb = bound(ch.sender, self.qid)
        ctx.block = None
        if (lb >= NEVER and ctx.need_all is not None) or lb < ctx.clock:
            return WAIT  # a round that answers nothing: _step parks it
        self.poll_rounds += 1
        self.rounds += 1
        self.inline_rounds += 1
        if ctx.poll_lb < 0 or lb < ctx.poll_lb:
            ctx.poll_lb = lb
        return NOTHING

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
    # -- progress when nothing runs ------------------------------------------
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
        context on that chain runs (`bounds.invalidate`, through `fdeps`), not when
        the anchor does. A query then evaluates each start in O(1) plus the
        anchors and other chain ends it reaches, each once (memo `lb`, `qid`).
        Inside, bounds are native ints and INF is `NEVER`. Returns the bounds
        of `starts` (INF for NEVER)."""
        self.qid += 1
        qid = self.qid
        out: dict[Context, int | float] = {}
        for c in (self.contexts if starts is None else starts):
            v = bound(c, qid)
            out[c] = INF if v >= NEVER else v
        return out

    def _resolve_pollers(self) -> bool:
        """Answer `NOTHING` to the pollers whose senders provably cannot
        produce before their clock; True if any was answered. (Every bound is
        taken before any poller is answered: an answer changes the wait graph.)"""
        if not self.pollers:
            return False
        self.qid += 1
        qid = self.qid
        pollers = list(self.pollers)
        lbs = [bound(_parked_on(c).sender, qid) for c in pollers]
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
        fh = self.fast_hbm
        if fh is not None:  # `HBMServer.horizon` without the dict, native calls
            if not fh.inflight:
                return False
            self.qid += 1
            qid = self.qid
            h = NEVER
            for ctx in fh.idle_list:
                if ctx.clock >= h or ctx.fa >= h:
                    continue  # a bound is at least the clock and a valid form's fa: cannot lower h
                v = bound(ctx, qid)
                if v < h:
                    h = v
            return fh.advance(INF if h >= NEVER else h + 1, self.hbm_done) > 0
        hbm = self.hbm
        if not hbm.busy():
            return False
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
            on_cycle = wait_cycles(self.contexts)
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
