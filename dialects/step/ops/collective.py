"""Collective operators of the `step` dialect: `all_reduce` and `all_gather` across the
sockets of a tensor-parallel group, on a modeled peer-to-peer network.

A step graph under tensor parallelism is the program of one socket (SPMD:
every socket of the group runs the same graph on its shard). A collective
streams every tile of its input over the P2P network of the group, a ring
of `ranks` sockets with `links` links per socket of `link_gbps` GB/s each
and a fixed `latency_ns` per collective step, and yields the combined tile:

- `all_reduce`: the element-wise sum of the `ranks` sockets' tiles (same
  type); a ring moves `2 (ranks - 1) / ranks` of the tile over each link;
- `all_gather`: the `ranks` sockets' tiles side by side (columns x
  `ranks`); each socket receives `(ranks - 1)` tiles.

Tiles stream through the collective as through any other operator, so the
simulator overlaps the transfer of one tile with the compute on the next
(the SN40L seed's §VII: collectives "fused and pipelined with other
computations into the same kernel"). The network parameters are properties
of the op, so a graph says which network it assumes.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.ops.base import UnaryStreamOp
from steplus.dialects.step.shape_rules import Fresh, ResultShape, ShapeError
from steplus.dialects.step.types import StreamType, TileType
from steplus.dialects.step.verify import int_of, stream_of

MAX_RANKS = 1 << 16
"""The largest group a collective may name (a bound on what a user can size)."""
MAX_LINK_GBPS = 10**6
"""The fastest link a collective may name (1 PB/s)."""
MAX_LATENCY_NS = 10**9
"""The longest latency a collective may name (1 s)."""


class _CollectiveOp(UnaryStreamOp):
    """What both collectives share: the group and its network, the verifier."""

    ranks = prop_def(IntegerAttr[I64])
    """Sockets of the tensor-parallel group (the ring), 1..65536."""
    links = prop_def(IntegerAttr[I64])
    """Peer-to-peer links per socket, used in parallel."""
    link_gbps = prop_def(IntegerAttr[I64])
    """Bandwidth of one link in GB/s."""
    latency_ns = prop_def(IntegerAttr[I64])
    """Fixed latency of one collective (a tile's combined value leaves this long after its
    transfer), in ns."""

    def _check(self) -> tuple[StreamType, StreamType, TileType]:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if not isinstance(s.element, TileType):
            raise VerifyException(f"{self.name}: input elements must be tiles, got {s.element}")
        if not 1 <= int_of(self.ranks) <= MAX_RANKS:
            raise VerifyException(f"{self.name}: ranks must be in 1..{MAX_RANKS}")
        if not 1 <= int_of(self.links) <= MAX_RANKS:
            raise VerifyException(f"{self.name}: links must be in 1..{MAX_RANKS}")
        if not 1 <= int_of(self.link_gbps) <= MAX_LINK_GBPS:
            raise VerifyException(f"{self.name}: link_gbps must be in 1..{MAX_LINK_GBPS}")
        if not 0 <= int_of(self.latency_ns) <= MAX_LATENCY_NS:
            raise VerifyException(f"{self.name}: latency_ns must be in 0..{MAX_LATENCY_NS}")
        if out.rank != s.rank:
            raise VerifyException(f"{self.name}: result must have the input's dims")
        return s, out, s.element


@irdl_op_definition
class AllReduceOp(_CollectiveOp):
    """Sum every tile over the `ranks` sockets of a tensor-parallel group.

    The group is a ring on a peer-to-peer network of `links` links of
    `link_gbps` GB/s per socket and `latency_ns` per collective: a tile of B
    bytes keeps the socket's links busy for `2 (ranks - 1) / ranks x B`
    bytes and its sum leaves `latency_ns` after its transfer; tiles stream
    through, so the transfers overlap the compute around the op.

    Example (one socket's partial output projection summed over TP8, on one
    200 GB/s link per socket with 1 us per collective):

    ```mlir
    step.graph @example {
    ^bb0(%p: !step.stream<[8], !step.tile<1x4096xf32>>):
      %s = step.all_reduce %p {ranks = 8 : i64, links = 1 : i64, link_gbps = 200 : i64, latency_ns = 1000 : i64} : (!step.stream<[8], !step.tile<1x4096xf32>>) -> !step.stream<[8], !step.tile<1x4096xf32>>
    }
    ```
    """

    name = "step.all_reduce"

    def verify_rules(self) -> None:
        s, out, _ = self._check()
        if out.element != s.element:
            raise VerifyException(f"{self.name}: result tiles must be the input's")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """The input's stream: dims and tiles unchanged."""
        return [ResultShape(list(ins[0].dims), ins[0].element)]


@irdl_op_definition
class AllGatherOp(_CollectiveOp):
    """Concatenate every tile's columns over the `ranks` sockets of a tensor-parallel group.

    The network is `all_reduce`'s (`links` x `link_gbps` GB/s per socket,
    `latency_ns` per collective); a socket receives `(ranks - 1)` tiles per
    input tile; the result tile has `ranks` x the columns.

    Example (one socket's 500 logit columns gathered over TP8):

    ```mlir
    step.graph @example {
    ^bb0(%l: !step.stream<[1], !step.tile<1x500xbf16>>):
      %g = step.all_gather %l {ranks = 8 : i64, links = 1 : i64, link_gbps = 200 : i64, latency_ns = 1000 : i64} : (!step.stream<[1], !step.tile<1x500xbf16>>) -> !step.stream<[1], !step.tile<1x4000xbf16>>
    }
    ```
    """

    name = "step.all_gather"

    def verify_rules(self) -> None:
        s, out, t = self._check()
        want = TileType(t.rows.data, t.cols.data * int_of(self.ranks), t.scalar) \
            if t.cols.data >= 0 else None
        if want is None or out.element != want:
            raise VerifyException(f"{self.name}: result tiles must be the input's with "
                                  f"ranks x the columns (static columns)")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """The input's dims; tiles with `ranks` x the columns."""
        t = ins[0].element
        if not isinstance(t, TileType) or t.cols.data < 0:
            raise ShapeError("all_gather needs tiles with static columns")
        return [ResultShape(list(ins[0].dims),
                            TileType(t.rows.data, t.cols.data * int_of(self.ranks), t.scalar))]


COLLECTIVE_OPS = [AllReduceOp, AllGatherOp]
