"""One step graph per decoder layer from the PyTorch route's phases (issue 31 items 1-2).

`lower_exported` (the project's PyTorch -> STeP route) gives one step graph
per *phase* of a layer: the recognized decode attention (§8.4 graph), the
collectives (`collective.py`), and the dense regions (projections, norms,
RoPE, residuals, data movement) through `convert-linalg-to-step`, each with
its own local addresses. `layer_graph(low, nodes)` chains them into ONE
`step.graph` of the layer:

1. every tensor of the exported graph gets one address (a view, reshape,
   dtype cast (`aten.to`), `wait_tensor` or a data movement that does not
   move anything — a transpose of a size-1 dim, as the head split of a
   decode step — is its input: the same tensor; so is a `cat` with one
   non-empty input (a prefill's empty cache); the inputs of a `cat` the route
   reads from one region share that region's symbol);
2. the phases are put in dependence order and their ops copied into one
   block, every load and store rebased to its tensor's address and named
   after it (`sn40l.symbol`, except the attention's in-place cache walk);
3. a phase boundary whose load walks exactly the stream the producer stored
   (same dims, same tile shape) and is the tensor's only read is connected
   **on chip**: the load goes, the producer's stream feeds the consumer (a
   `mul_scalar[1]` map casts it when the dtypes differ, as the route's
   bf16/f32 boundaries do). A tensor read several times, each read in the
   walk it is produced in (the residual `add_3`: RMSNorm reads it for the
   sum of squares and again for the product, the last residual add after the
   FFN; or each read joining the row into one wide tile re-read once per output
   column tile, as the q and the k/v projections read Mistral's normalized
   input with different repeat counts: `_fans_out`), is on chip too, through a
   `step.broadcast` whose outputs hold one row
   of its tiles (two when it has several: double-buffered) plus the base depth
   (`fanout_depth`, `fanout_depth()`): with
   the fabric's 2-deep channels that fan-out deadlocks (the product waits for
   the whole row's sum). A small row-major tensor read in other tiles than
   it is streamed in — a decode step's q, k, v as rows of (batch, head), its
   v one row at a time, its roped q in query groups — is re-laid out on chip
   (`accum join_tiles` into one row tile, `split_rows[k]`, then `flat_map
   split_tiles` or `regroup`: `_relayout`, `_relayout_rows`,
   `_relayout_blocks`). Other boundaries (another tiling, a gather, the
   attention's output written by per-region random stores) go **through memory**:
   the store and the load stay, and step-allocate-units starts a new section
   at such a load (a memory dependence), so they are the layer's kernel cuts;
4. the store of a tensor everything consumes on chip is dropped unless the
   tensor is the layer's output.

So "fused" is the layer graph through `step-allocate-units` (sections at the
memory dependences and where the chip is full), "unfused" the same graph
through `step-kernelize{mode=unfused}`; both keep the attention's ragged cache
walk in one kernel (`passes/sn40l/kernelize.py`). The per-request cache
lengths stay ragged (`?L<r>`); `step.bind`'s totals `sum_L<r>` come from the
cache shape, and the allocators bound one request's length by its total.

Example::

    from steplus.examples.workloads.sn40l_llama import LLAMA2_7B, export_layer
    from steplus.examples.workloads.sn40l_route import layer_graph
    from steplus.lowering.linalg_to_step.collective import P2PNet
    ep, low = export_layer(LLAMA2_7B.small(), tp=2, batch=4, cached=64,
                           strategy="interleaved", dense="tile=2x8x1024", p2p=P2PNet(2))
    lg = layer_graph(low, ep.graph.nodes, "layer")
    lg.module        # one step.graph; lg.onchip / lg.memory boundaries

`simulate_layers(lg.module, "fused", layers=32)` places the 32-layer model
(`step-allocate-memory`'s repetition: a copy of each layer's weights and KV
caches) and simulates each layer with its streams on its copy's tier.

(With fewer requests than the attention strategy's regions, e.g. `batch=2`,
the decode attention is not recognized; then the cache's `torch.cat` is a
dense `move` phase — a copy of the whole cache — and the attention is a
remark.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from steplus.dialects.sn40l_attrs import SYMBOL
from steplus.dialects.step import GraphOp
from steplus.dialects.step.discardable import NAME
from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import Graph
from steplus.dialects.step.types import StreamType, TileType
from steplus.lowering.linalg_to_step.aten import Lowering, LoweredPart, name_of
from steplus.lowering.linalg_to_step.column_perm import _split
from steplus.lowering.linalg_to_step.attention_graph import (
    K_BASE, KC_BASE, O_BASE, Q_BASE, V_BASE, VC_BASE,
)
from steplus.dialects.target.fabric import SN40L as PRESET
from steplus.dialects.target.fabric import HardwareConfig
from steplus.dialects.target.sn40l import value
from steplus.examples.workloads.sn40l import STREAM_RATES, prepare
from steplus.passes.sn40l.allocate_memory import annotate, layer_tiers, plan_layers, set_tiers
from steplus.passes.sn40l.kernels import fan_out
from steplus.runtime.fabric.kernel_run import run_kernels
from steplus.passes.step.bindings import graph_bindings, set_graph_bindings
from steplus.utils.attrs import i64_array, ints_of

ALIASES = {"aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
           "aten.to.dtype", "aten.clone.default", "aten.alias.default",
           "_c10d_functional.wait_tensor.default"}
"""Nodes that are their input's tensor (no data moves; a dtype cast is the consumer's
load dtype in the route's phases)."""
SLOT = 1 << 36
"""Address spacing of the layer's tensors (step-allocate-memory packs them)."""
ATTN_ROLES = {Q_BASE: "q", K_BASE: "k_new", V_BASE: "v_new", KC_BASE: "k_cache",
              VC_BASE: "v_cache"}
