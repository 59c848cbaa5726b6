"""A Qwen2-MoE sparse MoE block, written the way HuggingFace transformers' modeling_qwen2_moe.py writes it.

`Qwen2MoeSparseMoeBlock`: the router `nn.Linear` (`gate`), softmax in float32,
`torch.topk`, the renormalization only when `norm_topk_prob` (Qwen1.5-MoE-A2.7B
ships `False`: the top-k probabilities are used as they are), a `one_hot(...)
.permute(2, 1, 0)` expert mask, and per expert (an `nn.ModuleList` of
`Qwen2MoeMLP`: `down_proj(act_fn(gate_proj(x)) * up_proj(x))`) the tokens
`torch.where(expert_mask[e])` chose, scaled by their routing weight and
`index_add_`ed; then the **shared expert** every token goes through (a wider
`Qwen2MoeMLP`) scaled by its **sigmoid gate** (`shared_expert_gate`, an
`nn.Linear(hidden, 1)`: one value per token) and added. Written from memory in
the public style; random init, small shapes, nothing downloaded.

Example::

    block = Qwen2MoeSparseMoeBlock(Qwen2MoeConfig(hidden_size=32, moe_intermediate_size=64,
                                                  shared_expert_intermediate_size=128))
    y, logits = block(torch.randn(2, 4, 32))      # [2, 4, 32], [8, 4]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Qwen2MoeConfig:
    hidden_size: int = 2048
    moe_intermediate_size: int = 1408
    shared_expert_intermediate_size: int = 5632
    num_experts: int = 4
    num_experts_per_tok: int = 2
    norm_topk_prob: bool = False
    hidden_act: str = "silu"


class Qwen2MoeMLP(nn.Module):
    def __init__(self, config: Qwen2MoeConfig, intermediate_size: int | None = None):
        super().__init__()
        self.config = config
        self.hidden_size = config.hidden_size
        self.intermediate_size = intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Qwen2MoeSparseMoeBlock(nn.Module):
    def __init__(self, config: Qwen2MoeConfig):
        super().__init__()
        self.num_experts = config.num_experts
        self.top_k = config.num_experts_per_tok
        self.norm_topk_prob = config.norm_topk_prob

        # gating
        self.gate = nn.Linear(config.hidden_size, config.num_experts, bias=False)
        self.experts = nn.ModuleList(
            [Qwen2MoeMLP(config, intermediate_size=config.moe_intermediate_size)
             for _ in range(self.num_experts)]
        )

        self.shared_expert = Qwen2MoeMLP(
            config, intermediate_size=config.shared_expert_intermediate_size)
        self.shared_expert_gate = torch.nn.Linear(config.hidden_size, 1, bias=False)

    def forward(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        # router_logits: (batch * sequence_length, n_experts)
        router_logits = self.gate(hidden_states)

        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        if self.norm_topk_prob:
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        # we cast back to the input dtype
        routing_weights = routing_weights.to(hidden_states.dtype)

        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
            device=hidden_states.device
        )

        # One hot encode the selected experts to create an expert mask
        # this will be used to easily index which expert is going to be sollicitated
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)

        # Loop over all available experts in the model and perform the computation on each expert
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])

            # Index the correct hidden states and compute the expert hidden state for
            # the current expert. We need to make sure to multiply the output hidden
            # states by `routing_weights` on the corresponding tokens (top-1 and top-2)
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]

            # However `index_add_` only support torch tensors for indexing so we'll use
            # the `top_x` tensor here.
            final_hidden_states.index_add_(0, top_x,
                                           current_hidden_states.to(hidden_states.dtype))

        shared_expert_output = self.shared_expert(hidden_states)
        shared_expert_output = (F.sigmoid(self.shared_expert_gate(hidden_states))
                                * shared_expert_output)

        final_hidden_states = final_hidden_states + shared_expert_output

        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length,
                                                          hidden_dim)
        return final_hidden_states, router_logits
