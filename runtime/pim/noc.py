"""Link-level simulation of a 2D-mesh NoC with XY routing and link contention.

Each directed link carries one flit per cycle.  A message of ``F`` flits
routed over ``H`` links (dimension order: X first, then Y) is modelled as
virtual cut-through: its head enters link ``k`` at
``start_k = max(start_{k-1} + router_delay, free_k)`` and holds the link for
``F`` cycles; it arrives at ``start_{H-1} + F``.  Messages are served
first-come first-served (by ready time, then by order).  Without contention
a message takes exactly ``H * router_delay + F`` cycles; any extra is waiting
on a busy link, which the result reports.

:func:`simulate_layer` replays the cyclic dataflows of one temporal layer
(Allspark Sec. V-B: vertical rings over the ``m`` patch nodes for K, V and the
shared weights, horizontal rings over the ``g`` head groups for the gathers)
on every sub-array of the layer at once, one barrier-synchronised round at a
time, so it can be compared with the analytical ``T_t + T_ws``.

Example::

    >>> sim = simulate([Message((0, 0), (0, 2), 64)], rows=1, cols=3, flit_bytes=8)
    >>> sim.makespan, sim.wait_cycles
    (10, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from steplus.passes.allspark.layout import slots_for
from steplus.passes.allspark.orchestrate import layer_rects
from steplus.passes.allspark.partition import ring_phases
from steplus.passes.allspark.vit import dependency_edges

Node = tuple[int, int]
Link = tuple[Node, Node]


@dataclass(frozen=True)
class Message:
    src: Node
    dst: Node
    nbytes: int
    ready: int = 0


@dataclass(frozen=True)
class SimResult:
    finish: list[int]  # arrival cycle of each message
    makespan: int
    wait_cycles: int  # cycles lost waiting for busy links, summed over messages
    hops: int  # total link traversals
    max_link_messages: int  # most messages sharing one link


def xy_route(src: Node, dst: Node) -> list[Link]:
    """Dimension-order route: along the row (X) first, then the column (Y)."""
    (r, c), (r2, c2) = src, dst
    links: list[Link] = []
    while c != c2:
        nc = c + (1 if c2 > c else -1)
        links.append(((r, c), (r, nc)))
        c = nc
    while r != r2:
        nr = r + (1 if r2 > r else -1)
        links.append(((r, c), (nr, c)))
        r = nr
    return links


def simulate(messages: list[Message], rows: int, cols: int, flit_bytes: int = 8,
             router_delay: int = 1) -> SimResult:
    """Simulate ``messages`` on a ``rows x cols`` mesh; return arrival times."""
    for m in messages:
        for r, c in (m.src, m.dst):
            if not (0 <= r < rows and 0 <= c < cols):
                raise ValueError(f"node ({r},{c}) is outside the {rows}x{cols} mesh")
        if m.nbytes < 0:
            raise ValueError("message size must be non-negative")
    free: dict[Link, int] = {}
    users: dict[Link, int] = {}
    finish = [0] * len(messages)
    wait = hops = 0
    order = sorted(range(len(messages)), key=lambda i: (messages[i].ready, i))
    for i in order:
        m = messages[i]
        flits = math.ceil(m.nbytes / flit_bytes)
        route = xy_route(m.src, m.dst)
        if not route or flits == 0:
            finish[i] = m.ready
            continue
        t = m.ready
        for link in route:
            earliest = t + router_delay
            start = max(earliest, free.get(link, 0))
            wait += start - earliest
            free[link] = start + flits
            users[link] = users.get(link, 0) + 1
            t = start
        finish[i] = t + flits
        hops += len(route)
    return SimResult(finish, max(finish, default=0), wait, hops, max(users.values(), default=0))


Rect = tuple[int, int, int, int]


def ring_messages(rect: Rect, along_rows: bool, nbytes: int) -> list[Message]:
    """One round of cyclic transfers in every line of a sub-array.

    ``along_rows``: rings run down each column (node k sends to k+1, the last
    to the first); otherwise along each row.
    """
    r0, c0, h, w = rect
    out = []
    lines = range(w) if along_rows else range(h)
    length = h if along_rows else w
    if length < 2:
        return out
    for line in lines:
        for k in range(length):
            nxt = (k + 1) % length
            if along_rows:
                out.append(Message((r0 + k, c0 + line), (r0 + nxt, c0 + line), nbytes))
            else:
                out.append(Message((r0 + line, c0 + k), (r0 + line, c0 + nxt), nbytes))
    return out


@dataclass(frozen=True)
class Phase:
    """``rounds`` rounds of ring transfers of ``nbytes`` per node."""

    name: str
    patch_ring: bool  # True: over the m patch nodes; False: over the g groups
    rounds: int
    nbytes: int


@dataclass(frozen=True)
class LayerSim:
    simulated: int  # cycles
    analytical: int  # cycles, sum of rounds * flits
    wait_cycles: int
    max_link_messages: int


def simulate_layer(rects: list[Rect], m: int, g: int, phases: list[Phase], rows: int,
                   cols: int, flit_bytes: int = 8, router_delay: int = 1) -> LayerSim:
    """Replay the ring phases of one temporal layer on all its sub-arrays at once.

    A rect of height ``m`` (natural orientation) runs patch rings down its
    columns; a rotated rect (height ``g``) runs them along its rows.
    """
    sim_total = ana_total = wait = worst = 0
    for ph in phases:
        if ph.rounds <= 0 or ph.nbytes <= 0:
            continue
        msgs: list[Message] = []
        for rect in rects:
            natural = rect[2] == m and (rect[3] == g or m != g)
            along_rows = ph.patch_ring == natural
            msgs += ring_messages(rect, along_rows, ph.nbytes)
        if not msgs:
            continue
        res = simulate(msgs, rows, cols, flit_bytes, router_delay)
        sim_total += ph.rounds * res.makespan
        ana_total += ph.rounds * math.ceil(ph.nbytes / flit_bytes)
        wait += ph.rounds * res.wait_cycles
        worst = max(worst, res.max_link_messages)
    return LayerSim(sim_total, ana_total, wait, worst)


def mesh_neighbour(node: Node, rows: int, cols: int) -> Node:
    """The node ``node`` fetches streamed weights from: its predecessor on the
    boustrophedon path through the mesh (row 0 left to right, row 1 back, ...), the
    path's first node from its successor; one hop, and no two nodes share a link."""
    r, c = node
    if r == 0 and c == 0:
        return (0, 1) if cols > 1 else ((1, 0) if rows > 1 else node)
    if r % 2 == 0:
        return (r, c - 1) if c > 0 else (r - 1, 0)
    return (r, c + 1) if c < cols - 1 else (r - 1, c)