MEM = (so.LinearOffChipLoadOp, so.LinearOffChipStoreOp, so.RandomOffChipLoadOp,
       so.RandomOffChipStoreOp)


@dataclass
class LayerGraph:
    module: ModuleOp  # one step.graph: the layer
    phases: list[str]  # "kind:role:first output", in the graph's order
    onchip: int  # phase boundaries connected on chip
    memory: int  # boundaries through memory (each a section cut)
    tensors: dict[str, int] = field(default_factory=dict)  # tensor -> address
    dropped: list[str] = field(default_factory=list)  # identity moves made aliases
    onchip_tensors: list[str] = field(default_factory=list)  # the boundaries on chip


def _identity_move(p: LoweredPart) -> bool:
    """A data-movement phase that reads its input in order, whole tiles: a view."""
    if p.role != "move":
        return False
    gens = [o for o in p.module.walk() if isinstance(o, so.MetadataGenOp)]
    loads = [o for o in p.module.walk() if isinstance(o, so.RandomOffChipLoadOp)]
    if len(gens) != 1 or len(loads) != 1:
        return False
    vals = ints_of(gens[0].values)
    return vals == list(range(len(vals)))


def _local(p: LoweredPart) -> dict[int, tuple[str, bool]]:
    """Local address -> (tensor node name, is an output) of a phase."""
    if p.kind == "attention":
        out = {a: (p.inputs[r], False) for a, r in ATTN_ROLES.items() if r in p.inputs}
        out[O_BASE] = (p.outputs[0], True)
        return out
    addrs = getattr(p.lowered, "addresses", {})
    out = {}
    for k, a in addrs.items():
        if k.startswith("arg") and k in p.inputs:
            out[a] = (p.inputs[k], False)
        elif k.startswith("result") and int(k[6:]) < len(p.outputs):
            out[a] = (p.outputs[int(k[6:])], True)
    return out


def _order(parts: list[LoweredPart], canon) -> list[LoweredPart]:
    """The phases in dependence order (stable: the route's order among ready ones)."""
    made = {canon(o): i for i, p in enumerate(parts) for o in p.outputs}
    deps = [{made[canon(x)] for x in p.inputs.values() if canon(x) in made} - {i}
            for i, p in enumerate(parts)]
    done: list[int] = []
    left = list(range(len(parts)))
    for _ in range(len(parts)):
        ready = next((i for i in left if deps[i] <= set(done)), None)
        if ready is None:
            raise ValueError("the route's phases depend on each other in a cycle")
        done.append(ready)
        left.remove(ready)
    return [parts[i] for i in done]


def _dims(t: StreamType) -> list[str]:
    return [str(d) for d in t.dims]


