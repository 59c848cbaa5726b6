"""The decode-attention graph a recognized GQA attention lowers to (spec §8.4).

`attention_graph(AttnShape(hd, group), strategy, seq_len, offset)` builds the
statically parallelized decode attention of one batch of requests (one
request = one KV head's `group` queries): per region, the K and V caches are
read tile by tile (`tile_n = 32` rows, bf16), the request's new key/value row
is appended to its last tile (`set_offset`, `row_append`) and that tile is
written back, then `exp(q K^T)`, `x V` and the tile-wise row sums give
`softmax(q K^T) V`, stored bf16 per request. A scale other than 1
(`AttnShape.scale`, e.g. torch's default `1/sqrt(hd)`) is a `mul_scalar` map
on the request's query tile before it meets the keys.

- `strategy="interleaved"`: requests round-robin over 4 regions
  (`step.parallelize`);
- `strategy="coarse"`: blocks of 16 requests per region;
- `strategy="dynamic"`: requests 0..3 to regions 0..3, then each to the region
  that finished reading its previous request's K cache first (an
  `eager_merge` of the regions' "all read" signals, a feedback edge).

`step-dynamic-parallelize{factor=4}` turns either into the dynamic dispatch.
`examples/workloads/attention.py` builds the reference graphs (hd 64, group 8) with
this module: one builder for the workload and the lowering.

Off-chip layout: queries `[B, group, hd]` at 4 GiB, new keys/values `[B, hd]`
at 8/12 GiB, the K/V caches (tile `KV_TILES_PER_REQUEST x i + t` of request
`i`) at 16/20 GiB, outputs at 24 GiB (`i << 32` bases, as the reference).

Example: `attention_graph(AttnShape(64, 8), "interleaved", [2, 1, 3, 1], [5, 0, 17, 31])`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xdsl.dialects.builtin import ModuleOp, bf16, f32

from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import ADDRESS, Graph, Stream, TileType, eager_merge, reassemble
from steplus.passes.step.specialize import specialize_graph
from steplus.lowering.linalg_to_step.emit import write_back_mu

TILE_N = 32
PARALLEL = 4
STRATEGIES = ("coarse", "interleaved")
Q_BASE, K_BASE, V_BASE, KC_BASE, VC_BASE, O_BASE = (i << 32 for i in range(1, 7))


@dataclass(frozen=True)
class AttnShape:
    """Head dim, queries per KV head and the score scale (`softmax(scale * q K^T) V`:
    a `mul_scalar[scale]` map on each request's queries when it is not 1)."""

    head_dim: int
    group: int
    scale: float = 1.0


def _region(g: Graph, s: AttnShape, r: int, q: Stream, k: Stream, v: Stream, idx, seq_len,
            offset, signal: bool = False) -> Stream | None:
    """The sub-graph of region `r` (§8.4): `q` `[n, 1]` of query tiles, `k`/`v`
    `[n, 1]` of the new rows, the Broadcast copies of the region's metadata
    (idx x5, seq_len x6, offset x2, used in that order). With `signal`, the
    K-cache tiles also go to the caller (returned) for the dynamic strategy's
    "request read" signal."""
    n = q.dims[0]
    length = f"?L{r}"
    if s.scale != 1.0:
        q = q.map(f"mul_scalar[{float(s.scale)!r}]", name=f"q_scale{r}")
    k_fmt, k_sig = _kv(g, s, r, "k", k, idx[0], seq_len[0], seq_len[1], offset[0], idx[1],
                       seq_len[2], n, length, KC_BASE, signal)
    v_fmt, _ = _kv(g, s, r, "v", v, idx[2], seq_len[3], seq_len[4], offset[1], idx[3],
                   seq_len[5], n, length, VC_BASE, False)
    k_exp, k_qkt = k_fmt.broadcast(2, [f"k_fmt{r}_exp", f"k_fmt{r}_qkt"])
    q_exp = q.expand(k_exp, 1, name=f"q_exp{r}")
    qkt = q_exp.map("matmul_t", k_qkt, name=f"qkt{r}")
    e = qkt.map("exp", name=f"exp{r}")
    e_pv, e_sum = e.broadcast(2, [f"exp{r}_pv", f"exp{r}_rsum"])
    pv = e_pv.accum("matmul", 1, v_fmt, acc=TileType(s.group, s.head_dim, f32), combine="add",
                    name=f"pv{r}")
    rsum_t = e_sum.accum("add", 1, acc=TileType(s.group, TILE_N, f32), name=f"rsum_t{r}")
    rsum = rsum_t.map("row_sum", name=f"rsum{r}")
    out = pv.map("div", rsum, dtype=bf16, name=f"div{r}")
    # §8.4 node 31: the divided tile is written back to a memory unit (store
    # term ceil(group x hd x 2 / PMU_BW) per request, and o_store reads it from there)
    write_back_mu(out)
    out.random_store(idx[4], [1 << 20], O_BASE, name=f"o_store{r}").consume()
    return k_sig


def _kv(g: Graph, s: AttnShape, r: int, x: str, row: Stream, idx_rd, len_rd, len_ctl, off,
        idx_wb, len_wb, n, length: str, base: int,
        signal: bool = False) -> tuple[Stream, Stream | None]:
    """Steps 1-12 (K) or 13-24 (V) of the region: read the cache, append the
    new row to the last tile, write that tile back; returns the tiles in
    order (`[n, ?L]`) and, with `signal`, a copy of the loaded tiles."""
    addr = idx_rd.cache_read_addr_gen(len_rd, name=f"{x}_addr{r}").with_dims([n, length])
    cache = g.random_load(addr, (TILE_N, s.head_dim), bf16, [1 << 20], base, name=f"{x}_cache{r}")
    sig = None
    if signal:
        cache, sig = cache.broadcast(2, [f"{x}_cache{r}_part", f"{x}_cache{r}_sig"])
    ctl = len_ctl.filter_last_tile(name=f"{x}_ctl{r}").with_dims([n, length])
    ctl_part, ctl_reasm = ctl.broadcast(2, [f"{x}_ctl{r}_part", f"{x}_ctl{r}_reasm"])
    last, rest = cache.partition(ctl_part, [f"{x}_last{r}", f"{x}_rest{r}"])
    last.with_dims([n])
    rest.with_dims([f"{x.upper()}rest{r}"])
    setoff = last.map("set_offset", off, name=f"{x}_setoff{r}")
    app = setoff.map("row_append", row.flatten(0, 1, name=f"{x}_row{r}"), name=f"{x}_app{r}")
    app_reasm, app_wb = app.broadcast(2, [f"{x}_app{r}_reasm", f"{x}_app{r}_wb"])
    reasm = reassemble([app_reasm, rest], ctl_reasm, name=f"{x}_reasm{r}").with_dims([n, length, 1])
    fmt = reasm.flatten(0, 1, name=f"{x}_fmt{r}")
    wb_addr = idx_wb.map("cache_write_addr", len_wb, name=f"{x}_wb_addr{r}")
    (wb_data,) = app_wb.broadcast(1, [f"{x}_wb_data{r}"])
    wb_data.random_store(wb_addr, [1 << 20], base, buffer_depth=4, name=f"{x}_wb{r}").consume()
    return fmt, sig


def _fanout(idx: Stream, seq_len: Stream, offset: Stream, r: int):
    return (idx.broadcast(5, [f"idx{r}_{u}" for u in ("kaddr", "kwb", "vaddr", "vwb", "out")]),
            seq_len.broadcast(6, [f"seq_len{r}_{u}" for u in ("kaddr", "kctl", "kwb", "vaddr",
                                                              "vctl", "vwb")]),
            offset.broadcast(2, [f"offset{r}_k", f"offset{r}_v"]))


def _loads(g: Graph, s: AttnShape, B: int) -> tuple[Stream, Stream, Stream]:
    return (g.load((s.group, s.head_dim), bf16, [B, 1], base_addr=Q_BASE, name="load_q"),
            g.load((1, s.head_dim), bf16, [B, 1], base_addr=K_BASE, name="load_k"),
            g.load((1, s.head_dim), bf16, [B, 1], base_addr=V_BASE, name="load_v"))


def _interleaved(g: Graph, s: AttnShape, B: int, seq_len: list[int],
                 offset: list[int]) -> dict[str, int]:
    counts = [len(range(r, B, PARALLEL)) for r in range(PARALLEL)]
    switch = [1] * PARALLEL
    loads = _loads(g, s, B)
    streams = []
    for name, x in zip("qkv", loads):
        outs = x.flatten(1, 1, name=f"{name}_flat").parallelize(
            PARALLEL, [f"{name}{r}" for r in range(PARALLEL)], rank=1, switch_cycles=switch)
        streams.append([o.with_dims([c, 1]) for o, c in zip(outs, counts)])
    for name, values in (("idx", range(B)), ("seq_len", seq_len), ("offset", offset)):
        m = g.metadata_gen(list(values), name=f"meta_{name}").flatten(0, 0, name=f"{name}_flat")
        outs = m.parallelize(PARALLEL, [f"{name}{r}" for r in range(PARALLEL)],
                             switch_cycles=switch)
        streams.append([o.with_dims([c]) for o, c in zip(outs, counts)])
    q, k, v, idx, ln, off = streams
    fans = [_fanout(idx[r], ln[r], off[r], r) for r in range(PARALLEL)]
    for r, (i5, l6, o2) in enumerate(fans):
        _region(g, s, r, q[r], k[r], v[r], i5, l6, o2)
    return {f"sum_L{r}": sum(seq_len[r::PARALLEL]) for r in range(PARALLEL)}


def coarse_blocks(batch: int) -> list[list[int]]:
    """The requests of each region of the coarse strategy (blocks of 16)."""
    if batch % 16:
        raise ValueError(f"coarse parallelization needs a multiple of 16 requests, got {batch}")
    regions = batch // 16 if batch <= 64 else PARALLEL
    out: list[list[int]] = [[] for _ in range(regions)]
    for b in range(batch // 16):
        out[b % regions] += list(range(16 * b, 16 * b + 16))
    return out


def _coarse(g: Graph, s: AttnShape, B: int, seq_len: list[int],
            offset: list[int]) -> dict[str, int]:
    blocks = coarse_blocks(B)
    loads = {}
    for name, tile, nbytes, base in (("q", (s.group, s.head_dim), s.group * s.head_dim * 2,
                                      Q_BASE),
                                     ("k", (1, s.head_dim), s.head_dim * 2, K_BASE),
                                     ("v", (1, s.head_dim), s.head_dim * 2, V_BASE)):
        loads[name] = [g.load(tile, bf16, [len(rq), 1], base_addr=base + rq[0] * nbytes,
                              name=f"load_{name}{r}").flatten(1, 1, name=f"{name}{r}")
                       for r, rq in enumerate(blocks)]
    metas = []
    for r, rq in enumerate(blocks):
        metas.append([g.metadata_gen([vals[i] for i in rq], name=f"meta_{name}{r}").flatten(
                          0, 0, name=f"{name}{r}")
                      for name, vals in (("idx", range(B)), ("seq_len", seq_len),
                                         ("offset", offset))])
    fans = [_fanout(m[0], m[1], m[2], r) for r, m in enumerate(metas)]
    for r, (i5, l6, o2) in enumerate(fans):
        _region(g, s, r, loads["q"][r], loads["k"][r], loads["v"][r], i5, l6, o2)
    return {f"sum_L{r}": sum(seq_len[i] for i in rq) for r, rq in enumerate(blocks)}


def _one_hot(choices: list[int], n: int) -> np.ndarray:
    return np.eye(n, dtype=np.int64)[choices]


def _dynamic(g: Graph, s: AttnShape, B: int, seq_len: list[int],
             offset: list[int]) -> dict[str, int]:
    """Requests 0..3 to regions 0..3, then each request to the region that
    finished reading its previous request's K cache first: an `eager_merge`
    of the regions' "all read" signals (a feedback edge)."""
    P = PARALLEL
    if B < P:
        raise ValueError(f"dynamic parallelization needs at least {P} requests, got {B}")
    counts = [f"N{r}" for r in range(P - 1)]
    counts.append(f"{B} - {' - '.join(counts)}")
    q, k, v = _loads(g, s, B)
    meta = [g.metadata_gen(list(vals), name=f"meta_{name}")
            for name, vals in (("idx", range(B)), ("seq_len", seq_len), ("offset", offset))]
    signals = [g.feedback([c], ADDRESS, name=f"sig{r}_fb") for r, c in enumerate(counts)]
    em_data, em_sel = eager_merge(signals, ["em_data", "em_sel"])
    em_data.consume()
    ctl_a = g.select_gen(2, [B], _one_hot([1] * (B - P) + [0] * P, 2), name="ctl_a_gen")
    done, steal = em_sel.partition(ctl_a.flatten(0, 0, name="ctl_a"), ["pem_last", "pem_steal"])
    done.with_dims([P]).consume()
    steal.with_dims([B - P])
    rr = g.select_gen(P, [P], _one_hot(list(range(P)), P), name="rr_gen").flatten(0, 0, name="rr")
    ctl_b = g.select_gen(2, [B], _one_hot([0] * P + [1] * (B - P), 2), name="ctl_b")
    asg = reassemble([rr, steal], ctl_b, name="asg_reasm").with_dims([B, 1]).flatten(0, 1, name="asg")
    sels = asg.broadcast(6, [f"asg_{n}" for n in ("q", "k", "v", "idx", "seq_len", "offset")])
    parts = []
    for name, x, sel in zip(("q", "k", "v", "idx", "seq_len", "offset"), [q, k, v, *meta], sels):
        outs = x.partition(sel, [f"{name}{r}" for r in range(P)])
        parts.append([o.with_dims([c, *o.dims[1:]]) for o, c in zip(outs, counts)])
    q, k, v, idx, ln, off = parts
    fans = [_fanout(idx[r], ln[r], off[r], r) for r in range(P)]
    caches = [_region(g, s, r, q[r], k[r], v[r], i5, l6, o2, signal=True)
              for r, (i5, l6, o2) in enumerate(fans)]
    for r, (fb, cache) in enumerate(zip(signals, caches)):
        assert cache is not None
        fb.connect(cache.accum("signal_all_read", 1, acc=ADDRESS, name=f"sig{r}"))
    return {}


_BUILDERS = {"coarse": _coarse, "interleaved": _interleaved, "dynamic": _dynamic}
ALL_STRATEGIES = tuple(_BUILDERS)
"""Every strategy the builder knows; the recognizer offers the static ones (`STRATEGIES`)."""


def attention_graph(shape: AttnShape, strategy: str, seq_len: list[int], offset: list[int],
                    name: str | None = None) -> ModuleOp:
    """The §8.4 graph for requests of `seq_len[i]` KV tiles, appending at row
    `offset[i]` of the last one (`strategy` in `ALL_STRATEGIES`). The static
    strategies record the per-region tile totals (`sum_L<r>`) in the graph's
    `step.bind`, which `step-metrics` applies. Raises ValueError for a
    strategy the batch does not allow."""
    if strategy not in _BUILDERS:
        raise ValueError(f"strategy must be one of {', '.join(ALL_STRATEGIES)}, got '{strategy}'")
    B = len(seq_len)
    if len(offset) != B:
        raise ValueError(f"{B} lengths, {len(offset)} offsets")
    if B < PARALLEL and strategy == "interleaved":
        raise ValueError(f"interleaved parallelization needs at least {PARALLEL} requests, "
                         f"got {B}")
    g = Graph(name or f"attention_{strategy}_b{B}")
    bind = _BUILDERS[strategy](g, shape, B, list(seq_len), list(offset))
    module = g.module()
    if bind:
        graph = next(o for o in module.walk() if isinstance(o, GraphOp))
        specialize_graph(graph, bind)
    return module
