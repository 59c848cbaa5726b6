"""The torch zoo (issue 26 item 5): modules written as public code writes them, PyTorch -> STeP ->
the fabric's functional mode (equal to torch, rtol 1e-5 f32) -> cycles.

- `END_TO_END` (every zoo model): every op but views lowered (the ATen ops torch
  still runs between the parts are views and same-dtype casts only: no creation
  op such as the GRU's zero `h0`), the recognized layers
  among the parts, the fabric's output equal to the module's, every part simulated;
- the remarks (a recognizer's note) are located at the zoo file's lines (the
  user's model, never torch's own files);
- the recognizers on public forms that do not match: a located remark at the
  user's line of the op at fault (an `nn.ReLU` expert, a padding mask).
"""

from __future__ import annotations

import functools
import inspect
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "examples"))
from torch_zoo import ZOO  # noqa: E402
from torch_zoo.harness import (  # noqa: E402
    VIEW_OPS, dynamic_designs, export, lower, run_functional, simulate,
)
from torch_zoo.mixtral_moe import MixtralBlockSparseTop2MLP, MixtralSparseMoeBlock  # noqa: E402

from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402

ZOO_DIR = REPO / "examples" / "torch_zoo"
# model -> the parts run in graph order (the recognized layers by kind, dense parts by role;
# the dense path's data-movement parts, role "move", left out)
END_TO_END = {
    # RMSNorm with its weight (export's _assert_tensor_metadata before the cast reads no
    # values: the cast's input joins its region), gate/up + SiLU, down + residual
    "llama_mlp": ["norm", "projection", "projection"],
    "mixtral_moe": ["projection", "router", "moe"],  # the returned router logits, the router
    "gqa_decode": ["projection", "attention", "projection"],
    "resnet_basic_block": ["im2col", "conv", "elementwise", "im2col", "conv", "im2col", "conv",
                           "elementwise"],  # conv1+bn1+relu, conv2+bn2, downsample, add+relu
    # expand 1x1 + BN + ReLU6, depthwise 3x3 (depthwise_same[3] per plane) + BN + ReLU6,
    # project 1x1 + BN + residual
    "mobilenet_v2_block": ["conv", "elementwise", "dwconv", "elementwise", "conv",
                           "elementwise"],
    # in_proj, the prefill self-attention (dense: not a decode step), out_proj + residual,
    # LayerNorm, the FFN, its residual + LayerNorm
    "lstm_lm": ["gather", "rnn", "projection"],  # embedding, the 2-layer nn.LSTM, decoder
    # embedding, the GRU from torch's zero h0 (folded into the first step), fc on x[:, -1]
    "gru_classifier": ["gather", "rnn", "projection"],
    "transformer_encoder": ["projection", "attention", "projection", "norm", "projection",
                            "projection"],
    # the extended mask (1 - m) * -10000 (the int mask read as f32), q/k/v, the masked
    # prefill attention (dense), self-output + residual + LayerNorm, intermediate (GELU),
    # output + residual + LayerNorm
    "bert_layer": ["elementwise", "projection", "attention", "projection", "projection",
                   "projection"],
    # ln_1, c_attn (addmm), the causal attention (torch.where over the sliced bias buffer),
    # c_proj + residual, ln_2, c_fc, gelu_new, c_proj + residual
    "gpt2_block": ["norm", "projection", "attention", "projection", "norm", "projection",
                   "elementwise", "projection"],
    # the patch conv, cls token + positions, layernorm_before, q/k/v, attention, dense +
    # residual, layernorm_after, intermediate (GELU), output + residual
    "vit_block": ["im2col", "conv", "elementwise", "norm", "projection", "attention",
                  "projection", "norm", "projection", "projection"],
    # depthwise 7x7 (depthwise_same[7] per plane), LayerNorm (channels last), Linear 4x + GELU,
    # Linear, layer scale + residual
    "convnext_block": ["dwconv", "norm", "projection", "projection", "elementwise"],
    # expand 1x1 + BN + Hardswish, depthwise 3x3 + BN + Hardswish, SE (avg pool, fc1 + ReLU,
    # fc2 + Hardsigmoid, the [1, C, 1, 1] scale times the input: materialized per row by a
    # move), project 1x1 + BN + residual
    "mobilenet_v3_block": ["conv", "elementwise", "dwconv", "elementwise", "pool",
                           "conv", "elementwise", "conv", "elementwise", "elementwise", "conv",
                           "elementwise"],
    "t5_ff": ["norm", "projection", "projection"],  # T5LayerNorm, wi_0/wi_1 + gelu_new, wo + residual
    # ln_1, c_attn, the causal attention (`self.bias[:, :, :T, :T] == 0` read as the additive
    # mask when bound), c_proj + residual, ln_2, c_fc + GELU, c_proj + residual
    "nanogpt_block": ["norm", "projection", "attention", "projection", "norm", "projection",
                      "projection"],
    # q/k/v (the `q / sqrt(d)` folded into the attention's scale), the attention (`mask == 0`
    # and torch.tensor(finfo.min) read as the additive mask), out_lin + residual +
    # sa_layer_norm, lin1 + GELU, lin2 + residual + output_layer_norm
    "distilbert_block": ["projection", "attention", "projection", "projection", "projection"],
    # q/k/v, RoPE on q and on k (rotate_half an on-chip column permutation), the attention
    # (HF's causal mask torch.full(..).triu(1), built in the forward, bound with the part),
    # o_proj
    "llama_prefill": ["projection", "elementwise", "elementwise", "attention", "projection"],
    # the router logits + the shared expert's gate/up projections and its sigmoid gate (one
    # column, stored), the router (softmax, top-2, not renormalized), the experts, the shared
    # expert's down projection times the gate plus the experts' sum
    "qwen2_moe": ["projection", "router", "moe", "projection"],
    # RMSNorm, q/k/v, RoPE on q and k, the attention (the sliding-window mask
    # log(triu(tril(full(1)), -w)) bound with it), o_proj + residual, RMSNorm, gate/up +
    # SiLU, down + residual
    "mistral_layer": ["norm", "projection", "elementwise", "elementwise", "attention",
                      "projection", "norm", "projection", "projection"],
    # conv1 (Conv1d as a conv2d of height 1) + GELU, conv2 (stride 2) + GELU, the positions
    # added, self_attn_layer_norm, q/k/v (q scaled), the attention, out_proj + residual,
    # final_layer_norm, fc1 + GELU, fc2 + residual + the encoder's layer_norm
    "whisper_encoder": ["im2col", "conv", "elementwise", "im2col", "conv", "elementwise",
                        "elementwise", "norm", "projection", "attention", "projection", "norm",
                        "projection", "projection"],
    # layernorm_before, q/k/v, the window attention (the relative position bias gathered from
    # its table by the index buffer when bound), the output dense, window_reverse + residual,
    # layernorm_after, intermediate (GELU), output + residual
    "swin_layer": ["norm", "projection", "attention", "projection", "elementwise", "norm",
                   "projection", "projection"],
}
# models lowered in part: the parts run, and the ATen ops that compute data torch still runs
# between them (with the reason; the guide lists them)
PARTIAL = {
    # input_layernorm, query_key_value, the q/k/v selects of the fused view and their head
    # transposes (moves), dense + residual, post_attention_layernorm, dense_h_to_4h, the GELU,
    # dense_4h_to_h + residual. torch runs: build_alibi_tensor (integer arange/pow/cumsum of
    # the int mask, the f32 slopes times the int positions: integer tensors), the bool mask
    # (arange compares into an `empty`, `~` and `|` of masks built from integers and creation
    # ops), and the attention core: baddbmm and bmm (batched products of two computed
    # tensors: no dense lowering; the attention recognizers read matmul/sdpa forms), the
    # masked_fill of the scores by that mask and the softmax between them
    "bloom_block": (["norm", "projection", "projection", "norm", "projection",
                     "elementwise", "projection"],
                    ["aten.__or__.Tensor", "aten.arange.default", "aten.arange.start",
                     "aten.baddbmm.default", "aten.bitwise_not.default", "aten.bmm.default",
                     "aten.copy_.default", "aten.cumsum.default", "aten.detach_.default",
                     "aten.empty.memory_format", "aten.lift_fresh_copy.default",
                     "aten.lt.Tensor", "aten.masked_fill.Scalar", "aten.mul.Tensor",
                     "aten.pow.Tensor_Tensor", "aten.softmax.int", "aten.sub.Tensor",
                     "aten.to.dtype (int64 -> bool)"]),
}
# the suite time budget: the models added last run their bf16 check (a second export, lowering
# and functional run, 1.5-3.5 s each) in the slow run only; f32, cycles and remarks by default
SLOW_BF16 = {"qwen2_moe", "mistral_layer", "whisper_encoder", "swin_layer"}


