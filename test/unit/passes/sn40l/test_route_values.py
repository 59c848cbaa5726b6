"""The route's fused decode layer (sn40l_route.layer_graph) run with values against PyTorch.

The whole layer graph the route chains (the same route, dense tiles and re-layouts as
the published Llama2-7B / Mistral-7B decode rows, at test sizes) runs functionally on the
fabric simulator with one TP shard's random weights, KV caches and input, and is
compared with the same shard of the PyTorch decoder layer (RMSNorm, q/k/v projections,
RoPE, GQA attention over the KV cache with the new row appended, o_proj, residual,
RMSNorm, SwiGLU, residual) in float64. The simulator runs one socket of the SPMD
program with the other shards taken equal to it (runtime/fabric/contexts/collective.py),
so each all-reduce is `tp` times the shard's partial sum, in both references too.

One simulation holds every section of the layer, so a load of a tensor the graph stores
(a memory dependence: a section cut) reads a given array, not the store's values.
`_run` is therefore called twice: first with PyTorch's value of every such tensor
(each segment checked on its own: every stored tensor equals PyTorch's), then with the
values the first run stored (the chained layer: every value the output depends on was
computed by the simulated graph from the inputs and weights alone).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from steplus.dialects.sn40l_attrs import SYMBOL
from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.discardable import NAME
from steplus.dialects.step.functions import KV_TILES_PER_REQUEST
from steplus.dialects.target.fabric import SN40L as PRESET
from steplus.dialects.target.sn40l import SN40L
from steplus.passes.sn40l.allocate_units import chip_of, section_cuts
from steplus.passes.sn40l.kernels import ensure_names
from steplus.examples.workloads.sn40l import prepare
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.kernel_run import run_kernels
from steplus.utils.attrs import ints_of

torch = pytest.importorskip("torch")

from steplus.examples.workloads.sn40l_llama import (  # noqa: E402
    LLAMA2_7B, MISTRAL_7B, ROUTE_DENSE, LlamaConfig, LlamaDecoderLayer, decode_inputs,
    export_layer,
)
from steplus.examples.workloads.sn40l_route import cache_sizes, layer_graph  # noqa: E402
from steplus.lowering.linalg_to_step.collective import P2PNet  # noqa: E402

TILE_N = 32  # the attention graph's cache tile rows
IDENTITY = {"aten.to.dtype", "aten.clone.default", "aten.alias.default",
            "_c10d_functional.wait_tensor.default"}


class _Values(torch.fx.Interpreter):
    """The exported graph run in float64, every node's value kept by name (dtype casts
    are the identity, as in the step graph; an all-reduce over `ranks` equal shards is
    `ranks` times the partial)."""

    def __init__(self, gm, ranks: int):
        super().__init__(gm)
        self.ranks = ranks
        self.values: dict[str, torch.Tensor] = {}

    def call_function(self, target, args, kwargs):
        name = str(target)
        if name in IDENTITY:
            return args[0]
        if name == "_c10d_functional.all_reduce.default":
            return self.ranks * args[0]
        if name == "aten._assert_tensor_metadata.default":
            return None
        return super().call_function(target, args, kwargs)

    def run_node(self, n):
        v = super().run_node(n)
        if isinstance(v, torch.Tensor):
            self.values[n.name] = v
        return v


class _Case:
    """One shard of `cfg` (TP `tp`), `batch` requests with `cached` rows each: the route's
    layer graph, random float64 weights/inputs, PyTorch's values of every tensor."""

    def __init__(self, cfg: LlamaConfig, tp: int, batch: int, cached: int, seed: int = 0):
        ep, low = export_layer(cfg, tp, batch, cached, "interleaved", ROUTE_DENSE, P2PNet(tp))
        nodes = list(ep.graph.nodes)
        self.lg = layer_graph(low, nodes, "layer", cache_sizes(low, nodes))
        self.graph = next(o for o in self.lg.module.walk() if isinstance(o, GraphOp))
        ensure_names(self.graph)
        torch.manual_seed(seed)
        layer = LlamaDecoderLayer(cfg, tp, all_reduce=lambda t: tp * t).double()
        with torch.no_grad():
            for p in layer.parameters():  # unit-variance outputs (nn.Linear's init is smaller)
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
        args = tuple(a.double() for a in decode_inputs(layer, batch, cached, seed=seed))
        with torch.no_grad():
            self.want = layer(*args).reshape(batch, -1).numpy()  # the independent reference
        sig = ep.graph_signature
        params = dict(layer.named_parameters())
        feed = []
        for n in nodes:
            if n.op != "placeholder":
                continue
            if n.name in sig.inputs_to_parameters:
                feed.append(params[sig.inputs_to_parameters[n.name]].detach())
            else:
                feed.append(args[list(sig.user_inputs).index(n.name)])
        interp = _Values(ep.graph_module, tp)
        with torch.no_grad():
            interp.run(*feed)
        self.ref = {k: v.numpy() for k, v in interp.values.items()}
        self.kv, self.heads, self.hd, self.batch = layer.kv_heads, layer.heads, \
            cfg.head_dim, batch
        self.caches = {"past_key": args[1].numpy(), "past_value": args[2].numpy()}
        self.by_addr = {a: t for t, a in self.lg.tensors.items()}
        self.tensors: dict[str, Any] = {}

    def ops(self, cls):
        return [o for o in self.graph.body.block.ops if isinstance(o, cls)]

    def tensor(self, op) -> str:
        return self.by_addr[op.base_addr.value.data]

    def cache_tiles(self, name: str):
        """Tile `request x KV_TILES_PER_REQUEST + t` of a cache (rows 32t..32t+31 of the
        request's (batch, KV head) rows, zero past the cached ones)."""
        c = self.caches[name]
        c = np.concatenate([c, np.zeros_like(c[:, :, :TILE_N])], 2)
        c = c.reshape(-1, c.shape[2], self.hd)

        def at(i):
            req, t = divmod(int(np.ravel(i)[0]), KV_TILES_PER_REQUEST)
            return c[req, TILE_N * t:TILE_N * (t + 1)]
        return at

    def run(self, given: dict[str, Any]) -> dict[str, Any]:
        """Simulate the layer functionally; each linear load reads `given[tensor]` (its
        row-major values, as wide as the load's rows), each cache load its cache's tiles.
        Returns tensor -> stored values (a matrix, or {request: tile} for random stores;
        the caches' write-backs under `<cache>:wb`)."""
        tensors = {}
        for op in self.ops(so.LinearOffChipLoadOp):
            el = op.output.type.element
            ins = ints_of(op.properties["tiled_in_shape"])
            width = (ins[-1] if len(ins) >= 2 else 1) * el.cols.data
            tensors[NAME.get(op)] = np.ascontiguousarray(given[self.tensor(op)]).reshape(
                -1, width)
        for op in self.ops(so.RandomOffChipLoadOp):
            tensors[NAME.get(op)] = self.cache_tiles(self.tensor(op))
        self.tensors = dict(tensors)  # what the loads read (for `_kernels`)
        prog = build_program(self.lg.module, PRESET, functional=True, tensors=tensors)
        prog.run()
        out: dict[str, Any] = {}
        for op in self.ops(so.LinearOffChipStoreOp):
            tiles = [np.asarray(t) for t in prog.context(NAME.get(op)).stored]
            n = int(op.operands[0].type.dims[-1])
            out[self.tensor(op)] = np.vstack([np.hstack(tiles[i:i + n])
                                              for i in range(0, len(tiles), n)])
        for op in self.ops(so.RandomOffChipStoreOp):
            t = self.tensor(op)
            key = t if t not in self.caches else f"{t}:wb"
            got = out.setdefault(key, {})
            assert isinstance(got, dict)
            for a, tile in prog.context(NAME.get(op)).stored:
                got[int(np.ravel(a)[0])] = np.asarray(tile)
        return out


