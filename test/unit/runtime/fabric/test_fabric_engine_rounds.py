"""The engine's polling rounds resolved inside `_step` (issue 32, the wake-list engine).

When the last runnable context of a drain parks on a non-blocking peek of an
empty channel and is the only poller, the round ends there: the engine
resolves it in place (`Simulator._poll_inline`) instead of returning to
`_run`, re-queueing the poller and stepping it again. That must be the same
model, not an approximation: the same rounds (each answers the same
`Nothing` from the same bound), the same cycles and per-context clocks, and
exactly one step fewer per round resolved in place (the poller's re-step).
`inline_polls = False` runs every round through `_run`, as before.
"""

from __future__ import annotations

import pytest
from fabric_helpers import Sink, mixtral_b64, new_sim, tile, wire

from golden import MOE_CYCLES
from steplus.runtime.fabric import contexts as R
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.channel import Element
from steplus.runtime.fabric.context import DEQ, ENQ, DeadlockError, StreamCtx

def _mixtral_program(tile_n):
    return build_program(*mixtral_b64(tile_n))


def _state(prog):
    return [(c.name, c.clock, c.busy, c.stall_in, c.stall_out, c.stall_mem, c.firings)
            for c in prog.contexts]


@pytest.mark.parametrize("tile_n", [16, None], ids=["tn16", "dynamic"])
def test_rounds_resolved_in_place_are_the_same_rounds(tile_n):
    runs = {}
    for inline in (True, False):
        prog = _mixtral_program(tile_n)
        prog.sim.inline_polls = inline
        runs[inline] = (prog.run(), prog)
    (m_in, p_in), (m_out, p_out) = runs[True], runs[False]
    assert m_in.cycles == m_out.cycles == MOE_CYCLES[("mixtral", 64, tile_n)]
    assert _state(p_in) == _state(p_out)  # every context's clock and counters
    s_in, s_out = p_in.sim, p_out.sim
    assert s_out.inline_rounds == 0
    assert s_in.inline_rounds > 0  # the FlatReassemble's rounds: it polls alone
    assert s_in.rounds == s_out.rounds  # the same polling rounds...
    assert s_in.steps == s_out.steps - s_in.inline_rounds  # ...minus one re-step each


class _WaitsOnTheSelector(StreamCtx):
    """Feeds an EagerMerge's input only after the merge has chosen a group:
    a wait cycle through the poller, which polling never breaks."""

    __slots__ = ("sel_in",)

    def body(self):
        s = yield (DEQ, self.sel_in)
        if s is not None:
            yield (ENQ, self.out, Element(tile()), self.clock)


@pytest.mark.parametrize("inline", [True, False])
def test_a_starved_poller_is_reported_after_the_same_rounds(inline):
    sim = new_sim()
    sim.inline_polls = inline
    w = sim.add(_WaitsOnTheSelector("w"))
    op = sim.add(R.EagerMergeCtx("em", 0))
    data = sim.add(Sink("data"))
    wire(sim, w, op, dst_attr="ins_list[0]")
    wire(sim, op, data)
    wire(sim, op, w, src_attr="sel_out", dst_attr="sel_in")
    with pytest.raises(DeadlockError) as e:
        sim.run()
    # pollers_starved is checked every 1024 polling rounds in a row (engine._STARVE_CHECK):
    # the merge, answered Nothing 1023 times, is one cycle further each time. The
    # first round ends in _run (the sink was still queued behind the merge's poll),
    # rounds 2-1023 in place, and the 1024th finds it starved.
    assert sim.rounds == 1024
    assert sim.inline_rounds == (1022 if inline else 0)
    assert "em @ cycle 1023: poll channel 'w->em'" in str(e.value)

