"""Channel commands carried out in place (SIM-ENGINE-3, issue 32 item 1).

A context tries a command with `Context.deq_now` / `peek_now` / `enq_now` /
`room_now` / `nbpeek_now` and yields it only when it would block; the engine
handles a yielded command with the same methods. That must be the same model:
the spec's channel timing (§1.1) either way, the same state for every context,
the same `steps`, and a command that does not block costs no generator
resumption (`Simulator.resumes`).
"""

from __future__ import annotations

import pytest
from fabric_helpers import mixtral_b64

from golden import MOE_CYCLES
from steplus.dialects.target.fabric import STEP_EVAL
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.channel import CLOSED, NOTHING, Channel, Element, Tile
from steplus.runtime.fabric.context import DEQ, ENQ, NBPEEK, PEEK, ROOM, WAIT, Context
from steplus.runtime.fabric.engine import Simulator


class Script(Context):
    """Runs ('work', n), ('enq', i), ('room', i), ('deq', i), ('peek', i),
    ('poll', i); `in_place`: each command tried with the context's own
    methods first, yielded only if it would block."""

    def __init__(self, name, steps, in_place):
        super().__init__(name)
        self.steps, self.in_place = steps, in_place
        self.seen = []
        self.o, self.i = [], []

    def body(self):
        for st in self.steps:
            op = st[0]
            if op == "work":
                self.work(st[1])
            elif op == "enq":
                el, ch = Element(Tile(1, 1, 4)), self.o[st[1]]
                if not (self.in_place and self.enq_now(ch, el, self.clock)):
                    yield (ENQ, ch, el, self.clock)
            elif op == "room":
                ch = self.o[st[1]]
                if not (self.in_place and self.room_now(ch)):
                    yield (ROOM, ch)
            elif op in ("deq", "peek"):
                ch = self.i[st[1]]
                got = WAIT
                if self.in_place:
                    got = self.deq_now(ch) if op == "deq" else self.peek_now(ch)
                if got is WAIT:
                    got = yield ((DEQ if op == "deq" else PEEK), ch)
                self.seen.append((op, self.clock, got is None))
            elif op == "poll":
                ch = self.i[st[1]]
                r = self.nbpeek_now(ch) if self.in_place else WAIT
                if r is WAIT:
                    r = yield (NBPEEK, ch)
                self.seen.append(("poll", self.clock, r if r in (NOTHING, CLOSED) else r[0]))


def _run(scripts, links, in_place):
    sim = Simulator(STEP_EVAL)
    ctx = {n: sim.add(Script(n, st, in_place)) for n, st in scripts.items()}
    for a, b, cap in links:
        ch = sim.connect(ctx[a], ctx[b], cap)
        ctx[a].o.append(ch)
        ctx[b].i.append(ch)
    sim.run()
    state = {n: (c.clock, c.busy, c.stall_in, c.stall_out, c.seen) for n, c in ctx.items()}
    return sim, state


def test_in_place_commands_keep_the_channel_timing():
    """test_fabric_channels' capacity/ack/send-latency case, in place: e0 visible
    at 1, dequeued at 1; e1 waits for the ack (sent at 2, dequeued at 6); e2
    sent at 7, dequeued at 11; end of stream at max(16, 7 + 1)."""
    scripts = {"src": [("enq", 0)] * 3,
               "dst": [("deq", 0), ("work", 5)] * 3 + [("deq", 0)]}
    for in_place in (False, True):
        _, st = _run(scripts, [("src", "dst", 1)], in_place)
        assert [s[1] for s in st["dst"][4]] == [1, 6, 11, 16]
        assert st["dst"][4][-1][2] is True
        assert st["src"][:4] == (7, 0, 0, 7)  # clock 7, all of it waiting for acks
        assert st["dst"][:2] == (16, 15)


def test_in_place_and_yielded_commands_are_the_same_run():
    """A three-stage pipeline with back-pressure, a peek, a room wait and a
    poller: every context's clock, counters and observations, and the number
    of steps, agree; in place, a step resumes its generator once (it yields
    only the command it blocks on), yielding, once per command."""
    scripts = {
        "src": [("work", 3), ("enq", 0), ("enq", 0), ("work", 7), ("enq", 0), ("enq", 0)],
        "mid": [("peek", 0), ("deq", 0), ("room", 0), ("enq", 0), ("work", 2)] * 4,
        "poll": [("poll", 0), ("work", 1), ("poll", 0), ("deq", 0), ("deq", 0), ("work", 4),
                 ("deq", 0), ("deq", 0), ("deq", 0)],
    }
    links = [("src", "mid", 1), ("mid", "poll", 1)]
    (s_yield, st_yield), (s_place, st_place) = (_run(scripts, links, p) for p in (False, True))
    assert st_place == st_yield
    assert s_place.steps == s_yield.steps
    commands = sum(1 for st in scripts.values() for s in st if s[0] != "work")
    assert s_yield.resumes == commands + len(scripts)  # one per command, one to finish
    assert s_place.resumes == s_place.steps
    assert s_place.resumes < s_yield.resumes


def test_a_command_that_would_block_changes_nothing():
    ctx = Context("c")
    ch = Channel("c->d", cap=1)
    ch.sender = ctx
    assert ctx.deq_now(ch) is WAIT and ctx.peek_now(ch) is WAIT
    assert ctx.enq_now(ch, Element(Tile(1, 1, 4)), 5) is True
    assert ch.q[0][0] == 5  # visible at max(stamp 5, clock 0 + 1)
    # full: the next enqueue waits for the ack of element 0, which was never dequeued
    assert ctx.enq_now(ch, Element(Tile(1, 1, 4)), 0) is False
    assert ctx.room_now(ch) is False
    assert (ctx.clock, ctx.stall_out, ch.n_enq, len(ch.q)) == (0, 0, 1, 1)
    ch.q.clear()
    ch.close(9)
    assert ctx.deq_now(ch) is None and ctx.clock == 10  # end of stream at final + 1


@pytest.mark.parametrize("tile_n", [16, None], ids=["tn16", "dynamic"])
def test_moe_steps_resume_once(tile_n):
    """Every context of the Mixtral B=64 layer carries out its non-blocking
    commands in place: each step resumes its generator exactly once (the
    golden cycles unchanged)."""
    prog = build_program(*mixtral_b64(tile_n))
    m = prog.run()
    assert m.cycles == MOE_CYCLES[("mixtral", 64, tile_n)]
    assert prog.sim.resumes == prog.sim.steps