def _chain(block: Block, v: SSAValue, build) -> SSAValue:
    """Append to `block` the ops `build(stream)` makes from `v` (through the builder, so
    the result types are inferred and verified); returns the last stream."""
    t = v.type
    assert isinstance(t, StreamType)
    g = Graph("chain")
    build(g.argument(list(t.dims), t.element, "x")).consume()
    graph = next(o for o in g.module().walk() if isinstance(o, GraphOp))
    ops = list(graph.body.block.ops)
    mapper: dict[SSAValue, SSAValue] = {graph.body.block.args[0]: v}
    for op in ops[:-1]:  # the last is the consume of the result
        c = op.clone(value_mapper=mapper)
        for a, b in zip(op.results, c.results):
            mapper[a] = b
        block.add_op(c)
    return mapper[ops[-1].operands[0]]


def _rows_to_walk(s, want: list[str]):
    """`[P.., m, 1]` (each row tile `m` times) or `[P.., 1]` from `[P..]` one tile per row."""
    if len(want) >= 2 and want[-2].isdigit() and want[-1] == "1" \
            and len(want) == len(s.dims) + 2:
        s = s.repeat(int(want[-2]))
    data, pad = s.reshape(1, 0)
    pad.consume()
    return data


def _rows_of(block: Block, v: SSAValue, ea: TileType, a: list[str], b: list[str],
             c2: int) -> SSAValue | None:
    """`[P.., n]` of `R x c` tiles as `[N, 1]` single rows of `c2 = n c` columns (the
    attention's query/key rows from RoPE's row blocks): the `n` column tiles joined
    (`accum join_tiles`), the tile's rows exchanged with a stream dim of 1
    (`step.regroup`, on chip) and the dims flattened; None when the shapes disagree."""
    r = ea.rows.data
    if not (len(a) >= 2 and all(d.isdigit() for d in a) and len(b) == 2 and b[1] == "1"
            and b[0].isdigit() and int(a[-1]) * ea.cols.data == c2):
        return None
    outer = [int(d) for d in a[:-1]]
    if int(b[0]) != r * int(np.prod(outer)):
        return None
    wide = TileType(r, c2, ea.scalar)

    def build(s):
        if int(a[-1]) > 1:
            s, pad = s.accum("join_tiles", 1, acc=wide).reshape(1, 0)
            pad.consume()
        s = s.regroup(0, 0).flatten(0, len(outer))
        data, pad = s.reshape(1, 0)
        pad.consume()
        return data

    return _chain(block, v, build)


def _relayout_cols(ea: TileType, eb: TileType, a: list[str], b: list[str]) -> int | None:
    """`k` when `_relayout` applies (module doc of `_relayout`), else None."""
    if not (len(a) >= 2 and all(d.isdigit() for d in a)):
        return None
    n, r, c, big_r, big_c = int(a[-1]), ea.rows.data, ea.cols.data, eb.rows.data, \
        eb.cols.data
    if b == a[:-1]:
        k = 1
    elif len(b) == len(a) and b[:-1] == a[:-1] and b[-1].isdigit():
        k = int(b[-1])
    else:
        return None
    width = k * big_c
    if (big_r == r and (k > 1 or width != n * c)) or (n * c) % width \
            or r * n * c != big_r * width:
        return None
    return k


def _relayout(block: Block, v: SSAValue, ea: TileType, eb: TileType, a: list[str],
              b: list[str]) -> SSAValue | None:
    """`[P.., n]` of `r x c` tiles (a row of `n` column tiles) as the same row-major tensor
    in `R x C` tiles walking `[P..]` (one tile) or `[P.., k]` (`k` column tiles of one
    `R x kC` tile; `k = 1`: the one tile keeps the walk's unit dim, `reshape`), `R != r`
    (or the row as one `r x nc` tile): the row joined into one `r x nc` tile (`accum
    join_tiles`), its rows cut `kC` wide (`split_rows[kC]`) and, for `k > 1`, split into
    column tiles (`flat_map split_tiles`): a decode step's q, `[batch, heads x
    head_dim]`, read by RoPE in rows of (batch, head) (`[1, 1]` of 16x8 for a TP2 shard
    at test sizes, whose q row is one 4x32 tile). None when the shapes disagree."""
    k = _relayout_cols(ea, eb, a, b)
    if k is None:
        return None
    n, r, c, big_r, big_c = int(a[-1]), ea.rows.data, ea.cols.data, eb.rows.data, \
        eb.cols.data
    width = k * big_c

    def build(s):
        s = s.accum("join_tiles", 1, acc=TileType(r, n * c, ea.scalar))
        if width != n * c:
            s = s.map(f"split_rows[{width}]")
        if k > 1:
            return _split(s.g, s, big_r, big_c)
        if len(b) == len(a):  # `[P.., 1]`: the one tile keeps the walk's unit dim
            s, pad = s.reshape(1, 0)
            pad.consume()
        return s

    return _chain(block, v, build)


