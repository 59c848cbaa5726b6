"""`step-allocate-units`: PCUs and PMUs for every operator, sections when the chip is full.

The SN40L seed's Fig. 4: a streaming pipeline runs at the pace of its
slowest stage, so compute units go to operators in proportion to their FLOPs
and memory units to buffers by capacity and bandwidth. Per operator `i` of a
section (numbers from `step-metrics`' rules on the bound graph):

- `F_i`: its FLOPs; it gets `x_i >= 1` PCUs of `pcu-flops` FLOPs/cycle;
- `B_i`: the bytes it reads from memory units (inputs that come from
  off-chip loads, possibly repeated); it gets `y_i` PMUs of `pmu-bw`
  B/cycle of read bandwidth, at least `ceil(onchip_i / pmu-bytes)` of them
  for capacity (its tile, accumulator or repeated buffer);
- operators without FLOPs (loads, repeats, ...) get the PMUs their on-chip
  bytes need.

The pass maximizes the pipeline rate `r` (1 / the cycles of the slowest
stage): `x_i pcu_flops >= r F_i`, `y_i pmu_bw >= r B_i`, `sum x <= pcus`,
`sum y + fixed PMUs <= pmus` — a MILP solved with HiGHS
(`scipy.optimize.milp`, `solver=milp`, the default) or by the greedy
water-filling (`solver=greedy`: start at the minimum, give the next unit to
the operator with the largest work per unit; for this separable max-min
problem it reaches the same rate, which the tests check against the MILP on
small graphs; the MILP is used to confirm it, and the greedy is the fallback
if the solver fails).

Sectioning: when the operators' minimum needs (one PCU per computing
operator, the capacity PMUs, on-chip bytes against `pmus x pmu-bytes`)
exceed the chip, the graph is cut, in graph order, into sections that fit —
each a kernel (`steplus.passes.sn40l.kernels`), run one after the other with
its intermediates in HBM. An operator that alone exceeds the chip is an
error naming it. A load of a symbol (`sn40l.symbol`) that an earlier
operator of the same section stores also starts a new section (a memory
dependence: the phases of a layer the route chains through memory,
`examples/workloads/sn40l_route.py`). The remark says why each section after
the first starts (`section_cuts`: a memory dependence, naming the symbols, or
a full chip), with the units the previous section would need if joined.

Annotations: every computing operator gets `compute_bw = x_i * pcu_flops`,
`pmu_bw = y_i * pmu_bw` (read by the simulator) and `sn40l.pcus`,
`sn40l.pmus`; each graph (or section kernel) gets `sn40l.pcus_used`,
`sn40l.pmus_used`, `sn40l.sections`; a remark reports the units per section.

The chip: each option left at 0 comes from the module's `#target.sn40l`
attribute (`target.sn40l = #target.sn40l<{pcus = 520 : i64}>`,
`dialects/target/attrs.py`) when it has one, else from the SN40L table
(`dialects/target/sn40l.py`: 1040 PCUs and PMUs of 512 KiB, 383 FLOPs/cycle
per PCU, 64 B/cycle per PMU read port); an option given is used as given.

Example: `step-opt test/filecheck/passes/inputs/sn40l-tiny.mlir -p
'step-allocate-units{solver=greedy}'` (a matmul, an exp, a sum and a mul with
FLOPs 32 : 4 : 1 : 1) gives them 874, 110, 28 and 28 PCUs (`compute_bw =
334742` for the matmul) and the remark `@g: 1 section(s); section 0:
1040/1040 PCUs, 1040/1040 PMUs (greedy)`; with `pcus=2` the graph becomes two
sections `@g_k0`, `@g_k1` of two operators each.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import sys
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import to_expr
from steplus.dialects.step.types import StreamType
from steplus.utils.diagnostics import OpDiagnosticError, emit
from steplus.dialects.target.attrs import sn40l_target_of
from steplus.dialects.target.fabric import sn40l_config
from steplus.dialects.target.sn40l import SN40L, Param, value
from steplus.dialects.sn40l_attrs import (
    KERNEL, PCUS, PCUS_USED, PMUS, PMUS_USED, SECTIONS, SYMBOL,
)
from steplus.dialects.step.discardable import COMPUTE_BW, FANOUT_DEPTH, PMU_BW
from steplus.passes.sn40l.kernels import (
    assign, ensure_names, tile_bytes, is_anchor, replace_graph, source, split, static_int,
    users,
)
from steplus.passes.step.metrics import cardinality, compute_metrics

SOLVERS = ("milp", "greedy")
MAX_MILP_OPS = 2000
"""Above this many operators per section the greedy allocation is used directly."""


@dataclass
class Demand:
    op: Operation
    flops: int  # F_i
    mu_bytes: int  # B_i
    cap_pmus: int  # PMUs for capacity


@dataclass
class Allocation:
    pcus: list[int]
    pmus: list[int]
    rate: float  # 1 / cycles of the slowest stage (0: nothing to compute)
    solver: str


@dataclass(frozen=True)
class Chip:
    pcus: int
    pmus: int
    pcu_flops: int
    pmu_bytes: int
    pmu_bw: int


def chip_of(table: dict[str, Param], *, pcus: int = 0, pmus: int = 0, pcu_flops: int = 0,
            pmu_bytes: int = 0, pmu_bw: int = 0) -> Chip:
    """The chip of an SN40L parameter table, with the fields given (non-zero) instead.
    A PMU's read port is the `sn40l` preset's (`sn40l_config`, the one mapping from the
    table to the fabric: half of `pmu_gbps_each`, reads and writes being concurrent)."""
    return Chip(pcus or int(value("pcus", table)), pmus or int(value("pmus", table)),
                pcu_flops or int(value("pcu_flops", table)),
                pmu_bytes or int(value("pmu_bytes", table)),
                pmu_bw or sn40l_config(table).pmu_bw)


def _int(e, op: Operation, what: str) -> int:
    return static_int(e, op, what, "step-allocate-units")


def _from_memory(v) -> bool:
    """Whether a stream's tiles live in memory units (an off-chip load's, repeated or not)."""
    for _ in range(64):
        v = source(v)
        owner = v.owner
        if isinstance(owner, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)):
            return True
        if isinstance(owner, (sr.RepeatOp, sr.FlattenOp, sr.ExpandOp, sr.PromoteOp)):
            v = owner.operands[0]
            continue
        return False
    return False


def demands(graph: GraphOp, chip: Chip) -> list[Demand]:
    """Per op: FLOPs, bytes read from memory units, PMUs for capacity."""
    gm = compute_metrics(graph)
    out = []
    for m in gm.ops:
        op = m.op
        deep = FANOUT_DEPTH.get(op) if isinstance(op, sr.BroadcastOp) else None
        if deep:  # a fan-out's buffers: `fanout_depth` tiles per output, in memory units
            held = deep * len(op.results) * tile_bytes(cast(StreamType, op.operands[0].type))
            out.append(Demand(op, 0, 0, -(-held // chip.pmu_bytes)))
            continue
        if isinstance(op, (sr.ZipOp, sr.BroadcastOp, sr.ConsumeOp)):
            continue
        flops = _int(m.flops, op, "FLOPs")
        onchip = _int(m.onchip, op, "on-chip bytes")
        mu = 0
        if flops:
            ins = [v for v in op.operands]
            ins = [w for v in ins for w in (v.owner.operands if isinstance(v.owner, sr.ZipOp)
                                            else [v])]
            for v in ins:
                if _from_memory(v):
                    t = cast(StreamType, v.type)  # an operand of a verified step op
                    n = cardinality([to_expr(d) for d in t.dims])  # ragged: sum_L
                    mu += _int(n, op, "input size") * tile_bytes(t)
        cap = -(-onchip // chip.pmu_bytes)
        if cap > chip.pmus:
            raise OpDiagnosticError(op, f"step-allocate-units: {op.name} needs {onchip} B on "
                                        f"chip ({cap} PMUs), more than the chip's {chip.pmus} "
                                        f"PMUs x {chip.pmu_bytes} B: no sectioning fits it")
        out.append(Demand(op, flops, mu, cap))
    return out


def _water_fill(work: list[int], units: list[int], pool: int) -> None:
    """Spend `pool` units (beyond `units`, the minimum) so that max(work/units)
    is smallest: each unit to the op with the most work per unit. A
    proportional share first, so the loop runs at most ~2 x len(work) times
    whatever the pool size."""
    idx = [i for i, w in enumerate(work) if w]
    spare = pool - sum(units)
    if not idx or spare <= 0:
        return
    total = sum(work[i] for i in idx)
    share = {i: max(units[i], (spare * work[i]) // total) for i in idx}
    if sum(share.values()) - sum(units[i] for i in idx) <= spare:
        for i in idx:  # never more than a unit below the water level
            units[i] = share[i]
    heap = [(-work[i] / units[i], i) for i in idx]
    heapq.heapify(heap)
    for _ in range(pool - sum(units)):
        _, i = heapq.heappop(heap)
        units[i] += 1
        heapq.heappush(heap, (-work[i] / units[i], i))


def greedy(ds: list[Demand], chip: Chip) -> Allocation | None:
    """Water-filling: the minimum, then each unit to the op with the most work per unit."""
    x = [1 if d.flops else 0 for d in ds]
    y = [max(d.cap_pmus, 1 if d.mu_bytes else 0) for d in ds]
    if sum(x) > chip.pcus or sum(y) > chip.pmus:
        return None
    _water_fill([d.flops for d in ds], x, chip.pcus)
    _water_fill([d.mu_bytes for d in ds], y, chip.pmus)
    return Allocation(x, y, _rate(ds, x, y, chip), "greedy")


def _rate(ds: list[Demand], x: list[int], y: list[int], chip: Chip) -> float:
    times = [d.flops / (x[i] * chip.pcu_flops) for i, d in enumerate(ds) if d.flops]
    times += [d.mu_bytes / (y[i] * chip.pmu_bw) for i, d in enumerate(ds) if d.mu_bytes]
    return 1 / max(times) if times and max(times) > 0 else 0.0


@contextlib.contextmanager
def _quiet_stdout():
    """File descriptor 1 to /dev/null for the duration (native code's prints)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def milp_allocation(ds: list[Demand], chip: Chip) -> Allocation | None:
    """The same problem as one MILP (HiGHS); None if infeasible or the solver fails."""
    from scipy.optimize import milp

    n = len(ds)
    if not any(d.flops or d.mu_bytes for d in ds):
        return greedy(ds, chip)
    # variables: x_0..x_{n-1}, y_0..y_{n-1}, r' (the rate scaled by `scale`)
    work = max([d.flops / chip.pcu_flops for d in ds] + [d.mu_bytes / chip.pmu_bw for d in ds])
    scale = 1.0 / work  # r = scale * r', r' in [0, pcus + pmus]
    rows, lo, hi = [], [], []
    for i, d in enumerate(ds):
        if d.flops:  # x_i pcu_flops - r F_i >= 0
            a = np.zeros(2 * n + 1)
            a[i] = chip.pcu_flops
            a[-1] = -scale * d.flops
            rows.append(a)
            lo.append(0)
            hi.append(np.inf)
        if d.mu_bytes:
            a = np.zeros(2 * n + 1)
            a[n + i] = chip.pmu_bw
            a[-1] = -scale * d.mu_bytes
            rows.append(a)
            lo.append(0)
            hi.append(np.inf)
    a = np.zeros(2 * n + 1)
    a[:n] = 1
    rows.append(a)
    lo.append(0)
    hi.append(chip.pcus)
    a = np.zeros(2 * n + 1)
    a[n:2 * n] = 1
    rows.append(a)
    lo.append(0)
    hi.append(chip.pmus)
    xlo = [1 if d.flops else 0 for d in ds] + [max(d.cap_pmus, 1 if d.mu_bytes else 0)
                                                for d in ds] + [0]
    xhi = [chip.pcus if d.flops else 0 for d in ds] + [chip.pmus] * n + [np.inf]
    c = np.zeros(2 * n + 1)
    c[-1] = -1
    integrality = np.ones(2 * n + 1)
    integrality[-1] = 0
    try:
        with _quiet_stdout():  # HiGHS may print from C++ to fd 1, where the IR goes
            # (A, lb, ub) and (lb, ub): what milp converts to LinearConstraint
            # and Bounds itself (their constructors are typed float by default)
            res = milp(c, constraints=(np.array(rows), lo, hi),
                       integrality=integrality, bounds=(xlo, xhi),
                       options={"time_limit": 20.0})
    except (ValueError, np.linalg.LinAlgError):
        return None
    if res.x is None or res.status not in (0, 1):
        return None
    x = [int(round(v)) for v in res.x[:n]]
    y = [int(round(v)) for v in res.x[n:2 * n]]
    if sum(x) > chip.pcus or sum(y) > chip.pmus:
        return None
    return Allocation(x, y, _rate(ds, x, y, chip), "milp")


def allocate(ds: list[Demand], chip: Chip, solver: str = "milp") -> Allocation | None:
    """The allocation of one section (None: it does not fit the chip)."""
    if solver == "greedy" or len(ds) > MAX_MILP_OPS:
        return greedy(ds, chip)
    return milp_allocation(ds, chip) or greedy(ds, chip)


def _fits(ds: list[Demand], chip: Chip) -> bool:
    pcus, pmus = _needs(ds)
    return pcus <= chip.pcus and pmus <= chip.pmus


@dataclass(frozen=True)
class Cut:
    """Why a section starts where it does (every section but the first has one).

    `reason` is `"memory"` (the anchor loads `symbols` that an anchor of the previous
    section stores: a memory dependence) or `"capacity"` (the previous section with this
    anchor would need `pcus` PCUs / `pmus` PMUs, more than the chip has); `pcus` / `pmus`
    are always what the previous section plus this anchor would need."""

    section: int
    anchor: Operation
    reason: str
    symbols: tuple[str, ...]
    pcus: int
    pmus: int

    def text(self, chip: Chip) -> str:
        need = f"{self.pcus}/{chip.pcus} PCUs, {self.pmus}/{chip.pmus} PMUs if joined"
        if self.reason == "memory":
            syms = ", ".join(f"'{s}'" for s in self.symbols)
            return f"cut at a load of {syms} stored in section {self.section - 1} " \
                   f"(memory dependence; {need})"
        return f"cut: the chip is full ({need})"


def _needs(ds: list[Demand]) -> tuple[int, int]:
    return (sum(1 for d in ds if d.flops),
            sum(max(d.cap_pmus, 1 if d.mu_bytes else 0) for d in ds))


def section_cuts(graph: GraphOp, chip: Chip) -> tuple[dict[Operation, int], list[Cut]]:
    """Section index of every anchor (greedy in graph order, each section fits the chip) and,
    for every section after the first, why it starts (`Cut`)."""
    ds = demands(graph, chip)
    anchors = [op for op in graph.body.block.ops if is_anchor(op)]
    if not anchors:  # pure data movement (a copy, a slice): one section, nothing to split
        return {}, []
    # an anchor's section also holds the follower ops it consumes (loads, repeats)
    whole = {d.op: d for d in ds}
    of = assign(graph, {a: i for i, a in enumerate(anchors)})
    per_anchor: list[list[Demand]] = [[] for _ in anchors]
    for op, ks in of.items():
        if op in whole:
            for k in ks:
                per_anchor[k].append(whole[op])
    # a deep fan-out's buffers (not an op a kernel keeps: `assign` dissolves broadcasts)
    # count in the sections of its consumers
    for d in ds:
        if isinstance(d.op, sr.BroadcastOp):
            for r in d.op.results:
                for u, _ in users(r):
                    for k in of.get(u, ()):
                        if d not in per_anchor[k]:
                            per_anchor[k].append(d)
    # memory dependences: a load of a symbol a store of an earlier anchor writes
    # (sn40l.symbol on both: the phases of a layer chained through memory) starts
    # a new section, so the store has finished before the load reads
    stores: list[set[str]] = [set() for _ in anchors]
    loads: list[set[str]] = [set() for _ in anchors]
    for op, ks in of.items():
        sym = SYMBOL.get(op)
        if sym is None:
            continue
        for k in ks:
            if isinstance(op, (so.LinearOffChipStoreOp, so.RandomOffChipStoreOp)):
                stores[k].add(sym)
            elif isinstance(op, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)):
                loads[k].add(sym)
    section: dict[Operation, int] = {}
    cuts: list[Cut] = []
    current: list[Demand] = []
    written: set[str] = set()  # symbols the current section's anchors store
    k = 0
    for i, a in enumerate(anchors):
        trial = current + [d for d in per_anchor[i] if d not in current]
        if current and (not _fits(trial, chip) or loads[i] & written):
            k += 1
            dep = tuple(sorted(loads[i] & written))
            cuts.append(Cut(k, a, "capacity" if not _fits(trial, chip) else "memory", dep,
                            *_needs(trial)))
            written = set()
            trial = list(per_anchor[i])
        written |= stores[i]
        if not _fits(trial, chip):
            raise OpDiagnosticError(a, f"step-allocate-units: {a.name} and its inputs need "
                                       "more units than the chip has: no sectioning fits it")
        current = trial
        section[a] = k
    return section, cuts


