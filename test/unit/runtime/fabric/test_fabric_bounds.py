"""The engine's lower bounds (wait-chain forms, anchors, per-query memo) equal
their definition at the queries of real runs.

`Simulator.lower_bounds` keeps a form per context blocked on one channel and
reuses it across queries until a context on its chain runs (bounds.py,
docs/fabric.md *Determinism*); the definition it must reproduce is the plain
recursion over the wait graph: a finished context never acts (INF), a runnable
one or an EagerMerge poller is bounded by its clock, a context waiting for HBM
by `max(clock, hbm_lb)`, one blocked on a channel by `max(clock, bound(peer) + 1)`,
a FlatReassemble that needs every input by `max(clock, max(bound(sender) + 1))`
over the empty ones, and a wait cycle (and whatever waits on it) by INF. The
check runs inside the HBM model's `horizon` (called at every HBM advance, after
the engine's own query), so it sees the states the engine really queries, with
the compiled build as well as the pure modules.
"""

from __future__ import annotations

import math

import pytest

from fabric_helpers import mixtral_b64
from golden import MOE_CYCLES
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.context import DEQ, ENQ, HBM, NBPEEK, PEEK, ROOM
from steplus.runtime.fabric.hbm import HBMServer

INF = math.inf


def reference_bounds(contexts) -> dict:
    """The definition (module doc), by a DFS with an on-stack set for cycles."""
    memo: dict = {}
    onstack: set = set()

    def deps(c):
        if c.done or c.block is None:
            return []
        kind, ch = c.block
        if kind in (DEQ, PEEK):
            return [ch.sender]
        if kind in (ENQ, ROOM):
            return [ch.receiver]
        if kind == NBPEEK and c.need_all is not None:
            return [x.sender for x in c.need_all if not x.q and not x.closed]
        return []

    def bound(c):
        if c in memo:
            return memo[c]
        if c in onstack:
            return INF
        if c.done:
            memo[c] = INF
            return INF
        own = c.clock
        if c.block is not None and c.block[0] == HBM:
            own = max(own, c.hbm_lb)
        onstack.add(c)
        for d in deps(c):
            own = max(own, bound(d) + 1)
        onstack.discard(c)
        memo[c] = own
        return own

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        return {c: bound(c) for c in contexts}
    finally:
        sys.setrecursionlimit(old)


class CheckingHBM:
    """An HBMServer that, at every `every`-th horizon, compares the engine's
    bounds (the idle requesters' it was handed, and `lower_bounds()` of every
    context) with `reference_bounds`."""

    def __init__(self, cfg, every: int):
        self.inner = HBMServer(cfg)
        self.every = every
        self.sim = None
        self.calls = self.checked = 0
        self.finite = self.infinite = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def horizon(self, lbs):
        self.calls += 1
        if self.sim is not None and self.calls % self.every == 1:
            ref = reference_bounds(self.sim.contexts)
            for c, v in lbs.items():
                assert v == ref[c], (c, v, ref[c])
            got = self.sim.lower_bounds()
            bad = [(c.name, got[c], ref[c]) for c in self.sim.contexts if got[c] != ref[c]]
            assert not bad, bad[:5]
            self.checked += 1
            self.finite += sum(v != INF for v in ref.values())
            self.infinite += sum(v == INF for v in ref.values())
        return self.inner.horizon(lbs)


@pytest.mark.parametrize("tile_n", [16, None], ids=["tn16", "dynamic"])
def test_bounds_equal_the_definition_at_the_queries_of_a_moe_run(tile_n):
    module, cfg = mixtral_b64(tile_n)
    servers: list[CheckingHBM] = []

    def factory(hbm_cfg):
        servers.append(CheckingHBM(hbm_cfg, every=25))
        return servers[-1]

    prog = build_program(module, cfg, hbm_factory=factory)
    servers[0].sim = prog.sim
    result = prog.run()
    s = servers[0]
    assert s.checked >= 20, (s.calls, s.checked)  # the check really ran, many times
    assert s.finite > 0 and s.infinite > 0  # finished contexts (INF) and waiting ones
    # the checking server times the HBM exactly as the plain one: same cycles as the pin
    assert result.cycles == MOE_CYCLES[("mixtral", 64, tile_n)]
