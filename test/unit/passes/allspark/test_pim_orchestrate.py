"""End-to-end orchestration and the B/P/AH baselines under the same cost model."""

from __future__ import annotations

import pytest

from steplus.passes.allspark.baselines import baseline, baseline_scheme
from steplus.dialects.target.pim import preset
from steplus.passes.allspark.orchestrate import orchestrate
from steplus.passes.allspark.partition import Scheme


@pytest.fixture(scope="module")
def swin_t():
    return orchestrate("swin-t", 224, "allspark-16x16")


def test_schedule_places_every_branch(swin_t) -> None:
    assert swin_t.status == "optimal"
    for st, rep in zip(swin_t.model.stages, swin_t.stages):
        assert sum(lay.branches for lay in rep.layers) == st.branches
        for lay in rep.layers:
            assert lay.branches * lay.scheme.nodes <= 256


def test_utilization_is_eq_16(swin_t) -> None:
    for rep in swin_t.stages:
        busy = sum(lay.branches * lay.scheme.nodes * lay.cost.total for lay in rep.layers)
        assert rep.utilization == pytest.approx(busy / (256 * rep.total))
    assert 0 < swin_t.utilization <= 1


def test_latency_split_adds_up(swin_t) -> None:
    split = swin_t.split_ms()
    assert sum(split.values()) == pytest.approx(swin_t.latency_ms)
    assert swin_t.latency_ms == pytest.approx(swin_t.cycles * 2.5e-6)  # 400 MHz


def test_memory_cases(swin_t) -> None:
    mem = swin_t.memory
    assert swin_t.fits
    assert mem["reuse+sharing"].weights <= mem["no-reuse"].weights
    assert mem["reuse+sharing"].weights <= mem["no-sharing"].weights


def test_allspark_beats_every_baseline_that_fits(swin_t) -> None:
    for kind in ("B", "P", "AH"):
        b = baseline("swin-t", 224, "allspark-16x16", kind, bind=False)
        if b.fits:  # its schedule is feasible for the ILP, so it cannot be faster
            assert swin_t.cycles <= b.cycles
    assert baseline("swin-t", 224, "allspark-16x16", "B", bind=False).cycles > swin_t.cycles


def test_baseline_schemes() -> None:
    hw = preset("allspark-16x16")
    from steplus.passes.allspark.vit import build

    st = build("swin-b", 224).stages[2]  # 16 heads, 49 patches -> P = 7
    assert baseline_scheme(st, hw, "B") == Scheme(1, 1)
    assert baseline_scheme(st, hw, "P") == Scheme(1, 7)
    assert baseline_scheme(st, hw, "AH") == Scheme(16, 1)
    with pytest.raises(ValueError, match="unknown baseline 'X'"):
        baseline_scheme(st, hw, "X")


def test_greedy_binding_has_fewer_hops_than_raster(swin_t) -> None:
    stage1 = swin_t.stages[0]  # 64 shifted windows
    assert stage1.hops_greedy < stage1.hops_raster


def test_literal_form_through_the_driver() -> None:
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import with_overrides

    hw = with_overrides(preset("allspark-8x8"), rows=3, cols=3)
    model = build("swin-t", 64)
    lit = orchestrate(model, hw=hw, form="literal")
    com = orchestrate(model, hw=hw)
    assert lit.cycles == com.cycles
    with pytest.raises(ValueError, match="unknown ILP form"):
        orchestrate(model, hw=hw, form="fancy")


def test_batch_latency_follows_eq_12() -> None:
    """The batch-2 schedule costs 2 (T_c + T_t) + T_ws per layer, from batch-1 costs."""
    from steplus.passes.allspark.cost import layer_cost

    res = orchestrate("swin-t", 224, "allspark-16x16", bind=False, batch=2)
    expected = 0
    for st, rep in zip(res.model.stages, res.stages):
        for lay in rep.layers:
            one = layer_cost(st, lay.scheme, res.hw)
            expected += 2 * (one.compute + one.transfer) + one.sharing
    assert res.cycles == expected
    assert res.per_image_ms == pytest.approx(res.latency_ms / 2)
    single = orchestrate("swin-t", 224, "allspark-16x16", bind=False)
    assert res.per_image_ms <= single.latency_ms  # sharing amortised, workspace permitting
    from steplus.passes.allspark.ilp_compact import ScheduleError

    with pytest.raises(ScheduleError, match=r"batch must be an integer in \[1, 256\], got 0"):
        orchestrate("swin-t", 224, batch=0)