def _relayout_rows(block: Block, v: SSAValue, ea: TileType, eb: TileType, a: list[str],
                   b: list[str]) -> SSAValue | None:
    """`[1.., n]` of `r x c` tiles (one row of `n` column tiles) as `[N, 1]` single rows
    of `C` columns of the same row-major tensor (`r n c = N C`): the row joined
    (`accum join_tiles`), cut `C` wide (`split_rows[C]`), its rows exchanged with a
    stream dim of 1 (`step.regroup`): a decode step's v, `[batch, heads x head_dim]`,
    read by the attention one (batch, head) row at a time. None otherwise."""
    if not (len(a) >= 2 and all(d == "1" for d in a[:-1]) and a[-1].isdigit()
            and len(b) == 2 and b[0].isdigit() and b[1] == "1" and eb.rows.data == 1):
        return None
    n, r, c, rows, cols = int(a[-1]), ea.rows.data, ea.cols.data, int(b[0]), eb.cols.data
    if (n * c) % cols or r * n * c != rows * cols:
        return None

    def build(s):
        s = s.accum("join_tiles", 1, acc=TileType(r, n * c, ea.scalar))
        for _ in a[:-2]:
            s = s.flatten(0, 1)
        s, pad = s.map(f"split_rows[{cols}]").reshape(1, 0)
        pad.consume()
        s = s.regroup(0, 0).flatten(0, 1)
        s, pad = s.reshape(1, 0)
        pad.consume()
        return s

    return _chain(block, v, build)


