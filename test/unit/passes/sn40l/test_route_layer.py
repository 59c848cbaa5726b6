"""The decoder layer from PyTorch as one step graph (sn40l_route), collectives, ragged sizes."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import bf16, f32

from steplus.dialects.sn40l_attrs import SYMBOL
from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import Graph
from steplus.dialects.step.discardable import FANOUT_DEPTH
from steplus.dialects.target.fabric import SN40L as PRESET
from steplus.dialects.target.sn40l import SN40L
from steplus.examples.workloads.sn40l import simulate
from steplus.passes.sn40l.allocate_memory import StepAllocateMemoryPass, symbols
from steplus.passes.sn40l.allocate_units import StepAllocateUnitsPass, chip_of, demands
from steplus.passes.sn40l.kernelize import kernelize_graph
from steplus.passes.sn40l.kernels import ensure_names, kernel_groups
from steplus.passes.step.bindings import set_graph_bindings
from steplus.runtime.fabric.kernel_run import launch_cycles
from steplus.utils.diagnostics import OpDiagnosticError

torch = pytest.importorskip("torch")

from steplus.examples.workloads.sn40l_llama import (  # noqa: E402
    LLAMA2_7B, MISTRAL_7B, LlamaDecoderLayer, decode_inputs, export_layer, route_layer,
    tp_all_reduce,
)
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.lowering.linalg_to_step.collective import P2PNet  # noqa: E402

SMALL = "tile=2x8x1024 schedule=mnk"


def _graph(module) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


def _ops(module, cls) -> list:
    return [o for o in _graph(module).body.block.ops if isinstance(o, cls)]


# -- the collective recognizer ----------------------------------------------------------
class _TP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Linear(64, 32, bias=False)

    def forward(self, x):
        return x[..., :32] + tp_all_reduce(self.w(x))


def test_functional_all_reduce_becomes_a_step_all_reduce_on_the_network():
    with torch.device("meta"):
        ep = torch.export.export(_TP(), (torch.empty(4, 64),))
    low = lower_exported(ep, p2p=P2PNet(8, 2, 100, 500))
    (part,) = [p for p in low.graphs if p.kind == "collective"]
    (op,) = _ops(part.module, so.AllReduceOp)
    assert {k: op.properties[k].value.data for k in ("ranks", "links", "link_gbps",
                                                      "latency_ns")} == \
        {"ranks": 8, "links": 2, "link_gbps": 100, "latency_ns": 500}
    # [4, 32] f32: 4 rows, 32 columns in one tile; the wait is the part's output
    assert str(op.operands[0].type) == "!step.stream<[1, 1], !step.tile<4x32xf32>>"
    assert part.outputs == ["wait_tensor"] and part.inputs == {"arg0": "linear"}
    assert not any("all_reduce" in str(r) for r in low.remarks)


def test_a_collective_without_a_network_is_a_remark():
    with torch.device("meta"):
        ep = torch.export.export(_TP(), (torch.empty(4, 64),))
    low = lower_exported(ep)
    assert not [p for p in low.graphs if p.kind == "collective"]
    assert any("a collective is lowered only on a network (option p2p)" in str(r)
               for r in low.remarks)


def test_p2p_parameters_are_checked():
    with pytest.raises(ValueError, match="ranks must be an integer in 1..1048576"):
        P2PNet(0)
    with pytest.raises(ValueError, match="latency_ns must be an integer"):
        P2PNet(8, latency_ns=-1)


def test_eager_layer_keeps_the_identity_all_reduce():
    """The layer exported with `tp_all_reduce` has both collectives in its graph; eagerly
    (no process group) the default identity runs."""
    cfg = LLAMA2_7B.small()
    ep, low = export_layer(cfg, tp=2, batch=2, cached=8, dense=SMALL, p2p=P2PNet(2),
                           strategy="interleaved")
    names = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert names.count("_c10d_functional.all_reduce.default") == 2
    assert [p.kind for p in low.graphs].count("collective") == 2
    layer = LlamaDecoderLayer(cfg, tp=2)
    assert layer(*decode_inputs(layer, batch=2, cached=8)).shape == (2, 1, cfg.hidden)


# -- one graph per layer --------------------------------------------------------------
@pytest.mark.parametrize("cfg", [LLAMA2_7B.small(), MISTRAL_7B.small()], ids=lambda c: c.name)
def test_route_layer_is_one_verified_graph_with_attention_and_collectives(cfg):
    lg = route_layer(cfg, tp=2, batch=4, cached=64, dense=SMALL, p2p=P2PNet(2))
    graphs = [o for o in lg.module.walk() if isinstance(o, GraphOp)]
    assert len(graphs) == 1
    lg.module.verify()
    kinds = [p.split(":")[0] for p in lg.phases]
    assert kinds.count("attention") == 1 and kinds.count("collective") == 2
    # the head split / merge transposes of a decode step (T = 1) move nothing
    assert lg.dropped == ["transpose", "transpose_1", "transpose_2", "transpose_3"]
    assert len(_ops(lg.module, so.AllReduceOp)) == 2
    assert len(_ops(lg.module, so.CacheReadAddrGenOp)) == 8  # K and V, 4 regions
    # the layer's result is stored once
    stored = [SYMBOL.get(o) for o in _ops(lg.module, so.LinearOffChipStoreOp)]
    assert stored.count("add_5") == 1
    on = set(lg.onchip_tensors)
    assert len(lg.onchip_tensors) == lg.onchip
    # both all-reduces run on their producer's stream and feed the residual adds on chip
    assert {"linear_3", "all_reduce", "linear_6", "all_reduce_1"} <= on
    # RMSNorm's output feeds the weight product on chip; the normalized activations are
    # re-read once per output column tile of the next projection (repeat on chip)
    assert {"mul", "mul_6", "mul_7"} <= on
    # the residual add_3 is read three times (the norm's two reads, the last residual), all
    # in the walk it is produced in: on chip, through a fan-out whose outputs hold a row
    assert lg.onchip_tensors.count("add_3") == 3
    deep = [o for o in _ops(lg.module, so.BroadcastOp) if FANOUT_DEPTH.get(o)]
    assert 3 in [len(b.outputs) for b in deep]
    for b in deep:
        row = 1
        for d in b.input.type.dims[1:]:
            row *= int(d)
        # one row of tiles (two when there are several: double-buffered) + the base depth
        rows = min(2, int(b.input.type.dims[0]))
        assert FANOUT_DEPTH.get(b) == rows * row + 2
    # RoPE's rotate_half is a tile map (no slice tensors) whose column tiles feed the
    # element-wise RoPE on chip; q is read in rows of (batch, head), another walk than the
    # projection's rows of the batch: through memory (Mistral's single KV head per shard
    # keeps k's rows, so k fans out on chip there)
    assert {"cat", "cat_1"} <= on and not any(t.startswith("slice") for t in lg.tensors)
    assert "linear" not in on
    assert ("linear_1" in on) == (cfg.kv_heads // 2 == 1)


def test_memory_dependences_are_section_cuts():
    """A load of a symbol the same graph stores starts a new section (step-allocate-units):
    the fused layer has one section per chain of on-chip phases."""
    g = Graph("dep")
    x = g.load((4, 16), f32, [4], name="x").map("exp", name="e")
    x.store(1 << 20)
    y = g.load((4, 16), f32, [4], base_addr=1 << 20, name="y").map("exp", name="f")
    y.store(2 << 20)
    m = g.module()
    st = _ops(m, so.LinearOffChipStoreOp)[0]
    ld = [o for o in _ops(m, so.LinearOffChipLoadOp) if o.base_addr.value.data == 1 << 20][0]
    SYMBOL.set(st, "t")
    SYMBOL.set(ld, "t")
    StepAllocateUnitsPass().apply(Context(), m)
    assert len(kernel_groups(m)[0]) == 2
    m2 = g.module()  # without the symbols: one section
    StepAllocateUnitsPass().apply(Context(), m2)
    assert len(kernel_groups(m2)[0]) == 1


def test_unfused_route_layer_is_the_phases_kernelized():
    """on_chip=False keeps every boundary in memory; kernelize cuts it into one kernel per
    operator except the attention's ragged cache walk (one kernel)."""
    lu = route_layer(LLAMA2_7B.small(), tp=2, batch=2, cached=64, dense=SMALL,
                     p2p=P2PNet(2), on_chip=False)
    assert lu.onchip == 0
    g = _graph(lu.module)
    ks = kernelize_graph(g, "unfused")
    walks = [k for k in ks if any(isinstance(o, so.CacheReadAddrGenOp)
                                  for o in k.body.block.ops)]
    assert len(walks) == 1


