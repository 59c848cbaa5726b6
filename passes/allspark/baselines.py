"""Baselines under the same cost model: branch (B), patch (P) and head (AH) level.

- **B**: every branch on one node (scheme ``[1,1]``), as many branches per
  temporal layer as nodes;
- **P**: every branch split over patches only (``[1, m]`` with the largest
  patch split that fits the mesh: TransPIM, FACT, SpAtten, MAT);
- **AH**: every branch split over heads only (``[g, 1]`` with the largest head
  split: DOTA, ViTCoD).

Each baseline packs branches into temporal layers with Algorithm 1, like
Allspark, so only the partitioning differs.  A baseline's scheme is fixed, so
its weights may not fit the node capacity (eq. 5).  Under the default memory
rule ``"spill"`` such a baseline pays for it: a node keeps the largest
workspace and as many of its weights as fit, and re-fetches the rest over the
NoC in every temporal layer that uses them, at eq. 13's cost (``bytes / BW``
cycles per layer, the same ring traffic as weight sharing, read from the DRAM
of the nodes that hold it).  It keeps the weights of the stages with the most
temporal layers first (the cheapest spill; exact, since the cost per byte of a
stage is its layer count).  The spilled weights are stored once on the chip,
spread over all nodes, and that share is taken from every node's budget.  When the workspace alone exceeds the capacity no
streaming helps: :class:`BaselineMemoryError` names constraint 5.
``memory="ignore"`` is the old, unenforced evaluation (reported next to it).

Single-branch models (ViT, and PVT's global attention): B places the branch of
a stage on one node (``[1,1]``), the literal branch-level scheme; the other
``nodes - 1`` nodes idle.  That is the stated definition, not a strawman
chosen for us: branch-level parallelism has nothing else to spread.
The dependency-oblivious placement for hop counts (DDAM is not reproduced) is
:func:`steplus.passes.allspark.layout.raster_binding`.

Example::

    >>> r = baseline("swin-t", 224, "allspark-16x16", "B")
    >>> {lay.scheme.label for s in r.stages for lay in s.layers}
    {'[1,1]'}
"""

from __future__ import annotations

import math

from steplus.passes.allspark.vit import Stage, VitModel, build
from steplus.passes.allspark.cost import layer_cost, stage_weight_bytes, weights_per_node
from steplus.dialects.target.pim import MIB, PimHardware, preset
from steplus.passes.allspark.ilp_compact import Layer, ScheduleError
from steplus.passes.allspark.layout import max_subarrays
from steplus.passes.allspark.orchestrate import Result, evaluate
from steplus.passes.allspark.partition import Scheme, candidates

BASELINES = ("B", "P", "AH")
MEMORY_RULES = ("spill", "ignore")


class BaselineMemoryError(ScheduleError):
    """A baseline's workspace alone exceeds node memory (constraint 5)."""


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


def spill_plan(need: list[int], layers: list[int], budget: int) -> list[int]:
    """Bytes per node of each stage's weights that do not fit ``budget``.

    ``need[s]`` is what a node stores for stage ``s``, ``layers[s]`` how many
    temporal layers re-fetch a spilled byte.  Stages with the most layers are
    kept first, so the re-fetch cost ``sum(spill[s] * layers[s])`` is minimal.

        >>> spill_plan([6, 5], [1, 3], 8)
        [3, 0]
    """
    spill = list(need)
    left = max(budget, 0)
    for s in sorted(range(len(need)), key=lambda i: -layers[i]):
        keep = min(need[s], left)
        spill[s] -= keep
        left -= keep
    return spill


