"""A Llama2 / Mistral decoder layer (one tensor-parallel shard), written as transformers writes it.

`LlamaDecoderLayer(cfg, tp)`: `LlamaRMSNorm`, q/k/v projections (`nn.Linear`
without bias, `heads / tp` query heads and `max(kv_heads / tp, 1)` KV heads
of this shard), rotary position embedding (`rotate_half`, cos/sin of the
positions, as `apply_rotary_pos_emb`), the new key/value rows appended to
the KV cache (`torch.cat`), grouped-query attention
(`F.scaled_dot_product_attention`, `enable_gqa=True`), the output projection,
the residual add, `LlamaRMSNorm` and the SwiGLU MLP (`inter / tp` columns of
this shard: `down_proj(silu(gate_proj(x)) * up_proj(x))`) and the residual
add. Under tensor parallelism (the SN40L seed runs the models TP8 over a
node's sockets) the output projection and the down projection compute
partial sums over the shard's heads and columns: `all_reduce` (default: the
identity, one shard) is called on both, where Megatron-style TP places them;
no all-gather is needed (the activations before q/k/v and gate/up are
replicated, the column-sharded results are consumed by the row-sharded
projections of the same shard).

`LLAMA2_7B` / `MISTRAL_7B` are the public configurations (hidden 4096,
32 heads of 128, 32 / 8 KV heads, MLP 11008 / 14336, RMSNorm eps 1e-5 /
1e-5, rope theta 10000 / 1e6). `cfg.small()` keeps the structure at test
sizes.

`export_layer` / `lower_layer` export one decode step on the meta device and
lower it by the project's route (one step graph per phase); `route_layer`
exports it with `tp_all_reduce` (torch's functional all-reduce, lowered to
`step.all_reduce` on a `P2PNet`) and chains the phases into one step graph
of the layer (`sn40l_route.layer_graph`), which `examples/workloads/sn40l.py`
simulates fused or unfused.

Example::

    from steplus.examples.workloads.sn40l_llama import LLAMA2_7B, LlamaDecoderLayer, decode_inputs
    layer = LlamaDecoderLayer(LLAMA2_7B.small(), tp=1)
    y = layer(*decode_inputs(layer, batch=2, cached=40))     # [2, 1, hidden]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from steplus.examples.workloads.sn40l_route import LayerGraph, cache_sizes, layer_graph
from steplus.lowering.linalg_to_step.aten import Lowering, lower_exported
from steplus.lowering.linalg_to_step.collective import P2PNet



@dataclass(frozen=True)
class LlamaConfig:
    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    inter: int
    eps: float = 1e-5
    rope_theta: float = 10000.0

    def small(self) -> LlamaConfig:
        """The same structure at test sizes (8 query heads, the model's KV grouping)."""
        group = self.heads // self.kv_heads
        return replace(self, hidden=64, heads=8, kv_heads=max(8 // group, 1), head_dim=8,
                       inter=96)


LLAMA2_7B = LlamaConfig("llama2-7b", 4096, 32, 32, 128, 11008)
MISTRAL_7B = LlamaConfig("mistral-7b", 4096, 32, 8, 128, 14336, rope_theta=1e6)


class LlamaRMSNorm(nn.Module):
    """Variance in f32, `x * rsqrt(var + eps)`, times the weight (transformers' form)."""

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class LlamaDecoderLayer(nn.Module):
    """`x [B, T, hidden]`, caches `[B, kv_heads/tp, L, head_dim]`, `cos`/`sin` `[T, head_dim]`
    -> `[B, T, hidden]` (the grown caches are not returned: the cache append is in place on
    the accelerator)."""

    def __init__(self, cfg: LlamaConfig, tp: int = 1,
                 all_reduce: Callable[[torch.Tensor], torch.Tensor] | None = None):
        super().__init__()
        if cfg.heads % tp or cfg.inter % tp:
            raise ValueError(f"TP{tp} does not divide {cfg.heads} heads and {cfg.inter} columns")
        self.cfg, self.tp = cfg, tp
        self.heads, self.kv_heads = cfg.heads // tp, max(cfg.kv_heads // tp, 1)
        self.all_reduce = all_reduce or (lambda t: t)
        d, hd = cfg.hidden, cfg.head_dim
        self.input_layernorm = LlamaRMSNorm(d, cfg.eps)
        self.q_proj = nn.Linear(d, self.heads * hd, bias=False)
        self.k_proj = nn.Linear(d, self.kv_heads * hd, bias=False)
        self.v_proj = nn.Linear(d, self.kv_heads * hd, bias=False)
        self.o_proj = nn.Linear(self.heads * hd, d, bias=False)
        self.post_attention_layernorm = LlamaRMSNorm(d, cfg.eps)
        self.gate_proj = nn.Linear(d, cfg.inter // tp, bias=False)
        self.up_proj = nn.Linear(d, cfg.inter // tp, bias=False)
        self.down_proj = nn.Linear(cfg.inter // tp, d, bias=False)

    def forward(self, x, past_key, past_value, cos, sin):
        b, t, _ = x.shape
        hd = self.cfg.head_dim
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, t, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).view(b, t, self.kv_heads, hd).transpose(1, 2)
        v = self.v_proj(h).view(b, t, self.kv_heads, hd).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        k = torch.cat([past_key, k], dim=2)
        v = torch.cat([past_value, v], dim=2)
        a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=t > 1)
        a = a.transpose(1, 2).reshape(b, t, self.heads * hd)
        x = x + self.all_reduce(self.o_proj(a))
        h = self.post_attention_layernorm(x)
        return x + self.all_reduce(self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h)))


def rope(cfg: LlamaConfig, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin `[T, head_dim]` of the positions (HuggingFace's default rotary embedding)."""
    inv = 1.0 / cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim)
    ang = positions.float()[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    return emb.cos(), emb.sin()


def decode_inputs(layer: LlamaDecoderLayer, batch: int = 2, cached: int = 40, seed: int = 0,
                  device: str = "cpu", dtype: torch.dtype = torch.float32):
    """`(x [B, 1, hidden], past_key, past_value, cos, sin)` of one decode step at position
    `cached`; `device="meta"` for shapes only."""
    cfg = layer.cfg
    kv = (batch, layer.kv_heads, cached, cfg.head_dim)
    if device == "meta":
        return tuple(torch.empty(s, device="meta", dtype=dtype) for s in
                     ((batch, 1, cfg.hidden), kv, kv, (1, cfg.head_dim), (1, cfg.head_dim)))
    g = torch.Generator().manual_seed(seed)
    cos, sin = rope(cfg, torch.tensor([cached]))
    return (torch.randn(batch, 1, cfg.hidden, generator=g), torch.randn(kv, generator=g),
            torch.randn(kv, generator=g), cos, sin)


DENSE = "tile=64x256x256 schedule=mnk"
"""convert-linalg-to-step's options for the dense phases (as bench/exp_decoder.py)."""


def tp_all_reduce(t: torch.Tensor) -> torch.Tensor:
    """The sum over the tensor-parallel group as torch's functional collective
    (`_c10d_functional.all_reduce` + `wait_tensor`, what Megatron-style TP code exports
    to); it runs only inside a process group, so eager runs use the identity."""
    return torch.ops._c10d_functional.wait_tensor(
        torch.ops._c10d_functional.all_reduce(t, "sum", "tp"))


def prefill_inputs(layer: LlamaDecoderLayer, batch: int, tokens: int):
    """Meta bf16 `(x [B, T, hidden], empty caches [B, kv, 0, hd], cos, sin [T, hd])` of a
    prefill of `tokens` prompt tokens."""
    cfg = layer.cfg
    kv = (batch, layer.kv_heads, 0, cfg.head_dim)
    return tuple(torch.empty(s, device="meta", dtype=torch.bfloat16) for s in
                 ((batch, tokens, cfg.hidden), kv, kv, (tokens, cfg.head_dim),
                  (tokens, cfg.head_dim)))


def export_layer(cfg: LlamaConfig, tp: int = 8, batch: int = 1, cached: int = 4096,
                 strategy: str = "coarse", dense: str = DENSE, p2p: P2PNet | None = None,
                 prompt: int = 0):
    """`(exported program, Lowering)` of one decode step of one TP shard (or, with
    `prompt`, a prefill of that many tokens from an empty cache), exported on the meta
    device (bf16, shapes only) and lowered by the project's PyTorch -> STeP route
    (`lower_exported`): the decode attention to the §8.4 graph (whose cache append writes
    the new row into the last tile in place; a causal prefill attention densely), the
    norms, projections, RoPE, SwiGLU and residuals through `convert-linalg-to-step`.
    With `p2p` the layer calls `tp_all_reduce` and the route lowers both all-reduces to
    `step.all_reduce` on that network."""
    with torch.device("meta"):
        layer = LlamaDecoderLayer(cfg, tp, all_reduce=tp_all_reduce if p2p else None)
        layer = layer.to(torch.bfloat16)
    args = prefill_inputs(layer, batch, prompt) if prompt else \
        decode_inputs(layer, batch, cached, device="meta", dtype=torch.bfloat16)
    ep = torch.export.export(layer, args)
    return ep, lower_exported(ep, strategy=strategy, dense=dense, p2p=p2p,
                              name=f"{cfg.name.replace('-', '_')}_tp{tp}")


def lower_layer(cfg: LlamaConfig, tp: int = 8, batch: int = 1, cached: int = 4096,
                strategy: str = "coarse", dense: str = DENSE) -> Lowering:
    """The `Lowering` of `export_layer` (one step graph per phase, no collectives)."""
    return export_layer(cfg, tp, batch, cached, strategy, dense)[1]


ROUTE_DENSE = "tile=64x32x8192 schedule=mnk"
"""The route's dense tiles for the layer graph: 32 output columns (the largest power of
two dividing Llama2's 1376 = 11008/8 FFN columns; the route does not pad) and the
reduction over the whole row (clamped to K), so a projection's input is one tile per
row that the layer graph re-reads on chip."""


def route_layer(cfg: LlamaConfig, tp: int = 8, batch: int = 4, cached: int = 4096,
                dense: str = ROUTE_DENSE, p2p: P2PNet | None = None,
                strategy: str = "interleaved", on_chip: bool = True,
                prompt: int = 0) -> LayerGraph:
    """One step graph of the whole decode layer (or prefill of `prompt` tokens) from the
    route (`sn40l_route.layer_graph`): attention, both all-reduces (with `p2p`) and every
    dense phase; `on_chip=False` chains the phases through memory only (the unfused
    baseline's input)."""
    ep, low = export_layer(cfg, tp, batch, cached, strategy, dense, p2p, prompt)
    nodes = list(ep.graph.nodes)
    return layer_graph(low, nodes, f"{cfg.name.replace('-', '_')}_tp{tp}_layer",
                       cache_sizes(low, nodes), on_chip)
