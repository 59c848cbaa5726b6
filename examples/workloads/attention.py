"""GQA decode attention (reference-workload spec §8.4) as step graphs, built with the Python frontend.

Qwen3-30B-A3B attention: head dim `HD = 64`, 8 queries per KV head (one
request = one KV head's 8 queries), KV tiles of `tN = 32` rows, bf16 loads
("mock bf16"). Each request `i` of a KV-length trace (§6.2) has
`seq_len_i = ceil((x_i + 1) / 32)` cache tiles and appends its new key/value
row at row `offset_i = x_i mod 32` of its last tile; the lengths enter the
graph as `step.metadata_gen` values, so a graph is built for one trace:

- the per-region sub-graph (K and V cache read, the new row appended to the
  last tile, the tile written back, QK^T, exp, x V, row sums, the softmax
  division and the output store), in the spec's node order, is built by
  `steplus.lowering.linalg_to_step.attention_graph` (also what a recognized
  PyTorch GQA attention lowers to);
- `attention(strategy, batch, seq_len, offset)` with `strategy`:
  `"interleaved"` (requests round-robin over 4 regions by `step.parallelize`),
  `"coarse"` (blocks of 16 requests per region: `B/16` regions for `B <= 64`,
  4 at `B = 80` with region 0 taking requests 64..79 too) or `"dynamic"`
  (requests 0..3 to regions 0..3, then each request to the region that
  finished reading its previous request's K cache first: an `eager_merge` of
  the regions' "all read" signals, a feedback edge).

    python examples/workloads/attention.py    # (re)writes examples/step/attention_*_b16_high.mlir

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
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from steplus.lowering.linalg_to_step.attention_graph import (  # noqa: F401 (PARALLEL,
    ALL_STRATEGIES,                                            # coarse_blocks: for users)
    PARALLEL,
    TILE_N,
    AttnShape,
    attention_graph,
    coarse_blocks,
)
from steplus.passes.step.traces import KVTrace
from steplus.examples.workloads import generated

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
HD = 64  # head dim
GROUP = 8  # queries per KV head
STRATEGIES = ALL_STRATEGIES
TRACE = "azure_kv/b16/conv_stdev1456_2805_2820.npy"
"""The first batch-16 "high" trace of §6.2 (start_end 2805_2820), for the committed files."""



def attention(strategy: str, batch: int, seq_len: list[int], offset: list[int],
              name: str | None = None) -> ModuleOp:
    """The decode-attention graph of one batch of requests (§8.4).

    `seq_len[i]` KV tiles and the append row `offset[i]` per request (§6.2).
    The static strategies record the per-region tile totals (`sum_L<r>`) in
    the graph's `step.bind` attribute, which `step-metrics` applies. Built by
    `lowering.linalg_to_step.attention_graph`, the graph a recognized PyTorch
    GQA attention lowers to (one builder for both)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if not len(seq_len) == len(offset) == batch:
        raise ValueError(f"{batch} requests, {len(seq_len)} lengths, {len(offset)} offsets")
    return attention_graph(AttnShape(HD, GROUP), strategy, list(seq_len), list(offset),
                           name or f"attention_{strategy}_b{batch}")


def from_trace(strategy: str, path: str | Path, name: str | None = None) -> ModuleOp:
    """`attention` for a KV-length trace file (`azure_kv/b<B>/*.npy`)."""
    t = KVTrace.load(path, TILE_N)
    return attention(strategy, t.batch, t.seq_len, t.offset, name)


def configurations() -> dict[str, ModuleOp]:
    """File stem -> graph, for every committed example (one trace, three strategies)."""
    path = REPO / "examples" / "data" / "step-traces" / TRACE
    return {f"attention_{s}_b16_high": from_trace(s, path, f"attention_{s}_b16_high")
            for s in STRATEGIES}


GENERATOR = "examples/workloads/attention.py"


def mlir_text(module: ModuleOp) -> str:
    """The committed text of one of this module's graphs."""
    return generated.mlir_text(module, GENERATOR)


def main(directory: Path = generated.OUT) -> list[Path]:
    """(Re)write every committed graph of this module."""
    return generated.write_graphs(configurations(), GENERATOR, directory)


if __name__ == "__main__":
    for p in main():
        print(p.relative_to(REPO), file=sys.stderr)
