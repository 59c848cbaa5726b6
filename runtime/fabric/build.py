"""Build a runnable fabric `Program` from a `step.graph`.

`build_program(graph, config)` checks the simulation's size
(`passes/step/sim_estimate.py`), places the graph with
`steplus.passes.step.fabric_placement.place` — the one placement, which
`convert-step-to-runtime` writes into the IR — and instantiates it: one
context per `ContextSpec` (in placement order, which is the HBM registration
order), one channel per `ChannelSpec`. Functional mode lets numpy values flow:
a load reads `tensors[name]` (a 2-D array, or a callable tile index -> tile),
or a seeded random tensor it records in `Program.tensors`; compute runs the
regions' library functions.

Example:

```python
prog = build_program(graph, get_preset("swiglu-hdl"))
m = prog.run()
m.cycles, m.offchip_traffic
```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from steplus.dialects.step import GraphOp
from steplus.dialects.target.fabric import HardwareConfig, get_preset
from steplus.passes.step.fabric_contract import (
    AccumParams, BroadcastParams, CacheReadAddrGenParams, CollectiveParams, ConsumeParams,
    ContextParams, ContextSpec, EagerMergeParams, ExpandParams, ExpertAddrGenParams, FilterLastTileParams,
    FlattenParams, JoinTilesParams, KernelSpec, LoadParams, MapParams, MetadataGenParams,
    ParallelizeParams, PartitionParams, Placement, Port, PromoteParams, RandomLoadParams,
    RandomStoreParams, ReassembleParams, RegroupParams, RepeatParams, ReshapeParams,
    RetileStreamifyParams, SelectGenParams, SplitTilesParams, StoreParams,
)
from steplus.passes.step.fabric_placement import LoweringError, find_graph, place
from steplus.passes.step.sim_estimate import (
    check_simulation_size, check_tensor_bytes, check_tile_bytes, largest_tile_bytes,
    unbound_symbols,
)
from steplus.runtime.fabric.contexts import collective as ocl
from steplus.runtime.fabric.contexts import compute as oc
from steplus.runtime.fabric.contexts import generators as og
from steplus.runtime.fabric.contexts import memory as om
from steplus.runtime.fabric.contexts import regroup as org
from steplus.runtime.fabric.contexts import routing as orr
from steplus.runtime.fabric.contexts import shape as osh
from steplus.runtime.fabric.channel import Channel
from steplus.runtime.fabric.context import Context
from steplus.runtime.fabric.engine import Simulator
from steplus.runtime.fabric.program import Program
from steplus.utils.gc_pause import PausedGC

__all__ = ["LoweringError", "build_program", "find_graph"]

Tensor = np.ndarray | Callable[[int], np.ndarray]


def _kernel(k: KernelSpec) -> oc.Kernel:
    return oc.Kernel(k.n_args, [(fn, list(args)) for fn, args in k.calls], k.result, k.acc_slot)


def _shared_kernel(b: _Builder, k: KernelSpec) -> oc.Kernel:
    """One `Kernel` per distinct region of the program: the contexts computing
    the same region (an MoE layer's experts) share its cost cache (a kernel's
    only state), so a tile shape's cost is worked out once, not once per expert."""
    got = b.kernels.get(k)
    if got is None:
        got = b.kernels[k] = _kernel(k)
    return got


class _Builder:
    def __init__(self, config: HardwareConfig, functional: bool, tensors: dict | None,
                 seed: int, limits: bool):
        self.cfg, self.functional, self.limits = config, functional, limits
        self.tensors: dict[str, Tensor] = tensors or {}
        self.tensor_bytes = 0
        self.rng = np.random.default_rng(seed)
        self.kernels: dict[KernelSpec, oc.Kernel] = {}  # see _shared_kernel

    def tensor(self, name: str, rows: int, cols: int, in_shape: list[int]) -> Tensor | None:
        if not self.functional:
            return None
        if name in self.tensors:
            t = self.tensors[name]
            # a callable: tile index -> tile (a sparse tensor, e.g. a KV cache)
            return t if callable(t) else np.asarray(t, dtype=np.float64)
        r = in_shape[0] * rows if in_shape else rows
        c = (in_shape[-1] if len(in_shape) >= 2 else 1) * cols
        self.tensor_bytes += r * c * 8
        if self.limits:
            check_tensor_bytes(self.tensor_bytes)
        t = self.rng.standard_normal((r, c)) / 8
        self.tensors[name] = t
        return t

    def context(self, s: ContextSpec) -> Context:
        """The simulator context of `s`, from the constructor of its params class."""
        make = CONTEXTS.get(type(s.params))
        if make is None:  # every params class has one (test_fabric_placement checks)
            raise LoweringError(f"no fabric context for {type(s.params).__name__}", s.op)
        ctx = make(self, s.name, s.params)
        if s.onchip_bytes is not None:
            ctx.onchip_bytes = s.onchip_bytes
        if s.onchip_row_bytes is not None:
            ctx.onchip_row_bytes = s.onchip_row_bytes
        # list ports (inputs[i], outs_list[i], ins_list[i]) start as lists of their size
        sizes: dict[str, int] = {}
        for port in [*s.in_ports, *(q for q in s.out_ports if q is not None)]:
            if port.item is not None:
                sizes[port.name] = max(sizes.get(port.name, 0), port.item + 1)
        for name, size in sizes.items():
            setattr(ctx, name, [None] * size)
        return ctx


