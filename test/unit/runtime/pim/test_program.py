"""Lowered pim programs executed on the NoC simulator (runtime/pim/program.py)."""

from __future__ import annotations

import math

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Region

from steplus.dialects.pim import ModelOp
from steplus.passes.allspark.ir import PimOrchestratePass, layer_ops
from steplus.passes.allspark.lower import PimLowerPhasesPass
from steplus.passes.allspark.orchestrate import orchestrate
from steplus.passes.allspark.partition import Scheme, ring_phases
from steplus.passes.allspark.vit import build
from steplus.runtime.pim.program import ProgramError, simulate_module


def _module(model: str, img: int) -> ModuleOp:
    op = ModelOp.create(properties={"model": StringAttr(model), "img": IntegerAttr(img, i64),
                                    "preset": StringAttr("allspark-16x16")},
                        regions=[Region(Block())])
    return ModuleOp([op])


@pytest.fixture(scope="module")
def swin_t():
    mod = _module("swin-t", 224)
    PimOrchestratePass().apply(Context(), mod)
    PimLowerPhasesPass().apply(Context(), mod)
    return mod


def test_simulated_latency_is_the_phase_programs_on_the_mesh(swin_t) -> None:
    [sim] = simulate_module(swin_t)
    res = orchestrate("swin-t", 224, "allspark-16x16", bind=False)
    assert sim.analytical == res.cycles  # the layers carry eq. 12's cycles
    assert [s.compute for s in sim.stages] == [r.compute for r in res.stages]
    # without hops or contention the rings take rounds * ceil(bytes / 8) per phase: the
    # per-round form of eqs. 13-14 (within one cycle per round of the summed form)
    vit = build("swin-t", 224)
    for st, ss, rep in zip(vit.stages, sim.stages, res.stages):
        scheme = rep.layers[0].scheme
        free = sum(p.rounds * math.ceil(p.elems / 8) for p in ring_phases(st, scheme))
        assert ss.rings_free == free
        assert ss.rings >= free  # hops and contention only add
        rounds = sum(p.rounds for p in ring_phases(st, scheme))
        assert 0 <= free - (rep.transfer + rep.sharing) <= rounds
    # the local-global interaction is simulated and included, and is what eq. 12 leaves out
    assert sim.total == sum(s.compute + s.rings + s.interaction for s in sim.stages)
    assert sim.interaction > 0 and sim.stages[3].interaction == 0  # one window: no edge


def test_interaction_is_at_least_the_contention_free_transfer(swin_t) -> None:
    [sim] = simulate_module(swin_t)
    # stage 3: 4 windows of 49 * 384 bytes, sent once per block (6); a message over one
    # or more hops takes at least ceil(18816 / 8) = 2352 cycles + 1 cycle per hop
    assert sim.stages[2].interaction >= 6 * (2352 + 1)


def test_vit_has_no_interaction_and_rings_match_the_model() -> None:
    mod = _module("vit-b", 224)
    PimOrchestratePass().apply(Context(), mod)
    PimLowerPhasesPass().apply(Context(), mod)
    [sim] = simulate_module(mod)
    assert sim.interaction == 0
    assert 0 <= sim.total / sim.analytical - 1 < 0.02  # one rectangle per layer: hops only


def test_unlowered_module_is_an_error() -> None:
    mod = _module("swin-t", 224)
    PimOrchestratePass().apply(Context(), mod)
    with pytest.raises(ProgramError, match="run pim-lower-phases first"):
        simulate_module(mod)
    with pytest.raises(ProgramError, match="no pim.model"):
        simulate_module(ModuleOp([]))


def test_lowering_keeps_written_schemes() -> None:
    mod = _module("swin-t", 224)
    PimOrchestratePass().apply(Context(), mod)
    PimLowerPhasesPass().apply(Context(), mod)
    model = next(o for o in mod.walk() if isinstance(o, ModelOp))
    stage3 = [s for s in model.body.block.ops][2]
    [lay] = layer_ops(stage3)  # pyright: ignore[reportArgumentType]
    assert Scheme(*lay.g_m) == Scheme(12, 4) and len(list(lay.regions[0].block.ops)) == 13


