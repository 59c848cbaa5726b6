"""Dynamic patterns by recognition (issue 18 items 2 and 4): PyTorch MoE layers
and GQA decode attention -> the §8.2 / §8.4 step graphs.

- op for op: the recognized MoE (a small Mixtral-style layer; the full
  Mixtral/Qwen shapes in bench/exp_decoder.py) lowers to
  `examples/workloads/graphs.py`'s `moe(model, tile_n)`; the recognized
  attention to `examples/workloads/attention.py`'s `attention(strategy, ...)`;
- the optimization passes accept them: `step-dynamic-tiling` turns the static
  MoE into the dynamic one, `step-time-multiplex` shares its pipelines,
  `step-dynamic-parallelize` turns the attention into the dynamic dispatch;
- functional (item 4): the fabric's functional mode on the lowered graph
  equals the PyTorch module's output (rtol 1e-5, f32 reference);
- what is not recognized is a remark at the user's source line, no graph.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from xdsl.context import Context  # noqa: E402
from xdsl.dialects.builtin import ModuleOp, StringAttr  # noqa: E402
from xdsl.printer import Printer  # noqa: E402

from steplus.dialects.step import ops as so  # noqa: E402
from steplus.dialects.step import ops as sr  # noqa: E402
from steplus.dialects.step import GraphOp  # noqa: E402
from steplus.dialects.step.functions import KV_TILES_PER_REQUEST  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.lowering.linalg_to_step.moe_graph import MoEShape  # noqa: E402
from steplus.runtime.fabric.build import build_program  # noqa: E402
from steplus.runtime.fabric.contexts import RandomStoreCtx, StoreCtx  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
from steplus.examples.workloads import attention
from steplus.examples.workloads import graphs as workloads
from steplus.examples.workloads.attention_torch import GQADecodeAttention, attention_inputs  # noqa: E402
from steplus.examples.workloads.moe import TopKMoE, moe_inputs  # noqa: E402

MOE_SRC = str(REPO / "examples" / "workloads" / "moe.py")


def _canonical(module: ModuleOp) -> str:
    m = module.clone()
    for op in m.walk():
        if isinstance(op, GraphOp):
            op.sym_name = StringAttr("g")
        for r in op.results:
            r.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    a.name_hint = None
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(m)
    return out.getvalue()


def _export(module, args):
    return torch.export.export(module, args)


TINY = workloads.MoEModel("tiny", experts=4, top_k=2, hidden=16, inter=32)


@functools.lru_cache(maxsize=None)
def _moe_ep(norm: str):
    """The exported tiny MoE layer (E=4, K=2, B=8, D=16, F=32), once per session."""
    layer, args = _tiny_moe(norm, seed=1)
    return _export(layer, args)


@pytest.fixture(scope="module")
def mixtral_ep():
    return _moe_ep("mixtral")


def _ops(module: ModuleOp, cls) -> int:
    return sum(isinstance(o, cls) for o in module.walk())


# -- MoE ----------------------------------------------------------------------------------
@pytest.mark.parametrize("tile_n", [16, 64, None])
def test_mixtral_moe_lowers_op_for_op_to_the_reference_graph(mixtral_ep, tile_n):
    low = lower_exported(mixtral_ep, tile_n=tile_n, tile_f=16)
    (part,) = low.graphs
    assert part.kind == "moe" and part.batch == 8
    assert part.shape == MoEShape(4, 2, 16, 32)
    assert _canonical(part.module) == _canonical(workloads.moe(TINY, tile_n, 16))
    assert part.inputs == {"x": "x", "w_gate": "w_gate", "w_up": "w_up", "w_down": "w_down"}
    (remark,) = low.remarks  # the router: not lowered, said where
    assert remark.where == f"{MOE_SRC}:64"
    assert "the router is not lowered" in remark.message


def test_dynamic_tiling_and_time_multiplexing_apply(mixtral_ep):
    from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass
    from steplus.passes.step.time_multiplex import StepTimeMultiplexPass

    module = lower_exported(mixtral_ep, tile_n=2, tile_f=16).graphs[0].module
    StepDynamicTilingPass().apply(Context(), module)
    assert _canonical(module) == _canonical(workloads.moe(TINY, None, 16))
    module = lower_exported(mixtral_ep, tile_n=2, tile_f=16).graphs[0].module
    StepTimeMultiplexPass(regions=2).apply(Context(), module)
    assert _ops(module, sr.EagerMergeOp) == 2  # one per region
    assert _ops(module, so.RandomOffChipLoadOp) == 3 * 2  # up/gate/down per region
    assert _ops(module, so.LinearOffChipLoadOp) == 2  # only tokens and routing weights


def _tiny_moe(norm: str, seed: int = 0):
    E, K, B, D, F = 4, 2, 8, 16, 32
    layer = TopKMoE(E, K, norm)
    args = moe_inputs(B, E, D, F, seed=seed)
    return layer, args


def _name_loads(graph: GraphOp) -> list:
    loads = [o for o in graph.body.block.ops
             if isinstance(o, so.LinearOffChipLoadOp | so.RandomOffChipLoadOp)]
    for op in loads:
        op.attributes["name"] = StringAttr(op.output.name_hint)
    return loads


def _run_moe(module: ModuleOp, layer, args, tile_f: int, tmp_path) -> np.ndarray:
    """Specialize to the module's own routing, bind x, the routing weights and
    each expert's weights (in the §8.2 tile layout), run functionally."""
    from steplus.passes.step.specialize import StepSpecializePass

    x, w_router, w_gate, w_up, w_down = (a.detach().numpy().astype(np.float64) for a in args)
    idx, weights = (t.detach().numpy() for t in layer.route(args[0], args[1]))
    trace = tmp_path / "routing.npz"
    np.savez(trace, data=idx)
    StepSpecializePass(routing=str(trace), rewrite=True).apply(Context(), module)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    tensors = {"in_load": x, "w_load": weights.astype(np.float64)}
    nf = w_gate.shape[2] // tile_f
    for e in range(w_gate.shape[0]):
        tensors[f"up_ld{e}"] = np.vstack([w_up[e][:, j * tile_f:(j + 1) * tile_f] for j in range(nf)])
        tensors[f"gate_ld{e}"] = np.vstack([w_gate[e][:, j * tile_f:(j + 1) * tile_f]
                                            for j in range(nf)])
        tensors[f"down_ld{e}"] = w_down[e]
    _name_loads(graph)
    prog = build_program(graph, functional=True, tensors=tensors)
    prog.run()
    (store,) = [c for c in prog.sim.contexts if isinstance(c, StoreCtx)]
    return np.vstack([np.asarray(t) for t in store.stored])