def _models(names, slow=frozenset()) -> list:
    return [pytest.param(n, marks=pytest.mark.slow) if n in slow else n for n in sorted(names)]
NOT_DATA = VIEW_OPS + ("aten._assert_tensor_metadata.default",)
# in bf16, T5LayerNorm casts its f32 result to the weight's dtype before `weight * x`
# (`hidden_states.to(self.weight.dtype)`): the cast ends the norm's region, the product is one
# of its own
BF16_PARTS = {"t5_ff": ["norm", "elementwise", "projection", "projection"],
              # so do LlamaRMSNorm's and MistralRMSNorm's `hidden_states.to(input_dtype)`
              "llama_mlp": ["norm", "elementwise", "projection", "projection"],
              "mistral_layer": ["norm", "elementwise", "projection", "elementwise",
                                "elementwise", "attention", "projection", "norm", "elementwise",
                                "projection", "projection"]}


@functools.lru_cache(maxsize=None)
def _run(name: str):
    module, args, ep = export(ZOO[name])
    low = lower(ZOO[name], ep)
    out, ran, torch_ops, routing = run_functional(ep, low, args)
    return module, args, ep, low, out, ran, torch_ops, routing


def _computing(ran: list[str]) -> list[str]:
    return [r for r in ran if r != "move"]