def _inputs(case: _Case) -> dict[str, Any]:
    """PyTorch's values of every tensor a linear load reads."""
    return {case.tensor(op): case.ref[case.tensor(op)]
            for op in case.ops(so.LinearOffChipLoadOp)}


def _attention_rows(case: _Case, got: dict) -> np.ndarray:
    """The attention's random stores (request = (batch, KV head) -> its query group's
    rows) as `[batch, heads x head_dim]`, the layout o_proj reads."""
    group = case.heads // case.kv
    assert sorted(got) == list(range(case.batch * case.kv))
    rows = np.stack([got[r] for r in range(case.batch * case.kv)])  # [B KV, group, hd]
    return rows.reshape(case.batch, case.kv * group * case.hd)


RTOL = 1e-5
"""The simulator computes the graph's bf16/f32 tiles in binary floating point without
rounding them to bf16 (a functional check of the dataflow, not of bf16 numerics); f32
rounding of sums over 64-96 terms stays below 1e-6 of the values' scale."""


def _kernels(case: _Case, mode: str) -> np.ndarray:
    """The layer's output from its kernels for `mode` (`sn40l.prepare`: what the published
    rows simulate), run in order (`run_kernels`: a load of a symbol an earlier kernel
    stored reads those values; the attention's random stores are not passed on, so its
    output's load reads what the last `case.run` read: the chained values)."""
    ks = prepare(case.lg.module.clone(), mode)
    res = run_kernels(ks, PRESET, functional=True, tensors=dict(case.tensors))
    (st,) = [o for k in ks for o in k.body.block.ops
             if isinstance(o, so.LinearOffChipStoreOp) and SYMBOL.get(o) == "add_5"]
    tiles = [np.asarray(t) for t in res.stored[NAME.get(st)]]
    n = int(st.operands[0].type.dims[-1])
    return np.vstack([np.hstack(tiles[i:i + n]) for i in range(0, len(tiles), n)])


