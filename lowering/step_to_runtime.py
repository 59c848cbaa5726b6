"""convert-step-to-runtime: place a `step.graph` on the simulated fabric.

`build_program(graph, config)` turns a graph into a runnable
`steplus.runtime.fabric.program.Program`:

- one context per operator, in graph order (which fixes the HBM
  registration order of loads and stores, reference spec §7);
- `step.zip` feeding a map/accum/scan is fused into it (the artifact's binary
  operators peek both inputs themselves);
- every on-chip channel has the configuration's base depth (§1.3);
- a stream with several consumers gets a Broadcast context appended at the
  end of the node order (§7);
- the group rank of a partition / reassemble / eager_merge comes from the
  types (the data's dims below the selector's; a discardable `rank`
  attribute overrides it): `[B, 1]` tiles under a `[B]` selector move in
  groups closed by level 1;
- per-op knobs are discardable attributes: `compute_bw` (FLOPs/cycle, default
  the config's), `write_back_mu` (unit or bool), `add_outer_dim` and
  `switch_cycles` (routing), `name` (the context's name), `pmu_bw` (B/cycle
  a map/accum reads its memory-unit inputs at, default the config's);
- functional mode: loads read numpy tensors (`tensors[name]`, or a seeded
  random tensor), compute runs the regions' library functions.

`ConvertStepToRuntimePass` is the IR side of the same placement: it inserts
the Broadcasts, and annotates every operator with its context index
(`runtime.context`) and the graph with the channel depth and preset.

Example:

```mlir
// step-opt -p 'convert-step-to-runtime{preset=swiglu-hdl}' g.mlir gives
step.graph @g attributes {runtime.depth = 1 : i64, runtime.preset = "swiglu-hdl"} {
  %x = step.linear_offchip_load {runtime.context = 0 : i64, base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
  step.linear_offchip_store %x {runtime.context = 1 : i64, base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context as MLContext
from xdsl.dialects.builtin import (
    BoolAttr, IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import to_expr
from steplus.dialects.step.types import StreamType, TileType, TupleType
from steplus.runtime.fabric import ops_compute as oc
from steplus.runtime.fabric import ops_memory as om
from steplus.runtime.fabric import ops_routing as orr
from steplus.runtime.fabric import ops_shape as osh
from steplus.lowering.step_sim_estimate import (
    check_simulation_size,
    check_tile_bytes,
    check_tensor_bytes,
    largest_tile_bytes,
    unbound_symbols,
)
from steplus.runtime.fabric.config import HardwareConfig, get_preset
from steplus.runtime.fabric.engine import SimulationError, Simulator
from steplus.runtime.fabric.program import Program


def _is_arg_ref(v: SSAValue | None) -> bool:
    """A graph argument with concrete dims (a load's bound outer extent)."""
    from xdsl.ir import BlockArgument

    return (isinstance(v, BlockArgument) and isinstance(v.type, StreamType)
            and all(to_expr(d).is_Integer for d in v.type.dims))


class LoweringError(SimulationError):
    """The graph uses something the simulator cannot place (with the op for the location)."""

    def __init__(self, msg: str, op: Operation | None = None):
        super().__init__(msg)
        self.op = op


def _ints(a) -> list[int]:
    return [int(x) for x in a.get_values()] if a is not None else []


def _flag(op: Operation, name: str) -> bool:
    a = op.attributes.get(name)
    if a is None:
        return False
    if isinstance(a, UnitAttr):
        return True
    if isinstance(a, IntegerAttr):
        return bool(a.value.data)
    return isinstance(a, BoolAttr) and bool(a.value.data)


def _int_attr(op: Operation, name: str, default: int) -> int:
    a = op.attributes.get(name)
    return int(a.value.data) if isinstance(a, IntegerAttr) else default


MAX_KNOB = 1 << 40
"""The largest value of a per-op knob (cycles, FLOPs/cycle, depth)."""


def _knob(op: Operation, name: str, default: int, lo: int, hi: int = MAX_KNOB) -> int:
    """The integer attribute `name` of `op` (or `default`), checked to be in [lo, hi]."""
    v = _int_attr(op, name, default)
    if not lo <= v <= hi:
        raise LoweringError(f"'{name}' must be an integer in [{lo}, {hi}], got {v}", op)
    return v


def _switch_cycles(op: Operation, k: int, default: int) -> list[int]:
    """The `switch_cycles` of a routing op with `k` branches (one non-negative count each)."""
    sw = (_ints(getattr(op, "switch_cycles", None)) or _ints(op.attributes.get("switch_cycles"))
          or [default] * k)
    if len(sw) != k or not all(0 <= c <= MAX_KNOB for c in sw):
        shown = ", ".join(map(str, sw[:8])) + (", ..." if len(sw) > 8 else "")
        raise LoweringError(f"'switch_cycles' must list {k} cycle counts in [0, {MAX_KNOB}], "
                            f"got [{shown}]", op)
    return sw


def _tile(t) -> TileType:
    el = t.element if isinstance(t, StreamType) else t
    if isinstance(el, TupleType):
        el = el.elements.data[0]
    return el


def _tile_bytes(t) -> int:
    el = _tile(t)
    if isinstance(el, TileType) and el.is_static:
        return el.rows.data * el.cols.data * el.bytes_per_scalar()
    return 0


def _onchip(ctx, t) -> None:
    """§5.2: the context holds one tile of the declared type; with dynamic rows
    (`?`, dynamic tiling) the largest number of rows it saw at run time."""
    el = _tile(t)
    if isinstance(el, TileType) and not el.is_static and el.cols.data > 0:
        ctx.onchip_row_bytes = el.cols.data * el.bytes_per_scalar()
    else:
        ctx.onchip_bytes = _tile_bytes(t)


def _rank(v: SSAValue) -> int:
    return len(v.type.dims) if isinstance(v.type, StreamType) else 0


def _static_dims(t: StreamType) -> tuple[int, ...] | None:
    try:
        return tuple(int(d) for d in t.dims)
    except TypeError:
        return None


def _kernel(region, acc: bool) -> oc.Kernel:
    block = region.block
    slots: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
    calls = []
    result = None
    for op in block.ops:
        if isinstance(op, so.ApplyOp):
            calls.append((op.fn.data, [slots[a] for a in op.args]))
            slots[op.result] = len(block.args) + len(calls) - 1
        elif isinstance(op, so.YieldOp):
            result = slots[op.values[0]]
        else:
            raise LoweringError(f"the simulator runs step.apply regions only, found {op.name}", op)
    if result is None:
        raise LoweringError("function region has no step.yield")
    return oc.Kernel(len(block.args), calls, result, len(block.args) - 1 if acc else None)


def _fn_names(region) -> list[str]:
    """The library functions a region applies, in order."""
    return [o.fn.data for o in region.block.ops if isinstance(o, so.ApplyOp)]


def _unzip(v: SSAValue) -> list[SSAValue]:
    owner = v.owner
    if isinstance(owner, sr.ZipOp):
        return [*_unzip(owner.lhs), *_unzip(owner.rhs)]
    return [v]


@dataclass
class _Node:
    ctx: object
    ins: list  # (attr, index or None) per consumed operand
    outs: list  # (attr, index or None) per result


class _Builder:
    def __init__(self, graph: GraphOp, config: HardwareConfig, functional: bool,
                 tensors: dict | None, trace: bool, seed: int, hbm_factory=None,
                 limits: bool = True):
        self.graph, self.cfg, self.functional = graph, config, functional
        self.limits, self.tensor_bytes = limits, 0
        self.tensors = tensors or {}
        self.sim = Simulator(config, trace=trace, hbm_factory=hbm_factory)
        self.rng = np.random.default_rng(seed)
        self.counts: dict[str, int] = {}

    def name(self, op: Operation) -> str:
        a = op.attributes.get("name")
        if isinstance(a, StringAttr):
            return a.data
        short = op.name.removeprefix("step.")
        k = self.counts.get(short, 0)
        self.counts[short] = k + 1
        return f"{short}{k}"

    def tensor(self, name: str, rows: int, cols: int, in_shape: list[int]):
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

    # -- one operator -----------------------------------------------------
    def node(self, op: Operation) -> tuple[_Node, list[SSAValue]] | None:
        cfg, n = self.cfg, self.name(op)
        req = cfg.hbm.request_bytes
        one = [("out", None)]
        if isinstance(op, so.LinearOffChipLoadOp):
            t = _tile(op.output.type)
            shape = _ints(op.tiled_out_shape)
            in_shape = _ints(op.tiled_in_shape)
            stride = _ints(op.stride)
            ref = op.ref
            if _is_arg_ref(ref):
                # A reference stream that is a graph argument only carries the
                # load's symbolic outer extent (the frontend's `B`): once bound,
                # the load walks those dims itself, an OffChipLoad.
                outer = [int(d) for d in ref.type.dims]
                inner = int(np.prod(in_shape)) if in_shape else 1
                stride = [inner * int(np.prod(outer[k + 1:])) for k in range(len(outer))] + stride
                shape, in_shape, ref = outer + shape, outer + in_shape, None
            ctx = om.LoadCtx(n, t.rows.data, t.cols.data, t.bytes_per_scalar(), shape,
                             stride, in_shape,
                             self.tensor(n, t.rows.data, t.cols.data, in_shape), req)
            return _Node(ctx, [("ref", None)] if ref is not None else [], one), \
                ([ref] if ref is not None else [])
        if isinstance(op, so.RandomOffChipLoadOp):
            t = _tile(op.output.type)
            in_shape = _ints(op.tiled_in_shape)
            ctx = om.RandomLoadCtx(n, t.rows.data, t.cols.data, t.bytes_per_scalar(),
                                   self.tensor(n, t.rows.data, t.cols.data, in_shape),
                                   in_shape, req)
            return _Node(ctx, [("addr", None)], one), [op.raddr]
        if isinstance(op, so.LinearOffChipStoreOp):
            t = _tile(op.input.type)
            # §5.1: a store counts its input's declared element type (the
            # simulated tiles may be narrower: they inherit the loads' bytes).
            ctx = om.StoreCtx(n, req, t.bytes_per_scalar() if isinstance(t, TileType) else None)
            ctx.onchip_bytes = _tile_bytes(op.input.type)
            return _Node(ctx, [("inp", None)], []), [op.input]
        if isinstance(op, so.RandomOffChipStoreOp):
            ctx = om.RandomStoreCtx(n, _knob(op, "buffer_depth", 1, 1) if op.buffer_depth is None
                                    else op.buffer_depth.value.data, req)
            return _Node(ctx, [("addr", None), ("data", None)], one), [op.waddr, op.wdata]
        if isinstance(op, so.FlatMapOp) and _fn_names(op.body) == ["zero", "split_tiles"]:
            # step-hierarchical-tiling: logical tile -> physical tiles (result element)
            el = _tile(op.output.type)
            ctx = osh.SplitTilesCtx(n, el.rows.data, el.cols.data, op.rank.value.data)
            return _Node(ctx, [("inp", None)], one), [op.input]
        if isinstance(op, so.AccumOp) and _fn_names(op.update) == ["join_tiles"]:
            el = _tile(op.output.type)
            ctx = osh.JoinTilesCtx(n, op.rank.value.data, el.rows.data, el.cols.data,
                                   self.functional)
            _onchip(ctx, op.output.type)
            return _Node(ctx, [("inp", None)], one), [op.input]
        if isinstance(op, (so.MapOp, so.AccumOp, so.ScanOp)):
            ins = _unzip(op.input)
            bw = _knob(op, "compute_bw", cfg.compute_bw, 1)
            pmu = _knob(op, "pmu_bw", cfg.pmu_bw, 1)  # step-allocate-units' PMUs
            wb = _flag(op, "write_back_mu")
            if isinstance(op, so.MapOp):
                ctx = oc.MapCtx(n, _kernel(op.body, False), bw, pmu, wb, self.functional)
            else:
                acc_t = _tile(op.output.type)
                init_shape = (max(acc_t.rows.data, 0), max(acc_t.cols.data, 0))
                init_k = _kernel(op.init, False) if op.init.block.ops else None
                init = None
                if init_k is not None and not any(f.name == "zero" for f, _ in init_k.calls):
                    init = lambda k=init_k: k.run([])  # noqa: E731
                ctx = oc.AccumCtx(n, _kernel(op.update, True), op.rank.value.data, init_shape,
                                  bw, pmu, wb, self.functional,
                                  scan=isinstance(op, so.ScanOp), init=init)
                _onchip(ctx, op.output.type)
            ctx.inputs = [None] * len(ins)
            return _Node(ctx, [("inputs", i) for i in range(len(ins))], one), ins
        if isinstance(op, so.FlatMapOp):
            calls = [o for o in op.body.block.ops if isinstance(o, so.ApplyOp)]
            if [c.fn.data for c in calls] != ["retile_streamify"]:
                raise LoweringError("the simulator supports step.flat_map with "
                                    "\"retile_streamify\" only", op)
            return _Node(osh.RetileStreamifyCtx(n), [("inp", None)], one), [op.input]
        if isinstance(op, sr.FlattenOp):
            return _Node(osh.FlattenCtx(n, op.min.value.data, op.max.value.data),
                         [("inp", None)], one), [op.input]
        if isinstance(op, sr.ReshapeOp):
            t = _tile(op.input.type)
            pad = (max(t.rows.data, 0), max(t.cols.data, 0)) if isinstance(t, TileType) else (1, 1)
            nb = t.bytes_per_scalar() if isinstance(t, TileType) else 4
            ctx = osh.ReshapeCtx(n, op.split_dim.value.data, op.chunk_size.value.data,
                                 _flag(op, "add_outer_dim"), pad, nb)
            return _Node(ctx, [("inp", None)], [("out", None), (None, None)]), [op.input]
        if isinstance(op, sr.PromoteOp):
            return _Node(osh.PromoteCtx(n), [("inp", None)], one), [op.input]
        if isinstance(op, sr.RepeatOp):
            ctx = osh.RepeatCtx(n, op.count.value.data)
            _onchip(ctx, op.input.type)
            return _Node(ctx, [("inp", None)], one), [op.input]
        if isinstance(op, sr.ExpandOp):
            ctx = osh.ExpandCtx(n, op.rank.value.data)
            _onchip(ctx, op.input.type)
            return _Node(ctx, [("inp", None), ("ref", None)], one), [op.input, op.ref]
        if isinstance(op, sr.BroadcastOp):
            ctx = osh.BroadcastCtx(n)
            ctx.outs_list = [None] * len(op.outputs)
            return _Node(ctx, [("inp", None)], [("outs_list", i) for i in range(len(op.outputs))]), [op.input]
        if isinstance(op, sr.ConsumeOp):
            return _Node(osh.ConsumeCtx(n), [("inp", None)], []), [op.input]
        if isinstance(op, (sr.PartitionOp, sr.ParallelizeOp)):
            k = len(op.outputs)
            sw = _switch_cycles(op, k, 1 if isinstance(op, sr.PartitionOp) else 0)
            if isinstance(op, sr.PartitionOp):
                rank = _rank(op.input) - _rank(op.sel)
                ctx = orr.PartitionCtx(n, _knob(op, "rank", rank, 0, 64), sw,
                                       _flag(op, "write_back_mu"), cfg.pmu_bw)
                ins, vals = [("inp", None), ("sel", None)], [op.input, op.sel]
            else:
                ctx = orr.ParallelizeCtx(n, op.rank.value.data, sw)
                ins, vals = [("inp", None)], [op.input]
            ctx.outs_list = [None] * k
            return _Node(ctx, ins, [("outs_list", i) for i in range(k)]), vals
        if isinstance(op, sr.ReassembleOp):
            k = len(op.data_inputs)
            sw = _switch_cycles(op, k, 1)
            rank = _rank(op.data_inputs[0]) - 1
            ctx = orr.ReassembleCtx(n, _knob(op, "rank", rank, 0, 64), sw,
                                    _flag(op, "write_back_mu"), cfg.pmu_bw)
            ctx.ins_list = [None] * k
            return _Node(ctx, [("ins_list", i) for i in range(k)] + [("sel", None)], one), \
                list(op.inputs)
        if isinstance(op, sr.EagerMergeOp):
            ctx = orr.EagerMergeCtx(n, _knob(op, "rank", _rank(op.inputs[0]) - 1, 0, 64))
            ctx.ins_list = [None] * len(op.inputs)
            return _Node(ctx, [("ins_list", i) for i in range(len(op.inputs))],
                         [("out", None), ("sel_out", None)]), list(op.inputs)
        if isinstance(op, sg.SelectGenOp):
            k = op.choices.value.data
            vals = _ints(op.values)
            rows = [tuple(j for j in range(k) if vals[r * k + j]) for r in range(len(vals) // k)]
            dims = _static_dims(op.output.type) or (len(rows),)
            return _Node(orr.SelectGenCtx(n, rows, dims), [], one), []
        if isinstance(op, sg.MetadataGenOp):
            return _Node(orr.MetadataGenCtx(n, _ints(op.values)), [], one), []
        if isinstance(op, sg.ExpertAddrGenOp):
            return _Node(orr.ExpertAddrGenCtx(n, op.tiles_per_expert.value.data),
                         [("inp", None)], one), [op.sel]
        if isinstance(op, sg.CacheReadAddrGenOp):
            return _Node(orr.CacheReadAddrGenCtx(n), [("idx", None), ("seq", None)], one), \
                [op.idx, op.seq_len]
        if isinstance(op, sg.FilterLastTileOp):
            return _Node(orr.FilterLastTileCtx(n), [("inp", None)], one), [op.seq_len]
        raise LoweringError(f"the simulator does not support {op.name}", op)

    # -- the whole graph ------------------------------------------------------
    def build(self) -> Program:
        g = self.graph
        check_tile_bytes(g)  # not waived by --force: the timing model's int64 math overflows
        if self.limits:
            check_simulation_size(g)
            if self.functional:
                check_tensor_bytes(largest_tile_bytes(g), what="one tile's values")
        for arg in g.body.block.args:
            if not all(isinstance(u.operation, so.LinearOffChipLoadOp) and u.operation.ref is arg
                       for u in arg.uses) or not _is_arg_ref(arg):
                raise LoweringError(
                    "graph arguments can only be the (bound) reference streams of loads; "
                    "bind their dims (step-run --routing/--kv/--bind, or step-specialize"
                    "{rewrite=true}) or feed data through loads", g)
        nodes: dict[Operation, tuple[_Node, list[SSAValue]]] = {}
        for op in g.body.block.ops:
            if isinstance(op, sr.ZipOp):
                users = {u.operation for u in op.output.uses}
                if not all(isinstance(u, (so.MapOp, so.AccumOp, so.ScanOp, sr.ZipOp)) for u in users):
                    raise LoweringError("step.zip must feed a map, accum or scan to be simulated", op)
                continue
            if isinstance(op, sr.ConsumeOp) and isinstance(op.input.owner, sr.ReshapeOp) \
                    and op.input is op.input.owner.padding:
                continue  # the simulated Reshape does not produce its padding flags
            nodes[op] = self.node(op)
            self.sim.add(nodes[op][0].ctx)
        # consumers of every produced stream
        consumers: dict[SSAValue, list[tuple[_Node, int]]] = {}
        for op, (node, vals) in nodes.items():
            for i, v in enumerate(vals):
                consumers.setdefault(v, []).append((node, i))
        depth = self.cfg.base_depth
        for op, (node, _) in nodes.items():
            for j, res in enumerate(op.results):
                attr = node.outs[j] if j < len(node.outs) else (None, None)
                users = consumers.get(res, [])
                if not users or attr[0] is None:
                    continue
                src = node.ctx
                if len(users) > 1:  # §7: a Broadcast appended at the end of the node order
                    b = osh.BroadcastCtx(f"{src.name}.bcast{j}")
                    self.sim.add(b)
                    ch = self.sim.connect(src, b, depth)
                    ch.elem_bytes = _tile_bytes(res.type)
                    _bind(src, attr, ch)
                    b.inp = ch
                    b.outs_list = []
                    for unode, i in users:
                        c2 = self.sim.connect(b, unode.ctx, depth)
                        c2.elem_bytes = ch.elem_bytes
                        b.outs_list.append(c2)
                        _bind(unode.ctx, unode.ins[i], c2)
                    continue
                unode, i = users[0]
                ch = self.sim.connect(src, unode.ctx, depth)
                ch.elem_bytes = _tile_bytes(res.type)
                _bind(src, attr, ch)
                _bind(unode.ctx, unode.ins[i], ch)
        prog = Program(self.sim)
        prog.tensors = self.tensors
        prog.unbound = unbound_symbols(g)
        return prog


def _bind(ctx, attr, ch) -> None:
    name, idx = attr
    if idx is None:
        setattr(ctx, name, ch)
    else:
        getattr(ctx, name)[idx] = ch


def find_graph(module: ModuleOp | GraphOp, name: str | None = None) -> GraphOp:
    if isinstance(module, GraphOp):
        return module
    graphs = [op for op in module.walk() if isinstance(op, GraphOp)]
    if name is not None:
        graphs = [g for g in graphs if g.sym_name.data == name.lstrip("@")]
    if not graphs:
        raise LoweringError(f"no step.graph{' @' + name.lstrip('@') if name else ''} in the input")
    return graphs[0]


def build_program(graph: ModuleOp | GraphOp, config: HardwareConfig | None = None, *,
                  functional: bool = False, tensors: dict | None = None,
                  trace: bool = False, seed: int = 0, graph_name: str | None = None,
                  hbm_factory=None, limits: bool = True) -> Program:
    """The runtime program of a step graph (see module doc).

    `hbm_factory` replaces the closed-form HBM model (tests pass the
    request-level `hbm_reference.ReferenceHBMServer`). With `limits` (the
    default) a graph whose simulation is estimated past
    `step_sim_estimate.MAX_SIM_ELEMENTS` elements, or whose random input
    tensors exceed `MAX_TENSOR_BYTES`, raises `SimulationTooLarge` first."""
    return _Builder(find_graph(graph, graph_name), config or get_preset("step-eval"),
                    functional, tensors, trace, seed, hbm_factory, limits).build()


@dataclass(frozen=True)
class ConvertStepToRuntimePass(ModulePass):
    """Place step graphs on the fabric: insert Broadcasts, number contexts, set depths.

    Every stream with several consumers gets a `step.broadcast` appended at the
    end of the graph (reference spec §7); every operator that becomes a context
    gets `runtime.context = k` (zips are fused into their consumer and get
    none); the graph gets `runtime.depth` (the preset's base depth unless
    `depth` is given) and `runtime.preset`. `build_program` runs the result.

    Example:

    ```mlir
    step.graph @g {
      %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
      step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
    }
    ```

    becomes, with `step-opt -p 'convert-step-to-runtime{preset=swiglu-hdl}'`:

    ```mlir
    step.graph @g attributes {runtime.depth = 1 : i64, runtime.preset = "swiglu-hdl"} {
      %x = step.linear_offchip_load {runtime.context = 0 : i64, base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
      step.linear_offchip_store %x {runtime.context = 1 : i64, base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
    }
    ```
    """

    name = "convert-step-to-runtime"

    preset: str = "step-eval"
    depth: int = 0

    def apply(self, ctx: MLContext, op: ModuleOp) -> None:
        from xdsl.rewriter import Rewriter

        from steplus.utils.diagnostics import OpDiagnosticError

        try:
            cfg = get_preset(self.preset)
        except ValueError as e:
            raise OpDiagnosticError(None, f"convert-step-to-runtime: {e}") from None
        if self.depth < 0:
            raise OpDiagnosticError(None, "convert-step-to-runtime: depth must be positive")
        depth = self.depth or cfg.base_depth
        for g in [o for o in op.walk() if isinstance(o, GraphOp)]:
            block = g.body.block
            for o in list(block.ops):
                for res in o.results:
                    uses = list(res.uses)
                    if len(uses) > 1 and isinstance(res.type, StreamType) \
                            and not isinstance(o, sr.ZipOp):
                        b = sr.BroadcastOp.create(operands=[res], result_types=[res.type] * len(uses))
                        Rewriter.insert_op(b, _end_of(block))
                        for u, r in zip(uses, b.results):
                            u.operation.operands[u.index] = r
            k = 0
            for o in block.ops:
                if isinstance(o, sr.ZipOp):
                    continue
                o.attributes["runtime.context"] = IntegerAttr(k, i64)
                k += 1
            g.attributes["runtime.depth"] = IntegerAttr(depth, i64)
            g.attributes["runtime.preset"] = StringAttr(cfg.name)


def _end_of(block):
    from xdsl.rewriter import InsertPoint

    return InsertPoint.at_end(block)

