"""GQA decode attention with a KV cache, written as a PyTorch module.

`GQADecodeAttention`: one decode step of grouped-query attention. Each of
the `B` sequences brings one new key/value row per KV head, appended to its
cache (`torch.cat` along the sequence dim), then
`F.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=1.0)` (the
1/sqrt(d) scale is folded into the queries by the caller, as the §8.4 graph
has no scaling). One (sequence, KV head) pair is one request of the §8.4
decode-attention graph: its `group = Hq / Hkv` queries against one cache.

The recognizer of `steplus.lowering.linalg_to_step.aten` lowers its
`torch.export` graph to that attention graph (strategy interleaved or coarse;
`step-dynamic-parallelize` makes it dynamic).

Example::

    import torch
    from steplus.examples.workloads.attention_torch import GQADecodeAttention, attention_inputs

    out = GQADecodeAttention()(*attention_inputs(2, 16, 2, 64, cached=40))  # [2, 16, 1, 64]

Needs torch (the `[test]` extra).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


class GQADecodeAttention(torch.nn.Module):
    """`q [B, Hq, 1, HD]`, `k_new/v_new [B, Hkv, 1, HD]`, `k_cache/v_cache
    [B, Hkv, L, HD]` -> `[B, Hq, 1, HD]` (the caches grow to L + 1)."""

    def forward(self, q: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor,
                k_cache: torch.Tensor, v_cache: torch.Tensor) -> torch.Tensor:
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=1.0)


def attention_inputs(batch: int, q_heads: int, kv_heads: int, head_dim: int, cached: int,
                     seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Random `(q, k_new, v_new, k_cache, v_cache)`, queries pre-scaled by 1/sqrt(d)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, q_heads, 1, head_dim, generator=g) / head_dim ** 0.5
    k_new, v_new = (torch.randn(batch, kv_heads, 1, head_dim, generator=g) for _ in range(2))
    k_cache, v_cache = (torch.randn(batch, kv_heads, cached, head_dim, generator=g)
                        for _ in range(2))
    return q, k_new, v_new, k_cache, v_cache