# -- the registry params class -> simulator context ------------------------------

_Make = Callable[[_Builder, str, Any], Context]

CONTEXTS: dict[type[ContextParams], _Make] = {}
"""Params class (`passes/step/fabric_contract.py`) -> the constructor of its context."""


def _builds(cls: type[ContextParams]) -> Callable[[_Make], _Make]:
    def register(fn: _Make) -> _Make:
        assert cls not in CONTEXTS, f"{cls.__name__} built twice"
        CONTEXTS[cls] = fn
        return fn
    return register


@_builds(LoadParams)
def _load(b: _Builder, n: str, p: LoadParams) -> Context:
    return om.LoadCtx(n, p.rows, p.cols, p.nb, p.shape, p.stride, p.in_shape,
                      b.tensor(n, p.rows, p.cols, p.in_shape), p.req_bytes)


@_builds(RandomLoadParams)
def _random_load(b: _Builder, n: str, p: RandomLoadParams) -> Context:
    return om.RandomLoadCtx(n, p.rows, p.cols, p.nb, b.tensor(n, p.rows, p.cols, p.in_shape),
                            p.in_shape, p.req_bytes)


@_builds(StoreParams)
def _store(b: _Builder, n: str, p: StoreParams) -> Context:
    return om.StoreCtx(n, p.req_bytes, p.declared_nb)


@_builds(RandomStoreParams)
def _random_store(b: _Builder, n: str, p: RandomStoreParams) -> Context:
    return om.RandomStoreCtx(n, p.buffer_depth, p.req_bytes)


@_builds(MapParams)
def _map(b: _Builder, n: str, p: MapParams) -> Context:
    return oc.MapCtx(n, _shared_kernel(b, p.kernel), p.compute_bw, p.pmu_bw, p.write_back, b.functional)


@_builds(AccumParams)
def _accum(b: _Builder, n: str, p: AccumParams) -> Context:
    init = None
    if p.init is not None:
        ik = _kernel(p.init)
        init = lambda k=ik: k.run([])  # noqa: E731
    return oc.AccumCtx(n, _shared_kernel(b, p.kernel), p.rank, p.init_shape, p.compute_bw, p.pmu_bw,
                       p.write_back, b.functional, scan=p.scan, init=init)


@_builds(SplitTilesParams)
def _split_tiles(b: _Builder, n: str, p: SplitTilesParams) -> Context:
    return oc.SplitTilesCtx(n, p.r, p.c, p.rank)


@_builds(JoinTilesParams)
def _join_tiles(b: _Builder, n: str, p: JoinTilesParams) -> Context:
    return oc.JoinTilesCtx(n, p.rank, p.rows, p.cols, b.functional)


@_builds(RetileStreamifyParams)
def _retile_streamify(b: _Builder, n: str, p: RetileStreamifyParams) -> Context:
    return oc.RetileStreamifyCtx(n)


@_builds(FlattenParams)
def _flatten(b: _Builder, n: str, p: FlattenParams) -> Context:
    return osh.FlattenCtx(n, p.lo, p.hi)


@_builds(ReshapeParams)
def _reshape(b: _Builder, n: str, p: ReshapeParams) -> Context:
    return osh.ReshapeCtx(n, p.split_dim, p.chunk, p.add_outer_dim, p.pad_shape, p.nb)


@_builds(CollectiveParams)
def _collective(b: _Builder, n: str, p: CollectiveParams) -> Context:
    return ocl.CollectiveCtx(n, p.ranks, p.gather, p.bytes_per_cycle, p.latency)


@_builds(PromoteParams)
def _promote(b: _Builder, n: str, p: PromoteParams) -> Context:
    return osh.PromoteCtx(n)


@_builds(RepeatParams)
def _repeat(b: _Builder, n: str, p: RepeatParams) -> Context:
    return osh.RepeatCtx(n, p.count)


@_builds(ExpandParams)
def _expand(b: _Builder, n: str, p: ExpandParams) -> Context:
    return osh.ExpandCtx(n, p.rank)


