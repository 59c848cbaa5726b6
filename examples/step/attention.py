"""GQA decode attention (reference-workload spec §8.4) as step graphs, built with the Python frontend.

Qwen3-30B-A3B attention: head dim `HD = 64`, 8 queries per KV head (one
request = one KV head's 8 queries), KV tiles of `tN = 32` rows, bf16 loads
("mock bf16"). Each request `i` of a KV-length trace (§6.2) has
`seq_len_i = ceil((x_i + 1) / 32)` cache tiles and appends its new key/value
row at row `offset_i = x_i mod 32` of its last tile; the lengths enter the
graph as `step.metadata_gen` values, so a graph is built for one trace:

- `region(...)`: the per-region sub-graph (K and V cache read, the new row
  appended to the last tile, the tile written back, QK^T, exp, x V, row sums,
  the softmax division and the output store), in the spec's node order;
- `attention(strategy, batch, seq_len, offset)` with `strategy`:
  `"interleaved"` (requests round-robin over 4 regions by `step.parallelize`),
  `"coarse"` (blocks of 16 requests per region: `B/16` regions for `B <= 64`,
  4 at `B = 80` with region 0 taking requests 64..79 too) or `"dynamic"`
  (requests 0..3 to regions 0..3, then each request to the region that
  finished reading its previous request's K cache first: an `eager_merge` of
  the regions' "all read" signals, a feedback edge).

    python examples/step/attention.py    # (re)writes examples/step/attention_*_b16_high.mlir

How the artifact's operators map onto the dialect (where it differs):

- The artifact's streams carry an extra leading `1`; its `Flatten(a, b)` that
  merges that unit dim into `B` (the q/k/v `Flatten(1, 2)`, the metadata and
  selector `Flatten(0, 1)`) is `flatten(a, b - 1)` here, an identity on the
  dims kept as a node (node order, one channel hop).
- `CacheWriteAddrGen` and `SignalReqAllRead` are library functions
  (`cache_write_addr`: a `map` over (idx, seq_len); `signal_all_read`: an
  `accum` of rank 1 over a region's K-cache tiles), 0 FLOPs, fixed 1 cycle.
- `SetOffset` / `RowWiseAppend` are `set_offset` / `row_append`; a KV tile
  type is its capacity (`32 x 64`), the fill level a run-time row count.
- Broadcasts are explicit (the frontend's rule): created where a stream
  gets its second consumer instead of at the end of the node order; the
  memory operators' order (what fixes the HBM registration) is the spec's.
- Partition / reassemble / parallelize outputs get their sizes named
  (`with_dims`): a region's request count (a number for the static
  strategies, `N0`..`N2` and `B - N0 - N1 - N2` for the dynamic one), its
  cache length `?L<r>` (ragged: one length per request), one tile per
  reassembly group. The static graphs record the per-region tile totals
  `sum_L<r>` in `step.bind`, so `step-metrics` prints numbers; in the dynamic
  graph they depend on the run (only their sum, `sum(seq_len)`, is fixed).
- Accumulators (x V, the tile-wise row sum) are f32; the divided output is
  stored in bf16 (the spec's store traffic uses `nb = 2`).
"""

from __future__ import annotations

import sys
from io import StringIO
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, UnitAttr, bf16, f32
from xdsl.printer import Printer

from steplus.dialects.step import GraphOp
from steplus.dialects.step_frontend import ADDRESS, Graph, Stream, TileType, eager_merge, reassemble
from steplus.passes.step.specialize import specialize_graph
from steplus.passes.step.traces import KVTrace

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
HD = 64  # head dim
GROUP = 8  # queries per KV head
TILE_N = 32  # KV tile rows
PARALLEL = 4  # regions of the interleaved and dynamic strategies
STRATEGIES = ("coarse", "interleaved", "dynamic")
TRACE = "azure_kv/b16/conv_stdev1456_2805_2820.npy"
"""The first batch-16 "high" trace of §6.2 (start_end 2805_2820), for the committed files."""

Q_BASE, K_BASE, V_BASE, KC_BASE, VC_BASE, O_BASE = (i << 32 for i in range(1, 7))


