"""Baselines under the same cost model: branch (B), patch (P) and head (AH) level.

- **B**: every branch on one node (scheme ``[1,1]``), as many branches per
  temporal layer as nodes;
- **P**: every branch split over patches only (``[1, m]`` with the largest
  patch split that fits the mesh: TransPIM, FACT, SpAtten, MAT);
- **AH**: every branch split over heads only (``[g, 1]`` with the largest head
  split: DOTA, ViTCoD).

Each baseline packs branches into temporal layers with Algorithm 1, like
Allspark, so only the partitioning differs.  Their weights may not fit the
node capacity; the result says so (``Result.fits``) instead of failing.
The DDAM-style placement baseline for hop counts is
:func:`steplus.passes.allspark.layout.raster_binding`.

Example::

    >>> r = baseline("swin-t", 224, "allspark-16x16", "B")
    >>> {lay.scheme.label for s in r.stages for lay in s.layers}
    {'[1,1]'}
"""

from __future__ import annotations

import math

from steplus.passes.allspark.vit import Stage, VitModel, build
from steplus.passes.allspark.cost import layer_cost
from steplus.dialects.target.pim import PimHardware, preset
from steplus.passes.allspark.ilp_compact import Layer
from steplus.passes.allspark.layout import max_subarrays
from steplus.passes.allspark.orchestrate import Result, evaluate
from steplus.passes.allspark.partition import Scheme, candidates

BASELINES = ("B", "P", "AH")


def baseline_scheme(stage: Stage, hw: PimHardware, kind: str) -> Scheme:
    cands = candidates(stage, hw)
    if kind == "B":
        return Scheme(1, 1)
    if kind == "P":
        return max((s for s in cands if s.g == 1), key=lambda s: s.m)
    if kind == "AH":
        return max((s for s in cands if s.m == 1), key=lambda s: s.g)
    raise ValueError(f"unknown baseline '{kind}' (choose from {', '.join(BASELINES)})")


def fixed_layers(stage: Stage, hw: PimHardware, scheme: Scheme,
                 batch: int = 1) -> list[Layer]:
    """Temporal layers of a stage that uses one scheme throughout."""
    cap = max_subarrays(hw.rows, hw.cols, scheme.m, scheme.g)
    cost = layer_cost(stage, scheme, hw, batch)
    n = math.ceil(stage.branches / cap)
    return [Layer(scheme, min(cap, stage.branches - j * cap), cost) for j in range(n)]


def baseline(model: str | VitModel, img: int, hw: str | PimHardware, kind: str,
             bind: bool = True, batch: int = 1) -> Result:
    """Evaluate baseline ``kind`` (B, P or AH) for a batch of ``batch`` inputs."""
    vit = build(model, img) if isinstance(model, str) else model
    machine = preset(hw) if isinstance(hw, str) else hw
    layers = [fixed_layers(st, machine, baseline_scheme(st, machine, kind), batch)
              for st in vit.stages]
    return evaluate(vit, machine, layers, kind, bind, batch)