def annotate(graph: GraphOp, chip: Chip, solver: str) -> tuple[int, int, str]:
    """Allocate the units of one section graph; (PCUs, PMUs used, solver)."""
    ds = demands(graph, chip)
    alloc = allocate(ds, chip, solver)
    if alloc is None:
        raise OpDiagnosticError(graph, "step-allocate-units: the section does not fit the chip")
    for d, x, y in zip(ds, alloc.pcus, alloc.pmus):
        if d.flops:
            COMPUTE_BW.set(d.op, x * chip.pcu_flops)
            PCUS.set(d.op, x)
        if d.mu_bytes:
            PMU_BW.set(d.op, y * chip.pmu_bw)
        if y:
            PMUS.set(d.op, y)
    used = sum(alloc.pcus), sum(alloc.pmus)
    PCUS_USED.set(graph, used[0])
    PMUS_USED.set(graph, used[1])
    return used[0], used[1], alloc.solver


@dataclass(frozen=True)
class StepAllocateUnitsPass(ModulePass):
    """Give operators PCUs by FLOPs and PMUs by capacity/bandwidth; split into sections that fit.

    See the module doc. Options left at 0 come from the module's
    `#target.sn40l`, else from one SN40L socket of the seed (1040 PCUs and
    PMUs of 512 KiB; 383 FLOPs/cycle per PCU and 64 B/cycle per PMU read port,
    as in the `sn40l` preset).
    """

    name = "step-allocate-units"

    pcus: int = 0
    """Pattern compute units available (0: the target's, 1040 for the seed's socket)."""
    pmus: int = 0
    """Pattern memory units available (0: the target's, 1040)."""
    pcu_flops: int = 0
    """FLOPs per cycle of one PCU (0: the target's, 383)."""
    pmu_bytes: int = 0
    """Capacity of one PMU in bytes (0: the target's, 524288)."""
    pmu_bw: int = 0
    """Read bandwidth of one PMU port in bytes per cycle (0: the target's, 64)."""
    solver: str = "milp"
    """`milp`: the optimal allocation (scipy's MILP); `greedy`: water-filling from the minimum.
    One of: milp, greedy."""

    def __post_init__(self) -> None:
        for f in ("pcus", "pmus", "pcu_flops", "pmu_bytes", "pmu_bw"):
            v = getattr(self, f)
            if not isinstance(v, int) or not 0 <= v <= 1 << 40:
                raise ValueError(f"{f.replace('_', '-')} must be a positive integer or 0 "
                                 f"(the target's), got {v}")
        if self.solver not in SOLVERS:
            raise ValueError(f"unknown solver '{self.solver}' (choose from milp, greedy)")

    def chip(self, module: ModuleOp) -> Chip:
        """The options given, the rest from the module's `#target.sn40l` or the table."""
        try:
            target = sn40l_target_of(module)
        except ValueError as e:
            raise OpDiagnosticError(module, f"step-allocate-units: {e}") from None
        table = target.table() if target is not None else SN40L
        return chip_of(table, pcus=self.pcus, pmus=self.pmus, pcu_flops=self.pcu_flops,
                       pmu_bytes=self.pmu_bytes, pmu_bw=self.pmu_bw)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        chip = self.chip(op)
        todo = [g for g in op.walk() if isinstance(g, GraphOp)]
        for g in todo:
            if KERNEL.present(g):  # already a kernel: allocate it whole
                pcu, pmu, how = annotate(g, chip, self.solver)
                emit(g, "remark", f"step-allocate-units: @{g.sym_name.data}: {pcu}/{chip.pcus} "
                                  f"PCUs, {pmu}/{chip.pmus} PMUs ({how})")
                continue
            ensure_names(g)
            sec, cuts = section_cuts(g, chip)
            n = max(sec.values(), default=0) + 1
            parts = [g] if n == 1 else split(g, assign(g, sec), "step-allocate-units")
            lines = []
            for k, part in enumerate(parts):
                pcu, pmu, how = annotate(part, chip, self.solver)
                SECTIONS.set(part, n)
                why = f", {cuts[k - 1].text(chip)}" if k else ""
                lines.append(f"section {k}: {pcu}/{chip.pcus} PCUs, {pmu}/{chip.pmus} PMUs "
                             f"({how}){why}")
            emit(g, "remark", f"step-allocate-units: @{g.sym_name.data}: {n} section(s); "
                              + "; ".join(lines))
            if n > 1:
                replace_graph(op, g, parts)