# -- baselines simulated like Allspark, batches ---------------------------------------------


def test_baseline_streaming_is_simulated_at_eq13_plus_one_hop() -> None:
    from steplus.dialects.target.pim import preset
    from steplus.passes.allspark.baselines import baseline
    from steplus.runtime.pim.program import simulate_result

    hw = preset("allspark-16x16")
    b = baseline("swin-t", 224, hw, "B", bind=False)
    assert b.spilled_bytes > 0  # B keeps every weight on every node: it overflows 8 MiB
    sim = simulate_result(b, "allspark-16x16")
    # every node fetches its spilled bytes from a mesh neighbour at once: one hop, no
    # shared link, so each temporal layer takes the router delay + ceil(bytes / flit)
    for st, rep, extra in zip(sim.stages, b.stages, b.stream):
        per_layer = hw.router_delay_cycles + math.ceil(extra / hw.link_bytes_per_cycle)
        assert st.stream == (len(rep.layers) * per_layer if extra else 0)
        assert rep.spill == len(rep.layers) * math.ceil(extra / hw.link_bytes_per_cycle)
    assert sim.analytical + sum(r.spill for r in b.stages) == b.cycles
    assert sim.interaction > 0  # the baseline pays the local-global interaction too


def test_mesh_neighbours_are_one_hop_on_distinct_links() -> None:
    from steplus.runtime.pim.noc import mesh_neighbour, neighbour_messages, simulate

    for rows, cols in ((4, 4), (3, 5), (1, 6), (5, 1)):
        msgs = neighbour_messages([(0, 0, rows, cols)], rows, cols, 64)
        assert len(msgs) == rows * cols
        assert all(abs(m.src[0] - m.dst[0]) + abs(m.src[1] - m.dst[1]) == 1 for m in msgs)
        res = simulate(msgs, rows, cols, 8, 1)
        assert res.max_link_messages == 1 and res.makespan == 1 + 8
    assert mesh_neighbour((0, 0), 1, 1) == (0, 0)


def test_batch_sends_feature_maps_per_input_and_weights_once() -> None:
    from steplus.dialects.pim import RingOp
    from steplus.runtime.pim.program import result_module

    one = orchestrate("swin-t", 224, "allspark-16x16", bind=False)
    two = orchestrate("swin-t", 224, "allspark-16x16", bind=False, batch=2)
    _, op1 = result_module(one, "allspark-16x16")
    m2, op2 = result_module(two, "allspark-16x16")
    assert op2.batch is not None and op2.batch.value.data == 2
    sim2 = simulate_module(m2)[0]
    assert sim2.analytical == two.cycles  # eq. 12 with N_bt = 2
    s1, s2 = simulate_module(ModuleOp([op1.clone()]))[0], sim2
    assert [x.compute for x in s2.stages] == [r.compute for r in two.stages]
    assert s2.interaction > s1.interaction
    if one.stages[0].schemes == two.stages[0].schemes:  # same layer: compare its rings
        r1 = [o for o in layer_ops([s for s in op1.body.block.ops][0])[0].walk()
              if isinstance(o, RingOp)]
        r2 = [o for o in layer_ops([s for s in op2.body.block.ops][0])[0].walk()
              if isinstance(o, RingOp)]
        for a, b in zip(r1, r2):
            k = 1 if a.phase.data.startswith("ws-") else 2
            assert b.bytes.value.data == k * a.bytes.value.data


def test_result_module_can_carry_the_workload_as_ir() -> None:
    from steplus.passes.allspark.ir import workload_of
    from steplus.runtime.pim.program import result_module, simulate_result

    res = orchestrate("twins-s", 224, "allspark-16x16", bind=False)
    _, op = result_module(res, "allspark-16x16", ir_workload=True)
    assert op.source is not None and op.source.data == "ir"
    assert workload_of(op).stages == build("twins-s", 224).stages  # groups, SR, windows
    assert simulate_result(res, "allspark-16x16", ir_workload=True).total == \
        simulate_result(res, "allspark-16x16").total
