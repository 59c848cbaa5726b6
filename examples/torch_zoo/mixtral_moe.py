"""A Mixtral-style sparse MoE block, written the way HuggingFace transformers writes it.

`MixtralSparseMoeBlock`: a router `nn.Linear` (`gate`), softmax, top-k and
renormalization of the routing weights, a `one_hot` expert mask, and per
expert (an `nn.ModuleList` of `MixtralBlockSparseTop2MLP`, three `nn.Linear`
without bias: `w2(silu(w1(x)) * w3(x))`) the tokens it was chosen for
(`torch.where(expert_mask[e])`), scaled by their routing weight and
`index_add_`ed into the output. Written from memory in the public style; no
weights are downloaded (random init, small shapes).

Example::

    block = MixtralSparseMoeBlock(hidden=32, ffn=64, experts=4, top_k=2)
    y, logits = block(torch.randn(2, 4, 32))      # [2, 4, 32], [8, 4]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MixtralBlockSparseTop2MLP(nn.Module):
    """One expert: `w2(silu(w1(x)) * w3(x))` (gate w1, down w2, up w3)."""

    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
        return self.w2(current_hidden_states)


class MixtralSparseMoeBlock(nn.Module):
    """`[batch, seq, hidden]` -> (`[batch, seq, hidden]`, router logits `[batch*seq, E]`)."""

    def __init__(self, hidden: int = 32, ffn: int = 64, experts: int = 4, top_k: int = 2):
        super().__init__()
        self.hidden_dim, self.num_experts, self.top_k = hidden, experts, top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList([MixtralBlockSparseTop2MLP(hidden, ffn)
                                      for _ in range(experts)])

    def forward(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros((batch_size * sequence_length, hidden_dim),
                                          dtype=hidden_states.dtype,
                                          device=hidden_states.device)
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits
