"""A Llama-style MLP block with RMSNorm, as HuggingFace transformers writes it.

`LlamaMLPBlock`: `LlamaRMSNorm` (variance in f32, `x * rsqrt(var + eps)`,
times the weight), then `LlamaMLP` (`down_proj(act_fn(gate_proj(x)) *
up_proj(x))`, SiLU, no biases), and the residual add.

Example::

    block = LlamaMLPBlock(hidden=32, intermediate=64)
    y = block(torch.randn(2, 4, 32))      # [2, 4, 32]
"""

from __future__ import annotations

import torch
from torch import nn


class LlamaRMSNorm(nn.Module):
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


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaMLPBlock(nn.Module):
    """`post_attention_layernorm` + `mlp` + residual, as in `LlamaDecoderLayer`."""

    def __init__(self, hidden: int = 32, intermediate: int = 64):
        super().__init__()
        self.post_attention_layernorm = LlamaRMSNorm(hidden)
        self.mlp = LlamaMLP(hidden, intermediate)
        with torch.no_grad():  # a trained norm's weight is not all ones
            self.post_attention_layernorm.weight.uniform_(0.5, 1.5)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states