@pytest.mark.parametrize("norm,tile_n,tile_f", [("qwen", 2, 16), ("mixtral", 4, 8),
                                                ("qwen", None, 32)])
def test_functional_mode_equals_the_pytorch_moe_layer(norm, tile_n, tile_f, tmp_path):
    layer, args = _tiny_moe(norm, seed=1)
    expected = layer(*args).detach().numpy()
    (part,) = lower_exported(_moe_ep(norm), tile_n=tile_n, tile_f=tile_f).graphs
    got = _run_moe(part.module, layer, args, tile_f, tmp_path)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# -- attention ----------------------------------------------------------------------------
def _attn(batch=2, q_heads=16, kv_heads=2, head_dim=64, cached=40, seed=0):
    args = attention_inputs(batch, q_heads, kv_heads, head_dim, cached, seed)
    return GQADecodeAttention(), args


@pytest.mark.parametrize("strategy,batch,cached", [("interleaved", 2, 40), ("coarse", 8, 71)])
def test_attention_lowers_op_for_op_to_the_reference_graph(strategy, batch, cached):
    layer, args = _attn(batch=batch, cached=cached)
    low = lower_exported(_export(layer, args), strategy=strategy)
    (part,) = low.graphs
    R = batch * 2
    # cached rows x -> ceil((x + 1) / 32) tiles, appended at row x mod 32 (spec §6.2)
    assert part.seq_len == [-(-(cached + 1) // 32)] * R and part.offset == [cached % 32] * R
    ref = attention.attention(strategy, R, part.seq_len, part.offset)
    assert _canonical(part.module) == _canonical(ref)
    assert low.remarks == []


def test_dynamic_parallelization_applies_to_the_lowered_attention():
    from steplus.passes.step.dynamic_parallelize import StepDynamicParallelizePass

    layer, args = _attn(batch=3)
    lengths = [40, 3, 100, 31, 64, 7]
    (part,) = lower_exported(_export(layer, args), kv_lengths=lengths).graphs
    assert part.seq_len == [2, 1, 4, 1, 3, 1] and part.offset == [8, 3, 4, 31, 0, 7]
    StepDynamicParallelizePass(factor=4).apply(Context(), part.module)
    ref = attention.attention("dynamic", 6, part.seq_len, part.offset)
    assert _canonical(part.module) == _canonical(ref)


def _run_attention(part, args) -> np.ndarray:
    q, k_new, v_new, k_cache, v_cache = (a.numpy().astype(np.float64) for a in args)
    B, Hq, _, HD = q.shape
    R = B * k_cache.shape[1]
    kc = np.concatenate([k_cache, np.zeros_like(k_cache[:, :, :32])], 2).reshape(R, -1, HD)
    vc = np.concatenate([v_cache, np.zeros_like(v_cache[:, :, :32])], 2).reshape(R, -1, HD)

    def tiles(cache):
        def at(i):
            req, t = divmod(int(np.ravel(i)[0]), KV_TILES_PER_REQUEST)
            return cache[req, 32 * t:32 * t + 32]
        return at

    graph = next(o for o in part.module.walk() if isinstance(o, GraphOp))
    tensors = {"load_q": q.reshape(B * Hq, HD), "load_k": k_new.reshape(R, HD),
               "load_v": v_new.reshape(R, HD)}
    for op in _name_loads(graph):
        name = op.output.name_hint
        if name.startswith("k_cache"):
            tensors[name] = tiles(kc)
        elif name.startswith("v_cache"):
            tensors[name] = tiles(vc)
    from steplus.lowering.linalg_to_step.attention_graph import O_BASE

    for k, op in enumerate(o for o in graph.body.block.ops
                           if isinstance(o, so.RandomOffChipStoreOp)
                           and o.base_addr.value.data == O_BASE):
        op.attributes["name"] = StringAttr(f"o_store{k}")
    prog = build_program(graph, functional=True, tensors=tensors)
    prog.run()
    out = {}
    for c in prog.sim.contexts:
        if isinstance(c, RandomStoreCtx) and c.name.startswith("o_store"):
            for a, v in c.stored:
                out[int(np.ravel(a)[0])] = np.asarray(v)
    assert sorted(out) == list(range(R))
    return np.stack([out[i] for i in range(R)])


@pytest.mark.parametrize("cached", [40, 31, 5])
def test_functional_mode_equals_the_pytorch_attention(cached):
    layer, args = _attn(batch=2, cached=cached, seed=cached)
    expected = layer(*args).numpy()  # [B, Hq, 1, HD]
    (part,) = lower_exported(_export(layer, args)).graphs
    got = _run_attention(part, args)  # [R, group, HD]
    np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-5, atol=1e-6)


# -- not recognized: a located remark, no graph -------------------------------------------
class ReluMoE(TopKMoE):
    def forward(self, x, w_router, w_gate, w_up, w_down):
        idx, weights = self.route(x, w_router)
        out = torch.zeros_like(x)
        for e in range(self.experts):
            tok, slot = torch.where(idx == e)
            h = x.index_select(0, tok)
            y = (torch.relu(h @ w_gate[e]) * (h @ w_up[e])) @ w_down[e]
            out = out.index_add(0, tok, y * weights[tok, slot].unsqueeze(-1))
        return out


class MissingExpertMoE(TopKMoE):
    def forward(self, x, w_router, w_gate, w_up, w_down):
        idx, weights = self.route(x, w_router)
        out = torch.zeros_like(x)
        for e in range(self.experts - 1):
            tok, slot = torch.where(idx == e)
            h = x.index_select(0, tok)
            y = (torch.nn.functional.silu(h @ w_gate[e]) * (h @ w_up[e])) @ w_down[e]
            out = out.index_add(0, tok, y * weights[tok, slot].unsqueeze(-1))
        return out


class ScaledAttention(GQADecodeAttention):
    def forward(self, q, k_new, v_new, k_cache, v_cache):
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def _line(cls, text: str) -> str:
    import inspect

    src, first = inspect.getsourcelines(cls.forward)
    k = next(i for i, ln in enumerate(src) if text in ln)
    return f"{__file__}:{first + k}"


@pytest.mark.parametrize("cls,where,message", [
    (ReluMoE, "torch.relu", "top-k MoE not recognized: expert 0: no silu in the SwiGLU product"),
    (MissingExpertMoE, "self.route", "top-k MoE not recognized: 4 experts, but branches for "
                                     "[0, 1, 2]: every expert must be selected once"),
])
def test_an_unrecognized_moe_is_a_located_remark(cls, where, message):
    layer = cls(4, 2)
    low = lower_exported(_export(layer, moe_inputs(8, 4, 16, 32)), tile_f=16)
    assert low.graphs == []
    assert low.remarks[0].where == _line(cls, where)
    assert low.remarks[0].message == message
    assert "not lowered by the recognizers" in low.remarks[-1].message


def test_a_scaled_attention_scales_the_queries_in_the_graph():
    """torch's default scale 1/sqrt(HD) (issue 26 item 4): one mul_scalar map per region on
    the query tiles; the fabric's values equal torch's SDPA."""
    layer, args = _attn(batch=2, cached=40, seed=3)
    low = lower_exported(_export(ScaledAttention(), args))
    (part,) = low.graphs
    hd = args[0].shape[-1]
    assert part.shape.scale == 1.0 / hd ** 0.5
    scales = [o for o in part.module.walk() if isinstance(o, so.MapOp)
              and (o.output.name_hint or "").startswith("q_scale")]
    assert len(scales) == 4  # one per region of the interleaved strategy
    expected = ScaledAttention()(*args).numpy()
    got = _run_attention(part, args)
    np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs,message", [
    ({"tile_n": 0}, "tile_n must be in 1..1048576 or None (dynamic), got 0"),
    ({"tile_f": -1}, "tile_f must be in 1..1048576, got -1"),
    ({"strategy": "random"}, "strategy must be one of coarse, interleaved, got 'random'"),
    ({"kv_lengths": [3, -1, 5, 7]}, "kv_lengths must be at most 2^20 cached lengths in "
                                    "0..2^31-1"),
])
def test_bad_options_are_value_errors(kwargs, message):
    layer, args = _attn()
    with pytest.raises(ValueError) as e:
        lower_exported(_export(layer, args), **kwargs)
    assert str(e.value) == message