def apply_spill(res: Result) -> Result:
    """Charge ``res`` (a fixed-scheme schedule) eq. 13's traffic for the weights a
    node cannot keep; raise :class:`BaselineMemoryError` when even the workspace
    does not fit."""
    hw = res.hw
    mem = res.memory["reuse+sharing"]
    res.memory_rule = "spill"
    if mem.total <= hw.node_cap_bytes:
        return res
    if mem.workspace > hw.node_cap_bytes:
        raise BaselineMemoryError(
            f"{res.method} baseline: constraint 5, memory capacity: the workspace alone "
            f"needs {mem.workspace / MIB:.2f} MiB per node, more than node_cap "
            f"{hw.node_cap_bytes / MIB:.2f} MiB (no weight streaming can fit it)")
    need = [weights_per_node(stage_weight_bytes(st, hw), rep.schemes)
            for st, rep in zip(res.model.stages, res.stages)]
    counts = [len(rep.layers) for rep in res.stages]
    slices = [max(lay.scheme.nodes for lay in rep.layers) for rep in res.stages]
    # the spilled weights live somewhere on the chip: every node also stores its
    # share of the distinct spilled slices (spill_s * g * m bytes per stage)
    reserve, spill = 0, need
    for _ in range(64):
        spill = spill_plan(need, counts, hw.node_cap_bytes - mem.workspace - reserve)
        again = -(-sum(x * k for x, k in zip(spill, slices)) // hw.nodes)
        if again == reserve:
            break
        reserve = again
    if mem.workspace + reserve > hw.node_cap_bytes:
        raise BaselineMemoryError(
            f"{res.method} baseline: constraint 5, memory capacity: workspace "
            f"{mem.workspace / MIB:.2f} MiB plus this node's share of the spilled weights "
            f"{reserve / MIB:.2f} MiB exceed node_cap {hw.node_cap_bytes / MIB:.2f} MiB")
    res.spilled_bytes = sum(spill)
    res.stream = list(spill)
    for rep, extra in zip(res.stages, spill):
        if not extra:
            continue
        old = rep.total
        rep.spill = len(rep.layers) * math.ceil(extra / hw.link_bytes_per_cycle)
        busy = rep.utilization * hw.nodes * old + sum(
            lay.branches * lay.scheme.nodes for lay in rep.layers
        ) * math.ceil(extra / hw.link_bytes_per_cycle)
        rep.utilization = busy / (hw.nodes * rep.total)
        moved = sum(lay.branches * lay.scheme.nodes for lay in rep.layers) * extra
        res.noc_bytes += moved
        res.dram_bytes += moved
        res.energy_pj["dram"] += moved * 8 * hw.dram_pj_per_bit
        res.energy_pj["noc"] += moved * 8 * hw.noc_pj_per_bit_hop  # one hop: a neighbour
    return res


def baseline(model: str | VitModel, img: int, hw: str | PimHardware, kind: str,
             bind: bool = True, batch: int = 1, memory: str = "spill") -> Result:
    """Evaluate baseline ``kind`` (B, P or AH) for a batch of ``batch`` inputs.

    ``memory="spill"`` (default) makes an overflowing baseline pay eq. 13's traffic
    for the weights it cannot keep (:func:`apply_spill`); ``"ignore"`` does not.
    """
    if memory not in MEMORY_RULES:
        raise ValueError(f"unknown memory rule '{memory}' (choose from spill, ignore)")
    vit = build(model, img) if isinstance(model, str) else model
    machine = preset(hw) if isinstance(hw, str) else hw
    layers = [fixed_layers(st, machine, baseline_scheme(st, machine, kind), batch)
              for st in vit.stages]
    res = evaluate(vit, machine, layers, kind, bind, batch)
    if memory == "ignore":
        res.memory_rule = "ignored"
        return res
    return apply_spill(res)


def baseline_lines(res: Result, hw: PimHardware, batch: int = 1) -> list[str]:
    """One report line per baseline: paid latency and speedup over ``res``, its memory,
    and the memory-ignored figure next to it (what ``pim-orchestrate --baselines`` prints)."""
    out = []
    for kind in BASELINES:
        free = baseline(res.model, res.model.img, hw, kind, bind=False, batch=batch,
                        memory="ignore")
        ignored = (f"memory ignored: {free.latency_ms:.4f} ms, "
                   f"{free.latency_ms / res.latency_ms:.2f}x")
        try:
            b = baseline(res.model, res.model.img, hw, kind, bind=False, batch=batch)
        except BaselineMemoryError as e:
            out.append(f"baseline {kind}: cannot run: {e} ({ignored})")
            continue
        fits = ("fits node_cap" if not b.spilled_bytes else
                f"exceeds node_cap, streams {b.spilled_bytes / MIB:.2f} MiB/node per "
                f"temporal layer (eq. 13)")
        out.append(f"baseline {kind}: latency {b.latency_ms:.4f} ms, speedup "
                   f"{b.latency_ms / res.latency_ms:.2f}x, utilization {b.utilization:.3f}, "
                   f"memory {fits} ({ignored})")
    return out