def _first(x):
    return x[0] if isinstance(x, (tuple, list)) else x


@pytest.mark.parametrize("name", _models(END_TO_END))
def test_zoo_model_on_the_fabric_equals_torch(name):
    module, args, _, low, out, ran, torch_ops, _ = _run(name)
    expected = _first(module(*args)).detach().numpy()
    np.testing.assert_allclose(_first(out).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert _computing(ran) == END_TO_END[name]
    assert set(torch_ops) <= set(NOT_DATA), sorted(set(torch_ops) - set(NOT_DATA))
    kind = ZOO[name].kind
    if kind != "dense":
        assert sum(p.kind == kind for p in low.graphs) == 1


@pytest.mark.parametrize("name", _models(END_TO_END))
def test_zoo_model_reaches_cycles(name):
    *_, low, _, _, _, routing = _run(name)
    sim = simulate(low, routing)
    assert len(sim["parts"]) == len(low.graphs)
    for p in sim["parts"]:
        assert p["cycles"] > 0 and p["offchip_bytes"] > 0 and p["onchip_bytes"] > 0, p
    assert sim["total"]["cycles"] == sum(p["cycles"] for p in sim["parts"])


def test_the_moe_block_reads_its_per_expert_linears_as_the_stacked_layout():
    """The §8.2 layout's `[E, D, F]` gate/up and `[E, F, D]` down are the ModuleList's
    nn.Linear weights transposed (HF: w1 gate, w3 up, w2 down)."""
    module, args, ep, low, *_ = _run("mixtral_moe")
    (moe,) = [p for p in low.graphs if p.kind == "moe"]
    assert (moe.shape.experts, moe.shape.top_k, moe.shape.hidden, moe.shape.inter) == \
        (4, 2, 32, 64)
    values = {f"p_experts_{e}_{w}_weight": getattr(module.experts[e], w).weight.detach().numpy()
              for e in range(4) for w in ("w1", "w2", "w3")}
    for role, w in (("w_gate", "w1"), ("w_up", "w3"), ("w_down", "w2")):
        got = moe.derive[moe.inputs[role]](values)
        want = np.stack([getattr(module.experts[e], w).weight.detach().numpy().T
                         for e in range(4)])
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["mixtral_moe", "gqa_decode"])
def test_static_and_dynamic_designs_simulate(name):
    *_, low, _, _, _, routing = _run(name)
    (part,) = [p for p in low.graphs if p.kind in ("moe", "attention")]
    d = dynamic_designs(part, routing)
    assert d["static"]["cycles"] > 0 and d["dynamic"]["cycles"] > 0
    if part.kind == "moe":  # dynamic tiling reads no padding rows: less off-chip traffic
        assert d["dynamic"]["offchip_bytes"] < d["static"]["offchip_bytes"]


