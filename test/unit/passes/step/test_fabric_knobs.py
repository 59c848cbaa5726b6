"""The fabric placement's per-op knobs as typed contracts (issue 25 items 2 and 4).

One registry: op class -> the registered specs its placement function reads
(`fabric_placement.KNOBS`, specs of `dialects/step/discardable.py`) -> the params
of its simulator context. A knob's value reaches the params unchanged; a malformed
one in IR never verified (built in Python) is a `LoweringError` at the op in the
verifier's words; a knob absent takes the default the placement documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Operation
from xdsl.parser import Parser

from steplus.dialects.program_dialects import get_all_dialects
from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.discardable import (
    ADD_OUTER_DIM, COMPUTE_BW, NAME, PLACEMENT_KNOBS, PMU_BW, RANK, REGISTRY, SWITCH_CYCLES,
    WRITE_BACK_MU,
)
from steplus.dialects.target.fabric import get_preset
from steplus.passes.step.fabric_contract import MapParams, PartitionParams, ReassembleParams
from steplus.passes.step.fabric_placement import KNOBS, PLACERS, LoweringError, place

ROUTE = Path(__file__).resolve().parents[3] / "filecheck/tools/inputs/step-route-2experts.mlir"
CFG = get_preset("step-eval")


def _route() -> tuple[ModuleOp, GraphOp]:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    m = Parser(ctx, ROUTE.read_text()).parse_module()
    m.verify()
    g = next(o for o in m.walk() if isinstance(o, GraphOp))
    return m, g


def _op(g: GraphOp, cls: type[Operation]) -> Operation:
    return next(o for o in g.body.block.ops if isinstance(o, cls))


def test_the_registry_lists_what_each_op_class_reads():
    assert set(KNOBS) == set(PLACERS)
    assert all(k[0] is NAME for k in KNOBS.values())  # every context has a name
    read = {s for specs in KNOBS.values() for s in specs}
    assert read == set(PLACEMENT_KNOBS) and all(REGISTRY[s.name] is s for s in read)
    assert set(KNOBS[so.MapOp]) == {NAME, COMPUTE_BW, PMU_BW, WRITE_BACK_MU}
    assert KNOBS[so.MapOp] == KNOBS[so.AccumOp] == KNOBS[so.ScanOp]
    assert set(KNOBS[so.PartitionOp]) == {NAME, RANK, SWITCH_CYCLES, WRITE_BACK_MU}
    assert KNOBS[so.ReassembleOp] == KNOBS[so.PartitionOp]
    assert set(KNOBS[so.EagerMergeOp]) == {NAME, RANK}
    assert set(KNOBS[so.ReshapeOp]) == {NAME, ADD_OUTER_DIM}
    assert KNOBS[so.ParallelizeOp] == (NAME,)  # its switch_cycles and rank are properties


def test_knobs_reach_the_params():
    m, g = _route()
    part, reasm = _op(g, so.PartitionOp), _op(g, so.ReassembleOp)
    e0 = next(o for o in g.body.block.ops if NAME.get(o) == "e0")
    # absent: the types' group rank (data rank 1 - selector rank 1), one cycle a switch,
    # no write-back, the fabric's PMU bandwidth; compute_bw as written
    p = place(g, CFG)
    pp = p.contexts[p.context_of[part]].params
    assert isinstance(pp, PartitionParams)
    assert (pp.rank, pp.switch, pp.write_back, pp.pmu_bw) == (0, [1, 1], False, CFG.pmu_bw)
    mp = p.contexts[p.context_of[e0]].params
    assert isinstance(mp, MapParams) and (mp.compute_bw, mp.pmu_bw) == (16, CFG.pmu_bw)
    assert p.contexts[p.context_of[part]].name == "part"
    # written: the typed values, unchanged
    RANK.set(part, 1)
    SWITCH_CYCLES.set(part, [3, 0])
    WRITE_BACK_MU.set(part)
    SWITCH_CYCLES.set(reasm, [2, 5])
    PMU_BW.set(e0, 96)
    WRITE_BACK_MU.set(e0)
    NAME.set(e0, "expert0")
    m.verify()
    p = place(g, CFG)
    pp, rp = p.contexts[p.context_of[part]].params, p.contexts[p.context_of[reasm]].params
    assert isinstance(pp, PartitionParams) and isinstance(rp, ReassembleParams)
    assert (pp.rank, pp.switch, pp.write_back) == (1, [3, 0], True)
    assert (rp.rank, rp.switch, rp.write_back) == (0, [2, 5], False)  # its types: 1 - 1
    mp = p.contexts[p.context_of[e0]].params
    assert isinstance(mp, MapParams) and (mp.pmu_bw, mp.write_back) == (96, True)
    assert p.contexts[p.context_of[e0]].name == "expert0"


@pytest.mark.parametrize("cls, name, bad, message", [
    (so.PartitionOp, "rank", IntegerAttr(-1, i64), "'rank' must be an integer in [0, 64], got -1"),
    (so.PartitionOp, "rank", StringAttr("x"), "'rank' must be an integer in [0, 64], got \"x\""),
    (so.ReassembleOp, "switch_cycles", IntegerAttr(2, i64),
     "'switch_cycles' must be an array of integers in [0, 1099511627776], got 2 : i64"),
    (so.ReassembleOp, "write_back_mu", IntegerAttr(1, i64),
     "'write_back_mu' must be a unit attribute (the name alone), got 1 : i64"),
    (so.MapOp, "compute_bw", IntegerAttr(0, i64),
     "'compute_bw' must be an integer in [1, 1099511627776], got 0"),
    (so.MapOp, "pmu_bw", StringAttr("fast"),
     "'pmu_bw' must be an integer in [1, 1099511627776], got \"fast\""),
    (so.SelectGenOp, "name", UnitAttr(),
     "'name' must be a string, got unit"),
])
def test_a_malformed_knob_in_unverified_ir_is_a_located_error(cls, name, bad, message):
    _, g = _route()
    op = _op(g, cls)
    op.attributes[name] = bad
    with pytest.raises(LoweringError) as info:
        place(g, CFG)
    assert str(info.value) == message and info.value.op is op


def test_a_knob_the_op_class_does_not_read_is_left_to_the_verifier():
    # the placement checks only the knobs of its registry entry (rank means nothing on a map)
    _, g = _route()
    _op(g, so.MapOp).attributes["rank"] = StringAttr("x")
    place(g, CFG)


def test_the_switch_count_is_checked_where_the_branches_are_known():
    _, g = _route()
    part = _op(g, so.PartitionOp)
    SWITCH_CYCLES.set(part, [1])
    with pytest.raises(LoweringError, match=r"'switch_cycles' must list 2 cycle counts"):
        place(g, CFG)
