"""Routing, shape and generator operators (reference spec §4), timed by hand."""

from __future__ import annotations

from fabric_helpers import Sink, Source, new_sim, num, tile, wire

from steplus.runtime.fabric.channel import Element, Selector
from steplus.runtime.fabric.context import ENQ
from steplus.runtime.fabric import contexts as R
from steplus.runtime.fabric import contexts as S
from steplus.runtime.fabric.contexts import AccumCtx, Kernel


def run_chain(op, items, in_attr="inp", out_attr="out", cap=None):
    sim = new_sim()
    src, sink = Source("src", items), Sink("sink")
    for c in (src, op, sink):
        sim.add(c)
    wire(sim, src, op, dst_attr=in_attr, cap=cap)
    wire(sim, op, sink, src_attr=out_attr, cap=cap)
    sim.run()
    return sink


def test_flatten_maps_levels():
    sink = run_chain(S.FlattenCtx("f", 0, 1), [(tile(), lv, 0) for lv in (0, 1, 0, 2, 3)])
    assert sink.levels == [0, 0, 0, 1, 2]


def test_reshape_chunks_with_outer_dim_and_padding():
    sink = run_chain(S.ReshapeCtx("r", 0, 2, add_outer_dim=True, pad_shape=(1, 8)),
                     [(tile(1, 8), 0, 0)] * 3)
    assert sink.levels == [0, 1, 0, 2]
    assert sink.got[-1][2].valid == 0 and sink.got[-1][2].cols == 8
    # an input level ends the chunk early: emitted as Val, pads up to the chunk
    sink = run_chain(S.ReshapeCtx("r", 0, 3, pad_shape=(1, 8)), [(tile(1, 8), 0, 0),
                                                                 (tile(1, 8), 1, 0)])
    assert sink.levels == [0, 0, 2]
    # split_dim > 0 with chunk 1 adds one to every level >= split_dim
    sink = run_chain(S.ReshapeCtx("r", 1, 1), [(tile(), lv, 0) for lv in (0, 1, 0, 2)])
    assert sink.levels == [0, 2, 0, 3]


def test_repeat_static_stamps_into_the_future():
    op = S.RepeatCtx("rep", 3)
    sink = run_chain(op, [(tile(), 0, 0), (tile(), 1, 0)])
    # first copy at clock 1 (v = 2), then stamps 2, 3; R cycles; second input at 4
    assert sink.clocks == [2, 2, 3, 5, 5, 6]
    assert sink.levels == [0, 0, 1, 0, 0, 2]
    assert op.clock == 7 and op.busy == 6


def test_expand_ref_repeats_with_ref_levels():
    sim = new_sim()
    src = sim.add(Source("src", [(tile(2, 2), 0, 0), (tile(3, 3), 1, 0)]))
    ref = sim.add(Source("ref", [(tile(), lv, 0) for lv in (0, 1, 0, 0, 2)]))
    op = sim.add(S.ExpandCtx("ex", 1))
    sink = sim.add(Sink("sink"))
    wire(sim, src, op)
    wire(sim, ref, op, dst_attr="ref")
    wire(sim, op, sink)
    sim.run()
    assert sink.levels == [0, 1, 0, 0, 2]
    assert [g[2].rows for g in sink.got] == [2, 2, 3, 3, 3]


def test_retile_streamify_emits_valid_rows():
    sink = run_chain(S.RetileStreamifyCtx("rs"), [(tile(4, 8, valid=3), 1, 0)])
    assert sink.levels == [0, 0, 1] and all(g[2].rows == 1 for g in sink.got)


def test_parallelize_round_robin_with_switch_cycles():
    sim = new_sim()
    src = sim.add(Source("src", [(tile(), 0, 0)] * 3))
    op = sim.add(R.ParallelizeCtx("par", 0, [0, 2]))
    a, b = sim.add(Sink("a")), sim.add(Sink("b"))
    wire(sim, src, op)
    wire(sim, op, a, src_attr="outs_list[0]")
    wire(sim, op, b, src_attr="outs_list[1]")
    sim.run()
    assert a.clocks == [2, 2] and b.clocks == [3]


def test_flat_partition_sends_to_every_selected_output():
    sim = new_sim()
    data = sim.add(Source("data", [(tile(), 0, 0), (tile(), 0, 0), (tile(), 1, 0)]))
    sel = sim.add(Source("sel", [(Selector((0,)), 0, 0), (Selector((1,)), 0, 0),
                                 (Selector((0, 1)), 1, 0)]))
    op = sim.add(R.PartitionCtx("part", 0, [1, 1], False, 64))
    a, b = sim.add(Sink("a")), sim.add(Sink("b"))
    wire(sim, data, op)
    wire(sim, sel, op, dst_attr="sel")
    wire(sim, op, a, src_attr="outs_list[0]")
    wire(sim, op, b, src_attr="outs_list[1]")
    sim.run()
    # data at 1; each element: +1 switch cycle, stamped at the clock
    assert a.clocks == [3, 5] and b.clocks == [4, 5]
    assert a.levels == [0, 0] and b.levels == [0, 0]  # p = 0 removes every level