def test_every_zoo_model_reaches_a_whole_graph():
    assert sorted([*END_TO_END, *PARTIAL]) == sorted(ZOO)


@pytest.mark.parametrize("name", _models(PARTIAL))
def test_partly_lowered_zoo_model_equals_torch(name):
    module, args, _, low, out, ran, torch_ops, routing = _run(name)
    expected = _first(module(*args)).detach().numpy()
    np.testing.assert_allclose(_first(out).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    parts, computing = PARTIAL[name]
    assert _computing(ran) == parts
    assert sorted(set(torch_ops) - set(NOT_DATA)) == computing
    sim = simulate(low, routing)
    assert all(p["cycles"] > 0 for p in sim["parts"]) and len(sim["parts"]) == len(low.graphs)
    assert any("not lowered" in r.message for r in low.remarks)  # the user is told


def test_bloom_alibi_slopes_are_the_papers():
    """build_alibi_tensor's slopes: 2^(-8 h / n) for n a power of 2 (h = 1..n); otherwise the
    closest power of 2's, then every other slope of 2n's (Press et al., ALiBi, section 3);
    times the key positions, padding 0."""
    from torch_zoo.bloom_block import build_alibi_tensor

    mask = torch.tensor([[1, 1, 1, 0]])
    for n in (4, 6):
        alibi = build_alibi_tensor(mask, n, torch.float32).view(n, 4)
        p = 2 ** int(np.log2(n))
        slopes = [2.0 ** (-8 * h / p) for h in range(1, p + 1)] + \
            [2.0 ** (-8 * h / (2 * p)) for h in range(1, 2 * (n - p), 2)]
        want = np.array(slopes)[:, None] * np.array([0.0, 1.0, 2.0, 0.0])
        np.testing.assert_allclose(alibi.numpy(), want, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PARTIAL))
def test_partly_lowered_zoo_model_in_bf16_equals_torch(name):
    module, args = ZOO[name].build()
    module = module.to(torch.bfloat16)
    args = torch.utils._pytree.tree_map(
        lambda a: a.to(torch.bfloat16) if a.is_floating_point() else a, args)
    ep = torch.export.export(module, args)
    low = lower(ZOO[name], ep)
    out, ran, _, _ = run_functional(ep, low, args)
    assert _computing(ran) == PARTIAL[name][0]
    expected = _first(module(*args)).detach().float().numpy()
    np.testing.assert_allclose(_first(out).detach().float().numpy(), expected, rtol=1e-2,
                               atol=1e-2)


@pytest.mark.parametrize("name", _models(ZOO))
def test_zoo_models_remarks_are_at_the_models_lines(name):
    low = _run(name)[3]
    for r in low.remarks:
        assert r.where.startswith(str(ZOO_DIR)), r  # the model's line, not torch's


# -- public forms that do not match: a remark at the user's line ----------------------------
class ReluExpert(MixtralBlockSparseTop2MLP):
    def __init__(self, hidden, ffn):
        super().__init__(hidden, ffn)
        self.act_fn = torch.nn.ReLU()


