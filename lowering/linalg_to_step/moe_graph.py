"""The MoE graph a recognized top-k MoE layer lowers to (reference spec §8.2).

`moe_graph(MoEShape(E, K, D, F), tile_n, tile_f)` builds the weight-stationary
MoE layer: the token load, the expert `partition` by a routing `select_gen`,
per-expert token grouping (static tiling: `reshape` into `tile_n` chunks,
zero-padded; dynamic tiling, `tile_n=None`: `promote`, one tile of exactly the
expert's tokens), per-expert up/gate/down pipelines (weights bf16, f32
accumulators), the routing-weight multiply, `reassemble` per token and the
sum over the top-k choices, stored f32. The batch `B` and the expert token
counts `B_0 .. B_{E-1}` are symbols: bind them with
`step-specialize{routing=...}`. The construction order is spec §8.2's, so
`examples/workloads/graphs.py` builds its MoE graphs (`moe`, and the shared
parts of `moe_time_multiplexed`) with these functions: one builder.

Off-chip layout (bytes): tokens `[B, D]` bf16 at 0, the routing weights
`[B, K]` bf16 at 2 GiB, expert weights from 4 GiB as `[up | gate | down]`,
each kind's E matrices contiguous (`2 D F` bytes each; up/gate stored as F/tile_f
column blocks `[D, tile_f]` one after the other, down as `[F, D]`), the
output `[B, D]` f32 at 16 GiB.

Example: `moe_graph(MoEShape(8, 2, 4096, 14336), 16)` is `moe_mixtral_tn16`'s
graph; `step-dynamic-tiling` turns it into the `tile_n=None` one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, bf16, f32

from steplus.dialects.step.builder import Graph, Stream, TileType, reassemble

TOKENS_BASE, ROUTING_BASE, WEIGHTS_BASE, OUT_BASE = 0, 1 << 31, 1 << 32, 1 << 34


@dataclass(frozen=True)
class MoEShape:
    """E experts, top-K routing, hidden D, expert intermediate F."""

    experts: int
    top_k: int
    hidden: int
    inter: int


def weight_addr(shape: MoEShape, expert: int, which: int) -> int:
    """Base of expert `expert`'s up (0), gate (1) or down (2) matrix."""
    return WEIGHTS_BASE + (which * shape.experts + expert) * 2 * shape.hidden * shape.inter


def moe_graph(shape: MoEShape, tile_n: int | None, tile_f: int = 64,
              name: str | None = None) -> ModuleOp:
    """The §8.2 graph; `tile_n=None` is dynamic tiling (see module doc)."""
    E, D, F = shape.experts, shape.hidden, shape.inter
    g = Graph(name or f"moe_e{E}_{'dyn' if tile_n is None else f'tn{tile_n}'}")
    nf = F // tile_f
    acc, w_sel, acc_tile = group_tokens(g, shape, tile_n)
    fanout = [a.broadcast(4, [f"acc{e}_rep", f"acc{e}_up", f"acc{e}_gate", f"acc{e}_down"])
              for e, a in enumerate(acc)]
    reps = [f[0].repeat(nf, name=f"rep{e}").broadcast(2, [f"rep{e}_up", f"rep{e}_gate"])
            for e, f in enumerate(fanout)]
    ups = []
    for e, f in enumerate(fanout):
        w = g.load((D, tile_f), bf16, [nf, 1], ref=f[1], base_addr=weight_addr(shape, e, 0),
                   name=f"up_ld{e}").flatten(0, 1)
        ups.append(reps[e][0].map("matmul", w, dtype=f32, name=f"up{e}"))
    gates = []
    for e, f in enumerate(fanout):
        w = g.load((D, tile_f), bf16, [nf, 1], ref=f[2], base_addr=weight_addr(shape, e, 1),
                   name=f"gate_ld{e}").flatten(0, 1)
        gates.append(reps[e][1].map("matmul", w, dtype=f32, name=f"gate{e}"))
    projs = [u.map("mul", gt.map("silu", name=f"act{e}"), name=f"proj{e}")
             for e, (u, gt) in enumerate(zip(ups, gates))]
    rows = []
    for e, f in enumerate(fanout):
        w = g.load((tile_f, D), bf16, [nf, 1], ref=f[3], base_addr=weight_addr(shape, e, 2),
                   name=f"down_ld{e}").flatten(0, 1)
        d = projs[e].accum("matmul", 1, w, acc=acc_tile, combine="add", name=f"down{e}")
        rows.append(d.flat_map("retile_streamify", 0, name=f"rt{e}"))
    combine(g, shape, rows, w_sel)
    return g.module(take=True)  # g is local: the module takes its op, no clone


def group_tokens(g: Graph, shape: MoEShape, tile_n: int | None):
    """Steps 1-7 of §8.2: the token load, the expert partition, per-expert token
    tiles (static `reshape` + padding, or dynamic `promote`); returns the
    per-expert accumulator streams, the routing selector and the tile type."""
    E, K, D = shape.experts, shape.top_k, shape.hidden
    tokens = g.load((1, D), bf16, ["B", 1], base_addr=TOKENS_BASE, name="in_load")
    flat = tokens.flatten(0, 1, name="flat_in")
    feat_sel = g.select_gen(E, ["B"], name="feat_sel")
    w_sel = g.select_gen(E, ["B", K], name="w_sel")
    parts = flat.partition(feat_sel, [f"part_{e:03d}" for e in range(E)])
    acc_tile = TileType(tile_n if tile_n is not None else -1, D, f32)
    acc: list[Stream] = []
    for e, p in enumerate(parts):
        if tile_n is not None:
            rs, pad = p.reshape(tile_n, name=f"rs{e}")
            pad.consume()
        else:
            rs = p.promote(name=f"rs{e}")
        acc.append(rs.accum("retile_row", 1, acc=acc_tile, name=f"acc{e}"))
    return acc, w_sel, acc_tile


def combine(g: Graph, shape: MoEShape, rows: list[Stream], w_sel: Stream) -> None:
    """Steps 17-23 of §8.2: routing weights, reassembly per token, the sum over
    the top-k choices, the f32 store (`w_load` is the last reader)."""
    E, K, D = shape.experts, shape.top_k, shape.hidden
    w_load = g.load((1, 1), bf16, ["B", K], base_addr=ROUTING_BASE, name="w_load")
    w_parts = w_load.partition(w_sel, [f"w_part_{e:03d}" for e in range(E)])
    scaled = [rt.map("mul", w, name=f"wmul{e}") for e, (w, rt) in enumerate(zip(w_parts, rows))]
    re_sel = g.select_gen(E, ["B"], name="re_sel")
    reasm = reassemble(scaled, re_sel, name="reasm")
    out = reasm.accum("add", 1, acc=TileType(1, D, f32), name="acc_out")
    out_rows, pad = out.reshape(1, name="rs_out")
    pad.consume()
    out_rows.store(base_addr=OUT_BASE)