class _Feeder(Source):
    """A Source that records its clock after every enqueue."""

    def body(self):
        self.after = []
        for data, level, wait in self.items:
            self.work(wait)
            yield (ENQ, self.out, Element(data, level), self.clock)
            self.after.append(self.clock)


def test_flat_partition_spends_the_load_time_before_dequeuing():
    """§4: peek the data element, spend its load time, *then* dequeue, switch,
    enqueue — the depth-1 input slot stays taken while the tile is read.
    Hand-derived (§1.1): memory tiles of 1x64 bf16 = 128 B load in
    ceil(128/64) = 2 cycles. The feeder enqueues tile k at clock c_k (v_k =
    c_k + 1); for k >= 1 it first waits for the dequeue of tile k-1 (d_{k-1}),
    c_k = d_{k-1} + 1. The partition, at clock tau: peek (tau = max(tau,
    v_k)), +2 load, dequeue (d_k = tau), +1 switch, enqueue.
    tile 0: v 1, peek at 1, load -> 3, d_0 = 3, switch -> 4;
    tile 1: c_1 = 4, v 5, peek at 5, load -> 7, d_1 = 7, switch -> 8;
    tile 2: c_2 = 8, v 9, peek at 9, load -> 11, d_2 = 11, switch -> 12.
    (Dequeuing before the load gave d = 1, 4, 7 and c = 0, 2, 5.)"""
    sim = new_sim()
    feeder = sim.add(_Feeder("data", [(tile(1, 64, 2, mu=True), 0, 0)] * 3))
    sel = sim.add(Source("sel", [(Selector((0,)), 0, 0)] * 3))
    op = sim.add(R.PartitionCtx("part", 0, [1, 1], False, 64))
    a, b = sim.add(Sink("a")), sim.add(Sink("b"))
    wire(sim, feeder, op, cap=1)
    wire(sim, sel, op, dst_attr="sel")
    wire(sim, op, a, src_attr="outs_list[0]")
    wire(sim, op, b, src_attr="outs_list[1]")
    sim.run()
    assert feeder.after == [0, 4, 8]
    assert a.clocks == [5, 9, 13]  # enqueued at 4, 8, 12 (visible one cycle later)
    assert op.busy == 3 * (2 + 1)


def _partition(rank, data_items, sel_items):
    sim = new_sim()
    data, sel = sim.add(Source("data", data_items)), sim.add(Source("sel", sel_items))
    op = sim.add(R.PartitionCtx("part", rank, [1, 1], False, 64))
    a, b = sim.add(Sink("a")), sim.add(Sink("b"))
    wire(sim, data, op)
    wire(sim, sel, op, dst_attr="sel")
    wire(sim, op, a, src_attr="outs_list[0]")
    wire(sim, op, b, src_attr="outs_list[1]")
    sim.run()
    return a, b


def test_flat_partition_groups_follow_the_data_rank():
    # p = 0: one element per selector, even when the last selector closes a
    # level the data does not carry (an EagerMerge's selectors: the dynamic
    # attention graph's `pem`); the reference rule waited for a level-1 element.
    a, b = _partition(0, [(tile(), 0, 0), (tile(), 0, 0)],
                      [(Selector((1,)), 0, 0), (Selector((0,)), 1, 0)])
    assert len(a.got) == 1 and len(b.got) == 1
    # p = 1 ([B, 1] data under a [B] selector): a group ends at the first
    # element with level >= 1, the last one's level 2 included.
    a, b = _partition(1, [(tile(), 1, 0), (tile(), 1, 0), (tile(), 2, 0)],
                      [(Selector((0,)), 0, 0), (Selector((1,)), 0, 0), (Selector((0,)), 1, 0)])
    assert a.levels == [1, 1] and b.levels == [1]


def test_flat_reassemble_takes_inputs_in_arrival_order():
    sim = new_sim()
    in0 = sim.add(Source("in0", [(tile(1, 1, value=None), 0, 9)]))
    in1 = sim.add(Source("in1", [(tile(2, 2), 0, 4)]))
    sel = sim.add(Source("sel", [(Selector((0, 1)), 0, 0)]))
    op = sim.add(R.ReassembleCtx("re", 0, [1, 1], False, 64))
    sink = sim.add(Sink("sink"))
    wire(sim, in0, op, dst_attr="ins_list[0]")
    wire(sim, in1, op, dst_attr="ins_list[1]")
    wire(sim, sel, op, dst_attr="sel")
    wire(sim, op, sink)
    sim.run()
    # heads visible at 10 (in0) and 5 (in1): in1 first at 5 + 1, then in0 at 10 + 1
    assert [g[2].rows for g in sink.got] == [2, 1]
    assert sink.clocks == [7, 12] and sink.levels == [0, 1]