def _check(case: _Case, cached: int) -> None:
    first = case.run(_inputs(case))
    sdpa = "scaled_dot_product_attention"
    # each segment on PyTorch's inputs: every stored tensor is PyTorch's
    scale = float(np.abs(case.want).max())
    for t, got in first.items():
        if t == sdpa:
            want = case.ref[t].reshape(case.batch, -1)
            np.testing.assert_allclose(_attention_rows(case, got), want, rtol=RTOL,
                                       atol=RTOL * float(np.abs(want).max()))
        elif t.endswith(":wb"):
            # the cache's last tile written back with the new (roped) row at `cached % 32`
            cat = case.ref["cat_2" if t.startswith("past_key") else "cat_3"]
            cat = cat.reshape(-1, cat.shape[2], case.hd)
            last = cached // TILE_N
            assert sorted(got) == [r * KV_TILES_PER_REQUEST + last for r in range(len(cat))]
            for r in range(len(cat)):
                tile = got[r * KV_TILES_PER_REQUEST + last]
                np.testing.assert_allclose(tile[:cached % TILE_N + 1],
                                           cat[r, last * TILE_N:cached + 1], rtol=RTOL,
                                           atol=RTOL * scale)
        else:
            assert isinstance(got, np.ndarray)
            want = case.ref[t].reshape(got.shape)
            np.testing.assert_allclose(got, want, rtol=RTOL,
                                       atol=RTOL * float(np.abs(want).max()))
    np.testing.assert_allclose(first["add_5"], case.want, rtol=RTOL, atol=RTOL * scale)
    # chained: the loads of stored tensors read what the first run stored
    given = _inputs(case)
    for t in given:
        if t in first:
            v = first[t]
            given[t] = _attention_rows(case, v) if isinstance(v, dict) else v
    second = case.run(given)
    np.testing.assert_allclose(second["add_5"], case.want, rtol=RTOL, atol=RTOL * scale)
    # the fused layer's kernels (its sections), as the published rows simulate them
    np.testing.assert_allclose(_kernels(case, "fused"), case.want, rtol=RTOL,
                               atol=RTOL * scale)


@pytest.mark.parametrize("cfg", [LLAMA2_7B.small(), MISTRAL_7B.small()], ids=lambda c: c.name)
def test_route_decode_layer_equals_pytorch(cfg):
    """Llama2 (8 heads, 8 KV heads) and Mistral (8 heads, 2 KV heads: groups of 4) at
    hidden 64, head_dim 8, FFN 96, TP2 (4 query heads per shard), 4 requests with 37
    cached rows (two cache tiles, the new row appended at row 5 of the second): the
    route's layer has the published structure (q/k/v re-laid out on chip, the attention's
    output the one memory cut, 2 sections) and computes the PyTorch layer."""
    cached = 37
    case = _Case(cfg, tp=2, batch=4, cached=cached)
    assert {"linear", "linear_1", "linear_2", "add_1"} <= set(case.lg.onchip_tensors)
    sec, cuts = section_cuts(case.graph, chip_of(SN40L))
    assert max(sec.values()) + 1 == 2
    assert [(c.reason, c.symbols) for c in cuts] == [
        ("memory", ("scaled_dot_product_attention",))]
    _check(case, cached)


