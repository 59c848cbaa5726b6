"""Schedules as data: parse a user-written schedule and verify the seed's constraints.

A schedule lists, per model stage, the partition scheme of every temporal
layer.  It is written ``G x M`` per layer (``g`` head groups, ``m`` patch
chunks, the seed's Table V ``[g,m]``), optionally with ``:branches``; layers
are separated by ``,`` and stages by ``;``.  The seed's Table V (Swin-B,
640^2) reads::

    1x1,1x1,4x2;2x1,4x4;8x2,8x2,16x4;4x4

Without explicit counts the branches are spread over the layers, largest
sub-array capacity first (eq. 4).  :func:`verify` checks a schedule against
the partition candidates and constraints 1, 2, 4 and 5 and names the rule
broken; ``pim-verify-schedule`` (``passes/allspark/ir.py``) runs it on a
schedule written as ``pim`` IR.  The driver runs it on every solver result as
an independent check.

Example::

    >>> parse_schedule("1x1,4x2:17;2x1", stages=2)
    [[(Scheme(g=1, m=1), None), (Scheme(g=4, m=2), 17)], [(Scheme(g=2, m=1), None)]]
"""

from __future__ import annotations

import re

from steplus.passes.allspark.vit import VitModel
from steplus.passes.allspark.cost import layer_cost, stage_weight_bytes, weights_per_node
from steplus.dialects.target.pim import MIB, PimHardware
from steplus.passes.allspark.ilp_compact import Layer, ScheduleError
from steplus.passes.allspark.layout import max_subarrays
from steplus.passes.allspark.partition import Scheme, candidates

MAX_SCHEDULE_CHARS = 4096
MAX_LAYERS_PER_STAGE = 64
_LAYER = re.compile(r"([0-9]{1,3})x([0-9]{1,3})(?::([0-9]{1,6}))?")

Spec = list[list[tuple[Scheme, int | None]]]


def parse_schedule(text: str, stages: int) -> Spec:
    """Parse ``G x M[:branches]`` layers, ``,`` between layers, ``;`` between stages."""
    if len(text) > MAX_SCHEDULE_CHARS:
        raise ScheduleError(f"schedule: longer than {MAX_SCHEDULE_CHARS} characters")
    parts = text.replace(" ", "").split(";")
    if len(parts) != stages:
        raise ScheduleError(f"schedule: {len(parts)} stages given, the model has {stages} "
                            "(separate stages with ';')")
    out: Spec = []
    for s, part in enumerate(parts, 1):
        layers = part.split(",")
        if len(layers) > MAX_LAYERS_PER_STAGE:
            raise ScheduleError(f"schedule: stage {s} has more than "
                                f"{MAX_LAYERS_PER_STAGE} temporal layers")
        stage: list[tuple[Scheme, int | None]] = []
        for lay in layers:
            m = _LAYER.fullmatch(lay)
            if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
                raise ScheduleError(f"schedule: stage {s}: expected GxM or GxM:BRANCHES "
                                    f"with positive integers, got '{lay[:40]}'")
            count = int(m.group(3)) if m.group(3) is not None else None
            stage.append((Scheme(int(m.group(1)), int(m.group(2))), count))
        out.append(stage)
    return out


def _spread_given(branches: int, hw: PimHardware,
                  stage: list[tuple[Scheme, int | None]]) -> list[tuple[Scheme, int]]:
    """Fill missing counts (explicit ones first, the rest largest capacity first);
    when any count was filled in, order the layers by decreasing count (eq. 4)."""
    left = branches - sum(n for _, n in stage if n is not None)
    filled: list[tuple[Scheme, int]] = []
    free = sorted((k for k, (_, n) in enumerate(stage) if n is None),
                  key=lambda k: -max_subarrays(hw.rows, hw.cols, stage[k][0].m, stage[k][0].g))
    counts: dict[int, int] = {}
    for k in free:
        s = stage[k][0]
        take = max(0, min(max_subarrays(hw.rows, hw.cols, s.m, s.g), left))
        counts[k] = take
        left -= take
    for k, (s, n) in enumerate(stage):
        filled.append((s, n if n is not None else counts[k]))
    if free:
        filled.sort(key=lambda sn: -sn[1])
    return filled


def layers_of(model: VitModel, hw: PimHardware, spec: Spec,
              batch: int = 1) -> list[list[Layer]]:
    """Temporal layers with their costs; verify them with :func:`verify`."""
    out = []
    for i, (st, stage) in enumerate(zip(model.stages, spec)):
        cands = set(candidates(st, hw))
        layers = []
        for j, (s, n) in enumerate(_spread_given(st.branches, hw, stage)):
            if s not in cands:
                gs = sorted({c.g for c in cands})
                ms = sorted({c.m for c in cands})
                raise ScheduleError(
                    f"schedule: stage {i + 1}, temporal layer {j + 1}: {s.label} is not a "
                    f"partition candidate of {st.heads} heads x {st.tokens} patches on the "
                    f"{hw.rows}x{hw.cols} mesh (g in {gs}, m in {ms}, Sec. VI-A)")
            layers.append(Layer(s, n, layer_cost(st, s, hw, batch)))
        out.append(layers)
    return out


def verify(model: VitModel, hw: PimHardware, layers: list[list[Layer]],
           memory: bool = True) -> list[str]:
    """The seed's constraints a schedule breaks, each naming its rule (empty: valid).

    ``memory=False`` skips constraint 5 (to evaluate a schedule that overflows).
    """
    errors = []
    if len(layers) != len(model.stages):
        return [f"schedule has {len(layers)} stages, the model {len(model.stages)}"]
    for i, (st, lays) in enumerate(zip(model.stages, layers), 1):
        for j, lay in enumerate(lays, 1):
            cap = max_subarrays(hw.rows, hw.cols, lay.scheme.m, lay.scheme.g)
            if lay.branches < 1:
                errors.append(f"stage {i}, temporal layer {j}: holds no branch "
                              "(constraint 3: every temporal layer runs >= 1 branch)")
            elif lay.branches > cap:
                errors.append(f"stage {i}, temporal layer {j}: {lay.branches} sub-arrays of "
                              f"{lay.scheme.label} but the {hw.rows}x{hw.cols} mesh packs "
                              f"{cap} (constraint 1)")
        placed = sum(lay.branches for lay in lays)
        if placed != st.branches:
            errors.append(f"stage {i}: {placed} of {st.branches} branches assigned "
                          "(constraint 2: every branch in exactly one temporal layer)")
        counts = [lay.branches for lay in lays]
        if counts != sorted(counts, reverse=True):
            errors.append(f"stage {i}: branch counts {counts} increase between temporal "
                          "layers (constraint 4)")
    if memory and not any(lay.branches < 1 for lays in layers for lay in lays):
        weights = sum(weights_per_node(stage_weight_bytes(st, hw), [lay.scheme for lay in lays])
                      for st, lays in zip(model.stages, layers))
        work = max((lay.cost.workspace for lays in layers for lay in lays), default=0)
        if weights + work > hw.node_cap_bytes:
            errors.append(f"memory per node {weights / MIB:.2f} MiB weights + {work / MIB:.2f} "
                          f"MiB workspace > node_cap {hw.node_cap_bytes / MIB:.2f} MiB "
                          "(constraint 5, with weight reuse and sharing)")
    return errors
