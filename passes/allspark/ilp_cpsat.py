"""The compact scheduling ILP solved with OR-Tools CP-SAT: the solver cross-check.

Same variables and constraints as :mod:`steplus.passes.allspark.ilp_compact` (which
HiGHS solves), stated for CP-SAT: every coefficient is an integer (cycles,
whole bytes), so the two solvers must report the same optimum; the tests and
``bench/exp_allspark.py`` compare them (and the literal form of
:mod:`steplus.passes.allspark.ilp`) on small and real instances.

    minimize   sum n[s,k] * T[s,k]
    subject to sum_k n[s,k] * N_k >= N_br[s],  sum_k n[s,k] <= N_br[s]
               y[s,k] <= n[s,k] <= ceil(N_br/N_k) * y[s,k]
               z[s,k] >= y[s,k] - y[s,[1,1]]
               sum_s (W_s y[s,[1,1]] + sum_k w[s,k] z[s,k]) + D <= node_cap
               D >= V_dyn[s,k] * y[s,k]

Example::

    >>> from steplus.passes.allspark.vit import build
    >>> from steplus.dialects.target.pim import preset
    >>> from steplus.passes.allspark.ilp_compact import build_problem, solve_compact
    >>> prob = build_problem(build("swin-t", 224), preset("allspark-16x16"))
    >>> solve_cpsat(prob).objective == solve_compact(prob).objective
    True
"""

from __future__ import annotations

import math
import time

from steplus.passes.allspark.ilp_compact import (
    ONE,
    Problem,
    ScheduleError,
    Solution,
    explain_infeasible,
    spread,
)


def solve_cpsat(prob: Problem, time_limit: float = 60.0, workers: int = 2) -> Solution:
    """Solve the compact ILP with CP-SAT; raise ``ScheduleError`` when infeasible.

    When the time limit stops the search with a feasible schedule, the result has
    status ``time-limit`` and the relative gap to CP-SAT's best bound.
    """
    from ortools.sat.python import cp_model

    if any(not sp.options for sp in prob.stages):
        raise ScheduleError(explain_infeasible(prob))
    model = cp_model.CpModel()
    cap = int(prob.hw.node_cap_bytes)
    dmax = max(int(o.cost.workspace) for sp in prob.stages for o in sp.options)
    dvar = model.new_int_var(0, max(cap, dmax), "D")
    mem: list[cp_model.LinearExprT] = [dvar]
    objective: list[cp_model.LinearExprT] = []
    nvars: list[list[cp_model.IntVar]] = []
    for s, sp in enumerate(prob.stages):
        ns, ys = [], []
        for k, o in enumerate(sp.options):
            ub = math.ceil(sp.branches / o.capacity)
            n = model.new_int_var(0, ub, f"n{s}_{k}")
            y = model.new_bool_var(f"y{s}_{k}")
            model.add(n <= ub * y)
            model.add(n >= y)
            model.add(dvar >= int(o.cost.workspace) * y)
            objective.append(int(o.time) * n)
            ns.append(n)
            ys.append(y)
        model.add(sum(o.capacity * n for o, n in zip(sp.options, ns)) >= sp.branches)
        model.add(sum(ns) <= sp.branches)
        one = next((k for k, o in enumerate(sp.options) if o.scheme == ONE), None)
        for k, o in enumerate(sp.options):
            w = int(o.weight_bytes)
            if not prob.reuse:  # every layer stores its own slice
                mem.append(w * ns[k])
            elif k == one:
                mem.append(w * ys[k])
            else:
                z = model.new_bool_var(f"z{s}_{k}")
                model.add(z >= ys[k] - (ys[one] if one is not None else 0))
                mem.append(w * z)
        nvars.append(ns)
    model.add(sum(mem) <= cap)
    model.minimize(sum(objective))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = workers
    t0 = time.perf_counter()
    status = solver.solve(model)
    secs = time.perf_counter() - t0
    if status == cp_model.INFEASIBLE:
        raise ScheduleError(explain_infeasible(prob))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise ScheduleError(f"no schedule found within the time limit of {time_limit:g} s")
    layers = []
    for sp, ns in zip(prob.stages, nvars):
        chosen = [(o, int(solver.value(n))) for o, n in zip(sp.options, ns)
                  if solver.value(n) > 0]
        layers.append(spread(sp.branches, chosen))
    fun = float(solver.objective_value)
    bound = float(solver.best_objective_bound)
    gap = (fun - bound) / fun if fun else 0.0
    optimal = status == cp_model.OPTIMAL
    return Solution("optimal" if optimal else "time-limit", fun, bound,
                    0.0 if optimal else gap, secs, layers)
