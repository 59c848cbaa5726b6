"""Scheduling ILP: literal (eqs. 1-12) == compact == brute force on small instances."""

from __future__ import annotations

import itertools

import pytest
from pim_helpers import tiny_hw, tiny_model

from steplus.passes.allspark.cost import weights_per_node
from steplus.passes.allspark.ilp import literal_size, seed_variable_count, solve_literal
from steplus.passes.allspark.ilp_compact import (
    Problem,
    ScheduleError,
    build_problem,
    min_memory,
    solve_compact,
)
from steplus.passes.allspark.ilp_cpsat import solve_cpsat


def _multisets(options, branches):
    """Every multiset of temporal layers (<= branches layers) that covers all branches."""
    for n in range(1, branches + 1):
        for combo in itertools.combinations_with_replacement(range(len(options)), n):
            if sum(options[k].capacity for k in combo) >= branches:
                yield combo


def brute_force(prob: Problem) -> float | None:
    per_stage = [list(_multisets(sp.options, sp.branches)) for sp in prob.stages]
    best = None
    for choice in itertools.product(*per_stage):
        weights = workspace = time = 0.0
        for sp, combo in zip(prob.stages, choice):
            schemes = [sp.options[k].scheme for k in combo]
            weights += weights_per_node(sp.weight_bytes, schemes, prob.reuse)
            workspace = max([workspace] + [sp.options[k].cost.workspace for k in combo])
            time += sum(sp.options[k].time for k in combo)
        if weights + workspace <= prob.hw.node_cap_bytes and (best is None or time < best):
            best = time
    return best


def brute_force_memory(prob: Problem) -> float:
    """Least weights + workspace over every multiset of layers that covers all branches."""
    per_stage = [list(_multisets(sp.options, sp.branches)) for sp in prob.stages]
    best = None
    for choice in itertools.product(*per_stage):
        weights = workspace = 0.0
        for sp, combo in zip(prob.stages, choice):
            schemes = [sp.options[k].scheme for k in combo]
            weights += weights_per_node(sp.weight_bytes, schemes, prob.reuse)
            workspace = max([workspace] + [sp.options[k].cost.workspace for k in combo])
        if best is None or weights + workspace < best:
            best = weights + workspace
    return best


@pytest.mark.parametrize("reuse", [True, False])
def test_min_memory_equals_brute_force(reuse: bool) -> None:
    prob = build_problem(tiny_model((3, 2), (1, 2)), tiny_hw(rows=1, cols=3), reuse=reuse)
    assert sum(min_memory(prob)) == brute_force_memory(prob)


def test_infeasible_without_reuse_names_the_least_memory() -> None:
    """Without reuse every temporal layer stores its own slice: the tiny model on a 1x3
    mesh needs more than the loosest per-scheme bound, and the message gives the exact
    least memory and names constraint 5."""
    prob = build_problem(tiny_model((3, 2), (1, 2)), tiny_hw(rows=1, cols=3), reuse=False)
    least = brute_force_memory(prob)
    lower = (sum(min(o.weight_bytes for o in sp.options) for sp in prob.stages)
             + max(min(o.cost.workspace for o in sp.options) for sp in prob.stages))
    assert lower < least  # the per-scheme bound alone would not explain it
    cap = (lower + least) // 2
    tight = build_problem(tiny_model((3, 2), (1, 2)), tiny_hw(rows=1, cols=3, cap=cap),
                          reuse=False)
    with pytest.raises(ScheduleError, match=r"with the least memory needs .* = "
                       rf"{least / 2**20:.2f} MiB per node > node_cap .*\(constraint 5"):
        solve_compact(tight)


CAPS = [100_000, 9_000, 7_000, 5_000, 3_000]


@pytest.mark.parametrize("cap", CAPS)
def test_literal_equals_compact_equals_brute_force(cap: int) -> None:
    prob = build_problem(tiny_model((3, 2), (1, 2)), tiny_hw(cap=cap))
    expected = brute_force(prob)
    if expected is None:
        for solve in (solve_compact, solve_literal, solve_cpsat):
            with pytest.raises(ScheduleError, match="constraint 5"):
                solve(prob)
        return
    compact, literal, cpsat = solve_compact(prob), solve_literal(prob), solve_cpsat(prob)
    assert compact.status == literal.status == cpsat.status == "optimal"
    assert compact.objective == literal.objective == cpsat.objective == expected
    for sol in (compact, literal, cpsat):
        for sp, layers in zip(prob.stages, sol.layers):
            assert sum(lay.branches for lay in layers) == sp.branches  # eq. 2
            counts = [lay.branches for lay in layers]
            assert counts == sorted(counts, reverse=True)  # eq. 4