# -- ragged cache lengths in the allocators -------------------------------------------
def _ragged(sum_l: int | None):
    """idx/seq_len metadata -> cache_read_addr_gen [4, ?L0] -> 32x16 bf16 cache tiles ->
    exp -> row-sum over the request's tiles -> store."""
    g = Graph("ragged")
    idx = g.metadata_gen([0, 1, 2, 3], name="idx")
    ln = g.metadata_gen([3, 1, 4, 2], name="len")
    addr = idx.cache_read_addr_gen(ln, name="addr").with_dims([4, "?L0"])
    t = g.random_load(addr, (32, 16), bf16, [16], 1 << 20, name="cache")
    e = t.map("exp", name="e")
    s = e.accum("add", 1, acc=None, name="s")
    s.store(2 << 20)
    m = g.module()
    if sum_l is not None:
        set_graph_bindings(_graph(m), {"sum_L0": sum_l})
    return m


def test_ragged_flops_use_the_bound_total():
    m = _ragged(10)
    d = {x.op.results[0].name_hint: x for x in demands(_graph(m), chip_of(SN40L))
         if x.op.results}
    # exp: one FLOP-equivalent rule per element of each of the sum_L0 = 10 tiles (the
    # library's cost of exp on a 32x16 tile, times the tile count); add: 32x16 per tile
    from steplus.dialects.step.functions import get_function
    exp = get_function("exp")
    add = get_function("add")
    assert exp is not None and add is not None
    assert d["e"].flops == 10 * exp.flops([(32, 16)])
    assert d["s"].flops == 10 * add.flops([(32, 16), (32, 16)])
    # the cache tiles read from memory units: 10 tiles of 32 x 16 bf16
    assert d["e"].mu_bytes == 10 * 32 * 16 * 2


