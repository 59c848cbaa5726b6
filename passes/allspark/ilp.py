"""Scheduling ILP in the seed's literal form (Allspark eqs. 1-12).

Binary ``X[s,i,j,k]`` says that temporal layer ``j`` of stage ``s`` holds ``i``
branches, all partitioned with scheme ``k`` (the seed's ``(alpha, beta)``).
With ``x[s,j,k] = sum_i X[s,i,j,k]``:

    (1)  X[s,i,j,k] = 0 for i > N_k                (packing limit of Algorithm 1)
    (2)  sum_{i,j,k} i X[s,i,j,k] = N_br[s]
    (3)  sum_{i,k} X[s,i,j,k] <= 1                  (seed: "= 1", see below)
    (4)  B[s,j] >= B[s,j+1],  B[s,j] = sum_{i,k} i X[s,i,j,k]
    (8)  Y[s,j,j',k] <= x[s,j,k],  Y[s,j,j',k] <= x[s,j',k]     (j' < j: j reuses j')
    (9)  Z[s,j,k] <= sum_{j'<j} Y[s,j,j',k] + sum_{j'} x[s,j',[1,1]],  Z[s,j,k] <= x[s,j,k]
    (10-11) vol[s,j] = sum_k (x[s,j,k] - Z[s,j,k]) * W_s / (g_k m_k)
    (5)  sum_{s,j} vol[s,j] + D <= node_cap,   D >= sum_{i,k} V_dyn[s,k] X[s,i,j,k]
    (12) minimize sum X[s,i,j,k] * (T_c + T_t + T_ws)[s,k]

Departures from the printed equations, each needed for correctness:

- eq. 3 with "= 1" for every ``j < N_tl = N_br`` forces exactly one branch per
  layer; we use "<= 1" (a layer may be empty), as eq. 4's ordering implies;
- eq. 8 as printed sets ``Y = 1`` when layers differ (the opposite of the
  text), and eq. 11 counts the weights of *unused* schemes in layer 0; we
  encode the text's meaning (reuse from an earlier layer with the same scheme,
  or from any ``[1,1]`` layer, Term 1) with upper bounds only, which suffices
  because the weights only appear on the "<=" side of eq. 5.

The variable count is ``sum_s |K_s| N_br (N_br + ...)``: ~1e5 at 224^2 and
~1e7 at 640^2 for Swin-B, so this form is for small instances and for
cross-checking :mod:`ilp_compact`, which it must match.

Example::

    >>> from steplus.passes.allspark.vit import build
    >>> from steplus.dialects.target.pim import preset
    >>> from steplus.passes.allspark.ilp_compact import build_problem
    >>> prob = build_problem(build("swin-t", 224), preset("allspark-16x16"))
    >>> seed_variable_count(prob) > 10**5
    True
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import milp
from scipy.sparse import coo_matrix

from steplus.passes.allspark.ilp_compact import (
    ONE,
    Problem,
    ScheduleError,
    Solution,
    check_found,
    explain_infeasible,
    make_solution,
    spread,
)

MAX_LITERAL_VARS = 20_000  # Swin-T at 224^2 (~8e4) needs > 4 GB in HiGHS


def literal_size(prob: Problem) -> int:
    """Number of variables of the literal form (X, Y, Z and D)."""
    total = 1
    for sp in prob.stages:
        n, k = sp.branches, len(sp.options)
        xs = sum(min(n, o.capacity) for o in sp.options) * n
        total += xs + k * n * (n - 1) // 2 + 2 * k * n + 1
    return total


def seed_variable_count(prob: Problem) -> int:
    """The seed's count, ``sum_s |U_s| |V_s| N_br (2 N_br + 1)`` binaries (Sec. VI-D)."""
    return sum(len(sp.options) * sp.branches * (2 * sp.branches + 1) for sp in prob.stages)


class _Builder:
    def __init__(self) -> None:
        self.nv = 0
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def var(self) -> int:
        self.nv += 1
        return self.nv - 1

    def row(self, coef: dict[int, float], lo: float, hi: float) -> None:
        r = len(self.lo)
        for v, x in coef.items():
            self.rows.append(r)
            self.cols.append(v)
            self.vals.append(x)
        self.lo.append(lo)
        self.hi.append(hi)


