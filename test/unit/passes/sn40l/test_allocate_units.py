"""step-allocate-units: proportional PCUs, PMUs by capacity/bandwidth, sections, MILP vs greedy."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import f32

from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import Graph
from steplus.runtime.fabric.build import build_program
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.sn40l.allocate_units import (
    Chip, Demand, StepAllocateUnitsPass, greedy, milp_allocation,
)
from steplus.passes.sn40l.kernels import ensure_names, kernel_groups
from steplus.dialects.target.fabric import STEP_EVAL
from steplus.runtime.fabric.kernel_run import run_kernels


def _chain(k: int = 4, n: int = 16, tiles: int = 4):
    """x -> matmul(w0) -> matmul(w1) -> ... (k matmuls of n x n tiles) -> store."""
    g = Graph("chain")
    s = g.load((n, n), f32, [tiles], name="x")
    for i in range(k):
        w = g.load((n, n), f32, [tiles], base_addr=(i + 1) << 20, name=f"w{i}")
        s = s.map("matmul", w, name=f"mm{i}")
    s.store(base_addr=1 << 30)
    return g.module()


def _graphs(module) -> list[GraphOp]:
    return [o for o in module.walk() if isinstance(o, GraphOp)]


def _attr(module, name, key):
    for o in module.walk():
        if any(r.name_hint == name for r in o.results):
            a = o.attributes.get(key)
            return None if a is None else a.value.data
    raise KeyError(name)


def test_pcus_in_proportion_to_flops():
    # mm0 works on 32x32 tiles (8x the FLOPs of mm1's 16x16 ones, same count)
    g = Graph("two")
    a = g.load((32, 32), f32, [4], name="a").map("matmul", g.load((32, 32), f32, [4],
                                                                   base_addr=1 << 20), name="big")
    a.store(base_addr=1 << 24)
    b = g.load((16, 16), f32, [4], base_addr=2 << 20).map(
        "matmul", g.load((16, 16), f32, [4], base_addr=3 << 20), name="small")
    b.store(base_addr=1 << 25)
    m = g.module()
    StepAllocateUnitsPass(pcus=18, pmus=64, pcu_flops=100).apply(Context(), m)
    # rate-optimal split of 18 PCUs for work 8:1 is 16:2
    assert (_attr(m, "big", "sn40l.pcus"), _attr(m, "small", "sn40l.pcus")) == (16, 2)
    assert _attr(m, "big", "compute_bw") == 1600


def test_pmus_cover_capacity_and_bandwidth():
    g = Graph("cap")
    # a 1024x512 f32 accumulator (2 MiB) needs 4 PMUs of 512 KiB for capacity
    x = g.load((1024, 64), f32, [2], name="x")
    w = g.load((64, 512), f32, [2], base_addr=1 << 30, name="w")
    from steplus.dialects.step.builder import TileType
    x.accum("matmul", 1, w, acc=TileType(1024, 512, f32), combine="add", name="acc") \
        .store(base_addr=1 << 31)
    m = g.module()
    StepAllocateUnitsPass(pcus=8, pmus=12).apply(Context(), m)
    assert _attr(m, "acc", "sn40l.pmus") >= 4


@pytest.mark.parametrize("seed", range(6))
def test_greedy_reaches_the_milp_rate(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    ds = [Demand(None, int(rng.integers(0, 5)) * int(rng.integers(1, 10**6)),
                 int(rng.integers(0, 3)) * int(rng.integers(1, 10**5)),
                 int(rng.integers(0, 3))) for _ in range(n)]
    chip = Chip(pcus=int(rng.integers(n, 40)), pmus=int(rng.integers(3 * n, 60)),
                pcu_flops=383, pmu_bytes=1 << 19, pmu_bw=64)
    g, m = greedy(ds, chip), milp_allocation(ds, chip)
    assert g is not None and m is not None
    assert g.rate == pytest.approx(m.rate, rel=1e-6)
    assert sum(g.pcus) <= chip.pcus and sum(g.pmus) <= chip.pmus
    # an exhaustive check of the PCU side on the smallest instances
    comp = [d.flops for d in ds if d.flops]
    if comp and len(comp) <= 3 and chip.pcus <= 20:
        import itertools
        best = max(min(x * 383 / f for x, f in zip(xs, comp))
                   for xs in itertools.product(range(1, chip.pcus + 1), repeat=len(comp))
                   if sum(xs) <= chip.pcus)
        got = min(x * 383 / d.flops for x, d in zip(g.pcus, ds) if d.flops)
        assert got == pytest.approx(best)


def test_sections_when_the_chip_is_full_and_they_compute_the_same():
    m = _chain(4)
    StepAllocateUnitsPass(pcus=2, pmus=64).apply(Context(), m)
    gs = _graphs(m)
    # four matmuls, two PCUs: two sections of two operators
    assert [g.sym_name.data for g in gs] == ["chain_k0", "chain_k1"]
    assert all(g.attributes["sn40l.sections"].value.data == 2 for g in gs)
    assert all(g.attributes["sn40l.pcus_used"].value.data == 2 for g in gs)
    fused = _chain(4)
    ensure_names(_graphs(fused)[0])
    prog = build_program(fused, STEP_EVAL, functional=True)
    prog.run()
    want = np.vstack(prog.context("st0").stored)
    x = prog.tensors["ld0"]
    ref = []
    for i in range(4):  # numpy: x_i @ w0_i @ w1_i @ w2_i @ w3_i, tile by tile
        t = x[16 * i:16 * i + 16]
        for j in range(1, 5):
            t = t @ prog.tensors[f"ld{j}"][16 * i:16 * i + 16]
        ref.append(t)
    np.testing.assert_allclose(want, np.vstack(ref))
    res = run_kernels(kernel_groups(m)[0], STEP_EVAL, functional=True,
                      tensors=dict(prog.tensors))
    np.testing.assert_allclose(np.vstack(res.stored["st0"]), want)


def test_an_operator_larger_than_the_chip_is_an_error_naming_it():
    g = Graph("huge")
    from steplus.dialects.step.builder import TileType
    x = g.load((1024, 64), f32, [2], name="x")
    w = g.load((64, 1024), f32, [2], base_addr=1 << 30, name="w")
    x.accum("matmul", 1, w, acc=TileType(1024, 1024, f32), combine="add", name="acc") \
        .store(base_addr=1 << 31)
    with pytest.raises(OpDiagnosticError, match=r"step.accum needs 4194304 B on chip \(8 PMUs\)"):
        StepAllocateUnitsPass(pmus=4).apply(Context(), g.module())


@pytest.mark.parametrize("seed", range(10))
def test_greedy_reaches_the_milp_rate_on_socket_sized_pools(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 12))
    ds = [Demand(None, int(rng.integers(0, 5)) * int(rng.integers(1, 10**6)),
                 int(rng.integers(0, 3)) * int(rng.integers(1, 10**5)),
                 int(rng.integers(0, 5))) for _ in range(n)]
    chip = Chip(pcus=int(rng.integers(n, 1041)), pmus=int(rng.integers(5 * n, 1041)),
                pcu_flops=383, pmu_bytes=1 << 19, pmu_bw=64)
    g, m = greedy(ds, chip), milp_allocation(ds, chip)
    assert g is not None and m is not None
    assert g.rate == pytest.approx(m.rate, rel=1e-6)


def test_huge_pools_are_filled_in_bounded_time():
    ds = [Demand(None, 3, 0, 0), Demand(None, 1, 0, 0)]
    chip = Chip(pcus=10**12, pmus=10**12, pcu_flops=1, pmu_bytes=1, pmu_bw=1)
    g = greedy(ds, chip)
    assert sum(g.pcus) == 10**12 and g.pcus[0] == 3 * g.pcus[1]


def test_a_graph_without_compute_is_one_section():
    """A pure copy (what the PyTorch route lowers a slice or a cache append to) has no
    anchor: one section, allocated whole, instead of an IndexError."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import f32

    from steplus.dialects.step import GraphOp
    from steplus.dialects.step.builder import Graph
    from steplus.passes.sn40l.allocate_units import StepAllocateUnitsPass

    g = Graph("copy")
    g.load((16, 16), f32, [4], name="x").store(base_addr=1 << 20)
    m = g.module()
    StepAllocateUnitsPass().apply(Context(), m)
    graphs = [o for o in m.walk() if isinstance(o, GraphOp)]
    assert [gr.sym_name.data for gr in graphs] == ["copy"]