def test_ragged_without_a_bound_is_still_an_error():
    with pytest.raises(OpDiagnosticError, match="unbound symbols"):
        StepAllocateUnitsPass().apply(Context(), _ragged(None))


def test_ragged_graph_allocates_units_and_memory():
    m = _ragged(10)
    StepAllocateUnitsPass().apply(Context(), m)
    StepAllocateMemoryPass().apply(Context(), m)
    (ks,) = kernel_groups(m)
    for k in ks:
        ensure_names(k)
    sizes = {s.name: (s.size, s.traffic) for s in symbols(ks)}
    # the cache symbol is its declared region (16 tiles), its traffic the 10 tiles read;
    # the output: 4 requests x one 32x16 f32... accumulator tile
    cache = next(v for k, v in sizes.items() if k.startswith("ld"))
    assert cache == (16 * 32 * 16 * 2, 10 * 32 * 16 * 2)


def test_prefill_layer_reads_the_new_keys_not_an_empty_cache_cat():
    """A prefill from an empty cache: `cat([past (0 rows), k], 2)` is `k` (no tensor of its
    own); the causal attention is lowered densely and is a phase of the one graph."""
    lg = route_layer(LLAMA2_7B.small(), tp=2, batch=1, prompt=8, dense=SMALL, p2p=P2PNet(2))
    lg.module.verify()
    assert "cat_2" not in lg.tensors and "cat_3" not in lg.tensors
    assert "add_2" in lg.tensors  # the roped keys the attention reads
    assert "dense:attention:scaled_dot_product_attention" in lg.phases
    assert len(_ops(lg.module, so.AllReduceOp)) == 2


