"""A whole MoE decoder layer (decode step) written as a PyTorch module.

`DecoderLayer(cfg)`: RMSNorm, GQA attention over a KV cache (q/k/v
projections, the new key/value row appended to the cache, scaled dot-product
attention with the 1/sqrt(d) scale folded into q), the output projection and
a residual, then RMSNorm, the top-k MoE FFN of `moe.py` and a residual. One
decode step of B sequences, one token each. Weights are `forward` arguments.

`CONFIGS` holds the Qwen3-30B-A3B and Mixtral-8x7B shapes (hidden, heads,
head dim, experts, top-k, expert intermediate size) from the models' public
configurations; `cfg.small()` keeps the structure at test sizes.

`steplus.lowering.linalg_to_step.aten.lower_exported` lowers its
`torch.export` graph to the §8.4 attention graph, the §8.2 MoE graph, and
with `dense=...` the RMSNorms, projections (q scaled), the residual adds
and the MoE router as `convert-linalg-to-step` graphs; only the views and
reshapes (no arithmetic) are reported as not lowered. `bench/exp_decoder.py`
simulates it.

Example::

    from steplus.examples.workloads.decoder_torch import CONFIGS, DecoderLayer, decoder_inputs

    cfg = CONFIGS["qwen"].small()
    y = DecoderLayer(cfg)(*decoder_inputs(cfg, batch=4, cached=40))   # [4, hidden]

Needs torch (the `[test]` extra).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from steplus.examples.workloads.moe import TopKMoE


@dataclass(frozen=True)
class DecoderConfig:
    name: str
    hidden: int
    q_heads: int
    kv_heads: int
    head_dim: int
    experts: int
    top_k: int
    inter: int
    norm: str  # the router form of moe.TopKMoE
    eps: float = 1e-6

    def small(self) -> DecoderConfig:
        """The same structure at test sizes (2 KV heads, head dim 32, 4 experts)."""
        group = self.q_heads // self.kv_heads
        return replace(self, hidden=64, q_heads=2 * group, kv_heads=2, head_dim=32,
                       experts=4, top_k=min(self.top_k, 2), inter=64)


CONFIGS = {
    "qwen": DecoderConfig("qwen3-30b-a3b", 2048, 32, 4, 128, 128, 8, 768, "qwen"),
    "mixtral": DecoderConfig("mixtral-8x7b", 4096, 32, 8, 128, 8, 2, 14336, "mixtral", 1e-5),
}


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


class DecoderLayer(torch.nn.Module):
    """One decode step: `x [B, hidden]`, caches `[B, Hkv, L, HD]` -> `[B, hidden]`."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.moe = TopKMoE(cfg.experts, cfg.top_k, cfg.norm)

    def forward(self, x, k_cache, v_cache, w_ln1, w_q, w_k, w_v, w_o, w_ln2, w_router,
                w_gate, w_up, w_down):
        c = self.cfg
        B = x.shape[0]
        h = rms_norm(x, w_ln1, c.eps)
        q = (h @ w_q).view(B, c.q_heads, 1, c.head_dim) * c.head_dim ** -0.5
        k_new = (h @ w_k).view(B, c.kv_heads, 1, c.head_dim)
        v_new = (h @ w_v).view(B, c.kv_heads, 1, c.head_dim)
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=1.0)
        x = x + a.reshape(B, c.q_heads * c.head_dim) @ w_o
        return x + self.moe(rms_norm(x, w_ln2, c.eps), w_router, w_gate, w_up, w_down)


def decoder_shapes(cfg: DecoderConfig, batch: int, cached: int) -> list[tuple[int, ...]]:
    """The shapes of `forward`'s arguments, in order."""
    D, HD, E, F_ = cfg.hidden, cfg.head_dim, cfg.experts, cfg.inter
    kv = (batch, cfg.kv_heads, cached, HD)
    return [(batch, D), kv, kv, (D,), (D, cfg.q_heads * HD), (D, cfg.kv_heads * HD),
            (D, cfg.kv_heads * HD), (cfg.q_heads * HD, D), (D,), (D, E), (E, D, F_),
            (E, D, F_), (E, F_, D)]


def decoder_inputs(cfg: DecoderConfig, batch: int, cached: int, seed: int = 0,
                   device: str = "cpu", dtype: torch.dtype = torch.float32
                   ) -> tuple[torch.Tensor, ...]:
    """Random arguments (scaled like an init); `device="meta"` for shapes only
    (of `dtype`)."""
    shapes = decoder_shapes(cfg, batch, cached)
    if device == "meta":
        return tuple(torch.empty(s, device="meta", dtype=dtype) for s in shapes)
    g = torch.Generator().manual_seed(seed)
    out = []
    for i, s in enumerate(shapes):
        t = torch.randn(s, generator=g)
        if i in (3, 8):  # RMSNorm weights around 1
            t = 1 + t / 10
        elif len(s) >= 2 and i not in (0, 1, 2):
            t = t / s[-2] ** 0.5
        out.append(t)
    return tuple(out)