def region(g: Graph, r: int, q: Stream, k: Stream, v: Stream, idx: list[Stream],
           seq_len: list[Stream], offset: list[Stream], signal: bool = False) -> Stream | None:
    """The sub-graph of region `r` (§8.4): `q` `[n, 1]` of 8x64 query tiles,
    `k`/`v` `[n, 1]` of the new 1x64 rows, the Broadcast copies of the
    region's metadata (idx x5, seq_len x6, offset x2, used in that order).
    With `signal`, the K-cache tiles also go to the caller (returned) for the
    dynamic strategy's "request read" signal."""
    n = q.dims[0]
    length = f"?L{r}"
    k_fmt, k_sig = _kv(g, r, "k", k, idx[0], seq_len[0], seq_len[1], offset[0], idx[1],
                       seq_len[2], n, length, KC_BASE, signal)
    v_fmt, _ = _kv(g, r, "v", v, idx[2], seq_len[3], seq_len[4], offset[1], idx[3],
                   seq_len[5], n, length, VC_BASE, False)
    k_exp, k_qkt = k_fmt.broadcast(2, [f"k_fmt{r}_exp", f"k_fmt{r}_qkt"])
    q_exp = q.expand(k_exp, 1, name=f"q_exp{r}")
    qkt = q_exp.map("matmul_t", k_qkt, name=f"qkt{r}")
    e = qkt.map("exp", name=f"exp{r}")
    e_pv, e_sum = e.broadcast(2, [f"exp{r}_pv", f"exp{r}_rsum"])
    pv = e_pv.accum("matmul", 1, v_fmt, acc=TileType(GROUP, HD, f32), combine="add",
                    name=f"pv{r}")
    rsum_t = e_sum.accum("add", 1, acc=TileType(GROUP, TILE_N, f32), name=f"rsum_t{r}")
    rsum = rsum_t.map("row_sum", name=f"rsum{r}")
    out = pv.map("div", rsum, dtype=bf16, name=f"div{r}")
    # §8.4 node 31: the divided tile is written back to a memory unit (store
    # term ceil(8 x HD x 2 / PMU_BW) per request, and o_store reads it from there)
    out.value.owner.attributes["write_back_mu"] = UnitAttr()
    out.random_store(idx[4], [1 << 20], O_BASE, name=f"o_store{r}").consume()
    return k_sig


def _kv(g: Graph, r: int, x: str, row: Stream, idx_rd: Stream, len_rd: Stream, len_ctl: Stream,
        off: Stream, idx_wb: Stream, len_wb: Stream, n, length: str, base: int,
        signal: bool) -> tuple[Stream, Stream | None]:
    """Steps 1-12 (K) or 13-24 (V) of the region: read the cache, append the
    new row to the last tile, write that tile back; returns the tiles in
    order (`[n, ?L]`) and, with `signal`, a copy of the loaded tiles."""
    addr = idx_rd.cache_read_addr_gen(len_rd, name=f"{x}_addr{r}").with_dims([n, length])
    cache = g.random_load(addr, (TILE_N, HD), bf16, [1 << 20], base, name=f"{x}_cache{r}")
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
    """The per-region metadata Broadcasts (idx 5, seq_len 6, offset 2)."""
    return (idx.broadcast(5, [f"idx{r}_{u}" for u in ("kaddr", "kwb", "vaddr", "vwb", "out")]),
            seq_len.broadcast(6, [f"seq_len{r}_{u}" for u in ("kaddr", "kctl", "kwb", "vaddr",
                                                              "vctl", "vwb")]),
            offset.broadcast(2, [f"offset{r}_k", f"offset{r}_v"]))


def _loads(g: Graph, batch: int, suffix: str = "", base: int = 0):
    q = g.load((GROUP, HD), bf16, [batch, 1], base_addr=Q_BASE + base * GROUP * HD * 2,
               name=f"load_q{suffix}")
    k = g.load((1, HD), bf16, [batch, 1], base_addr=K_BASE + base * HD * 2, name=f"load_k{suffix}")
    v = g.load((1, HD), bf16, [batch, 1], base_addr=V_BASE + base * HD * 2, name=f"load_v{suffix}")
    return q, k, v


def _interleaved(g: Graph, B: int, seq_len: list[int], offset: list[int]) -> dict[str, int]:
    counts = [len(range(r, B, PARALLEL)) for r in range(PARALLEL)]
    switch = [1] * PARALLEL
    streams = []
    for name, s in zip("qkv", _loads(g, B)):
        outs = s.flatten(1, 1, name=f"{name}_flat").parallelize(
            PARALLEL, [f"{name}{r}" for r in range(PARALLEL)], rank=1, switch_cycles=switch)
        streams.append([o.with_dims([c, 1]) for o, c in zip(outs, counts)])
    for name, values in (("idx", range(B)), ("seq_len", seq_len), ("offset", offset)):
        m = g.metadata_gen(list(values), name=f"meta_{name}").flatten(0, 0, name=f"{name}_flat")
        outs = m.parallelize(PARALLEL, [f"{name}{r}" for r in range(PARALLEL)], switch_cycles=switch)
        streams.append([o.with_dims([c]) for o, c in zip(outs, counts)])
    q, k, v, idx, ln, off = streams
    fans = [_fanout(idx[r], ln[r], off[r], r) for r in range(PARALLEL)]
    for r, (i5, l6, o2) in enumerate(fans):
        region(g, r, q[r], k[r], v[r], i5, l6, o2)
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


