"""A Llama-style grouped-query attention decode step with a KV cache (HuggingFace style).

`LlamaDecodeAttention`: q/k/v projections (`nn.Linear` without bias), heads
split with `view(...).transpose(1, 2)`, the new key/value row appended to the
cache (`torch.cat` along the sequence dim), `repeat_kv` (`expand` +
`reshape`, as transformers writes it), the eager attention
`softmax(q k^T * head_dim**-0.5) v`, heads merged and the output projection.
Rotary embeddings are left out (they are element-wise, not attention).
`sdpa=True` computes the attention with `F.scaled_dot_product_attention`
(`enable_gqa=True`, default scale) instead: the other public form.

Example::

    attn = LlamaDecodeAttention(hidden=64, heads=4, kv_heads=2)
    x, k_cache, v_cache = decode_inputs(attn, batch=2, cached=40)
    out, k, v = attn(x, k_cache, v_cache)     # [2, 1, 64], caches [2, 2, 41, 16]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """`[batch, kv_heads, seq, head_dim]` -> `[batch, kv_heads * n_rep, seq, head_dim]`."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
                                                           slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaDecodeAttention(nn.Module):
    """`x [B, 1, hidden]`, caches `[B, kv_heads, L, head_dim]` -> (`[B, 1, hidden]`, the
    grown caches `[B, kv_heads, L + 1, head_dim]`)."""

    def __init__(self, hidden: int = 64, heads: int = 4, kv_heads: int = 2, sdpa: bool = False):
        super().__init__()
        self.num_heads, self.num_key_value_heads = heads, kv_heads
        self.head_dim = hidden // heads
        self.num_key_value_groups = heads // kv_heads
        self.scaling = self.head_dim ** -0.5
        self.sdpa = sdpa
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, hidden_states: torch.Tensor, past_key: torch.Tensor,
                past_value: torch.Tensor) -> torch.Tensor:
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads,
                                                       self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads,
                                                     self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads,
                                                       self.head_dim).transpose(1, 2)
        key_states = torch.cat([past_key, key_states], dim=2)
        value_states = torch.cat([past_value, value_states], dim=2)
        if self.sdpa:
            attn_output = F.scaled_dot_product_attention(query_states, key_states, value_states,
                                                         enable_gqa=True)
        else:
            k = repeat_kv(key_states, self.num_key_value_groups)
            v = repeat_kv(value_states, self.num_key_value_groups)
            attn_weights = torch.matmul(query_states, k.transpose(2, 3)) * self.scaling
            attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32)
            attn_weights = attn_weights.to(query_states.dtype)
            attn_output = torch.matmul(attn_weights, v)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(attn_output)


def decode_inputs(attn: LlamaDecodeAttention, batch: int = 2, cached: int = 40,
                  seed: int = 0) -> torch.Tensor:
    """Random `(hidden_states [B, 1, hidden], past_key, past_value)`."""
    g = torch.Generator().manual_seed(seed)
    hidden = attn.q_proj.in_features
    x = torch.randn(batch, 1, hidden, generator=g)
    k, v = (torch.randn(batch, attn.num_key_value_heads, cached, attn.head_dim, generator=g)
            for _ in range(2))
    return x, k, v
