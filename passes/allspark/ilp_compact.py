"""Scheduling ILP, compact form: how many temporal layers of each scheme per stage.

The seed's ILP (eqs. 1-15, :mod:`steplus.passes.allspark.ilp`) has a binary
``X[s,i,j,a,b]`` per (branch count, temporal layer, scheme).  Because every
temporal layer's time depends only on its scheme (all its branches run in
parallel) and the weights a node stores depend only on *which* schemes are
used, the same optimum is reached with, per stage ``s`` and scheme ``k``:

- ``n[s,k]`` (integer): temporal layers using scheme ``k``;
- ``y[s,k]`` (binary): scheme ``k`` is used (weight reuse keeps one copy);
- ``z[s,k]`` (>= 0): the scheme's weight slice is stored (``y[s,k] - y[s,[1,1]]``);
- ``D`` (>= 0): the workspace, ``max V_dyn`` of eq. 5.

    minimize   sum n[s,k] * T[s,k]                       (eq. 12)
    subject to sum_k n[s,k] * N_k >= N_br[s]             (eqs. 1-2: all branches placed)
               sum_k n[s,k] <= N_br[s]                   (each layer holds >= 1 branch)
               y[s,k] <= n[s,k] <= ceil(N_br/N_k) y[s,k]
               z[s,k] >= y[s,k] - y[s,[1,1]]             (Term 1 of eq. 6)
               sum_s (W_s y[s,[1,1]] + sum_k W_s/(g m) z[s,k]) + D <= node_cap   (eq. 5, 10-11)
               D >= V_dyn[s,k] y[s,k]

Given a solution, the branches are spread over the layers with non-increasing
counts (eq. 4).  It has ``2 * sum_s |K_s|`` integer variables, so Swin-B at
960^2 solves in well under a second with HiGHS (``scipy.optimize.milp``).

Example::

    >>> from steplus.passes.allspark.vit import build
    >>> from steplus.dialects.target.pim import preset
    >>> sol = solve_compact(build_problem(build("swin-t", 224), preset("allspark-16x16")))
    >>> sol.status
    'optimal'
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import milp
from scipy.sparse import lil_matrix, sparray, spmatrix

from steplus.passes.allspark.vit import VitModel
from steplus.passes.allspark.cost import LayerCost, layer_cost, slice_bytes, stage_weight_bytes
from steplus.dialects.target.pim import MIB, PimHardware
from steplus.passes.allspark.layout import max_subarrays
from steplus.passes.allspark.partition import Scheme, candidates

ONE = Scheme(1, 1)


class ScheduleError(ValueError):
    """No schedule exists (or none was found); the message names the constraint."""


@dataclass(frozen=True)
class Option:
    """One partition candidate of a stage with its cost and capacity."""

    scheme: Scheme
    cost: LayerCost
    capacity: int  # N_{alpha,beta}: sub-arrays packable on the mesh
    weight_bytes: int  # per node, this scheme's slice of the stage weights (whole bytes)

    @property
    def time(self) -> int:
        return self.cost.total


@dataclass(frozen=True)
class StageProblem:
    branches: int
    blocks: int
    weight_bytes: int  # all weights of the stage (blocks + merging)
    options: tuple[Option, ...]


@dataclass(frozen=True)
class Problem:
    model: VitModel
    hw: PimHardware
    stages: tuple[StageProblem, ...]
    reuse: bool = True
    sharing: bool = True


def build_problem(model: VitModel, hw: PimHardware, reuse: bool = True,
                  sharing: bool = True, allowed: set[Scheme] | None = None,
                  batch: int = 1) -> Problem:
    """Partition candidates of every stage with their layer costs (eqs. 13-15).

    ``sharing=False`` stores a group's whole weight slice on each node (no
    weight-sharing traffic); ``allowed`` restricts the schemes (baselines);
    ``batch`` is eq. 12's ``N_bt`` (the objective is the latency of the batch).
    """
    stages = []
    for st in model.stages:
        wtot = stage_weight_bytes(st, hw)
        opts = []
        for s in candidates(st, hw):
            if allowed is not None and s not in allowed:
                continue
            cap = max_subarrays(hw.rows, hw.cols, s.m, s.g)
            if cap < 1:
                continue
            cost = layer_cost(st, s, hw, batch)
            if not sharing:
                cost = replace(cost, sharing=0)
            opts.append(Option(s, cost, cap, slice_bytes(wtot, s, sharing)))
        stages.append(StageProblem(st.branches, st.blocks, wtot, tuple(opts)))
    return Problem(model, hw, tuple(stages), reuse, sharing)


@dataclass
class Layer:
    scheme: Scheme
    branches: int
    cost: LayerCost


@dataclass
class Solution:
    status: str  # optimal | time-limit
    objective: float  # cycles
    bound: float  # best dual bound (cycles)
    gap: float
    seconds: float
    layers: list[list[Layer]] = field(default_factory=list)  # per stage

    @property
    def counts(self) -> list[dict[Scheme, int]]:
        out = []
        for stage in self.layers:
            d: dict[Scheme, int] = {}
            for lay in stage:
                d[lay.scheme] = d.get(lay.scheme, 0) + 1
            out.append(d)
        return out


def spread(branches: int, layers: list[tuple[Option, int]]) -> list[Layer]:
    """Distribute branches over chosen layers, largest capacity first (eq. 4)."""
    flat = sorted((o for o, n in layers for _ in range(n)), key=lambda o: -o.capacity)
    out, left = [], branches
    for o in flat:
        take = min(o.capacity, left)
        if take <= 0:
            break
        out.append(Layer(o.scheme, take, o.cost))
        left -= take
    if left > 0:
        raise ScheduleError("internal: chosen layers do not cover all branches")
    return sorted(out, key=lambda lay: -lay.branches)


def explain_infeasible(prob: Problem) -> str:
    """Name the constraint that makes the problem infeasible (or the likely one)."""
    cap = prob.hw.node_cap_bytes
    for i, sp in enumerate(prob.stages):
        if not sp.options:
            return (f"stage {i + 1}: no partition scheme fits the "
                    f"{prob.hw.rows}x{prob.hw.cols} mesh (constraint 1)")
    min_w = sum(min(o.weight_bytes for o in sp.options) for sp in prob.stages)
    min_d = max(min(o.cost.workspace for o in sp.options) for sp in prob.stages)
    if min_w + min_d > cap:
        return (f"model '{prob.model.name}' cannot fit the node capacity under any scheme: "
                f"weights need at least {min_w / MIB:.2f} MiB and workspace "
                f"{min_d / MIB:.2f} MiB per node > node_cap {cap / MIB:.2f} MiB "
                f"(constraint 5, memory capacity) on the {prob.hw.rows}x{prob.hw.cols} mesh; "
                f"use a larger mesh or more memory per node")
    least = min_memory(prob)
    if least is not None and sum(least) > cap:
        w, d = least
        return (f"model '{prob.model.name}' cannot fit the node capacity: the schedule that "
                f"places every branch (constraints 1-4) with the least memory needs "
                f"{w / MIB:.2f} MiB of weights + {d / MIB:.2f} MiB of workspace = "
                f"{(w + d) / MIB:.2f} MiB per node > node_cap {cap / MIB:.2f} MiB "
                f"(constraint 5, memory capacity) on the {prob.hw.rows}x{prob.hw.cols} mesh; "
                f"use a larger mesh or more memory per node")
    return ("no schedule satisfies the memory capacity (constraint 5) together with "
            "the branch assignment (constraints 1-2)")


@dataclass
class _Compact:
    """The compact model's arrays: ``rows`` without the memory row, ``mem`` its terms."""

    idx: list[tuple[int, int]]
    time: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    rows: list[tuple[dict[int, float], float, float]]
    mem: dict[int, float]

    def matrix(self, rows: list[tuple[dict[int, float], float, float]]) -> tuple[sparray | spmatrix, np.ndarray, np.ndarray]:
        """`rows` as milp's (A, lo, hi) constraint (milp builds the LinearConstraint: scipy's
        unannotated constructor reads as float-only bounds to a type checker)."""
        a = lil_matrix((len(rows), len(self.time)))
        lo, hi = np.empty(len(rows)), np.empty(len(rows))
        for r, (coef, low, high) in enumerate(rows):
            for v, x in coef.items():
                a[r, v] = x
            lo[r], hi[r] = low, high
        return a.tocsr(), lo, hi