@_builds(RegroupParams)
def _regroup(b: _Builder, n: str, p: RegroupParams) -> Context:
    return org.RegroupCtx(n, p.dim, p.axis, p.m, p.inner, p.extent)


@_builds(BroadcastParams)
def _broadcast(b: _Builder, n: str, p: BroadcastParams) -> Context:
    return orr.BroadcastCtx(n)


@_builds(ConsumeParams)
def _consume(b: _Builder, n: str, p: ConsumeParams) -> Context:
    return orr.ConsumeCtx(n)


@_builds(PartitionParams)
def _partition(b: _Builder, n: str, p: PartitionParams) -> Context:
    return orr.PartitionCtx(n, p.rank, p.switch, p.write_back, p.pmu_bw)


@_builds(ParallelizeParams)
def _parallelize(b: _Builder, n: str, p: ParallelizeParams) -> Context:
    return orr.ParallelizeCtx(n, p.rank, p.switch)


@_builds(ReassembleParams)
def _reassemble(b: _Builder, n: str, p: ReassembleParams) -> Context:
    return orr.ReassembleCtx(n, p.rank, p.switch, p.write_back, p.pmu_bw)


@_builds(EagerMergeParams)
def _eager_merge(b: _Builder, n: str, p: EagerMergeParams) -> Context:
    return orr.EagerMergeCtx(n, p.rank)


@_builds(SelectGenParams)
def _select_gen(b: _Builder, n: str, p: SelectGenParams) -> Context:
    return og.SelectGenCtx(n, p.rows, p.shape)


@_builds(MetadataGenParams)
def _metadata_gen(b: _Builder, n: str, p: MetadataGenParams) -> Context:
    return og.MetadataGenCtx(n, p.values)


@_builds(ExpertAddrGenParams)
def _expert_addr_gen(b: _Builder, n: str, p: ExpertAddrGenParams) -> Context:
    return og.ExpertAddrGenCtx(n, p.tiles_per_expert)


@_builds(CacheReadAddrGenParams)
def _cache_read_addr_gen(b: _Builder, n: str, p: CacheReadAddrGenParams) -> Context:
    return og.CacheReadAddrGenCtx(n)


@_builds(FilterLastTileParams)
def _filter_last_tile(b: _Builder, n: str, p: FilterLastTileParams) -> Context:
    return og.FilterLastTileCtx(n)


def _bind(ctx: Context, port: Port, ch: Channel) -> None:
    if port.item is None:
        setattr(ctx, port.name, ch)
    else:
        getattr(ctx, port.name)[port.item] = ch


def instantiate(placement: Placement, config: HardwareConfig, *, functional: bool = False,
                tensors: dict | None = None, trace: bool = False, seed: int = 0,
                hbm_factory: Callable | None = None, limits: bool = True) -> Program:
    """The runnable program of a placement (contexts and channels in its order)."""
    b = _Builder(config, functional, tensors, seed, limits)
    sim = Simulator(config, trace=trace, hbm_factory=hbm_factory)
    ctxs = [sim.add(b.context(s)) for s in placement.contexts]
    for c in placement.channels:
        src, dst = ctxs[c.src], ctxs[c.dst]
        ch = sim.connect(src, dst, c.depth)
        ch.elem_bytes = c.elem_bytes
        _bind(src, c.src_port, ch)
        _bind(dst, c.dst_port, ch)
    prog = Program(sim)
    prog.tensors = b.tensors
    prog.unbound = unbound_symbols(placement.graph)
    return prog


def build_program(graph: ModuleOp | GraphOp, config: HardwareConfig | None = None, *,
                  functional: bool = False, tensors: dict | None = None,
                  trace: bool = False, seed: int = 0, graph_name: str | None = None,
                  hbm_factory: Callable | None = None, limits: bool = True) -> Program:
    """The runtime program of a step graph (see module doc).

    `hbm_factory` replaces the closed-form HBM model (tests pass the
    request-level `hbm_reference.ReferenceHBMServer`). With `limits` (the
    default) a graph whose simulation is estimated past
    `sim_estimate.MAX_SIM_ELEMENTS` elements, or whose random input
    tensors exceed `MAX_TENSOR_BYTES`, raises `SimulationTooLarge` first."""
    g = find_graph(graph, graph_name)
    config = config or get_preset("step-eval")
    check_tile_bytes(g)  # not waived by --force: the timing model's int64 math overflows
    if limits:
        check_simulation_size(g)
        if functional:
            check_tensor_bytes(largest_tile_bytes(g), what="one tile's values")
    with PausedGC():  # allocation-heavy, nothing cyclic to collect (utils.gc_pause)
        return instantiate(place(g, config), config, functional=functional, tensors=tensors,
                           trace=trace, seed=seed, hbm_factory=hbm_factory, limits=limits)
