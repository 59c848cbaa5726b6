"""The one placement of a `step.graph` on the simulated fabric, as plain data.

`place(graph, config)` decides how a graph becomes a network of fabric
contexts and returns it as a `Placement`. Both users read it, so they cannot
disagree: `convert-step-to-runtime` (`lowering/step_to_runtime.py`) writes it
into the IR (`runtime.context`, the inserted `step.broadcast`s,
`runtime.depth`), and `steplus.runtime.fabric.build.build_program`
instantiates its contexts and channels. The decisions:

- one context per operator, in graph order (which fixes the HBM registration
  order of loads and stores, reference spec §7), described by the params
  class its op class's placement function returns (`PLACERS`, one function
  per op class; the classes and the rest of the contract are in
  `fabric_contract.py`, the simulator builds one context per params class);
- a `step.zip` feeding a map/accum/scan is fused into it: no context, its
  inputs become the consumer's inputs (the artifact's binary operators peek
  both inputs themselves); a zip feeding anything else cannot be placed;
- the `step.consume` of a reshape's padding flags gets no context (the
  simulated Reshape does not produce them);
- a stream with several consumers gets a Broadcast context appended at the
  end of the order (§7), one per (producer, result) in graph order;
- the group rank of a partition / reassemble / eager_merge comes from the
  types (the data's dims below the selector's; a discardable `rank`
  attribute overrides it);
- per-op knobs are the registered discardable attributes of
  `dialects/step/discardable.py` (`compute_bw`, `pmu_bw`, `write_back_mu`,
  `add_outer_dim`, `switch_cycles`, `rank`, `name`), read through their typed
  specs (a malformed value in IR that was never verified is a located
  `LoweringError` with the verifier's words) and resolved against the
  configuration; `KNOBS` says which op class reads which (op class -> specs ->
  params class -> simulator context), `buffer_depth` is
  `step.random_offchip_store`'s property;
- region bodies become `KernelSpec`s (library calls over argument slots);
- every channel joins a producer port to a consumer port, with the
  configuration's base depth and the declared bytes of one element.

A `Port` names the input or output of a context a channel binds to (`inp`,
`ref`, `sel`, `inputs[i]`, `outs_list[i]`, ...). This is an analysis of step
graphs, so it lives with the step passes, below both of its users (layers:
utils < dialects < passes < lowering < runtime < tools); it reads the target
description `dialects/target/fabric.py` and imports nothing above.

Example:

```python
p = place(graph, get_preset("swiglu-hdl"))
[(c.index, type(c.params).__name__, c.name) for c in p.contexts]   # [(0, 'LoadParams', 'x'), ...]
p.context_of[store_op]                                 # its runtime.context
```
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeGuard, cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, Region, SSAValue

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.dims import to_expr
from steplus.dialects.step.discardable import (
    ADD_OUTER_DIM, COMPUTE_BW, FANOUT_DEPTH, MAX_KNOB, NAME, PMU_BW, RANK, SWITCH_CYCLES,
    WRITE_BACK_MU,
)
from steplus.dialects.step.types import StreamType, TileType, TupleType
from steplus.dialects.target.fabric import HardwareConfig
from steplus.passes.step.fabric_contract import (
    AccumParams, BroadcastParams, CacheReadAddrGenParams, ChannelSpec, CollectiveParams,
    ConsumeParams, ContextParams, ContextSpec, EagerMergeParams, ExpandParams, ExpertAddrGenParams,
    FilterLastTileParams, FlattenParams, JoinTilesParams, KernelSpec, LoadParams, MapParams,
    MetadataGenParams, ParallelizeParams, PartitionParams, Placement, Port, PromoteParams,
    RandomLoadParams, RandomStoreParams, ReassembleParams, RepeatParams, ReshapeParams,
    RegroupParams, RetileStreamifyParams, SelectGenParams, SplitTilesParams, StoreParams,
)
from steplus.passes.step.sim_estimate import SimulationError
from steplus.utils.attrs import ints_array, ints_of
from steplus.utils.discardable import DiscardableSpec, IntDiscardable, UnitDiscardable



class LoweringError(SimulationError):
    """The graph uses something the simulator cannot place (with the op for the location)."""

    def __init__(self, msg: str, op: Operation | None = None):
        super().__init__(msg)
        self.op = op


# -- attributes and types -----------------------------------------------------

def _checked(op: Operation, spec: DiscardableSpec) -> None:
    """A `LoweringError` at `op` (the verifier's words) when it carries the knob `spec`
    with a malformed value: IR built in Python and never verified."""
    try:
        spec.check_on(op)
    except ValueError as e:
        raise LoweringError(str(e), op) from None


def _int_knob(op: Operation, spec: IntDiscardable, default: int) -> int:
    """The registered integer knob `spec` of `op`, else `default`; either must be in the
    spec's range (a group rank the types give can be out of it)."""
    _checked(op, spec)
    v = spec.get(op)
    v = default if v is None else v
    if not spec.in_range(v):
        raise LoweringError(spec.message(str(v)), op)
    return v


def _flag(op: Operation, spec: UnitDiscardable) -> bool:
    """Whether `op` carries the registered flag `spec`."""
    _checked(op, spec)
    return spec.get(op)


def _switch_cycles(op: Operation, k: int, default: int) -> list[int]:
    """The `switch_cycles` of a routing op with `k` branches (one non-negative count each)."""
    # a property of step.parallelize, a registered knob of partition and reassemble
    if isinstance(op, so.ParallelizeOp):
        sw = ints_of(op.switch_cycles) or [default] * k
    else:
        _checked(op, SWITCH_CYCLES)
        sw = SWITCH_CYCLES.get(op) or [default] * k
    if len(sw) != k or not all(0 <= c <= MAX_KNOB for c in sw):
        shown = ", ".join(map(str, sw[:8])) + (", ..." if len(sw) > 8 else "")
        raise LoweringError(f"'switch_cycles' must list {k} cycle counts in [0, {MAX_KNOB}], "
                            f"got [{shown}]", op)
    return sw


def _tile(t: Attribute) -> Attribute:
    el = t.element if isinstance(t, StreamType) else t
    if isinstance(el, TupleType):
        el = el.elements.data[0]
    return el


def _tile_type(t: Attribute, op: Operation) -> TileType:
    """The tile of a stream type that must carry tiles (LoweringError otherwise)."""
    el = _tile(t)
    if not isinstance(el, TileType):
        raise LoweringError(f"the simulator needs a stream of tiles here, not {el}", op)
    return el


def tile_bytes(t: Attribute) -> int:
    """The declared bytes of one element of a stream type (0 if not a static tile)."""
    el = _tile(t)
    if isinstance(el, TileType) and el.is_static:
        return el.rows.data * el.cols.data * el.bytes_per_scalar()
    return 0


def _onchip_tile(spec: ContextSpec, t: Attribute) -> None:
    """§5.2: the context holds one tile of the declared type; with dynamic rows
    (`?`, dynamic tiling) the largest number of rows it saw at run time."""
    el = _tile(t)
    if isinstance(el, TileType) and not el.is_static and el.cols.data > 0:
        spec.onchip_row_bytes = el.cols.data * el.bytes_per_scalar()
    else:
        spec.onchip_bytes = tile_bytes(t)


def _rank(v: SSAValue) -> int:
    return len(v.type.dims) if isinstance(v.type, StreamType) else 0


def _static_dims(t: StreamType) -> tuple[int, ...] | None:
    try:
        return tuple(int(d) for d in t.dims)
    except TypeError:
        return None


def is_bound_ref(v: SSAValue | None) -> TypeGuard[BlockArgument]:
    """A graph argument with concrete dims (a load's bound outer extent)."""
    return (isinstance(v, BlockArgument) and isinstance(v.type, StreamType)
            and all(to_expr(d).is_Integer for d in v.type.dims))


def _kernel(region: Region, acc: bool) -> KernelSpec:
    block = region.block
    slots: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
    calls: list[tuple[str, tuple[int, ...]]] = []
    result = None
    for op in block.ops:
        if isinstance(op, so.ApplyOp):
            calls.append((op.fn.data, tuple(slots[a] for a in op.args)))
            slots[op.result] = len(block.args) + len(calls) - 1
        elif isinstance(op, so.YieldOp):
            result = slots[op.values[0]]
        else:
            raise LoweringError(f"the simulator runs step.apply regions only, found {op.name}", op)
    if result is None:
        raise LoweringError("function region has no step.yield")
    n = len(block.args)
    return KernelSpec(n, tuple(calls), result, n - 1 if acc else None)


def _fn_names(region: Region) -> list[str]:
    """The library functions a region applies, in order."""
    return [o.fn.data for o in region.block.ops if isinstance(o, so.ApplyOp)]


def _unzip(v: SSAValue) -> list[SSAValue]:
    owner = v.owner
    if isinstance(owner, so.ZipOp):
        return [*_unzip(owner.lhs), *_unzip(owner.rhs)]
    return [v]


def _is_padding_consume(op: Operation) -> bool:
    return (isinstance(op, so.ConsumeOp) and isinstance(op.input.owner, so.ReshapeOp)
            and op.input is op.input.owner.padding)


# -- one operator: the registry op class -> params ------------------------------

class _Placer:
    """What every placement function reads: the configuration and the naming counters."""

    def __init__(self, graph: GraphOp, config: HardwareConfig):
        self.graph, self.cfg = graph, config
        self.req = config.hbm.request_bytes
        self.counts: dict[str, int] = {}

    def name(self, op: Operation) -> str:
        given = NAME.get(op)  # checked with the op's other knobs (`spec`)
        if given is not None:
            return given
        short = op.name.removeprefix("step.")
        k = self.counts.get(short, 0)
        self.counts[short] = k + 1
        return f"{short}{k}"

    def spec(self, op: Operation, index: int) -> ContextSpec:
        """The context of `op` (see module doc), from the placement function of its class."""
        placer = PLACERS.get(type(op))
        if placer is None:
            raise LoweringError(f"the simulator does not support {op.name}", op)
        for knob in KNOBS[type(op)]:  # a malformed knob is an error even where it defaults
            _checked(op, knob)
        params, inputs, in_ports, out_ports = placer(self, op)
        s = ContextSpec(index, self.name(op), params, op, inputs, in_ports,
                        [Port("out")] if out_ports is None else out_ports)
        _onchip(s, op)
        return s


_Placed = tuple[ContextParams, list[SSAValue], list[Port], "list[Port | None] | None"]
"""(params, inputs, their ports, the ports of the results (None: one `out`))."""
_PlaceFn = Callable[[_Placer, Any], _Placed]

PLACERS: dict[type[Operation], _PlaceFn] = {}
"""Op class -> its placement function: the one table of what the fabric simulates."""
KNOBS: dict[type[Operation], tuple[DiscardableSpec, ...]] = {}
"""Op class -> the registered knobs (`dialects/step/discardable.py`) its placement
function reads: every op's `name`, and those its `_places` lists. The placement
checks them (the verifier's words) before placing the op."""


def _places(*classes: type[Operation],
            knobs: tuple[DiscardableSpec, ...] = ()) -> Callable[[_PlaceFn], _PlaceFn]:
    def register(fn: _PlaceFn) -> _PlaceFn:
        for c in classes:
            assert c not in PLACERS, f"{c.name} placed twice"
            PLACERS[c] = fn
            KNOBS[c] = (NAME, *knobs)
        return fn
    return register


def _onchip(s: ContextSpec, op: Operation) -> None:
    """§5.2: the on-chip tile a context holds (stores, accumulators, repeats, expands)."""
    if isinstance(op, so.LinearOffChipStoreOp):
        s.onchip_bytes = tile_bytes(op.input.type)
    elif isinstance(op, (so.AccumOp, so.ScanOp)):  # an accumulator, or join_tiles' tile
        _onchip_tile(s, op.output.type)
    elif isinstance(op, (so.RepeatOp, so.ExpandOp)):
        _onchip_tile(s, op.input.type)
    elif isinstance(op, so.BroadcastOp) and FANOUT_DEPTH.get(op):  # its deep outputs
        s.onchip_bytes = (FANOUT_DEPTH.get(op) or 0) * len(op.outputs) \
            * tile_bytes(op.input.type)
    elif isinstance(op, so.RegroupOp):  # one block of tiles (the double buffer's other half
        p = cast(RegroupParams, s.params)  # is the paper mode's of step-metrics)
        s.onchip_bytes = p.m * p.inner * tile_bytes(op.input.type)


@_places(so.LinearOffChipLoadOp)
def _load(pl: _Placer, op: so.LinearOffChipLoadOp) -> _Placed:
    t = _tile_type(op.output.type, op)
    shape, in_shape = ints_of(op.tiled_out_shape), ints_of(op.tiled_in_shape)
    stride = ints_of(op.stride)
    ref = op.ref
    if is_bound_ref(ref):
        # A reference stream that is a graph argument only carries the
        # load's symbolic outer extent (the frontend's `B`): once bound,
        # the load walks those dims itself, an OffChipLoad.
        outer = [int(d) for d in cast(StreamType, ref.type).dims]
        inner = _prod(in_shape) if in_shape else 1
        stride = [inner * _prod(outer[k + 1:]) for k in range(len(outer))] + stride
        shape, in_shape, ref = outer + shape, outer + in_shape, None
    params = LoadParams(rows=t.rows.data, cols=t.cols.data, nb=t.bytes_per_scalar(),
                        shape=shape, stride=stride, in_shape=in_shape, req_bytes=pl.req)
    if ref is None:
        return params, [], [], None
    return params, [ref], [Port("ref")], None


@_places(so.RandomOffChipLoadOp)
def _random_load(pl: _Placer, op: so.RandomOffChipLoadOp) -> _Placed:
    t = _tile_type(op.output.type, op)
    return (RandomLoadParams(rows=t.rows.data, cols=t.cols.data, nb=t.bytes_per_scalar(),
                             in_shape=ints_of(op.tiled_in_shape), req_bytes=pl.req),
            [op.raddr], [Port("addr")], None)


@_places(so.LinearOffChipStoreOp)
def _store(pl: _Placer, op: so.LinearOffChipStoreOp) -> _Placed:
    t = _tile(op.input.type)
    # §5.1: a store counts its input's declared element type (the
    # simulated tiles may be narrower: they inherit the loads' bytes).
    nb = t.bytes_per_scalar() if isinstance(t, TileType) else None
    return StoreParams(req_bytes=pl.req, declared_nb=nb), [op.input], [Port("inp")], []


@_places(so.RandomOffChipStoreOp)
def _random_store(pl: _Placer, op: so.RandomOffChipStoreOp) -> _Placed:
    depth = 1 if op.buffer_depth is None else op.buffer_depth.value.data  # verified >= 1
    return (RandomStoreParams(buffer_depth=depth, req_bytes=pl.req),
            [op.waddr, op.wdata], [Port("addr"), Port("data")], None)


@_places(so.FlatMapOp)
def _flat_map(pl: _Placer, op: so.FlatMapOp) -> _Placed:
    fns = _fn_names(op.body)
    if fns == ["zero", "split_tiles"]:
        # step-hierarchical-tiling: logical tile -> physical tiles (result element)
        el = _tile_type(op.output.type, op)
        params: ContextParams = SplitTilesParams(r=el.rows.data, c=el.cols.data,
                                                 rank=op.rank.value.data)
    elif fns == ["retile_streamify"]:
        params = RetileStreamifyParams()
    else:
        raise LoweringError("the simulator supports step.flat_map with "
                            "\"retile_streamify\" only", op)
    return params, [op.input], [Port("inp")], None


@_places(so.MapOp, so.AccumOp, so.ScanOp, knobs=(COMPUTE_BW, PMU_BW, WRITE_BACK_MU))
def _compute(pl: _Placer, op: so.MapOp | so.AccumOp | so.ScanOp) -> _Placed:
    if isinstance(op, so.AccumOp) and _fn_names(op.update) == ["join_tiles"]:
        el = _tile_type(op.output.type, op)
        return (JoinTilesParams(rank=op.rank.value.data, rows=el.rows.data, cols=el.cols.data),
                [op.input], [Port("inp")], None)
    ins = _unzip(op.input)
    ports = [Port("inputs", i) for i in range(len(ins))]
    compute_bw = _int_knob(op, COMPUTE_BW, pl.cfg.compute_bw)
    pmu_bw = _int_knob(op, PMU_BW, pl.cfg.pmu_bw)  # step-allocate-units' PMUs
    write_back = _flag(op, WRITE_BACK_MU)
    if isinstance(op, so.MapOp):
        return (MapParams(kernel=_kernel(op.body, False), compute_bw=compute_bw, pmu_bw=pmu_bw,
                          write_back=write_back), ins, ports, None)
    acc_t = _tile_type(op.output.type, op)
    init_k = _kernel(op.init, False) if op.init.block.ops else None
    params = AccumParams(
        kernel=_kernel(op.update, True), rank=op.rank.value.data,
        init_shape=(max(acc_t.rows.data, 0), max(acc_t.cols.data, 0)),
        compute_bw=compute_bw, pmu_bw=pmu_bw, write_back=write_back,
        scan=isinstance(op, so.ScanOp),
        # a non-zero initial value is computed by its region (functional mode)
        init=init_k if init_k is not None and not any(
            f == "zero" for f, _ in init_k.calls) else None)
    return params, ins, ports, None


@_places(so.FlattenOp)
def _flatten(pl: _Placer, op: so.FlattenOp) -> _Placed:
    return (FlattenParams(lo=op.min.value.data, hi=op.max.value.data),
            [op.input], [Port("inp")], None)


@_places(so.ReshapeOp, knobs=(ADD_OUTER_DIM,))
def _reshape(pl: _Placer, op: so.ReshapeOp) -> _Placed:
    t = _tile(op.input.type)
    pad = (max(t.rows.data, 0), max(t.cols.data, 0)) if isinstance(t, TileType) else (1, 1)
    nb = t.bytes_per_scalar() if isinstance(t, TileType) else 4
    return (ReshapeParams(split_dim=op.split_dim.value.data, chunk=op.chunk_size.value.data,
                          add_outer_dim=_flag(op, ADD_OUTER_DIM), pad_shape=pad, nb=nb),
            [op.input], [Port("inp")], [Port("out"), None])


@_places(so.AllReduceOp, so.AllGatherOp)
def _collective(pl: _Placer, op: so.AllReduceOp | so.AllGatherOp) -> _Placed:
    ghz = pl.cfg.clock_ghz
    gbps = op.links.value.data * op.link_gbps.value.data
    return (CollectiveParams(ranks=op.ranks.value.data, gather=isinstance(op, so.AllGatherOp),
                             bytes_per_cycle=gbps / ghz,
                             latency=round(op.latency_ns.value.data * ghz)),
            [op.input], [Port("inp")], None)


@_places(so.PromoteOp)
def _promote(pl: _Placer, op: so.PromoteOp) -> _Placed:
    return PromoteParams(), [op.input], [Port("inp")], None


@_places(so.RepeatOp)
def _repeat(pl: _Placer, op: so.RepeatOp) -> _Placed:
    return RepeatParams(count=op.count.value.data), [op.input], [Port("inp")], None


@_places(so.ExpandOp)
def _expand(pl: _Placer, op: so.ExpandOp) -> _Placed:
    return (ExpandParams(rank=op.rank.value.data), [op.input, op.ref],
            [Port("inp"), Port("ref")], None)


@_places(so.RegroupOp)
def _regroup(pl: _Placer, op: so.RegroupOp) -> _Placed:
    s = cast(StreamType, op.input.type)
    t = _tile_type(s, op)
    d, axis = op.dim.value.data, op.axis.value.data
    try:
        block = [int(x) for x in s.dims[len(s.dims) - 1 - d:]]
    except TypeError:
        raise LoweringError("the regrouped dim and the dims inside it must be numbers "
                            "(bind them first: step-specialize)", op) from None
    return (RegroupParams(dim=d, axis=axis, m=block[0], inner=_prod(block[1:]),
                          extent=t.rows.data if axis == 0 else t.cols.data),
            [op.input], [Port("inp")], None)


@_places(so.BroadcastOp, knobs=(FANOUT_DEPTH,))
def _broadcast(pl: _Placer, op: so.BroadcastOp) -> _Placed:
    return (BroadcastParams(depth=FANOUT_DEPTH.get(op) or 0), [op.input], [Port("inp")],
            [Port("outs_list", i) for i in range(len(op.outputs))])


@_places(so.ConsumeOp)
def _consume(pl: _Placer, op: so.ConsumeOp) -> _Placed:
    return ConsumeParams(), [op.input], [Port("inp")], []


@_places(so.PartitionOp, knobs=(RANK, SWITCH_CYCLES, WRITE_BACK_MU))
def _partition(pl: _Placer, op: so.PartitionOp) -> _Placed:
    k = len(op.outputs)
    rank = _rank(op.input) - _rank(op.sel)
    return (PartitionParams(rank=_int_knob(op, RANK, rank), switch=_switch_cycles(op, k, 1),
                            write_back=_flag(op, WRITE_BACK_MU), pmu_bw=pl.cfg.pmu_bw, n_out=k),
            [op.input, op.sel], [Port("inp"), Port("sel")],
            [Port("outs_list", i) for i in range(k)])


@_places(so.ParallelizeOp)
def _parallelize(pl: _Placer, op: so.ParallelizeOp) -> _Placed:
    k = len(op.outputs)
    return (ParallelizeParams(rank=op.rank.value.data, switch=_switch_cycles(op, k, 0), n_out=k),
            [op.input], [Port("inp")], [Port("outs_list", i) for i in range(k)])


@_places(so.ReassembleOp, knobs=(RANK, SWITCH_CYCLES, WRITE_BACK_MU))
def _reassemble(pl: _Placer, op: so.ReassembleOp) -> _Placed:
    k = len(op.data_inputs)
    rank = _rank(op.data_inputs[0]) - 1
    return (ReassembleParams(rank=_int_knob(op, RANK, rank), switch=_switch_cycles(op, k, 1),
                             write_back=_flag(op, WRITE_BACK_MU), pmu_bw=pl.cfg.pmu_bw, n_in=k),
            list(op.inputs), [Port("ins_list", i) for i in range(k)] + [Port("sel")], None)


@_places(so.EagerMergeOp, knobs=(RANK,))
def _eager_merge(pl: _Placer, op: so.EagerMergeOp) -> _Placed:
    k = len(op.inputs)
    return (EagerMergeParams(rank=_int_knob(op, RANK, _rank(op.inputs[0]) - 1), n_in=k),
            list(op.inputs), [Port("ins_list", i) for i in range(k)],
            [Port("out"), Port("sel_out")])


@_places(so.SelectGenOp)
def _select_gen(pl: _Placer, op: so.SelectGenOp) -> _Placed:
    k = op.choices.value.data
    rows = _selector_rows(ints_array(op.values), k)
    dims = _static_dims(op.output.type) or (len(rows),)
    return SelectGenParams(rows=rows, shape=dims), [], [], None


def _selector_rows(vals: np.ndarray, k: int) -> list[tuple[int, ...]]:
    """The chosen branches of each row of `k` selector values (a trailing partial
    row is dropped), with numpy: a Qwen B=1024 trace has 1,048,576 one-hot values."""
    n = len(vals) // k
    hot = vals[: n * k].reshape(n, k) != 0
    cols = np.nonzero(hot)[1].tolist()  # row-major: each row's branches in order
    ends = np.cumsum(hot.sum(axis=1)).tolist()
    rows: list[tuple[int, ...]] = []
    start = 0
    for end in ends:
        rows.append(tuple(cols[start:end]))
        start = end
    return rows


@_places(so.MetadataGenOp)
def _metadata_gen(pl: _Placer, op: so.MetadataGenOp) -> _Placed:
    return MetadataGenParams(values=ints_of(op.values)), [], [], None


@_places(so.ExpertAddrGenOp)
def _expert_addr_gen(pl: _Placer, op: so.ExpertAddrGenOp) -> _Placed:
    return (ExpertAddrGenParams(tiles_per_expert=op.tiles_per_expert.value.data),
            [op.sel], [Port("inp")], None)


@_places(so.CacheReadAddrGenOp)
def _cache_read_addr_gen(pl: _Placer, op: so.CacheReadAddrGenOp) -> _Placed:
    return CacheReadAddrGenParams(), [op.idx, op.seq_len], [Port("idx"), Port("seq")], None


@_places(so.FilterLastTileOp)
def _filter_last_tile(pl: _Placer, op: so.FilterLastTileOp) -> _Placed:
    return FilterLastTileParams(), [op.seq_len], [Port("inp")], None


def _prod(xs: list[int]) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


# -- the whole graph ----------------------------------------------------------

MAX_IN_FLIGHT = 1 << 12
"""The most tiles a collective's network holds in flight (beyond, the sender waits)."""


def _in_flight(p: ContextParams, nbytes: int, depth: int) -> int:
    """The depth of a context's output channel: `depth`, or for a collective the tiles its
    network holds in flight over its latency too (one per transfer time, at most
    `MAX_IN_FLIGHT`), or for a broadcast with a `fanout_depth` that depth."""
    if isinstance(p, BroadcastParams) and p.depth:
        return max(depth, p.depth)
    if not isinstance(p, CollectiveParams) or p.ranks < 2:
        return depth
    sent = (p.ranks - 1) * nbytes / p.ranks if p.gather else 2 * (p.ranks - 1) / p.ranks * nbytes
    per_tile = max(1, math.ceil(sent / p.bytes_per_cycle))
    return depth + min(MAX_IN_FLIGHT, math.ceil(p.latency / per_tile))


def place(graph: GraphOp, config: HardwareConfig, depth: int | None = None) -> Placement:
    """The placement of `graph` on the fabric of `config` (see module doc);
    `depth` overrides the configuration's base channel depth. Raises
    `LoweringError` (with the op) for what the simulator cannot place."""
    depth = config.base_depth if depth is None else depth
    for arg in graph.body.block.args:
        if not all(isinstance(u.operation, so.LinearOffChipLoadOp) and u.operation.ref is arg
                   for u in arg.uses) or not is_bound_ref(arg):
            raise LoweringError(
                "graph arguments can only be the (bound) reference streams of loads; "
                "bind their dims (step-run --routing/--kv/--bind, or step-specialize"
                "{rewrite=true}) or feed data through loads", graph)
    placer = _Placer(graph, config)
    contexts: list[ContextSpec] = []
    context_of: dict[Operation, int] = {}
    for op in graph.body.block.ops:
        if isinstance(op, so.ZipOp):
            users = {u.operation for u in op.output.uses}
            if not all(isinstance(u, (so.MapOp, so.AccumOp, so.ScanOp, so.ZipOp)) for u in users):
                raise LoweringError("step.zip must feed a map, accum or scan to be simulated", op)
            continue
        if _is_padding_consume(op):
            continue  # the simulated Reshape does not produce its padding flags
        spec = placer.spec(op, len(contexts))
        context_of[op] = spec.index
        contexts.append(spec)
    # the consumers of every produced stream, in graph order
    consumers: dict[SSAValue, list[tuple[int, Port]]] = {}
    for spec in contexts:
        for v, port in zip(spec.inputs, spec.in_ports):
            consumers.setdefault(v, []).append((spec.index, port))
    channels: list[ChannelSpec] = []
    broadcasts: list[tuple[SSAValue, int]] = []
    for spec in list(contexts):
        if spec.op is None:  # not reached: the broadcasts are appended after this copy
            continue
        for j, res in enumerate(spec.op.results):
            port = spec.out_ports[j] if j < len(spec.out_ports) else None
            users = consumers.get(res, [])
            if not users or port is None:
                continue
            nbytes = tile_bytes(res.type)
            depth_j = _in_flight(spec.params, nbytes, depth)
            if len(users) > 1:  # §7: a Broadcast appended at the end of the node order
                b = ContextSpec(len(contexts), f"{spec.name}.bcast{j}", BroadcastParams(), None,
                                [res], [Port("inp")],
                                [Port("outs_list", i) for i in range(len(users))])
                contexts.append(b)
                broadcasts.append((res, b.index))
                channels.append(ChannelSpec(spec.index, port, b.index, Port("inp"), depth_j,
                                            nbytes))
                for i, (dst, dport) in enumerate(users):
                    channels.append(ChannelSpec(b.index, Port("outs_list", i), dst, dport,
                                                depth, nbytes))
                continue
            dst, dport = users[0]
            channels.append(ChannelSpec(spec.index, port, dst, dport, depth_j, nbytes))
    return Placement(graph, depth, contexts, channels, context_of, broadcasts)


def find_graph(module: ModuleOp | GraphOp, name: str | None = None) -> GraphOp:
    """The step.graph `name` of `module` (default: the first)."""
    if isinstance(module, GraphOp):
        return module
    graphs = [op for op in module.walk() if isinstance(op, GraphOp)]
    if name is not None:
        graphs = [g for g in graphs if g.sym_name.data == name.lstrip("@")]
    if not graphs:
        raise LoweringError(f"no step.graph{' @' + name.lstrip('@') if name else ''} in the input")
    return graphs[0]