def _coarse(g: Graph, B: int, seq_len: list[int], offset: list[int]) -> dict[str, int]:
    blocks = coarse_blocks(B)
    loads = {}
    for name, tile, nbytes, base in (("q", (GROUP, HD), GROUP * HD * 2, Q_BASE),
                                     ("k", (1, HD), HD * 2, K_BASE), ("v", (1, HD), HD * 2, V_BASE)):
        loads[name] = [g.load(tile, bf16, [len(rq), 1], base_addr=base + rq[0] * nbytes,
                              name=f"load_{name}{r}").flatten(1, 1, name=f"{name}{r}")
                       for r, rq in enumerate(blocks)]
    fans = []
    for r, rq in enumerate(blocks):
        meta = [g.metadata_gen([vals[i] for i in rq], name=f"meta_{name}{r}").flatten(
                    0, 0, name=f"{name}{r}")
                for name, vals in (("idx", range(B)), ("seq_len", seq_len), ("offset", offset))]
        fans.append(meta)
    fans = [_fanout(*m, r) for r, m in enumerate(fans)]
    for r, (i5, l6, o2) in enumerate(fans):
        region(g, r, loads["q"][r], loads["k"][r], loads["v"][r], i5, l6, o2)
    return {f"sum_L{r}": sum(seq_len[i] for i in rq) for r, rq in enumerate(blocks)}


def _one_hot(choices: list[int], n: int) -> np.ndarray:
    return np.eye(n, dtype=np.int64)[choices]


def _dynamic(g: Graph, B: int, seq_len: list[int], offset: list[int]) -> dict[str, int]:
    P = PARALLEL
    if B < P:
        raise ValueError(f"dynamic parallelization needs at least {P} requests, got {B}")
    counts = [f"N{r}" for r in range(P - 1)]
    counts.append(f"{B} - {' - '.join(counts)}")
    q, k, v = _loads(g, B)
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
    for name, s, sel in zip(("q", "k", "v", "idx", "seq_len", "offset"), [q, k, v, *meta], sels):
        outs = s.partition(sel, [f"{name}{r}" for r in range(P)])
        parts.append([o.with_dims([c, *o.dims[1:]]) for o, c in zip(outs, counts)])
    q, k, v, idx, ln, off = parts
    fans = [_fanout(idx[r], ln[r], off[r], r) for r in range(P)]
    caches = [region(g, r, q[r], k[r], v[r], i5, l6, o2, signal=True)
              for r, (i5, l6, o2) in enumerate(fans)]
    for r, (fb, cache) in enumerate(zip(signals, caches)):
        assert cache is not None
        fb.connect(cache.accum("signal_all_read", 1, acc=ADDRESS, name=f"sig{r}"))
    return {}


BUILDERS = {"coarse": _coarse, "interleaved": _interleaved, "dynamic": _dynamic}


def attention(strategy: str, batch: int, seq_len: list[int], offset: list[int],
              name: str | None = None) -> ModuleOp:
    """The decode-attention graph of one batch of requests (§8.4).

    `seq_len[i]` KV tiles and the append row `offset[i]` per request (§6.2).
    The static strategies record the per-region tile totals (`sum_L<r>`) in
    the graph's `step.bind` attribute, which `step-metrics` applies."""
    if strategy not in BUILDERS:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if not len(seq_len) == len(offset) == batch:
        raise ValueError(f"{batch} requests, {len(seq_len)} lengths, {len(offset)} offsets")
    g = Graph(name or f"attention_{strategy}_b{batch}")
    bind = BUILDERS[strategy](g, batch, list(seq_len), list(offset))
    module = g.module()
    if bind:
        graph = next(o for o in module.walk() if isinstance(o, GraphOp))
        specialize_graph(graph, bind)
    return module


def from_trace(strategy: str, path: str | Path, name: str | None = None) -> ModuleOp:
    """`attention` for a KV-length trace file (`azure_kv/b<B>/*.npy`)."""
    t = KVTrace.load(path, TILE_N)
    return attention(strategy, t.batch, t.seq_len, t.offset, name)


def configurations() -> dict[str, ModuleOp]:
    """File stem -> graph, for every committed example (one trace, three strategies)."""
    path = REPO / "examples" / "data" / "step-traces" / TRACE
    return {f"attention_{s}_b16_high": from_trace(s, path, f"attention_{s}_b16_high")
            for s in STRATEGIES}


def mlir_text(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return f"// Generated by examples/step/attention.py; do not edit.\n{out.getvalue()}\n"


def main(directory: Path = HERE) -> list[Path]:
    written = []
    for stem, module in configurations().items():
        path = directory / f"{stem}.mlir"
        path.write_text(mlir_text(module))
        written.append(path)
    return written


if __name__ == "__main__":
    for p in main():
        print(p.relative_to(REPO), file=sys.stderr)