def neighbour_messages(rects: list[Rect], rows: int, cols: int, nbytes: int) -> list[Message]:
    """Every node of ``rects`` receives ``nbytes`` from its :func:`mesh_neighbour`."""
    out = []
    for r0, c0, h, w in rects:
        for r in range(r0, r0 + h):
            for c in range(c0, c0 + w):
                src = mesh_neighbour((r, c), rows, cols)
                if src != (r, c):
                    out.append(Message(src, (r, c), nbytes))
    return out


Grid = list[list[Node]]  # grid[gi][mi]: the node of head group gi, patch chunk mi


def snake_grids(count: int, m: int, g: int, rows: int, cols: int) -> list[Grid]:
    """``count`` branches on consecutive runs of ``g*m`` nodes in boustrophedon order.

    A zig-zag layout (as in TANGRAM-style mappers) that ignores rectangles: the
    comparison point for the structured layout's claim to avoid contention.
    """
    order = [(r, c if r % 2 == 0 else cols - 1 - c) for r in range(rows) for c in range(cols)]
    if count * g * m > len(order):
        raise ValueError(f"{count} sub-arrays of {g * m} nodes exceed the {rows}x{cols} mesh")
    grids = []
    for b in range(count):
        chunk = order[b * g * m:(b + 1) * g * m]
        grids.append([[chunk[gi * m + mi] for mi in range(m)] for gi in range(g)])
    return grids


def grid_ring_messages(grid: Grid, patch_ring: bool, nbytes: int) -> list[Message]:
    """One round of the cyclic transfers of one branch laid out as ``grid``."""
    g, m = len(grid), len(grid[0])
    out = []
    if patch_ring and m > 1:
        for gi in range(g):
            out += [Message(grid[gi][k], grid[gi][(k + 1) % m], nbytes) for k in range(m)]
    elif not patch_ring and g > 1:
        for mi in range(m):
            out += [Message(grid[k][mi], grid[(k + 1) % g][mi], nbytes) for k in range(g)]
    return out


def simulate_grids(grids: list[Grid], phases: list[Phase], rows: int, cols: int,
                   flit_bytes: int = 8, router_delay: int = 1) -> LayerSim:
    """:func:`simulate_layer` for branches laid out on arbitrary node grids."""
    sim_total = ana_total = wait = worst = 0
    for ph in phases:
        if ph.rounds <= 0 or ph.nbytes <= 0:
            continue
        msgs = [msg for grid in grids for msg in grid_ring_messages(grid, ph.patch_ring,
                                                                    ph.nbytes)]
        if not msgs:
            continue
        res = simulate(msgs, rows, cols, flit_bytes, router_delay)
        sim_total += ph.rounds * res.makespan
        ana_total += ph.rounds * math.ceil(ph.nbytes / flit_bytes)
        wait += ph.rounds * res.wait_cycles
        worst = max(worst, res.max_link_messages)
    return LayerSim(sim_total, ana_total, wait, worst)


