"""Baselines obey node memory (eq. 5) or pay eq. 13's traffic for what they cannot keep."""

from __future__ import annotations

import math

import pytest

from steplus.dialects.target.pim import MIB, preset
from steplus.passes.allspark.baselines import (
    BaselineMemoryError,
    baseline,
    spill_plan,
)
from steplus.passes.allspark.cost import stage_weight_bytes
from steplus.passes.allspark.vit import build


def test_spill_plan_keeps_the_most_refetched_stages() -> None:
    # stage 1 is re-fetched 3x per byte, stage 0 once: keep all of stage 1 first
    assert spill_plan([6, 5], [1, 3], 8) == [3, 0]
    assert spill_plan([6, 5], [3, 1], 8) == [0, 3]
    assert spill_plan([4, 4], [2, 2], 100) == [0, 0]
    assert spill_plan([4, 4], [2, 2], -5) == [4, 4]  # nothing fits: everything streams


def test_fitting_baseline_is_unchanged() -> None:
    free = baseline("swin-b", 224, "allspark-16x16", "AH", bind=False, memory="ignore")
    paid = baseline("swin-b", 224, "allspark-16x16", "AH", bind=False)
    assert free.fits and paid.spilled_bytes == 0
    assert paid.cycles == free.cycles and paid.memory_rule == "spill"


def test_branch_baseline_pays_eq_13_for_the_weights_it_cannot_keep() -> None:
    hw = preset("allspark-16x16")
    vit = build("swin-b", 224)
    free = baseline(vit, 224, hw, "B", bind=False, memory="ignore")
    paid = baseline(vit, 224, hw, "B", bind=False)
    # B at 224^2: 64/16/4/1 windows, one temporal layer per stage, [1,1] holds everything
    need = [stage_weight_bytes(st, hw) for st in vit.stages]
    assert [len(rep.layers) for rep in paid.stages] == [1, 1, 1, 1]
    ws = free.memory["reuse+sharing"].workspace
    assert free.memory["reuse+sharing"].weights == sum(need) > 80 * MIB
    # equal layer counts: stages kept in order; node keeps cap - workspace - its
    # share of the spilled bytes stored on the chip, ceil(spill / 256)
    spill = paid.spilled_bytes
    reserve = math.ceil(spill / hw.nodes)
    assert spill == sum(need) - (hw.node_cap_bytes - ws - reserve)
    kept = hw.node_cap_bytes - ws - reserve
    per_stage = []
    for n in need:
        k = min(n, kept)
        kept -= k
        per_stage.append(n - k)
    assert [rep.spill for rep in paid.stages] == [math.ceil(x / 8) for x in per_stage]
    assert paid.cycles == free.cycles + sum(math.ceil(x / 8) for x in per_stage)
    # every busy node (one per window: 64, 16, 4, 1) streams its stage's spill
    assert paid.noc_bytes == sum(n * x for n, x in zip([64, 16, 4, 1], per_stage))
    assert free.noc_bytes == 0  # [1,1] moves nothing else


def test_workspace_overflow_is_a_located_constraint_5_error() -> None:
    with pytest.raises(BaselineMemoryError,
                       match=r"^B baseline: constraint 5, memory capacity: the workspace "
                             r"alone needs 9\.36 MiB per node"):
        baseline("swin-l", 640, "allspark-16x16", "B", bind=False)


def test_unknown_memory_rule() -> None:
    with pytest.raises(ValueError, match="unknown memory rule 'keep'"):
        baseline("swin-t", 224, "allspark-16x16", "B", memory="keep")
