"""A BLOOM decoder block, as HuggingFace transformers' modeling_bloom.py writes it.

`BloomPrefill(config)` is `BloomModel`'s per-layer work on a prefill: the ALiBi
bias `build_alibi_tensor(attention_mask, n_head, dtype)` (slopes from
`torch.arange` and powers of 2 — the extra heads' odd powers when `n_head` is no
power of 2 — times the positions `(attention_mask.cumsum(-1) - 1) *
attention_mask`), the boolean causal | padding mask (`_prepare_attn_mask`: True
is masked), then one `BloomBlock`: `input_layernorm`, `BloomAttention` (the
fused `query_key_value` viewed `(..., n_head, 3, head_dim)` and split,
`alibi.baddbmm(q, k, beta=1.0, alpha=inv_norm_factor)`,
`masked_fill(mask, finfo.min)`, `softmax(dtype=float32)`, eval-mode dropout,
`bmm` with the values, `_merge_heads`, `dense`, `dropout_add` of the residual),
`post_attention_layernorm`, `BloomMLP` (`bloom_gelu_forward`, the tanh GELU
written out), its `dropout_add`. Written from memory; no transformers import.

Example::

    model = BloomPrefill(BloomConfig(hidden_size=32, n_head=4)).eval()
    mask = torch.ones(2, 6, dtype=torch.long)
    y = model(torch.randn(2, 6, 32), mask)          # [2, 6, 32]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class BloomConfig:
    hidden_size: int = 32
    n_head: int = 4
    layer_norm_epsilon: float = 1e-5
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0


def build_alibi_tensor(attention_mask: torch.Tensor, num_heads: int,
                       dtype: torch.dtype) -> torch.Tensor:
    """The ALiBi bias `[batch * num_heads, 1, seq]`: head h's slope times each key's
    position (padding keys 0), as in the paper's `m = 2^(-8 / n)` geometric slopes."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))),
                        device=attention_mask.device, dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, device=attention_mask.device,
                          dtype=torch.int32)
    slopes = torch.pow(base, powers)

    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))),
                                  device=attention_mask.device, dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2,
                                    device=attention_mask.device, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)

    # the positions of the keys, 0 at padding: (cumsum - 1) * mask
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def dropout_add(x: torch.Tensor, residual: torch.Tensor, prob: float,
                training: bool) -> torch.Tensor:
    out = F.dropout(x, p=prob, training=training)
    out = residual + out
    return out


def bloom_gelu_forward(x: torch.Tensor) -> torch.Tensor:
    """BLOOM's tanh approximation of GELU (0.79788456 = sqrt(2 / pi))."""
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class BloomGelu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return bloom_gelu_forward(x)


def _make_causal_mask(input_ids_shape: torch.Size, device: torch.device,
                      past_key_values_length: int) -> torch.BoolTensor:
    batch_size, target_length = input_ids_shape
    mask = torch.empty((target_length, target_length + past_key_values_length),
                       dtype=torch.bool, device=device)
    seq_ids = torch.arange(target_length, device=device)
    mask[:, past_key_values_length:] = seq_ids[:, None] < seq_ids[None, :]
    if past_key_values_length > 0:
        mask[:, :past_key_values_length] = False
    return mask[None, None, :, :].expand(batch_size, 1, target_length,
                                         target_length + past_key_values_length)


def _expand_mask(mask: torch.Tensor, tgt_length: int) -> torch.BoolTensor:
    batch_size, src_length = mask.shape
    expanded_mask = ~(mask[:, None, None, :].to(torch.bool))
    return expanded_mask.expand(batch_size, 1, tgt_length, src_length)


def _prepare_attn_mask(attention_mask: torch.Tensor, input_shape: tuple[int, int],
                       past_key_values_length: int = 0) -> torch.BoolTensor:
    """True where a query may NOT attend: a later key or a padding key."""
    combined_attention_mask = None
    _, src_length = input_shape
    if src_length > 1:
        combined_attention_mask = _make_causal_mask(
            torch.Size(input_shape), attention_mask.device, past_key_values_length)
    expanded_attn_mask = _expand_mask(attention_mask, tgt_length=src_length)
    return expanded_attn_mask if combined_attention_mask is None else \
        expanded_attn_mask | combined_attention_mask