class ReluMoE(MixtralSparseMoeBlock):
    def __init__(self):
        super().__init__(16, 32, 4, 2)
        self.experts = torch.nn.ModuleList([ReluExpert(16, 32) for _ in range(4)])


def _line(fn, text: str) -> str:
    src, first = inspect.getsourcelines(fn)
    k = next(i for i, ln in enumerate(src) if text in ln)
    return f"{inspect.getsourcefile(fn)}:{first + k}"


def test_an_unrecognized_expert_is_a_remark_at_the_users_line():
    """The op at fault (nn.ReLU's relu) is in torch's activation.py; the remark is at the
    line of the user's expert that calls it."""
    torch.manual_seed(0)
    layer = ReluMoE().eval()
    low = lower_exported(torch.export.export(layer, (torch.randn(2, 4, 16),)), tile_f=16)
    assert [p.kind for p in low.graphs] == []
    assert low.remarks[0].where == _line(MixtralBlockSparseTop2MLP.forward, "self.act_fn(")
    assert low.remarks[0].message == ("top-k MoE not recognized: expert 0: no silu in the "
                                      "SwiGLU product")


@pytest.mark.parametrize("name", _models(END_TO_END, SLOW_BF16))
def test_zoo_model_in_bf16_on_the_fabric_equals_torch(name):
    """The module and its inputs in bf16 (torch rounds every op to bf16; the fabric
    computes the lowered parts on the same bf16 parameters and inputs in f32):
    equal within bf16 precision (rtol 1e-2)."""
    module, args = ZOO[name].build()
    module = module.to(torch.bfloat16)
    args = torch.utils._pytree.tree_map(
        lambda a: a.to(torch.bfloat16) if a.is_floating_point() else a, args)
    ep = torch.export.export(module, args)
    low = lower(ZOO[name], ep)
    out, ran, _, _ = run_functional(ep, low, args)
    assert _computing(ran) == BF16_PARTS.get(name, END_TO_END[name])
    expected = _first(module(*args)).detach().float().numpy()
    np.testing.assert_allclose(_first(out).detach().float().numpy(), expected, rtol=1e-2,
                               atol=1e-2)


class ScatterMoE(MixtralSparseMoeBlock):
    """The HF block with the expert results combined by scatter_add_ instead of index_add_."""

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = torch.nn.functional.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        final = torch.zeros((batch_size * sequence_length, hidden_dim))
        expert_mask = torch.nn.functional.one_hot(selected_experts, self.num_experts)
        expert_mask = expert_mask.permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[expert_idx])
            y = self.experts[expert_idx](hidden_states[top_x]) * routing_weights[top_x, idx, None]
            final.scatter_add_(0, top_x.unsqueeze(-1).expand(-1, hidden_dim), y)
        return final.reshape(batch_size, sequence_length, hidden_dim)


def test_a_scatter_add_combine_and_an_x_tok_gather_are_recognized():
    torch.manual_seed(1)
    layer, x = ScatterMoE(32, 64, 4, 2).eval(), torch.randn(2, 4, 32)
    ep = torch.export.export(layer, (x,))
    low = lower_exported(ep, tile_n=4, tile_f=16, dense="tile=4x32x32 schedule=mnk")
    assert [p.kind for p in low.graphs if p.kind == "moe"] == ["moe"]
    from steplus.tools.step_run_linalg import run_exported

    def routing(part, env):
        if part.kind != "moe":
            return None
        (router,) = [p for p in low.graphs if p.role == "router"]
        weights, idx = (env[n] for n in router.outputs)
        return idx.astype(np.int64), weights

    out, ran, torch_ops = run_exported(ep, low, (x,), routing=routing)
    assert ran == ["router", "moe"]
    assert set(torch_ops) <= set(NOT_DATA)
    np.testing.assert_allclose(out.numpy(), layer(x).detach().numpy(), rtol=1e-5, atol=1e-6)