def test_fused_vs_unfused_ratio_of_an_elementwise_chain():
    """load -> exp -> exp -> exp -> store over 256 tiles of 64x64 f32: unfused, each exp is a
    kernel that loads and stores the whole tensor (the cut rule), so the off-chip traffic
    is exactly 3x the fused graph's (2 x 256 tiles x 16 KiB), and every kernel moves its
    bytes in the fused graph's pattern (one load stream, one store stream, HBM-bound: exp
    is 4096 elements per tile on 1040 PCUs), so the kernel cycles are 3x within the
    pipeline fills; the software launches add 2 x the preset's launch cost exactly."""
    def chain():
        g = Graph("chain")
        s = g.load((64, 64), f32, [256], name="x")
        for i in range(3):
            s = s.map("exp", name=f"e{i}")
        s.store(1 << 30)
        return g.module()

    f, u = simulate(chain(), "fused"), simulate(chain(), "unfused")
    tile = 64 * 64 * 4
    assert (f.kernels, u.kernels) == (1, 3)
    assert f.offchip == 2 * 256 * tile and u.offchip == 3 * f.offchip
    assert u.kernel_cycles / f.kernel_cycles == pytest.approx(3.0, rel=0.01)
    so = launch_cycles(PRESET, "so")
    assert (u.cycles("so") - f.cycles("so")) - (u.kernel_cycles - f.kernel_cycles) == 2 * so


def test_a_gather_of_a_stored_symbol_is_cut_from_its_writer():
    """A static gather (random load of a metadata_gen's addresses, the route's data
    movement) is an operator: reading what the exp stored, it starts a second section."""
    g = Graph("gather")
    g.load((1, 16), f32, [4], name="x").map("exp", name="e").store(1 << 20)
    idx = g.metadata_gen([3, 2, 1, 0], name="idx")
    g.random_load(idx, (1, 16), f32, [4], 1 << 20, name="gath").store(2 << 20)
    m = g.module()
    st = _ops(m, so.LinearOffChipStoreOp)[0]
    ld = _ops(m, so.RandomOffChipLoadOp)[0]
    SYMBOL.set(st, "t")
    SYMBOL.set(ld, "t")
    StepAllocateUnitsPass().apply(Context(), m)
    ks = kernel_groups(m)[0]
    assert len(ks) == 2
    assert [len([o for o in k.body.block.ops if isinstance(o, so.RandomOffChipLoadOp)])
            for k in ks] == [0, 1]


def test_the_attention_output_is_a_memory_dependence():
    """The attention writes its output rows with random stores; the output projection reads
    them back in another walk: the store carries the tensor's symbol, so the load starts a
    later section (it cannot stream rows the attention has not written)."""
    lg = route_layer(LLAMA2_7B.small(), tp=2, batch=4, cached=64, dense=SMALL, p2p=P2PNet(2))
    StepAllocateUnitsPass().apply(Context(), lg.module)
    (ks,) = kernel_groups(lg.module)
    where = {}
    for k, g in enumerate(ks):
        for o in g.body.block.ops:
            if SYMBOL.get(o) == "scaled_dot_product_attention":
                where.setdefault(type(o).__name__, set()).add(k)
    assert set(where) == {"RandomOffChipStoreOp", "LinearOffChipLoadOp"}
    assert max(where["RandomOffChipStoreOp"]) < min(where["LinearOffChipLoadOp"])


