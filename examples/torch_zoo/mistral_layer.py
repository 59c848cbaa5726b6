"""A Mistral decoder layer over a prompt with its sliding-window causal mask, as HuggingFace transformers writes it.

`MistralDecoderLayer`: `MistralRMSNorm` (the variance in float32), the
attention (Llama's: q/k/v/o `nn.Linear`s, RoPE, `repeat_kv`, the eager
softmax in float32; `llama_prefill.LlamaAttention`), the residual, the second
RMSNorm, `MistralMLP` (`down_proj(act_fn(gate_proj(x)) * up_proj(x))`) and
the residual. `MistralPrefill` builds the 4-D mask as transformers 4.34's
`_make_sliding_window_causal_mask` does: `torch.full((T, T), 1)`, `torch.tril`,
`torch.triu(mask, diagonal=-sliding_window)` (a token sees itself and the
`sliding_window` tokens before it), `torch.log(mask).to(dtype)` (0 where seen,
-inf elsewhere), `[None, None, :, :].expand(B, 1, T, T)`. Written from memory in
the public style; random init, small shapes, nothing downloaded. Eval mode.

Example::

    cfg = MistralConfig(hidden_size=32, intermediate_size=64, num_attention_heads=4,
                        num_key_value_heads=2, sliding_window=3)
    layer = MistralPrefill(cfg).eval()
    x, cos, sin = prefill_inputs(cfg, batch=2, seq=6)
    y = layer(x, cos, sin)      # [2, 6, 32]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .llama_prefill import LlamaAttention, LlamaConfig


@dataclass
class MistralConfig(LlamaConfig):
    intermediate_size: int = 14336
    rms_norm_eps: float = 1e-5
    sliding_window: int = 4096


class MistralRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class MistralMLP(nn.Module):
    def __init__(self, config: MistralConfig):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class MistralDecoderLayer(nn.Module):
    def __init__(self, config: MistralConfig, layer_idx: int = 0):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.self_attn = LlamaAttention(config=config, layer_idx=layer_idx)
        self.mlp = MistralMLP(config)
        self.input_layernorm = MistralRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = MistralRMSNorm(config.hidden_size,
                                                       eps=config.rms_norm_eps)

    def forward(self, hidden_states, attention_mask, position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        # Self Attention
        hidden_states, _ = self.self_attn(hidden_states, position_embeddings, attention_mask)
        hidden_states = residual + hidden_states
        # Fully Connected
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states


def _make_sliding_window_causal_mask(input_ids_shape, dtype, device,
                                     past_key_values_length: int = 0,
                                     sliding_window: int = 4096):
    """Make causal mask used for sliding window attention"""
    bsz, tgt_len = input_ids_shape

    tensor = torch.full((tgt_len, tgt_len), fill_value=1, device=device)
    mask = torch.tril(tensor, diagonal=0)
    # make the mask banded to account for sliding window
    mask = torch.triu(mask, diagonal=-sliding_window)
    mask = torch.log(mask).to(dtype)

    if past_key_values_length > 0:
        mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype,
                                      device=device), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)


class MistralPrefill(nn.Module):
    """One decoder layer over a prompt (no padding), the sliding-window mask built as
    `MistralModel._prepare_decoder_attention_mask` builds it."""

    def __init__(self, config: MistralConfig):
        super().__init__()
        self.config = config
        self.layer = MistralDecoderLayer(config)

    def forward(self, hidden_states, cos, sin):
        batch, seq_length = hidden_states.shape[:2]
        attention_mask = _make_sliding_window_causal_mask(
            (batch, seq_length), hidden_states.dtype, device=hidden_states.device,
            sliding_window=self.config.sliding_window)
        return self.layer(hidden_states, attention_mask, (cos, sin))
