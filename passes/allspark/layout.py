"""Local-global interaction aware placement (Allspark seed, Sec. VII-B).

Two stages: :func:`structured_layout` (Algorithm 1) packs uniformly sized
``g x m`` sub-arrays on the ``H_A x W_A`` mesh, and :func:`greedy_binding`
binds the branches of an encoder to the sub-arrays of its temporal layers,
always taking the branch with the most already-placed dependencies and
putting it on the free sub-array with the smallest summed Manhattan distance
(between top-left nodes) to them.  :func:`exact_binding` solves the same
binding problem exactly with OR-Tools CP-SAT (small instances only) to
measure how far the greedy is from optimal.

Algorithm 1 in the seed has typos in lines 7 and 9 (``x2 = floor(B/b)``);
we use the evident intent: the strip left over along the longer side of the
sub-array is filled with rotated sub-arrays, ``floor(A'/b) * floor(B/a)``
of them (which reproduces the seed's 3x4, u=2, v=1 example: 6 sub-arrays).

Example::

    >>> [r for r in structured_layout(3, 4, 2, 1)]
    [(0, 0, 2, 1), (0, 1, 2, 1), (0, 2, 2, 1), (0, 3, 2, 1), (2, 0, 1, 2), (2, 2, 1, 2)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Rect = tuple[int, int, int, int]  # row, col, height, width


def _struct(rows: int, cols: int, a: int, b: int) -> list[Rect]:
    """StructLayout(A, B, a, b): an a x b grid, then rotated b x a in the leftover."""
    x1, y1 = rows // a, cols // b
    rects = [(i * a, j * b, a, b) for i in range(x1) for j in range(y1)]
    if x1 == 0 or y1 == 0:
        rects = []
    if a > b:
        r0 = x1 * a
        x2, y2 = (rows - r0) // b, cols // a
        rects += [(r0 + i * b, j * a, b, a) for i in range(x2) for j in range(y2)]
    elif a < b:
        c0 = y1 * b
        x2, y2 = rows // b, (cols - c0) // a
        rects += [(i * b, c0 + j * a, b, a) for i in range(x2) for j in range(y2)]
    return rects


def structured_layout(rows: int, cols: int, u: int, v: int) -> list[Rect]:
    """Algorithm 1: the larger of the two orientations of StructLayout."""
    lx = _struct(rows, cols, u, v)
    ly = _struct(rows, cols, v, u)
    return lx if len(lx) >= len(ly) else ly


def max_subarrays(rows: int, cols: int, u: int, v: int) -> int:
    """N_{alpha,beta} of constraint (1)."""
    return len(structured_layout(rows, cols, u, v))


@dataclass(frozen=True)
class Slot:
    layer: int
    rect: Rect

    @property
    def anchor(self) -> tuple[int, int]:
        return self.rect[0], self.rect[1]


def slots_for(layers: list[tuple[int, int, int]], rows: int, cols: int) -> list[Slot]:
    """Sub-array slots of a stage: ``layers`` is ``[(m, g, count), ...]``."""
    out: list[Slot] = []
    for j, (m, g, count) in enumerate(layers):
        rects = structured_layout(rows, cols, m, g)
        if count > len(rects):
            raise ValueError(f"temporal layer {j}: {count} sub-arrays of {m}x{g} do not fit")
        out += [Slot(j, r) for r in rects[:count]]
    return out


def _adjacency(n: int, edges: list[tuple[int, int]]) -> list[list[int]]:
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    return adj


def greedy_binding(n: int, edges: list[tuple[int, int]], slots: list[Slot]) -> list[int]:
    """Greedy binding: returns ``slot index`` per branch (O(n_br^2))."""
    if len(slots) < n:
        raise ValueError(f"{n} branches but only {len(slots)} sub-array slots")
    adj = _adjacency(n, edges)
    pos = np.array([s.anchor for s in slots], dtype=np.int64).reshape(-1, 2)
    free = np.ones(len(slots), dtype=bool)
    placed = np.full(n, -1, dtype=np.int64)
    score = np.zeros(n, dtype=np.int64)
    for step in range(n):
        if step == 0:
            branch, slot = 0, 0
        else:
            masked = np.where(placed < 0, score, -1)
            branch = int(np.argmax(masked))
            nbs = [placed[x] for x in adj[branch] if placed[x] >= 0]
            if nbs:
                anchors = pos[nbs]
                dist = np.abs(pos[:, None, :] - anchors[None, :, :]).sum(axis=(1, 2))
                dist = np.where(free, dist, np.iinfo(np.int64).max)
                slot = int(np.argmin(dist))
            else:
                slot = int(np.argmax(free))
        placed[branch] = slot
        free[slot] = False
        for x in adj[branch]:
            score[x] += 1
    return [int(x) for x in placed]


def raster_binding(n: int, slots: list[Slot]) -> list[int]:
    """Dependency-oblivious binding (branch i on slot i), a placement baseline (not DDAM)."""
    if len(slots) < n:
        raise ValueError(f"{n} branches but only {len(slots)} sub-array slots")
    return list(range(n))


def random_binding(n: int, slots: list[Slot], seed: int = 0) -> list[int]:
    """Dependency-oblivious binding in a random (seeded) order: the expected hops of a
    placement that ignores both the dependencies and the branches' raster order."""
    if len(slots) < n:
        raise ValueError(f"{n} branches but only {len(slots)} sub-array slots")
    order = np.random.default_rng(seed).permutation(len(slots))[:n]
    return [int(x) for x in order]