def test_tile_f_that_does_not_divide_is_a_remark():
    low = lower_exported(_moe_ep("qwen"), tile_f=12)
    assert low.graphs == []
    assert low.remarks[0].message == "top-k MoE: tile_f=12 does not divide F=32 (option tile_f)"


# -- metrics: spec §5.5's closed forms ------------------------------------------------------
@pytest.mark.parametrize("tile_n", [2, 4, None])
def test_lowered_moe_metrics_equal_the_closed_forms(tile_n):
    """Traffic and on-chip of the lowered MoE bound to the layer's own routing:
    §5.5 with nb = 2, tF = 16, the experts that received tokens."""
    from steplus.passes.step.metrics import compute_metrics
    from steplus.passes.step.specialize import routing_bindings, specialize_graph
    from steplus.passes.step.traces import RoutingTrace

    layer, args = _tiny_moe("qwen", seed=1)
    idx = layer.route(args[0], args[1])[0].numpy()
    (part,) = lower_exported(_moe_ep("qwen"), tile_n=tile_n, tile_f=16).graphs
    graph = next(o for o in part.module.walk() if isinstance(o, GraphOp))
    trace = RoutingTrace(idx.astype(np.int64), 4)
    bound = compute_metrics(graph).bind(specialize_graph(graph.clone(),
                                                         routing_bindings(graph, trace)))
    B, K, D, F, tF = 8, 2, 16, 32, 16
    c = [int((idx == e).sum()) for e in range(4)]
    assert sum(c) == B * K
    tiles = [int(x > 0) if tile_n is None else -(-x // tile_n) for x in c]
    active = sum(x > 0 for x in c)
    assert int(bound.offchip) == 2 * B * D + 2 * B * K + sum(tiles) * 3 * (2 * D * F) + 4 * B * D
    if tile_n is None:
        assert int(bound.onchip) == 10 * D + 2 + 12 * D * sum(c) + active * 6 * D * tF
    else:
        assert int(bound.onchip) == 10 * D + 2 + active * (12 * tile_n * D + 6 * D * tF)


class MaskedAttention(GQADecodeAttention):
    def forward(self, q, k_new, v_new, k_cache, v_cache):
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        mask = q.sum(-1, keepdim=True).expand(-1, -1, -1, k.shape[2]) > 0
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                                enable_gqa=True, scale=1.0)


class AllVisibleAttention(GQADecodeAttention):
    def forward(self, q, k_new, v_new, k_cache, v_cache):
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        mask = torch.ones(q.shape[0], q.shape[1], 1, k.shape[2], dtype=torch.bool)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                                enable_gqa=True, scale=1.0)


