"""Tensor-parallel collectives of a `torch.export` graph -> `step.all_reduce` / `step.all_gather`.

torch's functional collectives (`torch.distributed._functional_collectives`,
what tensor-parallel code traces to: `fc.all_reduce(t, "sum", group)`) export
as `_c10d_functional.all_reduce.default(t, "sum", group)` followed by
`_c10d_functional.wait_tensor.default`, and `all_gather_into_tensor(t,
group_size, group)` likewise. The exported graph does not say how many
sockets the group has nor what network joins them: `lower_exported(...,
p2p=P2PNet(ranks, links, link_gbps, latency_ns))` says it, and each
collective becomes a part of kind "collective" whose graph loads the tensor,
applies the step collective on that network and stores the result (the
collective and its wait are covered; the wait's name is the output). Without
`p2p` a collective is a remark (not lowered). Only a sum all-reduce is
lowered (the other reductions have no step op).

The tensor `[..., N]` is walked as `rows x N` in tiles of at most 64 rows and
the largest power of two up to 256 dividing `N` columns (the whole row if none
does); `examples/workloads/sn40l_route.py` puts the op on the producer's stream
instead when it chains a layer's phases into one graph.

Example: the o_proj partial sums `[4, 1, 4096]` of a TP8 Llama layer, with
`P2PNet(8, 1, 200, 1000)`, load `[1, 16]` tiles of `4x256xbf16`, all-reduce
them over 8 ranks and store them. An all-gather is a remark: torch gathers
dim 0, `step.all_gather` gathers columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from xdsl.dialects.builtin import bf16, f32

from steplus.dialects.step.builder import Graph
from steplus.lowering.linalg_to_step.fx_graph import NotRecognized, name_of

ALL_REDUCE = "_c10d_functional.all_reduce.default"
ALL_GATHER = "_c10d_functional.all_gather_into_tensor.default"
WAIT = "_c10d_functional.wait_tensor.default"
COLLECTIVES = {ALL_REDUCE: "all_reduce", ALL_GATHER: "all_gather"}
RESULT_BASE = 1 << 30
"""The part graph's output address (its input is at 0), as the dense parts."""


@dataclass(frozen=True)
class P2PNet:
    """The peer-to-peer network of a tensor-parallel group: `ranks` sockets in a ring,
    `links` links per socket of `link_gbps` GB/s each, `latency_ns` per collective."""

    ranks: int
    links: int = 1
    link_gbps: int = 200
    latency_ns: int = 1000

    def __post_init__(self) -> None:
        for f in ("ranks", "links", "link_gbps"):
            v = getattr(self, f)
            if not isinstance(v, int) or not 1 <= v <= 1 << 20:
                raise ValueError(f"p2p: {f} must be an integer in 1..1048576, got {v!r}")
        if not isinstance(self.latency_ns, int) or not 0 <= self.latency_ns <= 1 << 40:
            raise ValueError(f"p2p: latency_ns must be an integer in 0..2^40, "
                             f"got {self.latency_ns!r}")


def is_collective(n) -> bool:
    return getattr(n, "op", None) == "call_function" and name_of(n) in COLLECTIVES


def _tiles(rows: int, cols: int) -> tuple[int, int]:
    tm = next(t for t in range(min(rows, 64), 0, -1) if rows % t == 0)
    tn = next((t for t in (256, 128, 64, 32, 16, 8, 4, 2) if cols % t == 0), cols)
    return tm, tn


def collective_part(n, net: P2PNet, name: str) -> dict:
    """The fields of a `LoweredPart` for the collective node `n` (NotRecognized when its
    form is not the functional collective of a static floating-point tensor)."""
    kind = COLLECTIVES[name_of(n)]
    src = n.args[0] if n.args else None
    if src is None or not hasattr(src, "name"):
        raise NotRecognized(n, f"{kind}: the operand is not a tensor of the graph")
    if kind == "all_gather":
        raise NotRecognized(n, "all_gather_into_tensor: not lowered (it gathers dim 0; "
                               "step.all_gather gathers columns)")
    if kind == "all_reduce" and (len(n.args) < 2 or n.args[1] != "sum"):
        raise NotRecognized(n, f"all_reduce: only a sum is lowered, not "
                               f"'{n.args[1] if len(n.args) > 1 else '?'}'")
    val = getattr(src, "meta", {}).get("val")
    shape = getattr(val, "shape", None)
    if shape is None or not shape or not all(isinstance(d, int) for d in shape):
        raise NotRecognized(n, f"{kind}: the tensor has no static shape")
    dt = str(getattr(val, "dtype", ""))
    dtype = {"torch.bfloat16": bf16, "torch.float32": f32}.get(dt)
    if dtype is None:
        raise NotRecognized(n, f"{kind}: a {dt or 'non-tensor'} operand (bf16 or f32 only)")
    cols = int(shape[-1])
    rows = 1
    for d in shape[:-1]:
        rows *= int(d)
    if rows * cols > 1 << 31:
        raise NotRecognized(n, f"{kind}: more than 2^31 elements")
    tm, tn = _tiles(rows, cols)
    waits = [u for u in n.users if name_of(u) == WAIT]
    out = waits[0] if len(waits) == 1 and len(n.users) == 1 else n
    g = Graph(name)
    x = g.load((tm, tn), dtype, [rows // tm, cols // tn], base_addr=0, name="load_x")
    y = x.collective(kind, net.ranks, net.links, net.link_gbps, net.latency_ns, name=kind)
    y.store(RESULT_BASE)
    out_shape = (rows, cols)
    return dict(kind="collective", module=g.module(), shape=None,
                inputs={"arg0": src.name}, batch=rows, outputs=[out.name], role=kind,
                out_shapes=[out_shape], covered={n, out},
                lowered=SimpleNamespace(addresses={"arg0": 0, "result0": RESULT_BASE}))