def _relayout_blocks(block: Block, v: SSAValue, ea: TileType, eb: TileType, a: list[str],
                     b: list[str]) -> SSAValue | None:
    """`[1.., n]` of `r x c` tiles (one row of `n` column tiles) as `[M, 1]` blocks of
    `R x C` of the same row-major tensor (`r n c = M R C`, `R > 1`): the row joined
    (`accum join_tiles`), cut `C` wide (`split_rows[C]`), split into its `M` row blocks
    (`flat_map split_tiles`): a decode step's roped q, rows (batch, head), read by the
    attention one KV head's query group at a time. None otherwise."""
    if not (len(a) >= 2 and all(d == "1" for d in a[:-1]) and a[-1].isdigit()
            and len(b) == 2 and b[0].isdigit() and b[1] == "1" and eb.rows.data > 1):
        return None
    n, r, c, blocks, big_r, cols = int(a[-1]), ea.rows.data, ea.cols.data, int(b[0]), \
        eb.rows.data, eb.cols.data
    if (n * c) % cols or r * n * c != blocks * big_r * cols or (r * n * c // cols) % big_r:
        return None

    def build(s):
        s = s.accum("join_tiles", 1, acc=TileType(r, n * c, ea.scalar))
        if cols != n * c:
            s = s.map(f"split_rows[{cols}]")
        like = TileType(big_r, cols, ea.scalar)
        body = Block(arg_types=[s.element])
        zero = so.ApplyOp.create(result_types=[like], properties={"fn": StringAttr("zero")})
        cut = so.ApplyOp.create(operands=[body.args[0], zero.results[0]], result_types=[like],
                                properties={"fn": StringAttr("split_tiles")})
        body.add_ops([zero, cut, so.YieldOp.create(operands=[cut.results[0]])])
        dims = [*s.dims, blocks]
        op = so.FlatMapOp.create(operands=[s.value], result_types=[StreamType(dims, like)],
                                 regions=[Region(body)], properties={"rank": IntegerAttr(1, i64)})
        s = s.g.emit(op, ["blocks"])[0].with_dims(dims)
        for _ in dims[1:]:
            s = s.flatten(0, 1)
        s, pad = s.reshape(1, 0)
        pad.consume()
        return s

    return _chain(block, v, build)


def _on_chip(block: Block, v: SSAValue, want: Attribute) -> SSAValue | None:
    """`v` (a stored stream) as the stream a load of its tensor walks (`want`), on chip,
    or None (then it goes through memory). Handled: the same walk; one tile per row
    re-read `m` times (`[P.., 1]` -> `[P.., m, 1]`: a projection's input once per output
    column tile when the reduction tile spans the row: `repeat`, `flatten`, a `reshape`
    into chunks of 1); a row of `n` tiles joined into one wide tile (`accum join_tiles`)
    and then re-read likewise; blocks of rows split into single rows (`_rows_of`); a
    dtype cast (`mul_scalar[1]`) at the end. A row of
    several tiles re-read would need an on-chip buffer streamed again
    (`bufferize`/`streamify`), which the fabric simulator does not run."""
    have = v.type
    if not (isinstance(have, StreamType) and isinstance(want, StreamType)):
        return None
    ea, eb = have.element, want.element
    if not (isinstance(ea, TileType) and isinstance(eb, TileType) and ea.is_static
            and eb.is_static):
        return None
    a, b = _dims(have), _dims(want)
    c, c2 = ea.cols.data, eb.cols.data
    if ea.rows.data != eb.rows.data:
        v2 = _rows_of(block, v, ea, a, b, c2)
        if v2 is None:
            v2 = _relayout(block, v, ea, eb, a, b) or _relayout_rows(block, v, ea, eb, a, b) \
                or _relayout_blocks(block, v, ea, eb, a, b)
            if v2 is not None and ea.scalar != eb.scalar:
                v2 = _chain(block, v2, lambda s: s.map("mul_scalar[1]", dtype=eb.scalar))
            return v2
        v, ea, a, c = v2, TileType(1, c2, ea.scalar), b, c2
    tail = len(b) >= 2 and b[-1] == "1" and (b[:-1] == a[:-1] or b[:-2] == a[:-1])
    if a == b and c == c2:
        pass
    elif c == c2 and len(a) >= 2 and a[-1] == "1" and b[:-2] == a[:-1] and b[-1] == "1" \
            and b[-2].isdigit():
        v = _chain(block, v, lambda s: _rows_to_walk(s.flatten(0, 1), b))
    elif tail and a[-1].isdigit() and c2 == int(a[-1]) * c and len(a) >= 2:
        wide = TileType(ea.rows.data, c2, ea.scalar)
        v = _chain(block, v, lambda s: _rows_to_walk(s.accum("join_tiles", 1, acc=wide), b))
    else:
        # the row as one wide tile, or its row blocks
        v2 = _relayout(block, v, ea, eb, a, b) or _relayout_blocks(block, v, ea, eb, a, b)
        if v2 is None:
            return None
        v = v2
    if ea.scalar != eb.scalar:
        v = _chain(block, v, lambda s: s.map("mul_scalar[1]", dtype=eb.scalar))
    return v


def _collective(block: Block, v: SSAValue, op: Operation, load: so.LinearOffChipLoadOp,
                address: int, symbol: str, tag: str) -> so.LinearOffChipStoreOp:
    """The route's collective `op` on the stored stream `v` (cast to the collective's
    dtype, the exported tensor's, first), and the store of its result at `address`
    (dropped later if every reader takes it on chip)."""
    el, want = v.type, load.output.type
    assert isinstance(el, StreamType) and isinstance(want, StreamType)
    have_el, want_el = el.element, want.element
    if isinstance(have_el, TileType) and isinstance(want_el, TileType) \
            and have_el.scalar != want_el.scalar:
        v = _chain(block, v, lambda s: s.map("mul_scalar[1]", dtype=want_el.scalar))
    c = type(op).create(operands=[v], result_types=[v.type],
                        properties=dict(op.properties),
                        attributes={"name": StringAttr(f"{tag}_{op.name.split('.')[-1]}")})
    st = so.LinearOffChipStoreOp.create(operands=[c.results[0]],
                                        properties={"base_addr": IntegerAttr(address, i64)})
    SYMBOL.set(st, symbol)
    block.add_ops([c, st])
    return st


BASE_DEPTH = 2
"""The fabric's base channel depth (`HardwareConfig.base_depth`) a fan-out adds to its row."""


def fanout_depth(v: SSAValue) -> int:
    """The tiles each output of the fan-out of `v` must hold: a row of its tiles (the
    dims inside the outermost: a residual `[R, n]` of row blocks waits for the norm's
    row sum and for the whole FFN of its row), two rows when there are several
    (double-buffered: the producer writes row r + 1 while the slowest branch still holds
    row r; with one row the producer of the residual and the FFN after the norm took
    turns, and the Llama2-7B prefill's fused section was 15 % slower than the same
    operators as two sections), plus the base depth."""
    t = v.type
    assert isinstance(t, StreamType)
    row = 1
    for d in t.dims[1:]:
        row *= int(d)
    rows = min(2, int(t.dims[0])) if t.dims else 1
    return rows * row + BASE_DEPTH


def _same_walk(v: SSAValue, want: Attribute) -> bool:
    """A load walks exactly the stream `v` (dims and tile shape; the dtype may differ)."""
    have = v.type
    return isinstance(have, StreamType) and isinstance(want, StreamType) \
        and _dims(have) == _dims(want) and isinstance(have.element, TileType) \
        and isinstance(want.element, TileType) \
        and have.element.rows == want.element.rows and have.element.cols == want.element.cols


def _fans_out(v: SSAValue, want: Attribute) -> bool:
    """A read of a tensor read several times that can take the producer's stream on
    chip through a fan-out: the same walk, or the whole row joined into one wide tile
    and re-read once per output column tile (a projection's input; Mistral's normalized
    input, read by the q and the k/v projections with different repeat counts)."""
    if _same_walk(v, want):
        return True
    have = v.type
    if not (isinstance(have, StreamType) and isinstance(want, StreamType)):
        return False
    ea, eb = have.element, want.element
    a, b = _dims(have), _dims(want)
    if isinstance(ea, TileType) and isinstance(eb, TileType) and ea.is_static \
            and eb.is_static and _relayout_cols(ea, eb, a, b) is not None:
        return True  # the same row-major tensor in other tiles (q in rows of (batch, head))
    return isinstance(ea, TileType) and isinstance(eb, TileType) and ea.is_static \
        and eb.is_static and ea.rows.data == eb.rows.data and len(a) >= 2 \
        and a[-1].isdigit() and len(b) == len(a) + 1 and b[:-2] == a[:-1] \
        and b[-1] == "1" and b[-2].isdigit() \
        and eb.cols.data == int(a[-1]) * ea.cols.data


def layer_graph(low: Lowering, nodes, name: str = "layer",
                cache_tiles: dict[str, int] | None = None, on_chip: bool = True,
                fanout: bool = True) -> LayerGraph:
    """One step graph of the layer the route lowered (see the module doc). `nodes`:
    the exported graph's nodes (for the views and casts); `cache_tiles`: the real
    size in tiles of each KV cache tensor (the attention graph's region is 2^20).
    `on_chip=False`: every boundary through memory (the phases as the route gives
    them, chained: the kernel-by-kernel baseline step-kernelize cuts further)."""
    nodes = list(nodes)
    alias: dict[str, str] = {}
    for n in nodes:
        if n.op == "call_function" and name_of(n) in ALIASES and n.args \
                and hasattr(n.args[0], "name"):
            alias[n.name] = n.args[0].name
    # a cat with one non-empty input (a prefill's empty KV cache) is that input
    for n in nodes:
        if n.op == "call_function" and name_of(n) == "aten.cat.default" and n.args \
                and isinstance(n.args[0], (list, tuple)):
            full = [a for a in n.args[0] if _numel(a) != 0]
            if len(full) == 1 and len(n.args[0]) > 1 and hasattr(full[0], "name"):
                alias[n.name] = full[0].name
    # a cat's inputs the route reads "from one region where they lie one after another"
    # (`<cat>:inputs`): its members are stored into that region
    synthetic = {x for p in low.graphs for x in p.inputs.values() if x.endswith(":inputs")}
    for n in nodes:
        if f"{n.name}:inputs" in synthetic and n.args and isinstance(n.args[0], (list, tuple)):
            for a in n.args[0]:
                if hasattr(a, "name") and a.name not in alias:
                    alias[a.name] = f"{n.name}:inputs"
    dropped = []
    for p in low.graphs:
        if _identity_move(p):
            alias[p.outputs[0]] = next(iter(p.inputs.values()))
            dropped.append(p.outputs[0])

    def canon(x: str) -> str:
        for _ in range(len(alias) + 1):
            if x not in alias:
                return x
            x = alias[x]
        return x

    parts = _order([p for p in low.graphs if p.outputs[0] not in dropped], canon)
    addr: dict[str, int] = {}

    def address(t: str) -> int:
        if t not in addr:
            addr[t] = (len(addr) + 1) * SLOT
        return addr[t]

    reads: dict[str, int] = {}  # tensor -> loads of it in the layer
    for p in parts:
        local = _local(p)
        for op in p.module.walk():
            if isinstance(op, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)):
                hit = local.get(op.base_addr.value.data)
                if hit is not None:
                    reads[canon(hit[0])] = reads.get(canon(hit[0]), 0) + 1
    block = Block()
    producer: dict[str, so.LinearOffChipStoreOp] = {}
    consumers: dict[str, int] = {}  # tensor -> loads left through memory
    phases, binds = [], {}
    onchip = memory = 0
    on: list[str] = []
    fanned: set[str] = set()  # tensors read several times, all on chip (a deep fan-out)
    for i, p in enumerate(parts):
        graph = next(o for o in p.module.walk() if isinstance(o, GraphOp))
        binds.update(graph_bindings(graph))
        local = _local(p)
        phases.append(f"{p.kind}:{p.role or p.kind}:{p.outputs[0]}")
        if p.kind == "collective":
            t_in, t_out = canon(p.inputs["arg0"]), canon(p.outputs[0])
            if on_chip and t_in in producer and reads.get(t_in) == 1:  # producer's stream
                op = next(o for o in graph.body.block.ops
                          if isinstance(o, (so.AllReduceOp, so.AllGatherOp)))
                ld = next(o for o in graph.body.block.ops
                          if isinstance(o, so.LinearOffChipLoadOp))
                producer[t_out] = _collective(block, producer[t_in].input, op, ld,
                                              address(t_out), t_out, f"p{i}")
                onchip += 1
                on.append(t_in)
                continue
        mapper: dict[SSAValue, SSAValue] = {}
        for op in graph.body.block.ops:
            c = op.clone(value_mapper=mapper)
            for a, b in zip(op.results, c.results):
                mapper[a] = b
            nm = NAME.get(c)
            if nm is not None:  # unique in the layer
                NAME.set(c, f"p{i}_{nm}")
            if isinstance(c, MEM):
                base = c.base_addr.value.data
                hit = local.get(base)
                if hit is not None:
                    t = canon(hit[0])
                    c.properties["base_addr"] = IntegerAttr(address(t), i64)
                    if p.kind != "attention" or isinstance(c, so.LinearOffChipLoadOp) \
                            or hit[1]:  # the attention's output: a dependence too
                        SYMBOL.set(c, t)
                    if p.kind == "attention" and cache_tiles and t in cache_tiles \
                            and isinstance(c, (so.RandomOffChipLoadOp, so.RandomOffChipStoreOp)):
                        c.properties["tiled_in_shape"] = i64_array([cache_tiles[t]])
                    if on_chip and isinstance(c, so.LinearOffChipLoadOp) and not c.operands \
                            and t in producer and (reads.get(t) == 1 or (
                                fanout and _fans_out(producer[t].input, c.output.type))):
                        v = _on_chip(block, producer[t].input, c.output.type)
                        if v is not None:
                            mapper[op.results[0]] = v
                            c.erase()
                            onchip += 1
                            on.append(t)
                            if reads.get(t, 0) > 1:
                                fanned.add(t)
                            continue
                    if isinstance(c, (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)) \
                            and t in producer:
                        consumers[t] = consumers.get(t, 0) + 1
                        memory += 1
                    if isinstance(c, so.LinearOffChipStoreOp) and hit[1]:
                        producer[t] = c
            block.add_op(c)
    # stores nobody loads back and that are not the layer's result
    outputs = {canon(str(a.name)) for n in nodes if n.op == "output" for a in _flat(n.args)}
    for t, st in producer.items():
        if consumers.get(t, 0) == 0 and t not in outputs:
            block.erase_op(st)
    fan_out(block, {producer[t].input: fanout_depth(producer[t].input) for t in fanned})
    g = GraphOp(name, Region(block))
    set_graph_bindings(g, binds)
    module = ModuleOp([g])
    module.verify()
    return LayerGraph(module, phases, onchip, memory, addr, dropped, on)