class BloomAttention(nn.Module):
    def __init__(self, config: BloomConfig):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.n_head
        self.head_dim = self.hidden_size // self.num_heads
        self.split_size = self.hidden_size
        self.hidden_dropout = config.hidden_dropout
        if self.head_dim * self.num_heads != self.hidden_size:
            raise ValueError("hidden_size must be divisible by num_heads")
        # layer-wise attention scaling
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0
        self.query_key_value = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias=True)
        self.dense = nn.Linear(self.hidden_size, self.hidden_size)
        self.attention_dropout = nn.Dropout(config.attention_dropout)

    def _split_heads(self, fused_qkv: torch.Tensor):
        """`[batch, seq, 3 * hidden]` -> q, k, v `[batch, seq, num_heads, head_dim]`."""
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
        return fused_qkv[..., 0, :], fused_qkv[..., 1, :], fused_qkv[..., 2, :]

    def _merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """`[batch * num_heads, seq, head_dim]` -> `[batch, seq, num_heads * head_dim]`."""
        batch_size_and_num_heads, seq_length, _ = x.shape
        batch_size = batch_size_and_num_heads // self.num_heads
        x = x.view(batch_size, self.num_heads, seq_length, self.head_dim)
        x = x.permute(0, 2, 1, 3)
        return x.reshape(batch_size, seq_length, self.num_heads * self.head_dim)

    def forward(self, hidden_states, residual, alibi, attention_mask):
        fused_qkv = self.query_key_value(hidden_states)  # [batch, seq, 3 * hidden]
        query_layer, key_layer, value_layer = self._split_heads(fused_qkv)
        batch_size, q_length, _, _ = query_layer.shape

        query_layer = query_layer.transpose(1, 2).reshape(batch_size * self.num_heads,
                                                          q_length, self.head_dim)
        key_layer = key_layer.permute(0, 2, 3, 1).reshape(batch_size * self.num_heads,
                                                          self.head_dim, q_length)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size * self.num_heads,
                                                          q_length, self.head_dim)
        kv_length = key_layer.shape[-1]

        # [batch * num_heads, q_length, kv_length]: alibi * beta + (q @ k) * alpha
        matmul_result = alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=self.beta,
                                      alpha=self.inv_norm_factor)
        attention_scores = matmul_result.view(batch_size, self.num_heads, q_length, kv_length)

        input_dtype = attention_scores.dtype
        if input_dtype == torch.float16:
            attention_scores = attention_scores.to(torch.float)
        attn_weights = torch.masked_fill(attention_scores, attention_mask,
                                         torch.finfo(attention_scores.dtype).min)
        attention_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(input_dtype)
        attention_probs = self.attention_dropout(attention_probs)

        attention_probs_reshaped = attention_probs.view(batch_size * self.num_heads, q_length,
                                                        kv_length)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = self._merge_heads(context_layer)

        output_tensor = self.dense(context_layer)
        return dropout_add(output_tensor, residual, self.hidden_dropout, self.training)


class BloomMLP(nn.Module):
    def __init__(self, config: BloomConfig):
        super().__init__()
        hidden_size = config.hidden_size
        self.dense_h_to_4h = nn.Linear(hidden_size, 4 * hidden_size)
        self.gelu_impl = BloomGelu()
        self.dense_4h_to_h = nn.Linear(4 * hidden_size, hidden_size)
        self.hidden_dropout = config.hidden_dropout

    def forward(self, hidden_states, residual):
        hidden_states = self.gelu_impl(self.dense_h_to_4h(hidden_states))
        intermediate_output = self.dense_4h_to_h(hidden_states)
        return dropout_add(intermediate_output, residual, self.hidden_dropout, self.training)


class BloomBlock(nn.Module):
    def __init__(self, config: BloomConfig):
        super().__init__()
        hidden_size = config.hidden_size
        self.input_layernorm = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.num_heads = config.n_head
        self.self_attention = BloomAttention(config)
        self.post_attention_layernorm = nn.LayerNorm(hidden_size,
                                                     eps=config.layer_norm_epsilon)
        self.mlp = BloomMLP(config)
        self.apply_residual_connection_post_layernorm = False

    def forward(self, hidden_states, alibi, attention_mask):
        layernorm_output = self.input_layernorm(hidden_states)
        residual = layernorm_output if self.apply_residual_connection_post_layernorm \
            else hidden_states
        attention_output = self.self_attention(layernorm_output, residual, alibi,
                                               attention_mask)
        layernorm_output = self.post_attention_layernorm(attention_output)
        residual = layernorm_output if self.apply_residual_connection_post_layernorm \
            else attention_output
        return self.mlp(layernorm_output, residual)


class BloomPrefill(nn.Module):
    """`BloomModel`'s prologue (alibi, the causal | padding mask) and one `BloomBlock`."""

    def __init__(self, config: BloomConfig):
        super().__init__()
        self.config = config
        self.h = BloomBlock(config)

    def forward(self, hidden_states, attention_mask):
        batch_size, seq_length, _ = hidden_states.shape
        alibi = build_alibi_tensor(attention_mask, self.config.n_head, hidden_states.dtype)
        causal_mask = _prepare_attn_mask(attention_mask, (batch_size, seq_length))
        return self.h(hidden_states, alibi, causal_mask)