def solve_literal(prob: Problem, time_limit: float = 60.0,
                  max_vars: int = MAX_LITERAL_VARS) -> Solution:
    """Solve eqs. 1-12 literally with HiGHS (refuses instances over ``max_vars``)."""
    size = literal_size(prob)
    if size > max_vars:
        raise ScheduleError(f"the literal ILP would have {size} variables "
                            f"(limit {max_vars}); use the compact form")
    if any(not sp.options for sp in prob.stages):
        raise ScheduleError(explain_infeasible(prob))
    b = _Builder()
    cost: dict[int, float] = {}
    xvars: list[dict[tuple[int, int, int], int]] = []
    mem: dict[int, float] = {}
    dvar = b.var()
    mem[dvar] = 1.0
    aux_unbounded: list[int] = []
    for sp in prob.stages:
        n, opts = sp.branches, sp.options
        one = next((k for k, o in enumerate(opts) if o.scheme == ONE), None)
        X: dict[tuple[int, int, int], int] = {}
        for j in range(n):
            for k, o in enumerate(opts):
                for i in range(1, min(n, o.capacity) + 1):  # (1)
                    X[i, j, k] = v = b.var()
                    cost[v] = float(o.time)
        xvars.append(X)
        b.row({v: float(i) for (i, _, _), v in X.items()}, n, n)  # (2)
        by_j: dict[int, dict[int, float]] = {}
        by_jk: dict[tuple[int, int], dict[int, float]] = {}
        for (i, j, k), v in X.items():
            by_j.setdefault(j, {})[v] = float(i)
            by_jk.setdefault((j, k), {})[v] = 1.0
        for j in range(n):
            b.row({v: 1.0 for v in by_j[j]}, -np.inf, 1.0)  # (3)
            if j + 1 < n:  # (4)
                row = dict(by_j[j])
                for v, i in by_j[j + 1].items():
                    row[v] = row.get(v, 0.0) - i
                b.row(row, 0.0, np.inf)
        # aggregate x[j,k] = sum_i X[i,j,k] (keeps the reuse rows short)
        xa: dict[tuple[int, int], int] = {}
        for (j, k), terms in by_jk.items():
            xa[j, k] = v = b.var()
            b.row({v: 1.0, **{x: -1.0 for x in terms}}, 0.0, 0.0)
        for j in range(n):  # (5) workspace: D >= V_dyn of every layer
            wsrow = {dvar: 1.0}
            for k, o in enumerate(opts):
                if (j, k) in xa:
                    wsrow[xa[j, k]] = -float(o.cost.workspace)
            b.row(wsrow, 0.0, np.inf)
        any_one = None
        if one is not None and prob.reuse:  # number of [1,1] layers (Term 1)
            any_one = b.var()
            aux_unbounded.append(any_one)
            b.row({any_one: 1.0, **{xa[j, one]: -1.0 for j in range(n) if (j, one) in xa}},
                  0.0, 0.0)
        for (j, k), xv in xa.items():
            o = opts[k]
            mem[xv] = mem.get(xv, 0.0) + o.weight_bytes  # vol: + x[j,k] * w_k
            if not prob.reuse:
                continue
            z = b.var()
            mem[z] = -o.weight_bytes
            b.row({z: 1.0, xv: -1.0}, -np.inf, 0.0)  # Z <= x[j,k]
            zrow = {z: 1.0}
            for jp in range(j):  # (8): Y[j,j',k] <= x[j,k], Y <= x[j',k]
                if (jp, k) not in xa:
                    continue
                y = b.var()
                b.row({y: 1.0, xv: -1.0}, -np.inf, 0.0)
                b.row({y: 1.0, xa[jp, k]: -1.0}, -np.inf, 0.0)
                zrow[y] = -1.0
            if any_one is not None and k != one:  # any [1,1] layer covers all schemes
                zrow[any_one] = -1.0
            b.row(zrow, -np.inf, 0.0)  # (9)
    b.row(mem, -np.inf, float(prob.hw.node_cap_bytes))
    c = np.zeros(b.nv)
    for v, x in cost.items():
        c[v] = x
    integ = np.ones(b.nv)
    integ[dvar] = 0
    ub = np.ones(b.nv)
    ub[dvar] = np.inf
    for sp_vars in aux_unbounded:
        ub[sp_vars] = np.inf
    a = coo_matrix((b.vals, (b.rows, b.cols)), shape=(len(b.lo), b.nv)).tocsr()
    t0 = time.perf_counter()
    try:
        # (A, lo, hi) and (lb, ub): milp builds the LinearConstraint and Bounds itself
        # (scipy's unannotated constructors read as float-only to a type checker)
        res = milp(c, constraints=(a, np.array(b.lo), np.array(b.hi)),
                   integrality=integ, bounds=(np.zeros(b.nv), ub),
                   options={"time_limit": float(time_limit)})
    except MemoryError:
        raise ScheduleError(f"the literal ILP ({size} variables) ran out of memory; "
                            "use the compact form") from None
    secs = time.perf_counter() - t0
    check_found(res, prob, time_limit)
    layers = []
    for s, sp in enumerate(prob.stages):
        chosen: dict[int, int] = {}
        for (i, j, k), v in xvars[s].items():
            if res.x[v] > 0.5:
                chosen[k] = chosen.get(k, 0) + 1
        layers.append(spread(sp.branches, [(sp.options[k], n) for k, n in chosen.items()]))
    return make_solution(res, secs, layers)
