"""A Llama attention layer over a whole prompt (prefill), as HuggingFace transformers' modeling_llama.py writes it.

`LlamaAttention(config, layer_idx)`: q/k/v/o `nn.Linear`s without bias, heads
by `view(hidden_shape).transpose(1, 2)`, `apply_rotary_pos_emb` (`q * cos +
rotate_half(q) * sin`, `rotate_half` the `cat((-x2, x1), dim=-1)` of the last
dim's halves), and `eager_attention_forward` (`repeat_kv`, `torch.matmul(query,
key_states.transpose(2, 3)) * scaling`, the causal mask sliced to the keys and
added, softmax in float32 then `.to(query.dtype)`, eval-mode dropout,
`torch.matmul(attn_weights, value_states)`, `transpose(1, 2).contiguous()`),
then `o_proj`. The rotary `(cos, sin)` arrive as `position_embeddings`, as the
model computes them once per forward (`LlamaRotaryEmbedding`), and
`LlamaPrefill` builds the 4-D causal mask as the eager path of
`LlamaModel._update_causal_mask` does: `torch.full((T, T), finfo.min).triu(1)`,
`[None, None, :, :].expand(B, 1, -1, -1)`. Eval mode.

Example::

    cfg = LlamaConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=2)
    layer = LlamaPrefill(cfg).eval()
    x, cos, sin = prefill_inputs(cfg, batch=2, seq=6)
    y = layer(x, cos, sin)      # [2, 6, 32]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class LlamaConfig:
    hidden_size: int = 4096
    num_attention_heads: int = 32
    num_key_value_heads: int = 8
    attention_bias: bool = False
    attention_dropout: float = 0.0
    rope_theta: float = 10000.0

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    """Applies Rotary Position Embedding to the query and key tensors."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
                                                           slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)

    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


class LlamaAttention(nn.Module):
    """Multi-headed attention from 'Attention Is All You Need' paper"""

    def __init__(self, config: LlamaConfig, layer_idx: int = 0):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = config.head_dim
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        self.scaling = self.head_dim ** -0.5
        self.attention_dropout = config.attention_dropout
        self.is_causal = True

        self.q_proj = nn.Linear(config.hidden_size, config.num_attention_heads * self.head_dim,
                                bias=config.attention_bias)
        self.k_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim,
                                bias=config.attention_bias)
        self.v_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim,
                                bias=config.attention_bias)
        self.o_proj = nn.Linear(config.num_attention_heads * self.head_dim, config.hidden_size,
                                bias=config.attention_bias)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)

        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)

        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)

        attn_output, attn_weights = eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            dropout=0.0 if not self.training else self.attention_dropout, scaling=self.scaling)

        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        attn_output = self.o_proj(attn_output)
        return attn_output, attn_weights


class LlamaPrefill(nn.Module):
    """The attention of one decoder layer over a prompt, with the causal mask built as
    `LlamaModel` builds it for the eager path (no padding: a full prompt)."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.self_attn = LlamaAttention(config)

    def forward(self, hidden_states, cos, sin):
        batch, sequence_length = hidden_states.shape[:2]
        dtype = hidden_states.dtype
        min_dtype = torch.finfo(dtype).min
        causal_mask = torch.full((sequence_length, sequence_length), fill_value=min_dtype,
                                 dtype=dtype).triu(1)
        causal_mask = causal_mask[None, None, :, :].expand(batch, 1, -1, -1)
        attn_output, _ = self.self_attn(hidden_states, (cos, sin), causal_mask)
        return attn_output


def prefill_inputs(config: LlamaConfig, batch: int = 2, seq: int = 6, seed: int = 0):
    """Random hidden states and the rotary `(cos, sin)` `[B, T, head_dim]` of positions
    0..T-1 (`LlamaRotaryEmbedding`'s default rope: `inv_freq = 1 / theta^(2i / d)`)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, seq, config.hidden_size, generator=g)
    d = config.head_dim
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = torch.arange(seq, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (t[None].expand(batch, -1, -1).contiguous() for t in (emb.cos(), emb.sin()))
    return x, cos, sin
