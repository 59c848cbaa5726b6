"""step-allocate-memory: lifetimes, shared addresses, spill order, DDR simulation, errors."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import f32

from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import Graph
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.sn40l.allocate_memory import (
    StepAllocateMemoryPass, Symbol, parse_size, place, plan, symbols,
)
from steplus.passes.sn40l.kernelize import kernelize_graph
from steplus.passes.sn40l.kernels import kernel_groups
from steplus.dialects.target.fabric import SN40L
from steplus.runtime.fabric.kernel_run import run_kernels


def _graph():
    """x @ w -> exp -> (sum -> st0, * v -> st1); 16x16 f32 tiles (1 KiB), 4 per stream."""
    g = Graph("g")
    x = g.load((16, 16), f32, [4], name="x")
    w = g.load((16, 16), f32, [4], base_addr=1 << 20, name="w")
    e = x.map("matmul", w, name="y").map("exp", name="e")
    a, b = e.broadcast(2, ["e1", "e2"])
    a.accum("add", 1, name="s").store(base_addr=4096)
    b.map("mul", g.load((16, 16), f32, [4], base_addr=2 << 20, name="v"), name="m") \
        .store(base_addr=8192)
    return g.module()


def _kernels():
    return kernelize_graph(next(o for o in _graph().walk() if isinstance(o, GraphOp)),
                           "unfused")


def test_lifetimes_of_the_unfused_kernels():
    syms = {s.name: s for s in symbols(_kernels())}
    # kernels: 0 matmul, 1 exp, 2 sum, 3 mul
    got = {n: (s.first, s.last, s.size) for n, s in syms.items()}
    assert got == {"ld0": (0, 0, 4096), "ld1": (0, 0, 4096), "g.t0": (0, 1, 4096),
                   "g.t1": (1, 3, 4096), "st0": (2, 3, 1024), "ld2": (0, 3, 4096),
                   "st1": (3, 3, 4096)}
    assert syms["g.t1"].traffic == 4096 * 3  # written once, read by two kernels
    assert syms["ld0"].readonly and not syms["g.t0"].readonly


def test_sharing_reaches_the_peak_of_live_bytes():
    syms = symbols(_kernels())
    live = max(sum(s.size for s in syms if s.first <= k <= s.last) for k in range(4))
    assert live == 16384  # kernel 0: ld0, ld1, g.t0, ld2
    assert place(syms) == live < sum(s.size for s in syms)


@pytest.mark.parametrize("seed", range(5))
def test_placement_never_overlaps_live_symbols(seed):
    rng = np.random.default_rng(seed)
    syms = []
    for i in range(30):
        a, b = sorted(rng.integers(0, 12, 2))
        syms.append(Symbol(f"s{i}", i, size=int(rng.integers(1, 100)) * 256,
                           first=int(a), last=int(b)))
    peak = place(syms)
    assert peak >= max(sum(s.size for s in syms if s.first <= k <= s.last) for k in range(12))
    for i, s in enumerate(syms):
        for t in syms[i + 1:]:
            if s.first <= t.last and t.first <= s.last:
                assert s.offset + s.size <= t.offset or t.offset + t.size <= s.offset


def test_spills_the_smallest_transfer_footprint_first():
    p = plan(symbols(_kernels()), hbm=12288, ddr=1 << 20)
    # st0 moves 1 KiB, then ld0 (4 KiB, the first of the 4 KiB ones); then the
    # live bytes of kernel 0 (ld1, g.t0, ld2) are 12 KiB
    assert [s.name for s in p.spilled] == ["st0", "ld0"]
    # in DDR, ld0 (kernel 0) and st0 (kernels 2-3) never live together: one address
    assert p.hbm_peak == 12288 and p.ddr_peak == 4096


def test_too_large_names_the_largest_symbols():
    with pytest.raises(OpDiagnosticError, match=r"does not fit: 25600 B of symbols.*largest "
                                                r"symbols: ld0 \(4096 B\)"):
        plan(symbols(_kernels()), hbm=4096, ddr=8192)


def test_sizes():
    assert parse_size("64GiB", "hbm") == 64 << 30
    assert parse_size("1.5TiB", "ddr") == 1536 << 30
    assert parse_size("4096", "hbm") == 4096
    for bad in ("", "-1", "1e3", "64 parsecs", "0"):
        with pytest.raises(ValueError, match="hbm must be"):
            parse_size(bad, "hbm")


def test_ddr_symbols_run_on_the_ddr_channels():
    def copy():
        g = Graph("copy")
        g.load((64, 64), f32, [64], name="src").store(base_addr=1 << 30)
        return g.module()

    hbm_mod, ddr_mod = copy(), copy()
    StepAllocateMemoryPass().apply(Context(), hbm_mod)
    StepAllocateMemoryPass(hbm="1").apply(Context(), ddr_mod)  # nothing fits HBM
    tiers = {o.attributes["sn40l.tier"].data for o in ddr_mod.walk()
             if "sn40l.tier" in o.attributes}
    assert tiers == {"ddr"}
    fast = run_kernels(kernel_groups(hbm_mod)[0], SN40L).kernel_cycles
    slow = run_kernels(kernel_groups(ddr_mod)[0], SN40L).kernel_cycles
    moved = 2 * 64 * 64 * 64 * 4  # read + written
    ddr_peak = SN40L.ddr.channels * SN40L.ddr.request_bytes / SN40L.ddr.initiation_interval
    assert moved / ddr_peak <= slow <= 1.2 * moved / ddr_peak
    # HBM has 10x the channels; each of the two streams is limited to 4 x 64 B/cycle
    assert moved / (2 * 4 * 64) <= fast < slow / 2


def test_hbm_and_ddr_tiers_have_independent_channels():
    from xdsl.dialects.builtin import StringAttr

    from steplus.runtime.fabric.build import build_program
    from steplus.runtime.fabric.ddr import tiered_factory

    def graph(tiers):
        g = Graph("two")
        for i, _ in enumerate(tiers):
            g.load((64, 64), f32, [32], base_addr=i << 30, name=f"src{i}").store(
                base_addr=(i << 30) + (1 << 29))
        m = g.module()
        ensure = [o for o in m.walk() if o.name == "step.linear_offchip_load"]
        names = set()
        for op, tier in zip(ensure, tiers):
            op.attributes["name"] = StringAttr(f"ld_{tier}")
            if tier == "ddr":
                names.add(f"ld_{tier}")
        return m, names

    def cycles(tiers):
        m, names = graph(tiers)
        return build_program(m, SN40L, hbm_factory=tiered_factory(SN40L, names)).run().cycles

    ddr, hbm, both = cycles(["ddr"]), cycles(["hbm"]), cycles(["ddr", "hbm"])
    # the HBM copy runs beside the DDR one: the pair takes as long as the slower
    assert ddr > hbm and max(ddr, hbm) <= both <= 1.05 * max(ddr, hbm)
    # two DDR copies share the DDR channels: at least their bytes at the DDR peak
    ddr_peak = SN40L.ddr.channels * SN40L.ddr.request_bytes / SN40L.ddr.initiation_interval
    assert cycles(["ddr", "ddr"]) >= 2 * 32 * 64 * 64 * 4 / ddr_peak > ddr


def _decode_like():
    """One decode step's residents, 16x16 f32 tiles (1 KiB): a weight `wq` read once (4
    tiles), a KV cache `kc` read once (8 tiles), a weight `wr` of 2 tiles re-read 3 times
    (once per output tile), reduced and summed into one 1-tile output."""
    g = Graph("dec")
    wq = g.load((16, 16), f32, [1, 4], base_addr=1 << 20, name="wq")
    kc = g.load((16, 16), f32, [1, 8], base_addr=2 << 20, name="kc")
    wr = g.load((16, 16), f32, [1, 3, 2], in_shape=[1, 1, 2], stride=[0, 0, 1], base_addr=3 << 20,
                name="wr")
    a, b, c = wq.accum("add", 1), kc.accum("add", 1), wr.accum("add", 2)
    a.map("add", b).map("add", c).store(base_addr=4 << 20)
    return next(o for o in g.module().walk() if isinstance(o, GraphOp))


@pytest.mark.parametrize("hbm_kib,want", [(15, []), (14, ["st0"]), (10, ["st0", "ld0"]),
                                          (8, ["st0", "ld0", "ld2"])])
def test_spill_order_is_the_aggregate_transfer_not_what_the_symbol_holds(hbm_kib, want):
    """The seed's §V-A rule as the module doc states it: smallest transfer footprint first.
    Footprints (bytes moved): the output 1 KiB, wq 4 KiB, wr 3 x 2 KiB = 6 KiB, kc 8 KiB;
    sizes 1 + 4 + 2 + 8 = 15 KiB, all live in the one kernel. So the weight wq spills
    before the larger KV cache, and wr, smaller than wq but re-read, stays longer."""
    syms = symbols([_decode_like()])  # named in graph order: ld0 wq, ld1 kc, ld2 wr, st0
    by = {s.name: (s.size, s.traffic) for s in syms}
    assert by == {"ld0": (4096, 4096), "ld1": (8192, 8192), "ld2": (2048, 6144),
                  "st0": (1024, 1024)}
    # the rule, independently: spill in (traffic, size) order until the rest fits
    left, rule = sorted(syms, key=lambda s: (s.traffic, s.size)), []
    while sum(s.size for s in syms if s.name not in rule) > hbm_kib * 1024:
        rule.append(left.pop(0).name)
    assert rule == want
    p = plan(syms, hbm=hbm_kib * 1024, ddr=1 << 20)
    assert [s.name for s in p.spilled] == want
    assert {s.name for s in syms if s.tier == "hbm"} == set(by) - set(want)
    assert p.hbm_peak == sum(by[n][0] for n in set(by) - set(want))