def _compact(prob: Problem) -> _Compact:
    idx: list[tuple[int, int]] = [(s, k) for s, sp in enumerate(prob.stages)
                                  for k in range(len(sp.options))]
    nk = len(idx)
    # variable layout: n[0:nk], y[nk:2nk], z[2nk:3nk], D
    nv = 3 * nk + 1
    dvar = 3 * nk
    c = np.zeros(nv)
    lb, ub = np.zeros(nv), np.full(nv, np.inf)
    integrality = np.zeros(nv)
    rows: list[tuple[dict[int, float], float, float]] = []
    one_of: dict[int, int] = {}
    for v, (s, k) in enumerate(idx):
        o = prob.stages[s].options[k]
        c[v] = o.time
        ub[v] = math.ceil(prob.stages[s].branches / o.capacity)
        ub[nk + v] = 1
        integrality[v] = integrality[nk + v] = 1
        rows.append(({v: 1.0, nk + v: -ub[v]}, -np.inf, 0.0))
        rows.append(({nk + v: 1.0, v: -1.0}, -np.inf, 0.0))
        rows.append(({dvar: 1.0, nk + v: -float(o.cost.workspace)}, 0.0, np.inf))
        if o.scheme == ONE:
            one_of[s] = v
    mem: dict[int, float] = {dvar: 1.0}
    for s, sp in enumerate(prob.stages):
        vs = [v for v, (s2, _) in enumerate(idx) if s2 == s]
        rows.append(({v: float(sp.options[idx[v][1]].capacity) for v in vs},
                     float(sp.branches), np.inf))
        rows.append(({v: 1.0 for v in vs}, -np.inf, float(sp.branches)))
        for v in vs:
            o = sp.options[idx[v][1]]
            if not prob.reuse:  # every layer stores its own slice
                mem[v] = mem.get(v, 0.0) + o.weight_bytes
                continue
            if o.scheme == ONE:
                mem[nk + v] = mem.get(nk + v, 0.0) + o.weight_bytes
                continue
            mem[2 * nk + v] = o.weight_bytes
            row = {2 * nk + v: 1.0, nk + v: -1.0}
            if s in one_of:
                row[nk + one_of[s]] = 1.0
            rows.append((row, 0.0, np.inf))
    return _Compact(idx, c, lb, ub, integrality, rows, mem)