def test_memory_changes_the_optimum() -> None:
    """A tight node capacity forces larger sub-arrays (or reuse) and costs time."""
    loose = solve_compact(build_problem(tiny_model(), tiny_hw(cap=100_000)))
    tight = solve_compact(build_problem(tiny_model(), tiny_hw(cap=7_000)))
    assert tight.objective > loose.objective


def test_without_reuse_is_never_better() -> None:
    model = tiny_model((4, 2), (1, 1))
    for cap in (6_000, 8_000, 100_000):
        hw = tiny_hw(cap=cap)
        try:
            no_reuse = solve_compact(build_problem(model, hw, reuse=False)).objective
        except ScheduleError:
            continue
        assert solve_compact(build_problem(model, hw)).objective <= no_reuse
        assert solve_literal(build_problem(model, hw, reuse=False)).objective == no_reuse


def test_literal_equals_compact_on_a_real_stage_mix() -> None:
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import preset, with_overrides

    hw = with_overrides(preset("allspark-8x8"), rows=3, cols=3)
    model = build("twins-s", 64)  # 16x16 patches: 9, 4, 1, 1 windows of up to 7x7
    prob = build_problem(model, hw)
    assert [sp.branches for sp in prob.stages] == [9, 4, 1, 1]
    assert solve_literal(prob, time_limit=60).objective == solve_compact(prob).objective
    assert solve_cpsat(prob).objective == solve_compact(prob).objective


def test_cpsat_agrees_with_highs_on_real_models() -> None:
    """Two solvers, one compact model: same optimum (HiGHS may print x.999...)."""
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import preset

    for name in ("swin-b", "cswin-t", "vit-b"):
        prob = build_problem(build(name, 224), preset("allspark-16x16"))
        cp, hi = solve_cpsat(prob), solve_compact(prob)
        assert cp.status == hi.status == "optimal"
        assert cp.objective == pytest.approx(hi.objective, abs=0.5)


def test_literal_size_grows_like_the_seed_says() -> None:
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import preset

    prob = build_problem(build("swin-b", 224), preset("allspark-16x16"))
    # stage 1 alone: 15 schemes x 64 branches x 129
    assert seed_variable_count(prob) >= 15 * 64 * 129 > 10**5
    assert 5 * 10**4 <= literal_size(prob) <= seed_variable_count(prob)
    big = build_problem(build("swin-b", 640), preset("allspark-16x16"))
    assert seed_variable_count(big) > 5 * 10**6
    with pytest.raises(ScheduleError,
                       match=r"would have \d+ variables \(limit 10000\); use the compact"):
        solve_literal(prob, max_vars=10_000)


def test_compact_scales_to_swin_b_960() -> None:
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import preset

    sol = solve_compact(build_problem(build("swin-b", 960), preset("allspark-16x16")))
    assert sol.status == "optimal"
    assert [sum(lay.branches for lay in s) for s in sol.layers] == [1225, 324, 81, 25]


def test_mesh_too_small_names_the_constraint() -> None:
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import preset, with_overrides

    hw = with_overrides(preset("allspark-16x16"), rows=2, cols=2)
    with pytest.raises(ScheduleError, match=r"cannot fit the node capacity under any scheme.*"
                       r"constraint 5, memory capacity\) on the 2x2 mesh"):
        solve_compact(build_problem(build("swin-b", 224), hw))


def test_time_limit_keeps_the_incumbent_and_reports_the_gap(monkeypatch) -> None:
    """When HiGHS stops at the time limit with a feasible point (status 1), the best
    schedule so far is returned with its gap; without a point the error says so."""
    import steplus.passes.allspark.ilp_compact as mod

    real = mod.milp

    def stopped(*args, **kwargs):
        res = real(*args, **kwargs)
        res.status, res.mip_gap, res.mip_dual_bound = 1, 0.25, 0.75 * res.fun
        return res

    monkeypatch.setattr(mod, "milp", stopped)
    prob = build_problem(tiny_model(), tiny_hw())
    sol = solve_compact(prob, time_limit=5)
    assert (sol.status, sol.gap) == ("time-limit", 0.25)
    assert sol.bound == pytest.approx(0.75 * sol.objective)

    def nothing(*args, **kwargs):
        res = real(*args, **kwargs)
        res.status, res.x = 1, None
        return res

    monkeypatch.setattr(mod, "milp", nothing)
    with pytest.raises(ScheduleError, match="no schedule found within the time limit of 5 s"):
        solve_compact(prob, time_limit=5)