def _numel(node) -> int | None:
    shape = getattr(getattr(node, "meta", {}).get("val"), "shape", None)
    return None if shape is None else int(np.prod([int(d) for d in shape]))


def _flat(args) -> list:
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out += _flat(a)
        elif hasattr(a, "name"):
            out.append(a)
    return out


def cache_sizes(low: Lowering, nodes, tile_rows: int = 32) -> dict[str, int]:
    """The KV caches' real sizes in tiles of `tile_rows` rows (the cache tensors' shapes)."""
    by = {n.name: n for n in nodes}
    out = {}
    for p in low.graphs:
        if p.kind != "attention":
            continue
        for r in ("k_cache", "v_cache"):
            n = by.get(p.inputs.get(r, ""))
            if n is None:
                continue
            shape = getattr(n.meta.get("val"), "shape", None)
            if shape is not None and len(shape) >= 2:
                lead = int(np.prod([int(d) for d in shape[:-2]]))
                out[n.name] = lead * -(-(int(shape[-2]) + 1) // tile_rows)
    return out


@dataclass
class LayersRun:
    """`layers` repetitions of one layer graph, each simulated with its weight, cache and
    activation streams on the tier `step-allocate-memory{layers=N}` placed its copy in."""

    layer_cycles: list[int]  # simulated kernel cycles of each layer
    layer_ddr_bytes: list[int]  # bytes of each layer's symbols placed in DDR
    kernels: int  # kernels per layer
    hbm_bytes: int  # the model's HBM peak (all layers)
    ddr_bytes: int
    simulations: int  # distinct tier assignments simulated

    @property
    def kernel_cycles(self) -> int:
        return sum(self.layer_cycles)

    def seconds(self, launch_us: float, ghz: float) -> float:
        """The model's time: every layer's cycles plus a launch per kernel."""
        return self.kernel_cycles / (ghz * 1e9) + \
            len(self.layer_cycles) * self.kernels * launch_us * 1e-6


def simulate_layers(module: ModuleOp, mode: str, layers: int = 32, hbm: int | None = None,
                    ddr: int | None = None, config: HardwareConfig = PRESET,
                    rates: tuple[int, ...] = STREAM_RATES) -> LayersRun:
    """Prepare `module`'s layer graph for `mode` (`sn40l.prepare`), place `layers`
    copies of its symbols with step-allocate-memory's repetition (`plan_layers`; `hbm`
    / `ddr` capacities, default the SN40L table's), and simulate each layer with its
    loads and stores on its own copy's tier (layers with the same tiers share one
    simulation; each at the better stream rate, as `sn40l.simulate`)."""
    graphs = prepare(module, mode, memory=False)
    p = plan_layers(graphs, layers, int(value("hbm_bytes")) if hbm is None else hbm,
                    int(value("ddr_bytes")) if ddr is None else ddr)
    annotate(p, graphs)
    tiers = layer_tiers(p)
    ddr_bytes = [0] * layers
    for s in p.symbols:
        if s.tier == "ddr":
            ddr_bytes[s.layer] += s.size
    memo: dict[tuple[str, ...], int] = {}
    cycles = []
    for k in range(layers):
        sig = tuple(t for _, t in tiers[k])
        if sig not in memo:
            set_tiers(tiers[k])
            memo[sig] = min(run_kernels(graphs, config.with_(par_dispatch=r)).kernel_cycles
                            for r in rates)
        cycles.append(memo[sig])
    return LayersRun(cycles, ddr_bytes, len(graphs), p.hbm_peak, p.ddr_peak, len(memo))