class LastDimMaskMoE(MixtralSparseMoeBlock):
    """A one-hot mask indexed on its last dim (`torch.where(mask[..., e])`: tokens first),
    the tokens gathered by index_select, the experts' results index_add'ed."""

    def forward(self, hidden_states):
        x = hidden_states.view(-1, self.hidden_dim)
        weights, idx = torch.topk(self.gate(x), self.top_k, dim=-1)
        weights = torch.softmax(weights, dim=-1)
        mask = torch.nn.functional.one_hot(idx, self.num_experts)
        out = torch.zeros_like(x)
        for e in range(self.num_experts):
            tok, slot = torch.where(mask[..., e])
            y = self.experts[e](x.index_select(0, tok))
            out = out.index_add(0, tok, y * weights[tok, slot].unsqueeze(-1))
        return out.view_as(hidden_states)


def test_a_last_dim_one_hot_mask_and_topk_then_softmax_are_recognized():
    torch.manual_seed(2)
    layer, x = LastDimMaskMoE(32, 64, 4, 2).eval(), torch.randn(2, 4, 32)
    ep = torch.export.export(layer, (x,))
    low = lower_exported(ep, tile_n=None, tile_f=16, dense="tile=4x32x32 schedule=mnk")
    assert sorted(p.role or p.kind for p in low.graphs) == ["moe", "router"]
    from steplus.tools.step_run_linalg import run_exported

    def routing(part, env):
        if part.kind != "moe":
            return None
        (router,) = [p for p in low.graphs if p.role == "router"]
        weights, idx = (env[n] for n in router.outputs)
        return idx.astype(np.int64), weights

    out, ran, torch_ops = run_exported(ep, low, (x,), routing=routing)
    assert ran == ["router", "moe"]
    assert set(torch_ops) <= set(NOT_DATA)
    np.testing.assert_allclose(out.numpy(), layer(x).detach().numpy(), rtol=1e-5, atol=1e-6)


class CausalGQAPrefill(torch.nn.Module):
    """HF-style eager attention over a whole prompt: repeat_kv, a causal additive mask."""

    def forward(self, q, k, v, mask):
        k = k[:, :, None].expand(2, 2, 2, 6, 8).reshape(2, 4, 6, 8)
        v = v[:, :, None].expand(2, 2, 2, 6, 8).reshape(2, 4, 6, 8)
        w = torch.matmul(q, k.transpose(2, 3)) / 8 ** 0.5 + mask
        return torch.matmul(torch.softmax(w, dim=-1, dtype=torch.float32), v)


class PaddedSDPA(torch.nn.Module):
    def forward(self, q, k, v, keep):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep)


def _prefill_args(seed: int):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, 4, 6, 8, generator=g)
    k, v = (torch.randn(2, 2, 6, 8, generator=g) for _ in range(2))
    return q, k, v


@pytest.mark.parametrize("form", ["eager_causal_gqa", "sdpa_padding_mask"])
def test_attention_that_is_not_a_decode_step_is_lowered_densely(form):
    """A masked prefill (6 query rows) is not the §8.4 decode graph: a remark at the user's
    line says so, and the attention is lowered densely (static); the fabric equals torch."""
    from steplus.tools.step_run_linalg import run_exported

    q, k, v = _prefill_args(4)
    if form == "eager_causal_gqa":
        layer = CausalGQAPrefill()
        mask = torch.full((6, 6), float("-inf")).triu(1)[None, None]
        args = (q, k, v, mask)
    else:
        layer = PaddedSDPA()
        keep = torch.ones(2, 1, 6, 6, dtype=torch.bool)
        keep[1, :, :, 4:] = False  # the second sequence's last two keys are padding
        args = (q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), keep)
    ep = torch.export.export(layer, args)
    low = lower_exported(ep, dense="tile=2x8x8 schedule=mnk")
    (part,) = [p for p in low.graphs if p.role == "attention"]
    (remark,) = [r for r in low.remarks if "lowered densely" in r.message]
    line = "torch.matmul(q, k" if form == "eager_causal_gqa" else "scaled_dot_product_attention"
    assert remark.where == _line(type(layer).forward, line)
    why = "an attention mask" if form == "eager_causal_gqa" else "an attn_mask"
    assert remark.message.startswith(f"GQA decode attention not recognized: {why} is not "
                                     "supported")
    assert remark.message.endswith("; lowered densely (static) to @layer_attention_dense0")
    out, ran, torch_ops = run_exported(ep, low, args)
    assert ran == ["attention"]
    assert set(torch_ops) <= set(NOT_DATA)
    np.testing.assert_allclose(out.numpy(), layer(*args).numpy(), rtol=1e-5, atol=1e-6)


