"""The Allspark driver: partition, schedule (ILP), lay out and bind a ViT on a PIM mesh.

:func:`orchestrate` builds the partition candidates of every stage, solves the
scheduling ILP (compact form by default, the literal eqs. 1-12 or the compact
form under CP-SAT on request),
lays out every temporal layer with Algorithm 1, binds the branches greedily
(and, for comparison, in raster order, a dependency-oblivious baseline) and
evaluates the schedule with the analytical cost model: latency split into
compute / feature-map transfer / weight sharing, node utilization (eq. 16),
NoC traffic, DRAM accesses, energy, memory per node (Table VI cases) and
average hops per stage.

Example::

    >>> r = orchestrate("swin-t", 224, "allspark-16x16")
    >>> r.status, round(r.utilization, 2) > 0.5
    ('optimal', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from steplus.passes.allspark.vit import VitModel, build, dependency_edges
from steplus.passes.allspark.cost import layer_energy_pj, stage_weight_bytes, weights_per_node
from steplus.dialects.target.pim import PimHardware, preset
from steplus.passes.allspark.ilp import solve_literal
from steplus.passes.allspark.ilp_compact import (
    Layer,
    ScheduleError,
    Solution,
    build_problem,
    solve_compact,
)
from steplus.passes.allspark.layout import (
    average_hops,
    greedy_binding,
    raster_binding,
    slots_for,
    structured_layout,
)
from steplus.passes.allspark.partition import Scheme
from steplus.passes.allspark.schedule import layers_of, parse_schedule, verify


MAX_BATCH = 256
ILP_FORMS = ("compact", "literal", "cpsat")
"""The ILP formulations `orchestrate` solves (its `form`)."""
MAX_TIME_LIMIT = 3600.0
"""The longest ILP time limit (seconds) the tool and the pass accept."""


@dataclass
class StageReport:
    index: int
    branches: int
    blocks: int
    layers: list[Layer]
    compute: int  # cycles
    transfer: int
    sharing: int
    utilization: float  # eq. 16
    hops_greedy: float  # average hops of the dependencies
    hops_raster: float  # dependency-oblivious (raster) binding
    binding: list[int] = field(default_factory=list)
    spill: int = 0  # cycles re-fetching weights a node cannot keep (eq. 13 traffic)

    @property
    def total(self) -> int:
        return self.compute + self.transfer + self.sharing + self.spill

    @property
    def schemes(self) -> list[Scheme]:
        return [lay.scheme for lay in self.layers]

    @property
    def reuse(self) -> bool:
        """Weights reused across temporal layers (a scheme repeats or [1,1] is used)."""
        s = self.schemes
        return len(set(s)) < len(s) or (Scheme(1, 1) in s and len(s) > 1)


@dataclass
class Memory:
    """Bytes per node (Table VI): weights and workspace."""

    weights: float
    workspace: int

    @property
    def total(self) -> float:
        return self.weights + self.workspace


@dataclass
class Result:
    model: VitModel
    hw: PimHardware
    method: str
    stages: list[StageReport]
    status: str = "optimal"
    gap: float = 0.0
    solver_seconds: float = 0.0
    noc_bytes: float = 0.0  # summed over nodes
    dram_bytes: float = 0.0
    energy_pj: dict[str, float] = field(default_factory=dict)
    memory: dict[str, Memory] = field(default_factory=dict)
    batch: int = 1  # N_bt of eq. 12: latency, traffic and energy are for the whole batch
    spilled_bytes: int = 0  # weight bytes per node streamed each temporal layer (baselines)
    memory_rule: str = "enforced"  # "enforced" (eq. 5), "spill" or "ignored" (baselines)
    stream: list[int] = field(default_factory=list[int])  # per stage: spilled bytes per node

    @property
    def cycles(self) -> int:
        return sum(s.total for s in self.stages)

    @property
    def latency_ms(self) -> float:
        return self.cycles * self.hw.cycle_ns / 1e6

    @property
    def per_image_ms(self) -> float:
        return self.latency_ms / self.batch

    def split_ms(self) -> dict[str, float]:
        k = self.hw.cycle_ns / 1e6
        return {"compute": k * sum(s.compute for s in self.stages),
                "transfer": k * sum(s.transfer for s in self.stages),
                "sharing": k * sum(s.sharing + s.spill for s in self.stages)}

    @property
    def utilization(self) -> float:
        busy = sum(s.utilization * s.total for s in self.stages)
        return busy / self.cycles if self.cycles else 0.0

    @property
    def fits(self) -> bool:
        return self.memory["reuse+sharing"].total <= self.hw.node_cap_bytes


def _memory(model: VitModel, hw: PimHardware, stages: list[StageReport], reuse: bool,
            sharing: bool) -> Memory:
    w = sum(weights_per_node(stage_weight_bytes(st, hw), rep.schemes, reuse, sharing)
            for st, rep in zip(model.stages, stages))
    ws = max(lay.cost.workspace for rep in stages for lay in rep.layers)
    return Memory(w, ws)


def evaluate(model: VitModel, hw: PimHardware, layers: list[list[Layer]], method: str,
             bind: bool = True, batch: int = 1) -> Result:
    """Cost-model evaluation of a schedule (one list of temporal layers per stage,
    costed for a batch of ``batch`` inputs)."""
    reports = []
    res = Result(model, hw, method, reports, batch=batch)
    energy = {"compute": 0.0, "dram": 0.0, "noc": 0.0}
    for st, lays in zip(model.stages, layers):
        comp = sum(lay.cost.compute for lay in lays)
        tran = sum(lay.cost.transfer for lay in lays)
        shar = sum(lay.cost.sharing for lay in lays)
        busy = sum(lay.branches * lay.scheme.nodes * lay.cost.total for lay in lays)
        total = comp + tran + shar
        util = busy / (hw.nodes * total) if total else 0.0
        hg = hr = 0.0
        binding: list[int] = []
        edges = dependency_edges(st)
        if bind and edges:
            slots = slots_for([(lay.scheme.m, lay.scheme.g, lay.branches) for lay in lays],
                              hw.rows, hw.cols)
            binding = greedy_binding(st.branches, edges, slots)
            hg = average_hops(binding, edges, slots)
            hr = average_hops(raster_binding(st.branches, slots), edges, slots)
        reports.append(StageReport(st.index, st.branches, st.blocks, lays, comp, tran, shar,
                                   util, hg, hr, binding))
        for lay in lays:
            nodes = lay.branches * lay.scheme.nodes
            e = layer_energy_pj(lay.cost, lay.branches, hw)
            for k in energy:
                energy[k] += e[k]
            res.noc_bytes += nodes * (lay.cost.vertical_bytes + lay.cost.horizontal_bytes)
            res.dram_bytes += nodes * lay.cost.dram_bytes
    res.energy_pj = energy
    res.memory = {
        "reuse+sharing": _memory(model, hw, reports, True, True),
        "no-reuse": _memory(model, hw, reports, False, True),
        "no-sharing": _memory(model, hw, reports, True, False),
    }
    return res


def given_schedule(model: str | VitModel, img: int, hw: str | PimHardware, text: str,
                   bind: bool = True, check_memory: bool = True, batch: int = 1) -> Result:
    """Evaluate a user-written schedule (e.g. the seed's Table V) under the cost model.

    Raises ``ScheduleError`` naming the first constraint it breaks (constraint 5,
    memory, only with ``check_memory``; ``Result.fits`` tells either way).
    """
    vit = build(model, img) if isinstance(model, str) else model
    machine = preset(hw) if isinstance(hw, str) else hw
    layers = layers_of(vit, machine, parse_schedule(text, len(vit.stages)), batch)
    errors = verify(vit, machine, layers, memory=check_memory)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ScheduleError(f"schedule: {errors[0]}{more}")
    res = evaluate(vit, machine, layers, "given", bind, batch)
    res.status = "given"
    return res


def orchestrate(model: str | VitModel, img: int = 224, hw: str | PimHardware = "allspark-16x16",
                time_limit: float = 60.0, form: str = "compact", bind: bool = True,
                reuse: bool = True, sharing: bool = True, batch: int = 1) -> Result:
    """Run Allspark end to end; raise ``ScheduleError``/``WorkloadError``/``PimConfigError``.

    ``reuse=False`` / ``sharing=False`` schedule without weight reuse across temporal
    layers / without weight sharing inside a sub-array (the Table VI ablations).
    """
    vit = build(model, img) if isinstance(model, str) else model
    machine = preset(hw) if isinstance(hw, str) else hw
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise ScheduleError(f"batch must be an integer in [1, {MAX_BATCH}], got {batch}")
    prob = build_problem(vit, machine, reuse=reuse, sharing=sharing, batch=batch)
    sol: Solution
    if form == "literal":
        sol = solve_literal(prob, time_limit)
    elif form == "compact":
        sol = solve_compact(prob, time_limit)
    elif form == "cpsat":
        from steplus.passes.allspark.ilp_cpsat import solve_cpsat

        sol = solve_cpsat(prob, time_limit)
    else:
        raise ValueError(f"unknown ILP form '{form}' (compact, literal or cpsat)")
    errors = verify(vit, machine, sol.layers)  # independent of the ILP's own rows
    if errors:
        raise ScheduleError(f"internal: the {form} ILP returned a schedule that breaks "
                            f"{errors[0]}")
    res = evaluate(vit, machine, sol.layers, "allspark", bind, batch)
    res.status, res.gap, res.solver_seconds = sol.status, sol.gap, sol.seconds
    return res


def layer_rects(hw: PimHardware, lay: Layer) -> list[tuple[int, int, int, int]]:
    """Sub-arrays occupied by a temporal layer (Algorithm 1, first ``branches``)."""
    return structured_layout(hw.rows, hw.cols, lay.scheme.m, lay.scheme.g)[: lay.branches]
