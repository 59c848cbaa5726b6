"""The Llama2 / Mistral decoder layer in PyTorch: TP shards sum to the whole layer; the route lowers it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from steplus.examples.workloads.sn40l_llama import (  # noqa: E402
    LLAMA2_7B, MISTRAL_7B, LlamaDecoderLayer, decode_inputs, lower_layer, rope,
)


def _shard(full: LlamaDecoderLayer, part: LlamaDecoderLayer, r: int, tp: int) -> None:
    """Copy rank r's share of `full`'s weights into `part` (Megatron's split)."""
    hd = full.cfg.head_dim
    with torch.no_grad():
        for name in ("input_layernorm", "post_attention_layernorm"):
            getattr(part, name).weight.copy_(getattr(full, name).weight)
        for name, heads in (("q_proj", part.heads), ("k_proj", part.kv_heads),
                            ("v_proj", part.kv_heads)):
            rows = heads * hd
            getattr(part, name).weight.copy_(getattr(full, name).weight[r * rows:(r + 1) * rows])
        cols = part.heads * hd
        part.o_proj.weight.copy_(full.o_proj.weight[:, r * cols:(r + 1) * cols])
        f = part.gate_proj.out_features
        part.gate_proj.weight.copy_(full.gate_proj.weight[r * f:(r + 1) * f])
        part.up_proj.weight.copy_(full.up_proj.weight[r * f:(r + 1) * f])
        part.down_proj.weight.copy_(full.down_proj.weight[:, r * f:(r + 1) * f])


@pytest.mark.parametrize("cfg", [LLAMA2_7B.small(), MISTRAL_7B.small()], ids=lambda c: c.name)
def test_tp_shards_with_all_reduce_equal_the_layer(cfg):
    """Two shards whose all_reduce sums the partial o_proj / down_proj outputs over the
    group compute the unsharded layer (the collectives are placed where TP needs them)."""
    torch.manual_seed(0)
    full = LlamaDecoderLayer(cfg, tp=1)
    x, k, v, cos, sin = decode_inputs(full, batch=2, cached=5)
    want = full(x, k, v, cos, sin)
    tp = 2
    parts = [LlamaDecoderLayer(cfg, tp) for _ in range(tp)]
    for r, p in enumerate(parts):
        _shard(full, p, r, tp)
    kv = parts[0].kv_heads

    # run the shards in lock step: each all_reduce call sums the ranks' partials
    partial: list[list[torch.Tensor]] = [[] for _ in range(tp)]
    for r, p in enumerate(parts):
        p.all_reduce = lambda t, r=r: (partial[r].append(t), t)[1]
        p(x, k[:, r * kv:(r + 1) * kv], v[:, r * kv:(r + 1) * kv], cos, sin)
    attn = sum(partial[r][0] for r in range(tp))
    # the second collective's input depends on the first's result: replay with the sums
    outs = []
    for r, p in enumerate(parts):
        calls = iter([attn, None])

        def reduce(t, r=r, calls=calls):
            s = next(calls)
            if s is not None:
                return s
            partial[r].append(t)
            return t
        p.all_reduce = reduce
        outs.append(p(x, k[:, r * kv:(r + 1) * kv], v[:, r * kv:(r + 1) * kv], cos, sin))
    mlp = sum(partial[r][-1] for r in range(tp))
    got = x + attn + mlp
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_rope_is_a_rotation_by_position():
    """cos/sin at position p: the angle of pair i is p * theta^(-2i/d)."""
    cfg = LLAMA2_7B.small()
    cos, sin = rope(cfg, torch.tensor([3]))
    i = torch.arange(cfg.head_dim // 2).float()
    ang = 3 * cfg.rope_theta ** (-2 * i / cfg.head_dim)
    torch.testing.assert_close(cos[0], torch.cat([ang.cos(), ang.cos()]))
    torch.testing.assert_close(sin[0], torch.cat([ang.sin(), ang.sin()]))


def test_the_route_lowers_every_phase_but_views():
    """lower_exported: the GQA attention to the §8.4 graph; norms, projections, RoPE's
    elementwise ops, the cache append and the SwiGLU as dense graphs; only views,
    reshapes and dtype casts are left (one remark)."""
    low = lower_layer(LLAMA2_7B.small(), tp=2, batch=4, cached=40, strategy="interleaved",
                      dense="tile=4x8x8 schedule=mnk")
    kinds = [p.kind for p in low.graphs]
    assert kinds.count("attention") == 1
    roles = {p.role for p in low.graphs if p.kind == "dense"}
    assert roles == {"move", "norm", "elementwise", "projection"}
    assert len(low.remarks) == 1
    msg = str(low.remarks[0])
    assert "aten.reshape.default, aten.to.dtype, aten.view.default)" in msg