class NoCacheAttention(GQADecodeAttention):
    def forward(self, q, k_new, v_new, k_cache, v_cache):
        return torch.nn.functional.scaled_dot_product_attention(q, k_cache, v_cache,
                                                                enable_gqa=True, scale=1.0)


class CausalAttention(GQADecodeAttention):
    def forward(self, q, k_new, v_new, k_cache, v_cache):
        return torch.nn.functional.scaled_dot_product_attention(q, k_cache, v_cache,
                                                                enable_gqa=True, is_causal=True)


@pytest.mark.parametrize("cls,message", [
    (MaskedAttention, "GQA decode attention not recognized: an attn_mask is not supported "
                      "(the cache holds exactly the valid rows; only an all-visible constant "
                      "mask is dropped)"),
    (CausalAttention, "GQA decode attention not recognized: is_causal is not a decode step"),
])
def test_an_unrecognized_attention_is_a_remark_at_the_call(cls, message):
    _, args = _attn()
    low = lower_exported(_export(cls(), args))
    assert low.graphs == []
    assert low.remarks[0].where == _line(cls, "scaled_dot_product_attention")
    assert low.remarks[0].message == message


@pytest.mark.parametrize("cls", [AllVisibleAttention, NoCacheAttention])
def test_an_all_visible_mask_and_no_cache_are_recognized(cls):
    """A constant all-True mask masks nothing; without a cache the keys' last row is the
    appended one (bound through the part's `derive`): the fabric equals torch."""
    from steplus.tools.step_run_linalg import run_part

    _, args = _attn(batch=2, cached=37, seed=5)
    ep = _export(cls(), args)
    (part,) = lower_exported(ep).graphs
    names = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    got = run_part(part, {n: a.numpy() for n, a in zip(names, args)})[part.outputs[0]]
    expected = cls()(*args).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# -- bf16 modules: rtol 1e-2 ---------------------------------------------------------------
