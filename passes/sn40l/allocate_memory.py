"""`step-allocate-memory{hbm=64GiB ddr=1536GiB}`: HBM/DDR addresses by lifetime, spills to DDR.

The SN40L seed's §V-A, on the off-chip tensors (*symbols*) of a graph or of
the kernels one graph was cut into (`step-kernelize`, sections of
`step-allocate-units`), which run in order:

1. **Lifetimes.** A symbol is identified by its address (`base_addr`; the
   cut streams also carry `sn40l.symbol`); its size is the largest tensor
   an op reads or writes there (a load's `tiled_in_shape` tiles, a store's
   stream). It lives from the first kernel that touches it to the last;
   a symbol that is only read (weights, inputs) lives from the start, one
   that is only written (outputs) to the end. There is no dynamic
   allocation and no aliasing, so this is exact.
2. **HBM by default, shared addresses.** Symbols are placed largest first
   at the lowest HBM offset that overlaps no placed symbol whose lifetime
   overlaps theirs: symbols with disjoint lifetimes share addresses.
3. **Spilling.** While the placement exceeds `hbm`, the symbol with the
   smallest *transfer footprint* (bytes all its loads and stores move over
   the run: the bandwidth it would need from DDR) moves to DDR, and HBM is
   placed again (ties: the smaller symbol, then the lower address, then the
   last layer's copy). This is the seed's rule (§V-A: "sorted by their
   aggregate transfer size, so that we will spill symbols with the smallest
   bandwidth requirement first"); the pass applies the rule, not the seed's
   observation that LLM weights end up staying in HBM. In a decode step every
   weight and every KV cache is read once, so its footprint is its size: the
   activations (a few KiB each) spill first, then the smallest weights (norm
   weights, attention projections) before the larger FFN weights and the KV
   caches; a symbol read several times per run (a weight re-read per output
   tile) counts each read and stays longer.
4. **DDR.** The spilled symbols are placed in DDR the same way; if they do
   not fit `ddr` either, the pass fails naming the largest symbols.

Output: every load/store gets `base_addr` = its symbol's offset in its tier
and `sn40l.tier = "hbm"` or `"ddr"` (the simulator sends DDR ops to the DDR
channels, `runtime/fabric/ddr.py`); read-only symbols' ops get
`sn40l.readonly` (a CoE runtime need not copy them back). Each graph gets
`sn40l.hbm_bytes` / `sn40l.ddr_bytes` (peak). A remark gives the totals and
the spill list; `out=FILE` writes the address map and the spill list as
JSON. Sizes are bytes or `<n>KiB|MiB|GiB|TiB|EiB|KB|MB|GB|TB` (`1.5TiB`; no spaces, the whole
text, exact: `utils/sizes.py`).

The capacities not given as options come from the module's `#target.sn40l`
(`#target.sn40l<{hbm_bytes = 12288 : i64}>`), else from the SN40L table.

A symbol's traffic over ragged dims (a KV cache walked per request, `[4, ?L0]`)
is its total count `sum_L0` from the graph's `step.bind` (the route's
attention records it); a request's own length `L0`, where a size needs it,
is bounded by that total (`kernels.bound`). Without the binding it is an
error naming the unbound symbol.

**Repetition** (`layers=N`, a model of N identical layers, e.g. a decoder's
32): every symbol gets one copy per layer (`<name>@<layer>` in the map). A
symbol whose first access is a load — weights, a KV cache read and updated in
place, the layer's input — is resident: it persists across decode steps, so
it lives over the whole run and the N copies never share; the activations a
layer writes and reads back live in that layer's kernels only and are shared
between layers. Spilling takes equal copies last layer first, so a model
larger than HBM streams its last layers' weights from DDR. The ops keep the
first layer's placement; `layer_tiers`/`set_tiers` give each layer's, which
`examples/workloads/sn40l_route.simulate_layers` simulates layer by layer.

Example: `step-opt test/filecheck/passes/inputs/sn40l-tiny.mlir -p
'step-kernelize,step-allocate-memory{hbm=12KiB}'`: seven symbols of 1-4 KiB
(25 KiB) share 16 KiB of HBM by lifetime (the 4 KiB input of kernel 0 and
the cut stream first written in kernel 1 get the same address); with 12
KiB the output `st0` (1 KiB moved) and the input `ld0` (4 KiB) spill to
DDR, where they share one address too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import StreamType
from steplus.utils.attrs import ints_of
from steplus.utils.sizes import parse_size  # sizes of the options: one grammar (utils/sizes.py)
from steplus.utils.diagnostics import OpDiagnosticError, emit
from steplus.dialects.target.attrs import sn40l_target_of
from steplus.dialects.target.sn40l import SN40L, value
from steplus.dialects.sn40l_attrs import DDR_BYTES, HBM_BYTES, READONLY, SOURCE, SYMBOL, TIER
from steplus.passes.sn40l.kernels import MEMORY, context_name, ensure_names, tile_bytes, kernel_groups, static_int
from steplus.passes.step.metrics import cardinality


@dataclass
class Symbol:
    name: str
    key: int  # the source base address
    size: int = 0
    first: int = 0
    last: int = 0
    loaded: bool = False
    stored: bool = False
    traffic: int = 0  # bytes moved over the run
    ops: list[Operation] = field(default_factory=list)
    tier: str = "hbm"
    offset: int = 0
    read_first: bool = False  # its first access is a load (weights, a KV cache, an input)
    layer: int = 0  # the copy, in a repetition (`repeat`)

    @property
    def readonly(self) -> bool:
        return self.loaded and not self.stored


def _int(e, op: Operation, what: str) -> int:
    return static_int(e, op, what, "step-allocate-memory")


def symbols(kernels: list[GraphOp]) -> list[Symbol]:
    """The symbols of a kernel sequence with sizes, lifetimes and traffic."""
    syms: dict[int, Symbol] = {}
    n = len(kernels)
    for k, g in enumerate(kernels):
        ensure_names(g)
        for op in g.body.block.ops:
            if not isinstance(op, MEMORY):
                continue
            key = op.base_addr.value.data
            sym = SYMBOL.get(op)
            name = sym if sym is not None else context_name(op)
            s = syms.get(key)
            if s is None:
                s = syms[key] = Symbol(name, key, first=k, last=k, read_first=isinstance(
                    op, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)))
            s.first, s.last = min(s.first, k), max(s.last, k)
            s.ops.append(op)
            if isinstance(op, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)):
                s.loaded = True
                t = op.output.type
                moved = _int(cardinality(list(t.dims)), op, "size") * tile_bytes(t)
                in_tiles = math.prod(ints_of(op.tiled_in_shape))
                size = in_tiles * tile_bytes(t)
            else:
                s.stored = True
                v = op.input if isinstance(op, so.LinearOffChipStoreOp) else op.wdata
                vt = cast(StreamType, v.type)  # the op's verifier: a stream
                moved = _int(cardinality(list(vt.dims)), op, "size") * tile_bytes(vt)
                size = moved
            s.traffic += moved
            s.size = max(s.size, size)
    for s in syms.values():
        if not s.stored:
            s.first = 0  # inputs and weights are there before the first kernel
        if not s.loaded:
            s.last = n - 1  # outputs stay after the last
    return list(syms.values())


MAX_LAYERS = 1024
"""Bound of `layers` (a user-sized repetition: the placement is quadratic in symbols)."""


def repeat(syms: list[Symbol], layers: int, n: int) -> list[Symbol]:
    """The symbols of `layers` runs of one kernel sequence of `n` kernels (a model's
    identical layers), each layer its own copy of every symbol (`<name>@<layer>`,
    sharing the ops). A symbol first read (weights, KV caches, the layer's input)
    is *resident*: it lives over the whole repetition (it persists across steps);
    one first written (activations) lives in its layer's kernels, shifted by
    `layer * n`, so the layers' activations share addresses; one only written
    (the layer's output) lives to the end. `layers = 1`: `syms` unchanged."""
    if layers == 1:
        return syms
    end = layers * n - 1
    out = []
    for k in range(layers):
        for s in syms:
            c = Symbol(f"{s.name}@{k}", s.key, s.size, s.first + k * n, s.last + k * n,
                       s.loaded, s.stored, s.traffic, s.ops, read_first=s.read_first,
                       layer=k)
            if s.read_first:
                c.first, c.last = 0, end
            elif not s.loaded:
                c.last = end
            out.append(c)
    return out


def place(syms: list[Symbol], align: int = 256) -> int:
    """Offsets for `syms` (one tier): largest first, lowest non-conflicting
    offset; symbols whose lifetimes do not overlap may share. Returns the peak."""
    placed: list[Symbol] = []
    peak = 0
    for s in sorted(syms, key=lambda s: (-s.size, s.first, s.key, s.layer)):
        busy = sorted((p.offset, p.offset + p.size) for p in placed
                      if p.first <= s.last and s.first <= p.last)
        off = 0
        for a, b in busy:
            if off + s.size <= a:
                break
            off = max(off, -(-b // align) * align)
        s.offset = off
        placed.append(s)
        peak = max(peak, off + s.size)
    return peak


@dataclass
class MemoryPlan:
    symbols: list[Symbol]
    hbm_peak: int
    ddr_peak: int
    spilled: list[Symbol]

    def to_json(self) -> dict:
        return {"hbm_bytes": self.hbm_peak, "ddr_bytes": self.ddr_peak,
                "spilled": [s.name for s in self.spilled],
                "symbols": [{"name": s.name, "tier": s.tier, "offset": s.offset,
                             "size": s.size, "first_kernel": s.first, "last_kernel": s.last,
                             "traffic": s.traffic, "readonly": s.readonly}
                            for s in sorted(self.symbols, key=lambda s: (s.tier, s.offset))]}


def plan(syms: list[Symbol], hbm: int, ddr: int, where: Operation | None = None) -> MemoryPlan:
    """The seed's §V-A: share by lifetime, spill the smallest transfer footprint first
    (`Symbol.traffic`; ties: smaller size, lower address, of equal copies in a repetition
    the last layer's first), whatever the symbol holds (a weight spills before a KV
    cache that moves more bytes)."""
    hbm_syms = list(syms)
    spilled: list[Symbol] = []
    order = sorted(syms, key=lambda s: (s.traffic, s.size, s.key, -s.layer))
    peak = place(hbm_syms)
    i = 0
    while peak > hbm and i < len(order):  # bounded: each symbol spills at most once
        s = order[i]
        i += 1
        s.tier = "ddr"
        hbm_syms.remove(s)
        spilled.append(s)
        peak = place(hbm_syms) if hbm_syms else 0
    ddr_peak = place(spilled) if spilled else 0
    if peak > hbm or ddr_peak > ddr:
        big = sorted(syms, key=lambda s: -s.size)[:3]
        names = ", ".join(f"{s.name} ({s.size} B)" for s in big)
        total = sum(s.size for s in syms)
        raise OpDiagnosticError(where, f"step-allocate-memory: the graph does not fit: "
                                       f"{total} B of symbols, HBM {hbm} B + DDR {ddr} B "
                                       f"(after sharing: DDR needs {ddr_peak} B); "
                                       f"largest symbols: {names}")
    return MemoryPlan(syms, peak, ddr_peak, spilled)


def layer_tiers(p: MemoryPlan) -> list[list[tuple[Operation, str]]]:
    """Per layer of a repetition, each load/store with its symbol's tier there."""
    out: list[list[tuple[Operation, str]]] = []
    for s in p.symbols:
        while len(out) <= s.layer:
            out.append([])
        out[s.layer] += [(op, s.tier) for op in s.ops]
    return out


def set_tiers(tiers: list[tuple[Operation, str]]) -> None:
    """Mark the loads/stores with one layer's tiers (an item of `layer_tiers`): the
    simulator then streams each from where that layer's copy was placed."""
    for op, t in tiers:
        TIER.set(op, t)


def plan_layers(kernels: list[GraphOp], layers: int, hbm: int, ddr: int) -> MemoryPlan:
    """The memory map of `layers` repetitions of `kernels` (`repeat`)."""
    if not 1 <= layers <= MAX_LAYERS:
        raise OpDiagnosticError(kernels[0], f"step-allocate-memory: layers must be in "
                                            f"1..{MAX_LAYERS}, got {layers}")
    return plan(repeat(symbols(kernels), layers, len(kernels)), hbm, ddr, kernels[0])


def annotate(p: MemoryPlan, kernels: list[GraphOp]) -> None:
    for s in p.symbols:
        if s.layer:
            continue  # the ops carry the first layer's placement
        for op in s.ops:
            op.properties["base_addr"] = IntegerAttr(s.offset, i64)
            TIER.set(op, s.tier)
            if s.readonly:
                READONLY.set(op)
    for g in kernels:
        HBM_BYTES.set(g, p.hbm_peak)
        DDR_BYTES.set(g, p.ddr_peak)


@dataclass(frozen=True)
class StepAllocateMemoryPass(ModulePass):
    """Place off-chip symbols in HBM by lifetime (shared addresses), spill to DDR, address map.

    See the module doc. `hbm` and `ddr` are capacities (not given: the
    module's `#target.sn40l`, else one SN40L socket of the seed, 64 GiB and
    1.5 TiB); `out` names a JSON file for the address map and the spill list.
    """

    name = "step-allocate-memory"

    hbm: str = ""
    """HBM capacity (bytes, or with a unit: `64gib`, `512mib`); empty: the target's (64gib)."""
    ddr: str = ""
    """DDR capacity (bytes, or with a unit: `1536gib`); empty: the target's (1536gib)."""
    out: str = ""
    """Write the address map and spill list to this JSON file."""
    layers: int = 1
    """Place this many repetitions of each kernel sequence (a model's identical layers,
    `repeat`): the peaks and the map (`<symbol>@<layer>`) are the model's; the ops carry
    the first layer's placement."""

    def __post_init__(self) -> None:
        if isinstance(self.layers, bool) or not isinstance(self.layers, int) \
                or not 1 <= self.layers <= MAX_LAYERS:
            raise ValueError(f"layers must be an integer in 1..{MAX_LAYERS}, "
                             f"got {self.layers}")
        if self.hbm:
            parse_size(self.hbm, "hbm")
        if self.ddr:
            parse_size(self.ddr, "ddr")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = sn40l_target_of(op)
        except ValueError as e:
            raise OpDiagnosticError(op, f"step-allocate-memory: {e}") from None
        table = target.table() if target is not None else SN40L
        hbm = parse_size(self.hbm, "hbm") if self.hbm else int(value("hbm_bytes", table))
        ddr = parse_size(self.ddr, "ddr") if self.ddr else int(value("ddr_bytes", table))
        report = []
        for kernels in kernel_groups(op):
            p = plan_layers(kernels, self.layers, hbm, ddr)
            syms = p.symbols
            annotate(p, kernels)
            name = SOURCE.get(kernels[0]) or kernels[0].sym_name.data
            spill = ", ".join(s.name for s in p.spilled[:8]) + \
                (", ..." if len(p.spilled) > 8 else "")
            naive = sum(s.size for s in syms if s.tier == "hbm")
            times = f" x {self.layers} layers" if self.layers > 1 else ""
            emit(kernels[0], "remark",
                 f"step-allocate-memory: @{name}{times}: {len(syms)} symbol(s), HBM {p.hbm_peak} B "
                 f"(without sharing {naive} B), DDR {p.ddr_peak} B; {len(p.spilled)} symbol(s) "
                 f"spilled{': ' + spill if spill else ''}")
            report.append({"graph": name, **p.to_json()})
        if self.out:
            try:
                with open(self.out, "w") as f:
                    json.dump(report, f, indent=1)
            except OSError as e:
                raise OpDiagnosticError(None, f"step-allocate-memory: cannot write "
                                              f"'{self.out}': {e.strerror}") from None