def min_memory(prob: Problem, time_limit: float = 10.0) -> tuple[float, float] | None:
    """(weights, workspace) bytes per node of the schedule needing the least memory
    among those that place every branch (constraints 1-4); ``None`` if not solved."""
    m = _compact(prob)
    c = np.zeros(len(m.time))
    for v, x in m.mem.items():
        c[v] = x
    res = milp(c, constraints=m.matrix(m.rows), integrality=m.integrality,
               bounds=(m.lb, m.ub), options={"time_limit": float(time_limit)})
    if getattr(res, "x", None) is None or res.status != 0:
        return None
    dvar = len(m.time) - 1
    return float(res.fun) - float(res.x[dvar]), float(res.x[dvar])


def solve_compact(prob: Problem, time_limit: float = 60.0) -> Solution:
    """Solve the compact ILP with HiGHS; raise ``ScheduleError`` when infeasible."""
    if any(not sp.options for sp in prob.stages):
        raise ScheduleError(explain_infeasible(prob))
    m = _compact(prob)
    rows = m.rows + [(m.mem, -np.inf, float(prob.hw.node_cap_bytes))]
    t0 = time.perf_counter()
    res = milp(m.time, constraints=m.matrix(rows), integrality=m.integrality,
               bounds=(m.lb, m.ub), options={"time_limit": float(time_limit)})
    secs = time.perf_counter() - t0
    check_found(res, prob, time_limit)
    x = np.round(res.x).astype(int)
    layers = []
    for s, sp in enumerate(prob.stages):
        chosen = [(sp.options[k], int(x[v])) for v, (s2, k) in enumerate(m.idx)
                  if s2 == s and x[v] > 0]
        layers.append(spread(sp.branches, chosen))
    return make_solution(res, secs, layers)


def check_found(res: object, prob: Problem, time_limit: float) -> None:
    """Raise ``ScheduleError`` when HiGHS returned no point (infeasible or out of time)."""
    if getattr(res, "x", None) is None:
        if getattr(res, "status", None) == 1:
            raise ScheduleError(f"no schedule found within the time limit of {time_limit:g} s")
        raise ScheduleError(explain_infeasible(prob))


def make_solution(res: object, secs: float, layers: list[list[Layer]]) -> Solution:
    """Wrap a HiGHS result: optimal, or stopped at the time limit with its gap."""
    fun = float(res.fun)  # type: ignore[attr-defined]
    bound = getattr(res, "mip_dual_bound", None)
    gap = getattr(res, "mip_gap", None)
    status = "optimal" if res.status == 0 else "time-limit"  # type: ignore[attr-defined]
    return Solution(status, fun, float(bound) if bound is not None else fun,
                    float(gap or 0.0), secs, layers)