def test_a_bf16_moe_layer_lowers_to_the_same_values():
    """The module in bf16 (torch rounds every op to bf16); the fabric computes the
    lowered graph on the same bf16 inputs exactly: equal within bf16 precision."""
    from steplus.tools.step_run_linalg import run_part

    layer = TopKMoE(4, 2, "mixtral")
    args = tuple(a.to(torch.bfloat16) for a in moe_inputs(8, 4, 16, 32, seed=5))
    expected = layer(*args).float().numpy()
    (part,) = lower_exported(_export(layer, args), tile_n=None, tile_f=16).graphs
    idx, w = layer.route(args[0], args[1])
    values = {"x": args[0].float().numpy(), "w_gate": args[2].float().numpy(),
              "w_up": args[3].float().numpy(), "w_down": args[4].float().numpy()}
    (got,) = run_part(part, values, routing=(idx.numpy(), w.float().numpy())).values()
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2)
    assert np.abs(got - expected).max() > 0  # bf16 rounding is visible: a real comparison


def test_a_bf16_attention_lowers_to_the_same_values():
    from steplus.tools.step_run_linalg import run_part

    layer, args = _attn(batch=2, cached=40, seed=9)
    args = tuple(a.to(torch.bfloat16) for a in args)
    expected = layer(*args).float().numpy()
    (part,) = lower_exported(_export(layer, args)).graphs
    values = dict(zip(("q", "k_new", "v_new", "k_cache", "v_cache"),
                      (a.float().numpy() for a in args)))
    (got,) = run_part(part, values).values()
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=5e-3)