def hop_cost(binding: list[int], edges: list[tuple[int, int]], slots: list[Slot]) -> int:
    """Sum over dependencies of the Manhattan distance between top-left nodes."""
    total = 0
    for a, b in edges:
        (ra, ca), (rb, cb) = slots[binding[a]].anchor, slots[binding[b]].anchor
        total += abs(ra - rb) + abs(ca - cb)
    return total


def average_hops(binding: list[int], edges: list[tuple[int, int]], slots: list[Slot]) -> float:
    return hop_cost(binding, edges, slots) / len(edges) if edges else 0.0


MAX_ENUMERATED = 400_000  # bindings enumerated by brute_force_binding


def brute_force_binding(n: int, edges: list[tuple[int, int]],
                        slots: list[Slot]) -> tuple[list[int], int]:
    """Optimal binding by enumerating every injection of branches into slots.

    The independent reference for :func:`exact_binding` on tiny instances
    (at most ``MAX_ENUMERATED`` bindings, e.g. 9 branches on 9 slots).
    """
    import itertools

    k = len(slots)
    if k < n:
        raise ValueError(f"{n} branches but only {k} sub-array slots")
    count = 1
    for i in range(n):
        count *= k - i
    if count > MAX_ENUMERATED:
        raise ValueError(f"brute force would enumerate {count} bindings "
                         f"(limit {MAX_ENUMERATED})")
    perms = np.array(list(itertools.permutations(range(k), n)), dtype=np.int64).reshape(-1, n)
    pos = np.array([s.anchor for s in slots], dtype=np.int64).reshape(-1, 2)
    cost = np.zeros(len(perms), dtype=np.int64)
    for a, b in edges:
        cost += np.abs(pos[perms[:, a]] - pos[perms[:, b]]).sum(axis=1)
    best = int(np.argmin(cost))
    return [int(x) for x in perms[best]], int(cost[best])


@dataclass(frozen=True)
class ExactBinding:
    binding: list[int]
    cost: int
    optimal: bool
    bound: float


def exact_binding(n: int, edges: list[tuple[int, int]], slots: list[Slot],
                  time_limit: float = 10.0, max_branches: int = 24) -> ExactBinding:
    """Optimal binding with CP-SAT (minimum summed hop cost); small instances only."""
    from ortools.sat.python import cp_model

    if n > max_branches:
        raise ValueError(f"exact binding is limited to {max_branches} branches, got {n}")
    if len(slots) < n:
        raise ValueError(f"{n} branches but only {len(slots)} sub-array slots")
    model = cp_model.CpModel()
    rows = [s.anchor[0] for s in slots]
    cols = [s.anchor[1] for s in slots]
    hi = max(rows + cols)
    x = [[model.new_bool_var(f"x{b}_{k}") for k in range(len(slots))] for b in range(n)]
    for b in range(n):
        model.add_exactly_one(x[b])
    for k in range(len(slots)):
        model.add_at_most_one(x[b][k] for b in range(n))
    r = [model.new_int_var(0, hi, f"r{b}") for b in range(n)]
    c = [model.new_int_var(0, hi, f"c{b}") for b in range(n)]
    for b in range(n):
        model.add(r[b] == sum(rows[k] * x[b][k] for k in range(len(slots))))
        model.add(c[b] == sum(cols[k] * x[b][k] for k in range(len(slots))))
    terms = []
    for i, (a, b) in enumerate(edges):
        dr = model.new_int_var(0, hi, f"dr{i}")
        dc = model.new_int_var(0, hi, f"dc{i}")
        model.add_abs_equality(dr, r[a] - r[b])
        model.add_abs_equality(dc, c[a] - c[b])
        terms += [dr, dc]
    model.minimize(sum(terms))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 2
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise ValueError("exact binding found no solution within the time limit")
    binding = [next(k for k in range(len(slots)) if solver.value(x[b][k])) for b in range(n)]
    return ExactBinding(binding, int(round(solver.objective_value)),
                        status == cp_model.OPTIMAL, solver.best_objective_bound)