@pytest.mark.slow
@pytest.mark.parametrize("cfg", [LLAMA2_7B, MISTRAL_7B], ids=lambda c: c.name)
def test_published_route_decode_shard_equals_pytorch(cfg):
    """The published rows' shard at its real sizes (TP8: hidden 4096, 4 query heads of
    128, 4 / 1 KV heads, FFN 1376 / 1792 columns), 4 requests with 100 cached rows (the
    new row appended at row 4 of the fourth cache tile): the same 2 sections, and the
    fused layer computes the PyTorch shard (about 15-25 s each)."""
    cached = 100
    case = _Case(cfg, tp=8, batch=4, cached=cached)
    sec, cuts = section_cuts(case.graph, chip_of(SN40L))
    assert max(sec.values()) + 1 == 2
    assert [(c.reason, c.symbols) for c in cuts] == [
        ("memory", ("scaled_dot_product_attention",))]
    _check(case, cached)


def test_a_one_tile_row_relaid_as_rope_rows_keeps_the_unit_dim():
    """The defect the layer check found: a TP2 shard's q at test sizes, `[batch, heads x
    head_dim]` = 4 x 32 streamed as `[1, 1]` (one 4x32 tile), read by RoPE as `[1, 1]` of
    16x8 rows of (batch, head). `_relayout` returned `[1]` (no unit dim) and the layer
    did not verify; now the one tile keeps the walk's dims and its values are numpy's
    row-major reshape."""
    from xdsl.dialects.builtin import IntegerAttr, f32, i64

    from steplus.dialects.step.builder import Graph
    from steplus.dialects.step.types import StreamType, TileType
    from steplus.dialects.target.fabric import STEP_EVAL
    from steplus.examples.workloads.sn40l_route import _on_chip

    g = Graph("relayout")
    g.load((4, 32), f32, [1, 1], name="x").store(1 << 20)
    m = g.module()
    block = next(o for o in m.walk() if isinstance(o, GraphOp)).body.block
    st = list(block.ops)[-1]
    out = _on_chip(block, st.operands[0], StreamType([1, 1], TileType(16, 8, f32)))
    assert out is not None and [str(d) for d in out.type.dims] == ["1", "1"]
    block.erase_op(st)
    block.add_op(so.LinearOffChipStoreOp.create(
        operands=[out], properties={"base_addr": IntegerAttr(2 << 20, i64)}))
    m.verify()
    ensure_names(next(o for o in m.walk() if isinstance(o, GraphOp)))
    prog = build_program(m, STEP_EVAL, functional=True)
    prog.run()
    x = np.asarray(next(iter(prog.tensors.values())))
    (got,) = [np.asarray(t) for t in prog.context("st0").stored]
    np.testing.assert_array_equal(got, x.reshape(16, 8))


@pytest.mark.slow
@pytest.mark.parametrize("cfg", [LLAMA2_7B.small(), MISTRAL_7B.small()], ids=lambda c: c.name)
def test_unfused_route_kernels_compute_the_pytorch_layer(cfg):
    """The unfused baseline (`step-kernelize{mode=unfused}`: one kernel per operator but
    the attention's cache walk, every boundary through memory) computes the same layer
    (about 5 s each)."""
    case = _Case(cfg, tp=2, batch=4, cached=37)
    _check(case, 37)
    scale = float(np.abs(case.want).max())
    np.testing.assert_allclose(_kernels(case, "unfused"), case.want, rtol=RTOL,
                               atol=RTOL * scale)


@pytest.mark.slow
@pytest.mark.parametrize("cached", [1, 31, 32])
def test_route_decode_layer_at_cache_tile_edges(cached):
    """The new row appended after a single cached row (row 1 of the first cache tile), at
    the last row of the first tile (31 cached), and at the first row of a new tile (32):
    Mistral at test sizes still computes the PyTorch layer (about 2 s each)."""
    _check(_Case(MISTRAL_7B.small(), tp=2, batch=4, cached=cached), cached)