def _remarks(module, **opts) -> str:
    from steplus.utils.diagnostics import collecting_diagnostics

    with collecting_diagnostics() as eng:
        StepAllocateUnitsPass(**opts).apply(Context(), module)
    return "\n".join(d.message for d in eng.diagnostics)


def test_every_cut_names_its_reason_capacity():
    """Four matmuls on two PCUs: the third matmul would make the first section need 3
    PCUs (one per computing operator), more than 2: a capacity cut, said in the remark."""
    from steplus.passes.sn40l.allocate_units import section_cuts

    m = _chain(4)
    g = _graphs(m)[0]
    ensure_names(g)
    chip = Chip(pcus=2, pmus=64, pcu_flops=383, pmu_bytes=512 << 10, pmu_bw=64)
    sec, cuts = section_cuts(g, chip)
    assert max(sec.values()) + 1 == 2 and len(cuts) == 1
    c = cuts[0]
    assert (c.section, c.reason, c.symbols, c.pcus) == (1, "capacity", (), 3)
    assert c.anchor.results[0].name_hint == "mm2"
    assert "section 1: 2/2 PCUs" in _remarks(_chain(4), pcus=2, pmus=64)
    assert "the chip is full (3/2 PCUs" in _remarks(_chain(4), pcus=2, pmus=64)


def test_every_cut_names_its_reason_memory():
    """A load of a symbol the section stores: a memory-dependence cut naming the symbol;
    the two exp maps would need 2 of the 1040 PCUs together, so capacity is not why."""
    from steplus.dialects.sn40l_attrs import SYMBOL
    from steplus.dialects.step import ops as so

    g = Graph("dep")
    g.load((4, 16), f32, [4], name="x").map("exp", name="e").store(1 << 20)
    g.load((4, 16), f32, [4], base_addr=1 << 20, name="y").map("exp", name="f").store(2 << 20)
    m = g.module()
    st = next(o for o in m.walk() if isinstance(o, so.LinearOffChipStoreOp))
    ld = next(o for o in m.walk() if isinstance(o, so.LinearOffChipLoadOp)
              and o.base_addr.value.data == 1 << 20)
    SYMBOL.set(st, "t")
    SYMBOL.set(ld, "t")
    text = _remarks(m)
    assert "@dep: 2 section(s)" in text
    assert "cut at a load of 't' stored in section 0 (memory dependence; 2/1040 PCUs" in text
