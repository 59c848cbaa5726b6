"""A fan-out whose branches read at different times (RMSNorm's sum of squares and product, a
residual kept for after the FFN) deadlocks on the fabric's 2-deep channels and runs with
`fanout_depth` = one row of tiles (two when the stream has several rows: double-buffered) +
the base depth; step-allocate-units counts the buffers
in memory units, and kernel cuts keep the depth."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import f32

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import Graph
from steplus.dialects.step.discardable import FANOUT_DEPTH
from steplus.dialects.target.fabric import SN40L as PRESET
from steplus.dialects.sn40l_attrs import PMUS
from steplus.dialects.target.sn40l import SN40L
from steplus.examples.workloads.sn40l_route import fanout_depth
from steplus.passes.sn40l.allocate_units import StepAllocateUnitsPass, chip_of, demands
from steplus.passes.sn40l.kernels import kernel_groups, split
from steplus.runtime.fabric.context import DeadlockError
from steplus.runtime.fabric.kernel_run import run_kernels

ROW = 16  # tiles of 4x32 f32 (512 B) per row


def _norm_like(depth: int | None):
    """x [1, ROW] -> broadcast -> (square, row sum over the tiles) repeated ROW times, and
    the row itself -> product -> store: the product waits for the whole row's sum."""
    g = Graph("norm")
    x = g.load((4, 32), f32, [1, ROW], name="x")
    a, b = x.broadcast(2)
    s = a.map("square", name="sq").accum("add", 1, name="sum").repeat(ROW)
    b.map("mul", s, name="prod").store(1 << 20)
    m = g.module()
    graph = next(o for o in m.walk() if isinstance(o, GraphOp))
    bc = next(o for o in graph.body.block.ops if isinstance(o, so.BroadcastOp))
    if depth is not None:
        FANOUT_DEPTH.set(bc, depth)
    return m, graph, bc


def test_the_compiler_sizes_a_row_plus_the_base_depth():
    _, _, bc = _norm_like(None)
    assert fanout_depth(bc.input) == ROW + PRESET.base_depth


def test_several_rows_are_double_buffered():
    """A stream of 3 rows of ROW tiles: the producer may write row r + 1 while a branch
    still holds row r, so each output holds 2 rows + the base depth; 1 row stays 1."""
    g = Graph("rows")
    x = g.load((4, 32), f32, [3, ROW], name="x")
    x.map("exp", name="e").store(1 << 20)
    graph = next(o for o in g.module().walk() if isinstance(o, GraphOp))
    ld = next(o for o in graph.body.block.ops if isinstance(o, so.LinearOffChipLoadOp))
    assert fanout_depth(ld.results[0]) == 2 * ROW + PRESET.base_depth


def test_two_deep_channels_deadlock_a_row_deep_fan_out_runs():
    m, graph, _ = _norm_like(None)
    with pytest.raises(DeadlockError):
        run_kernels([graph], PRESET)
    m, graph, bc = _norm_like(ROW + 2)
    res = run_kernels([graph], PRESET)
    assert res.kernel_cycles > 0
    # the product's ROW tiles are stored: 16 x 512 B
    assert res.offchip == 2 * ROW * 512


def test_allocate_units_counts_the_buffers_in_memory_units():
    _, graph, bc = _norm_like(ROW + 2)
    chip = chip_of(SN40L, pmu_bytes=4096)
    (d,) = [d for d in demands(graph, chip) if d.op is bc]
    # (ROW + 2) tiles x 2 outputs x 512 B = 18 KiB: 5 PMUs of 4 KiB
    assert (d.flops, d.mu_bytes, d.cap_pmus) == (0, 0, -(-(ROW + 2) * 2 * 512 // 4096))
    m, _, _ = _norm_like(ROW + 2)
    StepAllocateUnitsPass(pmu_bytes=4096).apply(Context(), m)
    (b,) = [o for o in m.walk() if isinstance(o, so.BroadcastOp)]
    assert (PMUS.get(b) or 0) >= d.cap_pmus == 5


def test_a_kernel_cut_keeps_the_depth():
    """Cut after the load (kernel 0: the load; kernel 1: the rest): the loaded stream fans
    out again in kernel 1 with the same depth."""
    _, graph, bc = _norm_like(ROW + 2)
    ops = [o for o in graph.body.block.ops if not isinstance(o, so.BroadcastOp)]
    of = {o: ({0} if isinstance(o, so.LinearOffChipLoadOp) else {1}) for o in ops}
    k0, k1 = split(graph, of, "test")
    deep = [FANOUT_DEPTH.get(o) for o in k1.body.block.ops if isinstance(o, so.BroadcastOp)]
    assert deep == [ROW + 2]
    assert [o.name for o in k0.body.block.ops] == ["step.linear_offchip_load",
                                                  "step.linear_offchip_store"]


def test_the_buffers_count_where_sections_are_cut():
    """With PMUs of 1 KiB the fan-out's 2 x 18 tiles x 512 B need 18 PMUs; the graph's
    other demands are 6 PMUs (a tile buffer each for the load, the accumulator, the repeat
    and the store, one each for the two maps' tiles read from memory). On 23 PMUs the
    graph fits in one section without the depth (6) but not with it (24): it is cut,
    each section holding the buffers beside its consumer."""
    def count(depth):
        m, _, _ = _norm_like(depth)
        StepAllocateUnitsPass(pmus=23, pmu_bytes=1024, solver="greedy").apply(Context(), m)
        return len(kernel_groups(m)[0])

    chip = chip_of(SN40L, pmu_bytes=1024)
    _, graph, bc = _norm_like(ROW + 2)
    (d,) = [d for d in demands(graph, chip) if d.op is bc]
    assert d.cap_pmus == (ROW + 2) * 2 * 512 // 1024 == 18
    assert count(None) == 1 and count(ROW + 2) > 1
