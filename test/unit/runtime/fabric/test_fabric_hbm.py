"""The closed-form HBM model agrees with the literal request-level model (§2)."""

from __future__ import annotations

import random

import pytest

from steplus.dialects.target.fabric import STEP_EVAL, SWIGLU_HDL, HBMConfig
from steplus.runtime.fabric.context import Context
from steplus.runtime.fabric.hbm import HBMServer
from steplus.runtime.fabric.hbm_reference import reference_completions


class _Reader(Context):
    hbm_role = "r"


class _Writer(Context):
    hbm_role = "w"


def _Req(name, role):
    """A scripted requester (the server takes contexts: compiled, their fields are native)."""
    return (_Reader if role == "r" else _Writer)(name)


def closed_form_completions(cfg, scripts, writers=0, np_min=None, tables=False):
    """Drive HBMServer with the same scripted requesters as the reference model
    (`np_min`: the window size from which numpy evaluates a segment; `tables`:
    every plain-int window from a cached table, none request by request)."""
    R = len(scripts)
    reqs = [_Req(f"r{i}", "w" if i >= R - writers else "r") for i in range(R)]
    hbm = HBMServer(cfg)
    if np_min is not None:
        hbm.NP_MIN = hbm.NP_BUILD = np_min
        hbm.NP_AFTER = 0  # numpy tables from the first window
    if tables:
        hbm.TABLE_MIN = hbm.TABLE_AFTER = 0
    for r in reqs:
        hbm.register(r)
    hbm.start()
    nxt = [0] * R
    issue_at = {r: scripts[i][0][0] for i, r in enumerate(reqs) if scripts[i]}
    out = [[] for _ in range(R)]

    def on_done(ctx, comp):
        i = reqs.index(ctx)
        out[i].append(comp)
        if nxt[i] < len(scripts[i]):
            issue_at[ctx] = comp + scripts[i][nxt[i]][0]
        else:
            hbm.unregister(ctx)

    while issue_at or hbm.busy():
        # issue every tile whose start is the earliest known time
        t = min(issue_at.values(), default=None)
        for ctx in [c for c, t0 in issue_at.items() if t0 == t]:
            i = reqs.index(ctx)
            hbm.issue(ctx, t, scripts[i][nxt[i]][1])
            nxt[i] += 1
            del issue_at[ctx]
        lbs = dict(issue_at)
        hbm.advance(hbm.horizon(lbs), on_done)
    return out


def test_single_tile_by_hand():
    # 8 channels, par 4: 16 requests = 4 chunks at cycles 1..4, 4 requests per
    # cycle on channels off + {0,1,3,6}; the last is served at 6 and seen at 6+17.
    cfg = SWIGLU_HDL.hbm
    assert reference_completions(cfg, [[(0, 16)]]) == [[23]]
    assert closed_form_completions(cfg, [[(0, 16)]]) == [[23]]


@pytest.mark.parametrize("cfg", [SWIGLU_HDL.hbm, STEP_EVAL.hbm,
                                 HBMConfig(channels=4, par_dispatch=3, startup=0, latency=1)])
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("np_min,tables", [(None, False), (None, True), (0, False)],
                         ids=["ints", "int-tables", "numpy"])
def test_closed_form_matches_reference(cfg, seed, np_min, tables):
    # both evaluations of a segment's window: plain ints (narrow request lists)
    # and numpy tables (wide ones; np_min=0 forces them everywhere)
    rnd = random.Random(seed)
    R = rnd.randint(1, 5)
    scripts = [[(rnd.choice([0, 0, 1, 3, 40]), rnd.choice([1, 5, 16, 64, 200, 513]))
                for _ in range(rnd.randint(1, 6))] for _ in range(R)]
    writers = rnd.randint(0, 1) if R > 1 else 0
    assert closed_form_completions(cfg, scripts, writers, np_min, tables) == \
        reference_completions(cfg, scripts)


def test_long_transfers_are_skipped_in_closed_form():
    cfg = SWIGLU_HDL.hbm
    scripts = [[(0, 4096)] * 3, [(2, 1024)] * 5, [(0, 16)] * 20]
    assert closed_form_completions(cfg, scripts) == reference_completions(cfg, scripts)