class BiasExpert(MixtralBlockSparseTop2MLP):
    def __init__(self, hidden, ffn):
        super().__init__(hidden, ffn)
        self.w2 = torch.nn.Linear(ffn, hidden, bias=True)


class BiasMoE(MixtralSparseMoeBlock):
    def __init__(self):
        super().__init__(16, 32, 4, 2)
        self.experts = torch.nn.ModuleList([BiasExpert(16, 32) for _ in range(4)])


class DropoutSDPA(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.5)


class SharedSoftmax(torch.nn.Module):
    def forward(self, q, k, v):
        p = torch.softmax(torch.matmul(q, k.transpose(2, 3)), dim=-1)
        return torch.matmul(p, v), p


@pytest.mark.parametrize("make,line,message", [
    (lambda: (BiasMoE(), (torch.randn(2, 4, 16),)), (MixtralBlockSparseTop2MLP.forward, "self.w2("),
     "top-k MoE not recognized: expert 0: the down nn.Linear has a bias (the §8.2 expert has "
     "none)"),
    (lambda: (DropoutSDPA(), _prefill_args(1)[:1] * 3), (DropoutSDPA.forward, "scaled_dot"),
     "GQA decode attention not recognized: dropout is not supported"),
    (lambda: (SharedSoftmax(), _prefill_args(1)[:1] * 3), (SharedSoftmax.forward, "torch.softmax"),
     "GQA decode attention not recognized: the softmax does not feed matmul(p, v) alone"),
])
def test_forms_neither_route_takes_are_remarks_at_the_users_line(make, line, message):
    """Bad input: a located remark naming the op and why, never an exception."""
    torch.manual_seed(0)
    layer, args = make()
    ep = torch.export.export(layer.eval(), args)
    low = lower_exported(ep, tile_f=16, dense="tile=2x8x8 schedule=mnk")
    assert all(p.kind == "dense" and p.role != "attention" for p in low.graphs)
    (remark,) = [r for r in low.remarks if "not recognized" in r.message]
    assert remark.where == _line(*line)
    assert remark.message == message


class Casts(torch.nn.Module):
    def forward(self, i, x):
        return i.to(torch.float32) + 0, x.to(torch.float32).transpose(0, 1)


def test_a_dtype_changing_cast_torch_runs_is_not_a_view():
    """`aten.to.dtype` is a view only when it keeps the dtype: torch running the int64 ->
    float32 cast is named with its dtypes, outside NOT_DATA (nothing is lowered here: no
    `dense` option)."""
    from torch_zoo.harness import is_view

    args = (torch.tensor([[1, 0]]), torch.randn(1, 2))
    ep = torch.export.export(Casts(), args)
    low = lower_exported(ep)
    assert low.graphs == []
    _, _, torch_ops, _ = run_functional(ep, low, args)
    assert torch_ops == ["aten.to.dtype (int64 -> float32)", "aten.add.Tensor", "aten.to.dtype",
                         "aten.transpose.int"]
    assert "aten.to.dtype (int64 -> float32)" not in NOT_DATA
    casts = [n for n in ep.graph.nodes if str(n.target) == "aten.to.dtype"]
    assert [is_view(n) for n in casts] == [False, True]