def test_mistral_normalized_input_fans_out_to_both_projection_walks():
    """Mistral-7B's TP8 shard reads its normalized input `mul_1` twice, each time the whole
    row joined into one 4 x 4096 tile re-read per output column tile (16 for q, 4 for the
    one KV head's k/v): both reads are on chip through a fan-out of the norm's stream, so
    the layer has 2 sections, cut at a memory dependence (the attention's output), not
    at a full chip."""
    from steplus.examples.workloads.sn40l_llama import MISTRAL_7B
    from steplus.examples.workloads.sn40l_route import _fans_out
    from steplus.dialects.step.types import StreamType, TileType
    from steplus.passes.sn40l.allocate_units import section_cuts

    have = StreamType([1, 128], TileType(4, 32, bf16))
    v = Graph("walks").argument([1, 128], TileType(4, 32, bf16), "x")
    assert _fans_out(v.value, StreamType([1, 16, 1], TileType(4, 4096, f32)))
    assert _fans_out(v.value, have)  # the same walk
    assert not _fans_out(v.value, StreamType([1, 16, 1], TileType(4, 2048, f32)))
    assert not _fans_out(v.value, StreamType([1], TileType(16, 128, f32)))
    lg = route_layer(MISTRAL_7B, p2p=P2PNet(8))
    assert lg.onchip_tensors.count("mul_1") == 2
    # q, k, v and the roped q re-laid out on chip too: one cut is left, the attention's
    # output (its random stores, re-read whole by the output projection)
    assert {"linear", "linear_1", "linear_2", "add_1"} <= set(lg.onchip_tensors)
    sec, cuts = section_cuts(_graph(lg.module), chip_of(SN40L))
    assert max(sec.values()) + 1 == 2
    assert [(c.reason, c.symbols) for c in cuts] == [
        ("memory", ("scaled_dot_product_attention",))]


@pytest.mark.parametrize("tiles,dims,width", [
    ((16, 128), [1], 128), ((16, 32), [1, 4], 128), ((1, 128), [16, 1], 128),
    ((4, 128), [4, 1], 128), ((4, 512), [1], 512)])
def test_a_projection_output_relaid_on_chip_equals_the_reshape(tiles, dims, width):
    """A decode step's q/k/v, `[batch, heads x head_dim]` = 4 x 512 streamed as `[1, 16]`
    column tiles of 4x32, read by RoPE as rows of (batch, head) (one 16x128 tile, or its 4
    column tiles of 16x32), by the attention one (batch, head) row or one KV head's query
    group at a time (`[16, 1]` of 1x128, `[4, 1]` of 4x128), or as one wide row tile
    (4x512): on chip (join_tiles, split_rows, split_tiles / regroup), the values are
    numpy's row-major reshape of the tensor to that width, tile by tile."""
    import numpy as np
    from xdsl.dialects.builtin import IntegerAttr, i64

    from steplus.dialects.step.types import StreamType, TileType
    from steplus.dialects.target.fabric import STEP_EVAL
    from steplus.examples.workloads.sn40l_route import _on_chip
    from steplus.runtime.fabric.build import build_program

    g = Graph("relayout")
    g.load((4, 32), f32, [1, 16], name="x").store(1 << 20)
    m = g.module()
    block = _graph(m).body.block
    st = list(block.ops)[-1]
    out = _on_chip(block, st.operands[0], StreamType(dims, TileType(*tiles, f32)))
    assert out is not None
    block.erase_op(st)
    block.add_op(so.LinearOffChipStoreOp.create(
        operands=[out], properties={"base_addr": IntegerAttr(2 << 20, i64)}))
    m.verify()
    ensure_names(_graph(m))
    prog = build_program(m, STEP_EVAL, functional=True)
    prog.run()
    rows = np.asarray(next(iter(prog.tensors.values()))).reshape(-1, width)
    r, c = tiles
    want = [rows[i:i + r, j:j + c] for i in range(0, rows.shape[0], r)
            for j in range(0, width, c)]
    got = [np.asarray(t) for t in prog.context("st0").stored]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
