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
