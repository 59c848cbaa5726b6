"""A top-k MoE FFN layer written the way PyTorch MoE layers are written.

`TopKMoE(experts, top_k, norm="qwen"|"mixtral")`: a router (`x @ w_router`),
top-k routing (Qwen3: softmax then top-k, renormalized; Mixtral: top-k of the
logits, softmax over the k), then one loop iteration per expert:
`torch.where(idx == e)` finds its tokens, `index_select` gathers them, the
SwiGLU expert FFN runs on them, the routing weights scale the result and
`index_add` scatters it back. Weights are `forward` arguments (stacked
`[E, ...]`), as in `torch_modules.py`, so the exported graph has no constants.

`convert-linalg-to-step`'s MoE recognizer (`steplus.lowering.linalg_to_step.aten`)
lowers the `torch.export` graph of this module to the §8.2 partition / expert
pipelines / reassemble graph.

Example::

    import torch
    from steplus.examples.workloads.moe import TopKMoE, moe_inputs

    layer = TopKMoE(4, 2)
    y = layer(*moe_inputs(8, 4, 32, 64))        # [8, 32]
    idx, w = layer.route(*moe_inputs(8, 4, 32, 64)[:2])   # [8, 2] each

Needs torch (the `[test]` extra).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

SHAPES = {  # E, K, D, F (spec §8.2)
    "mixtral": (8, 2, 4096, 14336),
    "qwen": (128, 8, 2048, 768),
}
NORMS = ("qwen", "mixtral")


class TopKMoE(torch.nn.Module):
    """Top-k routed SwiGLU experts (see module doc).

    Shapes: `x [B, D]`, `w_router [D, E]`, `w_gate/w_up [E, D, F]`,
    `w_down [E, F, D]` -> `[B, D]`."""

    def __init__(self, experts: int, top_k: int, norm: str = "qwen"):
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        self.experts, self.top_k, self.norm = experts, top_k, norm

    def route(self, x: torch.Tensor, w_router: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(expert indices [B, K], routing weights [B, K])."""
        logits = x @ w_router
        if self.norm == "qwen":
            weights, idx = torch.topk(F.softmax(logits, dim=-1), self.top_k, dim=-1)
            weights = weights / weights.sum(dim=-1, keepdim=True)
        else:
            top, idx = torch.topk(logits, self.top_k, dim=-1)
            weights = F.softmax(top, dim=-1)
        return idx, weights

    def forward(self, x: torch.Tensor, w_router: torch.Tensor, w_gate: torch.Tensor,
                w_up: torch.Tensor, w_down: torch.Tensor) -> torch.Tensor:
        idx, weights = self.route(x, w_router)
        out = torch.zeros_like(x)
        for e in range(self.experts):
            tok, slot = torch.where(idx == e)
            h = x.index_select(0, tok)
            y = (F.silu(h @ w_gate[e]) * (h @ w_up[e])) @ w_down[e]
            out = out.index_add(0, tok, y * weights[tok, slot].unsqueeze(-1))
        return out


def moe_inputs(batch: int, experts: int, hidden: int, inter: int, seed: int = 0,
               dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    """Random `(x, w_router, w_gate, w_up, w_down)` (scaled like an init)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, hidden, generator=g, dtype=dtype)
    w_router = torch.randn(hidden, experts, generator=g, dtype=dtype) / hidden ** 0.5
    w_gate = torch.randn(experts, hidden, inter, generator=g, dtype=dtype) / hidden ** 0.5
    w_up = torch.randn(experts, hidden, inter, generator=g, dtype=dtype) / hidden ** 0.5
    w_down = torch.randn(experts, inter, hidden, generator=g, dtype=dtype) / inter ** 0.5
    return x, w_router, w_gate, w_up, w_down