@dataclass(frozen=True)
class ScheduleCheck:
    """Simulated vs analytical NoC time (T_t + T_ws) of a whole schedule."""

    simulated: int  # cycles
    analytical: int  # cycles, eqs. 13-14
    wait_cycles: int  # contention stalls
    max_link_messages: int

    @property
    def deviation(self) -> float:
        return (self.simulated - self.analytical) / self.analytical if self.analytical else 0.0


def check_schedule(result: object, layout: str = "structured") -> ScheduleCheck:
    """Simulate every temporal layer of an orchestration result on the mesh.

    ``result`` is a :class:`steplus.passes.allspark.orchestrate.Result`; identical
    layers (same stage and scheme and branch count) are simulated once.
    ``layout="snake"`` puts the sub-arrays on zig-zag runs of nodes instead of
    Algorithm 1's rectangles (:func:`snake_grids`).
    """
    if layout not in ("structured", "snake"):
        raise ValueError(f"unknown layout '{layout}' (structured or snake)")
    hw = result.hw  # type: ignore[attr-defined]
    bpe = hw.bytes_per_elem
    sim = ana = wait = worst = 0
    cache: dict[tuple[int, int, int, int], LayerSim] = {}
    for st, rep in zip(result.model.stages, result.stages):  # type: ignore[attr-defined]
        for lay in rep.layers:
            key = (st.index, lay.scheme.g, lay.scheme.m, lay.branches)
            if key not in cache:
                batch = getattr(result, "batch", 1)  # weights are shared once per batch
                phases = [Phase(p.name, p.patch_ring,
                                p.rounds * (1 if p.name.startswith("ws") else batch),
                                p.elems * bpe)
                          for p in ring_phases(st, lay.scheme)]
                if layout == "snake":
                    grids = snake_grids(lay.branches, lay.scheme.m, lay.scheme.g, hw.rows,
                                        hw.cols)
                    cache[key] = simulate_grids(grids, phases, hw.rows, hw.cols,
                                                hw.link_bytes_per_cycle, hw.router_delay_cycles)
                else:
                    cache[key] = simulate_layer(layer_rects(hw, lay), lay.scheme.m,
                                                lay.scheme.g, phases, hw.rows, hw.cols,
                                                hw.link_bytes_per_cycle, hw.router_delay_cycles)
            ls = cache[key]
            sim += ls.simulated
            ana += lay.cost.transfer + lay.cost.sharing
            wait += ls.wait_cycles
            worst = max(worst, ls.max_link_messages)
    return ScheduleCheck(sim, ana, wait, worst)


@dataclass(frozen=True)
class InteractionCheck:
    """Local-global interaction transfers of one stage between sub-array anchors."""

    simulated: int  # makespan with contention, cycles
    contention_free: int  # max over messages of hops * delay + flits
    wait_cycles: int


def interaction_check(result: object, stage: int,
                      binding: list[int] | None = None) -> InteractionCheck:
    """Send every dependency's feature map (N*C elements) between the top-left
    nodes of the two sub-arrays at once (step ii of the seed's Fig. 10)."""

    hw = result.hw  # type: ignore[attr-defined]
    st = result.model.stages[stage]  # type: ignore[attr-defined]
    rep = result.stages[stage]  # type: ignore[attr-defined]
    edges = dependency_edges(st)
    bind = binding if binding is not None else rep.binding
    if not edges or not bind:
        return InteractionCheck(0, 0, 0)
    slots = slots_for([(lay.scheme.m, lay.scheme.g, lay.branches) for lay in rep.layers],
                      hw.rows, hw.cols)
    nbytes = st.tokens * st.channels * hw.bytes_per_elem
    msgs = []
    for a, b in edges:
        pa, pb = slots[bind[a]].anchor, slots[bind[b]].anchor
        msgs += [Message(pa, pb, nbytes), Message(pb, pa, nbytes)]
    res = simulate(msgs, hw.rows, hw.cols, hw.link_bytes_per_cycle, hw.router_delay_cycles)
    flits = math.ceil(nbytes / hw.link_bytes_per_cycle)
    free = max((len(xy_route(m.src, m.dst)) * hw.router_delay_cycles + flits
                for m in msgs if m.src != m.dst), default=0)
    return InteractionCheck(res.makespan, free, res.wait_cycles)