def test_eager_merge_forwards_the_earliest_group_first():
    sim = new_sim()
    in0 = sim.add(Source("in0", [(tile(1, 1), 0, 7)]))
    in1 = sim.add(Source("in1", [(tile(2, 2), 0, 2)]))
    op = sim.add(R.EagerMergeCtx("em", 0))
    data, sel = sim.add(Sink("data")), sim.add(Sink("sel"))
    wire(sim, in0, op, dst_attr="ins_list[0]")
    wire(sim, in1, op, dst_attr="ins_list[1]")
    wire(sim, op, data)
    wire(sim, op, sel, src_attr="sel_out")
    sim.run()
    assert [g[2].chosen for g in sel.got] == [(1,), (0,)]
    assert [g[2].rows for g in data.got] == [2, 1]
    assert data.clocks == [4, 9]


def test_generators():
    sim = new_sim()
    sg = sim.add(R.SelectGenCtx("sg", [(0,), (1,), (0, 1)], (3,)))
    mg = sim.add(R.MetadataGenCtx("mg", [5, 6, 7]))
    s1, s2 = sim.add(Sink("s1")), sim.add(Sink("s2"))
    wire(sim, sg, s1)
    wire(sim, mg, s2)
    sim.run()
    assert s1.clocks == [1, 2, 3] and s1.levels == [0, 0, 1]
    assert s2.clocks == [1, 1, 2] and s2.levels == [0, 0, 1]
    assert [int(g[2].value[0, 0]) for g in s2.got] == [5, 6, 7]


def test_address_generators_and_filter_last_tile():
    sink = run_chain(R.ExpertAddrGenCtx("ea", 3), [(Selector((2,)), 0, 0)])
    assert sink.levels == [1, 1, 2]
    assert [int(g[2].value[0, 0]) for g in sink.got] == [6, 7, 8]
    sink = run_chain(R.FilterLastTileCtx("fl"), [(num(3), 1, 0)])
    assert [g[2].chosen for g in sink.got] == [(1,), (1,), (0,)]
    assert sink.levels == [0, 0, 2]
    sim = new_sim()
    idx = sim.add(Source("idx", [(num(4), 0, 0)]))
    seq = sim.add(Source("seq", [(num(2), 0, 0)]))
    op = sim.add(R.CacheReadAddrGenCtx("cr"))
    out = sim.add(Sink("out"))
    wire(sim, idx, op, dst_attr="idx")
    wire(sim, seq, op, dst_attr="seq")
    wire(sim, op, out)
    sim.run()
    assert out.levels == [0, 1] and out.clocks == [2, 2]


def test_accum_add_roofline_and_consume():
    k = Kernel(2, [("add", [1, 0])], acc_slot=1)
    op = AccumCtx("acc", k, 1, (16, 16), compute_bw=64, pmu_bw=64)
    sink = run_chain(op, [(tile(16, 16), lv, 0) for lv in (0, 0, 1, 0, 2)],
                     in_attr="inputs[0]")
    assert op.busy == 5 * 4  # 256 FLOPs / 64 per element
    assert sink.levels == [0, 1] and sink.clocks == [14, 22]  # emitted at 13 and 21
    sim = new_sim()
    src = sim.add(Source("src", [(tile(), 0, 0)] * 3))
    c = sim.add(S.ConsumeCtx("c"))
    wire(sim, src, c)
    sim.run()
    assert c.busy == 3 and c.clock == 4


class _TwoOutputs(S.StreamCtx):
    """Sends `n` elements on output 1, then one on output 0."""

    def __init__(self, name, n):
        super().__init__(name)
        self.outs_list, self.n = [], n

    def body(self):
        for _ in range(self.n):
            yield (ENQ, self.outs_list[1], Element(tile()), self.clock)
        yield (ENQ, self.outs_list[0], Element(tile()), self.clock)


def test_reassemble_in_a_wait_cycle_is_a_deadlock_not_a_hang():
    # The reassembly needs input 0 before it takes anything from input 1; the
    # sender of input 0 first fills input 1 (capacity 1): a cycle of waits
    # that polling can never break (the Qwen B=1024 graph at depth 2). The
    # poller's bound goes through the inputs it needs, so the engine reports it.
    import pytest

    from steplus.runtime.fabric.context import DeadlockError

    sim = new_sim()
    x = sim.add(_TwoOutputs("x", 3))
    sel = sim.add(Source("sel", [(Selector((0, 1)), 1, 0)]))
    op = sim.add(R.ReassembleCtx("re", 0, [1, 1], False, 64))
    sink = sim.add(Sink("sink"))
    wire(sim, x, op, src_attr="outs_list[0]", dst_attr="ins_list[0]", cap=1)
    wire(sim, x, op, src_attr="outs_list[1]", dst_attr="ins_list[1]", cap=1)
    wire(sim, sel, op, dst_attr="sel")
    wire(sim, op, sink)
    with pytest.raises(DeadlockError) as e:
        sim.run()
    assert "re @ cycle" in str(e.value) and "poll channel 'x->re'" in str(e.value)
