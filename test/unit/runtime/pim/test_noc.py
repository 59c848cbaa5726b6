"""Link-level mesh NoC simulation: XY routes, contention, and the cost-model check."""

from __future__ import annotations

import pytest

from steplus.runtime.pim.noc import (
    Message,
    Phase,
    check_schedule,
    ring_messages,
    simulate,
    simulate_grids,
    simulate_layer,
    snake_grids,
    xy_route,
)


def test_xy_route_goes_along_the_row_first() -> None:
    assert xy_route((0, 0), (2, 1)) == [((0, 0), (0, 1)), ((0, 1), (1, 1)), ((1, 1), (2, 1))]
    assert xy_route((1, 1), (1, 1)) == []


def test_contention_free_latency_is_hops_plus_flits() -> None:
    # 64 bytes = 8 flits over 2 hops, 1 cycle per router: 2 + 8
    res = simulate([Message((0, 0), (0, 2), 64)], rows=1, cols=3)
    assert (res.makespan, res.wait_cycles, res.hops) == (10, 0, 2)


def test_shared_link_serialises() -> None:
    """(0,0)->(0,3) and (0,1)->(0,2) share link (0,1)->(0,2); 32 B = 4 flits each.
    The first holds it over [2, 6) and arrives at 3 + 4 = 7; the second could start at 1
    but waits until 6 and arrives at 10 (contention-free it would take 5)."""
    res = simulate([Message((0, 0), (0, 3), 32), Message((0, 1), (0, 2), 32)], rows=1, cols=4)
    assert res.finish == [7, 10]
    assert res.wait_cycles == 5
    assert res.max_link_messages == 2


def test_ring_round_is_contention_free() -> None:
    # a column ring of 4: three 1-hop messages and the 3-hop wrap-around on the up links
    msgs = ring_messages((0, 0, 4, 1), along_rows=True, nbytes=80)
    assert [(m.src, m.dst) for m in msgs] == [
        ((0, 0), (1, 0)), ((1, 0), (2, 0)), ((2, 0), (3, 0)), ((3, 0), (0, 0))]
    res = simulate(msgs, rows=4, cols=1)
    assert (res.makespan, res.wait_cycles, res.max_link_messages) == (3 + 10, 0, 1)


def test_layer_simulation_matches_the_analytical_rounds() -> None:
    """Two 2x3 sub-arrays side by side: patch rings (2 nodes, 1 hop each way) and
    group rings (3 nodes, wrap of 2 hops).  Per round: flits + longest route."""
    rects = [(0, 0, 2, 3), (0, 3, 2, 3)]
    phases = [Phase("k", True, rounds=1, nbytes=64), Phase("fc", False, rounds=2, nbytes=40)]
    ls = simulate_layer(rects, m=2, g=3, phases=phases, rows=2, cols=6)
    assert ls.analytical == 1 * 8 + 2 * 5
    assert ls.simulated == 1 * (8 + 1) + 2 * (5 + 2)
    assert ls.wait_cycles == 0 and ls.max_link_messages == 1


def test_bad_messages() -> None:
    with pytest.raises(ValueError, match=r"node \(0,5\) is outside the 2x2 mesh"):
        simulate([Message((0, 0), (0, 5), 8)], 2, 2)


def test_cost_model_within_ten_percent_and_contention_free() -> None:
    from steplus.passes.allspark.orchestrate import orchestrate

    res = orchestrate("swin-t", 224, "allspark-16x16", bind=False)
    chk = check_schedule(res)
    assert chk.wait_cycles == 0  # the structured layout avoids contention
    assert chk.max_link_messages == 1
    assert 0 <= chk.deviation <= 0.10  # hop latency is all the cost model leaves out


def test_rect_grids_simulate_like_simulate_layer() -> None:
    """The generic grid simulation on Algorithm 1's rectangles is simulate_layer:
    in a natural m x g rect, patch chunk mi is row r0+mi and head group gi column c0+gi."""
    rects = [(0, 0, 2, 3), (0, 3, 2, 3)]
    phases = [Phase("k", True, rounds=1, nbytes=64), Phase("fc", False, rounds=2, nbytes=40)]
    grids = [[[(r + mi, c + gi) for mi in range(2)] for gi in range(3)] for r, c, _, _ in rects]
    assert simulate_grids(grids, phases, 2, 6) == simulate_layer(rects, 2, 3, phases, 2, 6)


def test_snake_layout_contends() -> None:
    """Two head groups x two patch chunks on a 1x4 row in snake order: group 0 on
    columns 0-1, group 1 on 2-3, so both group rings (0<->2, 1<->3) cross link 1-2.
    32 B = 4 flits.  0->2 holds 0-1 over [1,5) and 1-2 over [2,6); 2->0 mirrors it;
    1->3 waits on 1-2 until 6 (5 stall cycles), arrives 7 + 4 = 11; 3->1 waits on
    2-1 from 2 to 5 (3 stall cycles), arrives 9."""
    grids = snake_grids(1, m=2, g=2, rows=1, cols=4)
    assert grids == [[[(0, 0), (0, 1)], [(0, 2), (0, 3)]]]
    ls = simulate_grids(grids, [Phase("fc", False, rounds=1, nbytes=32)], 1, 4)
    assert (ls.simulated, ls.analytical, ls.wait_cycles, ls.max_link_messages) == (11, 4, 8, 2)
    with pytest.raises(ValueError, match="3 sub-arrays of 4 nodes exceed the 2x4 mesh"):
        snake_grids(3, 2, 2, 2, 4)


def test_structured_layout_beats_snake_on_a_real_schedule() -> None:
    from steplus.passes.allspark.orchestrate import orchestrate

    res = orchestrate("swin-t", 224, "allspark-16x16", bind=False)
    snake = check_schedule(res, layout="snake")
    assert snake.wait_cycles > 0 and snake.simulated > check_schedule(res).simulated
    with pytest.raises(ValueError, match="unknown layout 'diagonal'"):
        check_schedule(res, layout="diagonal")
