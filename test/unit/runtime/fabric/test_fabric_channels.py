"""Channel semantics of reference spec §1.1, exactly, on hand-made contexts."""

from __future__ import annotations

import pytest

from steplus.runtime.fabric.channel import CLOSED, NOTHING, Channel, Element, Tile
from steplus.dialects.target.fabric import STEP_EVAL
from steplus.runtime.fabric.context import DEQ, ENQ, NBPEEK, PEEK, Context, DeadlockError
from steplus.runtime.fabric.engine import Simulator


class Script(Context):
    """A context running a list of steps: ('work', n), ('enq', i, stamp|None),
    ('deq', i), ('peek', i), ('poll', i); records what it saw."""

    def __init__(self, name, steps):
        super().__init__(name)
        self.steps = steps
        self.seen = []
        self.o, self.i = [], []

    def body(self):
        for st in self.steps:
            if st[0] == "work":
                self.work(st[1])
            elif st[0] == "enq":
                stamp = self.clock if st[2] is None else st[2]
                yield (ENQ, self.o[st[1]], Element(Tile(1, 1, 4)), stamp)
            elif st[0] in ("deq", "peek"):
                el = yield ((DEQ if st[0] == "deq" else PEEK), self.i[st[1]])
                self.seen.append((st[0], self.clock, el is None))
            elif st[0] == "poll":
                r = yield (NBPEEK, self.i[st[1]])
                self.seen.append(("poll", self.clock, r if r in (NOTHING, CLOSED) else r[0]))


def link(sim, a, b, cap):
    ch = sim.connect(a, b, cap)
    a.o.append(ch)
    b.i.append(ch)
    return ch


def test_capacity_ack_and_send_latency():
    sim = Simulator(STEP_EVAL)
    src = sim.add(Script("src", [("enq", 0, None)] * 3))
    dst = sim.add(Script("dst", [("deq", 0), ("work", 5)] * 3 + [("deq", 0)]))
    link(sim, src, dst, 1)
    sim.run()
    # e0 visible at 1, dequeued at 1; e1 waits for the ack: sent at 2, dequeued at 6;
    # e2 sent at 7, dequeued at 11; end of stream at max(16, 7 + 1).
    assert [s[1] for s in dst.seen] == [1, 6, 11, 16]
    assert dst.seen[-1][2] is True
    assert src.clock == 7 and src.stall_out == 7
    assert dst.clock == 16 and dst.busy == 15


def test_unbounded_channel_never_blocks_and_future_stamps_are_kept():
    sim = Simulator(STEP_EVAL)
    src = sim.add(Script("src", [("enq", 0, 10), ("enq", 0, None), ("work", 3)]))
    dst = sim.add(Script("dst", [("deq", 0), ("deq", 0), ("deq", 0)]))
    link(sim, src, dst, None)
    sim.run()
    assert [s[1] for s in dst.seen] == [10, 10, 10]  # v=10, v=1 (<10), end at 3+1 < 10
    assert src.clock == 3


def test_peek_next_does_not_free_capacity():
    sim = Simulator(STEP_EVAL)
    src = sim.add(Script("src", [("enq", 0, None), ("enq", 0, None)]))
    dst = sim.add(Script("dst", [("peek", 0), ("work", 4), ("deq", 0), ("deq", 0)]))
    link(sim, src, dst, 1)
    sim.run()
    assert [s[1] for s in dst.seen] == [1, 5, 7]  # 2nd sent at 6 (ack of d=5), visible at 7
    assert src.clock == 6


def test_nonblocking_peek_something_nothing_closed():
    sim = Simulator(STEP_EVAL)
    # poller at clock 3 sees a future-stamped head (v=6) from a sender at clock 5,
    # and Nothing from s2, which waits on s3, which waits on the poller itself.
    poller = sim.add(Script("poller", [("work", 3), ("poll", 0), ("poll", 1), ("enq", 0, None),
                                       ("deq", 0), ("work", 20), ("poll", 1), ("deq", 1),
                                       ("poll", 1)]))
    s1 = sim.add(Script("s1", [("work", 5), ("enq", 0, None)]))
    s2 = sim.add(Script("s2", [("deq", 0), ("enq", 0, None)]))
    s3 = sim.add(Script("s3", [("deq", 0), ("work", 10), ("enq", 0, None)]))
    link(sim, s1, poller, 1)
    link(sim, s2, poller, 1)
    link(sim, s3, s2, 1)
    link(sim, poller, s3, 1)
    sim.run()
    assert poller.seen == [("poll", 3, 6), ("poll", 3, NOTHING), ("deq", 6, False),
                           ("poll", 26, 16), ("deq", 26, False), ("poll", 26, CLOSED)]


def test_deadlock_is_reported_with_cycle_contexts_and_channels():
    sim = Simulator(STEP_EVAL)
    a = sim.add(Script("a", [("work", 2), ("deq", 0), ("enq", 0, None)]))
    b = sim.add(Script("b", [("deq", 0), ("enq", 0, None)]))
    link(sim, a, b, 1)
    link(sim, b, a, 1)
    with pytest.raises(DeadlockError) as e:
        sim.run()
    msg = str(e.value)
    assert msg.startswith("deadlock at cycle 0: 2 context(s) blocked")
    assert "a @ cycle 2: dequeue from channel 'b->a' (0/1 full)" in msg
    assert "b @ cycle 0: dequeue from channel 'a->b' (0/1 full)" in msg


def test_channel_rejects_bad_capacity():
    with pytest.raises(ValueError):
        Channel("x", 0)


def test_stop_levels_of_generated_streams():
    from steplus.runtime.fabric.contexts import walk_levels

    assert [lv for _, lv in walk_levels((3, 1))] == [1, 1, 2]
    assert [lv for _, lv in walk_levels((3,))] == [0, 0, 1]
    assert [lv for _, lv in walk_levels((2, 2, 1))] == [1, 2, 1, 3]
    assert [lv for _, lv in walk_levels((2, 1, 3))] == [0, 0, 2, 0, 0, 3]


class GCProbe(Script):
    """A Script that records whether the cyclic collector runs during its body."""

    def body(self):
        import gc

        self.seen.append(("gc", gc.isenabled()))
        yield from super().body()


@pytest.mark.parametrize("enabled", [True, False])
def test_run_pauses_the_cyclic_gc_and_restores_it(enabled):
    """Simulator.run pauses the collector (utils.gc_pause.PausedGC) and restores the
    caller's state after a finished run and after a deadlock alike."""
    import gc

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        sim = Simulator(STEP_EVAL)
        src = sim.add(GCProbe("src", [("enq", 0, None)]))
        dst = sim.add(Script("dst", [("deq", 0), ("deq", 0)]))
        link(sim, src, dst, 1)
        sim.run()
        assert src.seen == [("gc", False)]
        # visible at 0 + 1; end of stream at max(1, final clock 0 + 1) (§1.1)
        assert dst.seen == [("deq", 1, False), ("deq", 1, True)]
        assert gc.isenabled() is enabled
        sim = Simulator(STEP_EVAL)
        a = sim.add(Script("a", [("deq", 0)]))
        b = sim.add(Script("b", [("deq", 0)]))
        link(sim, a, b, 1)
        link(sim, b, a, 1)
        with pytest.raises(DeadlockError):
            sim.run()
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
