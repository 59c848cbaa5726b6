"""Llama2-7B / Mistral-7B decoder layers (one TP shard) as step graphs, from the Python frontend.

`decoder_layer(model, tokens, kv_len, tp)` is the part of one decoder layer
a socket runs under tensor parallelism `tp` (the SN40L seed maps the models
TP8 over a node's 8 sockets, §VI): `heads / tp` query heads, `kv_heads / tp`
(at least 1) KV heads, `inter / tp` FFN columns, the full hidden size. The
two all-reduces of a TP layer (after the attention output projection and
after the down projection) are `step.all_reduce` ops of the graph when a
`P2P` network is given (the partial sums cast to bf16, then reduced over the
`tp` sockets, streamed and overlapped with the rest of the layer by the
simulator); without one they are left out and `collective_bytes` gives their
size.

`tokens` rows are processed in row blocks of `row_tile` (default 512)
rows, so the stages of the layer pipeline over the blocks: decode is
`tokens = batch` (one new token per sequence, a KV cache of `kv_len` rows,
one block), prefill is `tokens = kv_len` (the layer over the whole prompt,
8 blocks of 512 for 4K; the weights are re-read per block, the SN40L's
SRAM could hold one socket's 50 MB share, the graph streams it).

The graph, in order (bf16 weights and activations, f32 accumulators):

1. `x` -> RMSNorm (`x * g / row_sum(x * x)`);
2. Q, K, V projections, one weight tile `D x head_dim` per head (`repeat`
   of the normalized activations);
3. RoPE as `q * cos + (q @ R) * sin` (`R` the rotate-half matrix), for Q
   and K; the new K and V rows are written to the KV cache;
4. attention per query head over `kv_len / kv_tile` cache tiles:
   `exp(q k^T)` accumulated against V and row-summed, then divided;
5. the output projection (accumulated over the heads) and the residual add;
6. RMSNorm, the SwiGLU FFN (`ffn_tile` columns per tile: gate and up
   matmuls, SiLU, product, down projection accumulated over the tiles) and
   the residual add; the result is stored.

Simplifications, the same in fused and kernelized runs (so they cancel in
the fusion ratio; stated in docs/guide/sn40l.md): RMSNorm divides by the sum
of squares (no square root and epsilon: the function library has no rsqrt;
the traffic is the same and the FLOPs within one per element); the softmax
does not subtract the row maximum; prefill attention computes all
`kv_len x kv_len` scores (a causal kernel skips about half); with grouped
query attention (Mistral) each query head re-reads its KV head's cache (the
sharing is not exploited: +6% of Mistral-7B decode traffic at 4K).

Example:

```python
from steplus.examples.workloads.decoder import LLAMA2_7B, decoder_layer
module = decoder_layer(LLAMA2_7B, tokens=1, kv_len=4096)       # decode, one socket
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, bf16, f32

from steplus.dialects.step.builder import Graph, Stream, TileType


@dataclass(frozen=True)
class DecoderModel:
    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    inter: int
    layers: int

    def params_per_layer(self) -> int:
        d, hd = self.hidden, self.head_dim
        attn = d * self.heads * hd * 2 + d * self.kv_heads * hd * 2
        return attn + 3 * d * self.inter + 2 * d

    def params(self, vocab: int = 32000) -> int:
        """Parameters of the whole model (embeddings and LM head included)."""
        return self.layers * self.params_per_layer() + 2 * vocab * self.hidden + self.hidden


LLAMA2_7B = DecoderModel("llama2-7b", 4096, 32, 32, 128, 11008, 32)
MISTRAL_7B = DecoderModel("mistral-7b", 4096, 32, 8, 128, 14336, 32)
TINY = DecoderModel("tiny", 64, 4, 4, 16, 96, 2)
"""A small model for functional tests."""
MODELS = {m.name: m for m in (LLAMA2_7B, MISTRAL_7B)}


def _ffn_tile(inter: int) -> int:
    """The largest divisor of `inter` that is <= 256 (a weight tile's columns)."""
    return max(t for t in range(1, min(inter, 256) + 1) if inter % t == 0)


def shard(model: DecoderModel, tp: int) -> tuple[int, int, int]:
    """(query heads, KV heads, FFN columns) of one socket under TP `tp`."""
    if model.heads % tp or model.inter % tp:
        raise ValueError(f"{model.name}: TP{tp} does not divide {model.heads} heads and "
                         f"{model.inter} FFN columns")
    return model.heads // tp, max(model.kv_heads // tp, 1), model.inter // tp


def collective_bytes(model: DecoderModel, tokens: int) -> int:
    """Bytes of one TP all-reduce of the layer (a `tokens x hidden` bf16 block)."""
    return tokens * model.hidden * 2


class _Addr:
    def __init__(self):
        self.next = 1 << 32

    def __call__(self, nbytes: int) -> int:
        a = self.next
        self.next += -(-nbytes // (1 << 20)) * (1 << 20)
        return a


def _rms_norm(g: Graph, x: Stream, d: int, m: int, addr: _Addr, tag: str) -> Stream:
    x1, x2, x3 = x.broadcast(3, [f"{tag}_a", f"{tag}_b", f"{tag}_c"])
    ss = x1.map("mul", x2, name=f"{tag}_sq").map("row_sum", name=f"{tag}_ss")
    n = x3.map("div", ss, name=f"{tag}_div")
    w = g.load((1, d), bf16, [m], in_shape=[1], stride=[0], base_addr=addr(2 * d),
               name=f"{tag}_g")
    return n.map("mul", w, dtype=bf16, name=f"{tag}_scale")


def _rope(g: Graph, q: Stream, t: int, hd: int, m: int, n: int, addr: _Addr,
          tag: str) -> Stream:
    """q (`[m, n]` of t x hd) rotated; the angles depend on the row block only."""
    qa, qb = q.broadcast(2, [f"{tag}_rot_in", f"{tag}_cos_in"])
    r = g.load((hd, hd), bf16, [m, n], in_shape=[1, 1], stride=[0, 0],
               base_addr=addr(2 * hd * hd), name=f"{tag}_R")
    sin = g.load((t, hd), bf16, [m, n], in_shape=[m, 1], stride=[1, 0],
                 base_addr=addr(2 * m * t * hd), name=f"{tag}_sin")
    cos = g.load((t, hd), bf16, [m, n], in_shape=[m, 1], stride=[1, 0],
                 base_addr=addr(2 * m * t * hd), name=f"{tag}_cos")
    rot = qa.map("matmul", r, dtype=bf16, name=f"{tag}_rot").map("mul", sin, name=f"{tag}_rsin")
    return qb.map("mul", cos, name=f"{tag}_rcos").map("add", rot, name=f"{tag}_rope")


def _proj(g: Graph, x: Stream, d: int, cols: int, m: int, n: int, addr: _Addr,
          tag: str) -> Stream:
    """x (`[m]` of t x d) times n weight tiles (d x cols), re-read per row block:
    `[m, n]` of t x cols."""
    w = g.load((d, cols), bf16, [m, n], in_shape=[1, n], stride=[0, 1],
               base_addr=addr(2 * d * cols * n), name=f"{tag}_w")
    return x.repeat(n, name=f"{tag}_rep").map("matmul", w, dtype=bf16, name=tag)


@dataclass(frozen=True)
class P2P:
    """The peer-to-peer network of a tensor-parallel group (the collectives' properties)."""

    links: int
    link_gbps: int
    latency_ns: int


def decoder_layer(model: DecoderModel, tokens: int, kv_len: int, tp: int = 8,
                  kv_tile: int = 512, ffn_tile: int | None = None, row_tile: int = 512,
                  name: str | None = None, p2p: P2P | None = None) -> ModuleOp:
    """One socket's share of a decoder layer (see module doc); with `p2p` (and `tp` > 1)
    the two all-reduces are `step.all_reduce` ops of the graph on that network."""
    hq, hkv, f = shard(model, tp)
    d, hd = model.hidden, model.head_dim
    t = min(tokens, row_tile)
    if tokens % t:
        raise ValueError(f"{tokens} tokens are not a multiple of the row tile {t}")
    m = tokens // t
    kt = min(kv_tile, kv_len)
    if kv_len % kt:
        raise ValueError(f"kv_len {kv_len} is not a multiple of the KV tile {kt}")
    ns = kv_len // kt
    tf = ffn_tile or _ffn_tile(f)
    if f % tf:
        raise ValueError(f"FFN columns {f} are not a multiple of the FFN tile {tf}")
    nf = f // tf
    kind = "prefill" if tokens == kv_len and tokens > 1 else f"decode_b{tokens}"
    g = Graph(name or f"{model.name.replace('-', '_')}_{kind}_s{kv_len}_tp{tp}")
    addr = _Addr()
    x = g.load((t, d), bf16, [m], base_addr=addr(2 * tokens * d), name="x")
    x, x_res = x.broadcast(2, ["x_norm", "x_res"])
    xn = _rms_norm(g, x, d, m, addr, "norm1")
    xq, xk, xv = xn.broadcast(3, ["xn_q", "xn_k", "xn_v"])
    q = _rope(g, _proj(g, xq, d, hd, m, hq, addr, "q"), t, hd, m, hq, addr, "q")
    k_new = _rope(g, _proj(g, xk, d, hd, m, hkv, addr, "k"), t, hd, m, hkv, addr, "k")
    v_new = _proj(g, xv, d, hd, m, hkv, addr, "v")
    k_new.store(base_addr=addr(2 * tokens * hd * hkv))  # KV cache append
    v_new.store(base_addr=addr(2 * tokens * hd * hkv))
    kc = g.load((kt, hd), bf16, [m, hq, ns], in_shape=[hq, 1, ns], stride=[0, ns, 1],
                base_addr=addr(2 * kv_len * hd * hq), name="k_cache")
    vc = g.load((kt, hd), bf16, [m, hq, ns], in_shape=[hq, 1, ns], stride=[0, ns, 1],
                base_addr=addr(2 * kv_len * hd * hq), name="v_cache")
    s = q.repeat(ns, name="q_rep").map("matmul_t", kc, dtype=f32, name="scores")
    e1, e2 = s.map("exp", name="exp").broadcast(2, ["exp_pv", "exp_sum"])
    pv = e1.accum("matmul", 1, vc, acc=TileType(t, hd, f32), combine="add", name="pv")
    rsum = e2.accum("add", 1, acc=TileType(t, kt, f32), name="rsum_t").map("row_sum",
                                                                         name="rsum")
    o = pv.map("div", rsum, dtype=bf16, name="attn")
    wo = g.load((hd, d), bf16, [m, hq], in_shape=[1, hq], stride=[0, 1],
                base_addr=addr(2 * hd * d * hq), name="o_w")
    attn = o.accum("matmul", 1, wo, acc=TileType(t, d, f32), combine="add", name="o_proj")
    if p2p is not None and tp > 1:  # the partial projections summed over the group, in bf16
        attn = attn.map("mul_scalar[1]", dtype=bf16, name="o_bf16").collective(
            "all_reduce", tp, p2p.links, p2p.link_gbps, p2p.latency_ns, name="o_allreduce")
    h = attn.map("add", x_res, name="resid1")
    h, h_res = h.broadcast(2, ["h_norm", "h_res"])
    hn = _rms_norm(g, h, d, m, addr, "norm2")
    hg, hu = hn.broadcast(2, ["hn_gate", "hn_up"])
    gate = _proj(g, hg, d, tf, m, nf, addr, "gate")
    up = _proj(g, hu, d, tf, m, nf, addr, "up")
    p = up.map("mul", gate.map("silu", name="silu"), name="swiglu")
    wd = g.load((tf, d), bf16, [m, nf], in_shape=[nf, 1], stride=[0, 1],
                base_addr=addr(2 * tf * d * nf), name="down_w")
    down = p.accum("matmul", 1, wd, acc=TileType(t, d, f32), combine="add", name="down")
    if p2p is not None and tp > 1:
        down = down.map("mul_scalar[1]", dtype=bf16, name="down_bf16").collective(
            "all_reduce", tp, p2p.links, p2p.link_gbps, p2p.latency_ns, name="down_allreduce")
    down.map("add", h_res, dtype=bf16, name="resid2").store(base_addr=addr(2 * tokens * d))
    return g.module()


def layer_weight_bytes(model: DecoderModel, tp: int = 8) -> int:
    """bf16 weight bytes of one socket's share of a layer (as the graph loads them once)."""
    hq, hkv, f = shard(model, tp)
    d, hd = model.hidden, model.head_dim
    return 2 * (d * hd * (hq + 2 * hkv) + hd * d * hq + 3 * d * f + 2 * d)
