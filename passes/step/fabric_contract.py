# pyright: strict
"""The typed contract between the fabric placement and the fabric simulator.

`passes/step/fabric_placement.py` turns each operator of a `step.graph` into
a `ContextSpec` whose `params` is one of the frozen dataclasses below (one per
kind of fabric context); `runtime/fabric/build.py` turns each params class
into its simulator context. The params class *is* the kind: the placement
keys its registry by op class, the simulator by params class, and
`test_fabric_placement` checks that every params class has exactly one
simulator context, so the two sides cannot drift apart.

    op class  --(fabric_placement.PLACERS)-->  XParams  --(build.CONTEXTS)-->  XCtx

Nothing here imports the runtime (layers: utils < dialects < passes <
lowering < runtime < tools).

Example:

```python
p = place(graph, get_preset("swiglu-hdl"))
[(c.index, type(c.params).__name__, c.name) for c in p.contexts]
# [(0, 'LoadParams', 'x'), ...]
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from xdsl.ir import Operation, SSAValue

from steplus.dialects.step import GraphOp


class Port(NamedTuple):
    """A context's channel slot: the attribute `name`, or item `item` of that list."""

    name: str
    item: int | None = None


@dataclass(frozen=True)
class KernelSpec:
    """A region as data: `calls[i] = (function, argument slots)` defines slot
    `n_args + i`; `result` is the yielded slot; `acc_slot` the accumulator
    argument of an accum/scan update."""

    n_args: int
    calls: tuple[tuple[str, tuple[int, ...]], ...]
    result: int
    acc_slot: int | None = None


# -- one params class per kind of fabric context ---------------------------------

@dataclass(frozen=True)
class ContextParams:
    """The parameters of one kind of fabric context (subclassed per kind)."""


@dataclass(frozen=True)
class LoadParams(ContextParams):
    """`step.linear_offchip_load`: walks `shape` tiles of `rows x cols` (`nb` bytes a value)."""

    rows: int
    cols: int
    nb: int
    shape: list[int]
    stride: list[int]
    in_shape: list[int]
    req_bytes: int


@dataclass(frozen=True)
class RandomLoadParams(ContextParams):
    """`step.random_offchip_load`: one tile per address."""

    rows: int
    cols: int
    nb: int
    in_shape: list[int]
    req_bytes: int


@dataclass(frozen=True)
class StoreParams(ContextParams):
    """`step.linear_offchip_store`; `declared_nb` the bytes a value of its input type (§5.1)."""

    req_bytes: int
    declared_nb: int | None


@dataclass(frozen=True)
class RandomStoreParams(ContextParams):
    """`step.random_offchip_store`, buffering `buffer_depth` writes."""

    buffer_depth: int
    req_bytes: int


@dataclass(frozen=True)
class MapParams(ContextParams):
    """`step.map`: its region as a kernel, compute and PMU bandwidths (FLOPs, B per cycle)."""

    kernel: KernelSpec
    compute_bw: int
    pmu_bw: int
    write_back: bool


@dataclass(frozen=True)
class AccumParams(ContextParams):
    """`step.accum` / `step.scan` (`scan`) over the inner `rank` dims; `init` computes a
    non-zero initial value (functional mode), `init_shape` the accumulator's tile."""

    kernel: KernelSpec
    rank: int
    init_shape: tuple[int, int]
    compute_bw: int
    pmu_bw: int
    write_back: bool
    scan: bool
    init: KernelSpec | None


@dataclass(frozen=True)
class SplitTilesParams(ContextParams):
    """A `step.flat_map` of `split_tiles` (step-hierarchical-tiling): `r x c` physical tiles."""

    r: int
    c: int
    rank: int


@dataclass(frozen=True)
class JoinTilesParams(ContextParams):
    """A `step.accum` of `join_tiles`: physical tiles back into a `rows x cols` tile."""

    rank: int
    rows: int
    cols: int


@dataclass(frozen=True)
class RetileStreamifyParams(ContextParams):
    """A `step.flat_map` of `retile_streamify`."""


@dataclass(frozen=True)
class FlattenParams(ContextParams):
    """`step.flatten` of dims `lo..hi`."""

    lo: int
    hi: int


@dataclass(frozen=True)
class ReshapeParams(ContextParams):
    """`step.reshape`: `split_dim` in chunks of `chunk`, padding tiles of `pad_shape`."""

    split_dim: int
    chunk: int
    add_outer_dim: bool
    pad_shape: tuple[int, int]
    nb: int


@dataclass(frozen=True)
class PromoteParams(ContextParams):
    """`step.promote`."""


@dataclass(frozen=True)
class RepeatParams(ContextParams):
    """`step.repeat` `count` times."""

    count: int


@dataclass(frozen=True)
class CollectiveParams(ContextParams):
    """`step.all_reduce` (`gather` False) / `step.all_gather` over `ranks` sockets: the
    links' bytes per cycle and the latency in cycles (the op's network at the clock)."""

    ranks: int
    gather: bool
    bytes_per_cycle: float
    latency: int


@dataclass(frozen=True)
class ExpandParams(ContextParams):
    """`step.expand` along its reference stream's inner `rank` dims."""

    rank: int


@dataclass(frozen=True)
class RegroupParams(ContextParams):
    """`step.regroup`: stream dim `dim` (size `m`, `inner` elements inside it) exchanged
    with tile axis `axis` (extent `extent`)."""

    dim: int
    axis: int
    m: int
    inner: int
    extent: int


@dataclass(frozen=True)
class BroadcastParams(ContextParams):
    """`step.broadcast`, or the one appended for a stream with several consumers (§7).
    `depth`: the tiles each output channel holds (`fanout_depth`; 0: the base depth)."""

    depth: int = 0


@dataclass(frozen=True)
class ConsumeParams(ContextParams):
    """`step.consume`."""


@dataclass(frozen=True)
class PartitionParams(ContextParams):
    """`step.partition`: groups of the inner `rank` dims routed by the selector."""

    rank: int
    switch: list[int]
    write_back: bool
    pmu_bw: int
    n_out: int


@dataclass(frozen=True)
class ParallelizeParams(ContextParams):
    """`step.parallelize`: groups of the inner `rank` dims dealt round-robin."""

    rank: int
    switch: list[int]
    n_out: int


@dataclass(frozen=True)
class ReassembleParams(ContextParams):
    """`step.reassemble`: groups gathered back in selector order."""

    rank: int
    switch: list[int]
    write_back: bool
    pmu_bw: int
    n_in: int


@dataclass(frozen=True)
class EagerMergeParams(ContextParams):
    """`step.eager_merge`: groups in arrival order, with the selector of each."""

    rank: int
    n_in: int


@dataclass(frozen=True)
class SelectGenParams(ContextParams):
    """`step.select_gen`: the chosen branches of each row, over `shape`."""

    rows: list[tuple[int, ...]]
    shape: tuple[int, ...]


@dataclass(frozen=True)
class MetadataGenParams(ContextParams):
    """`step.metadata_gen`: the given values."""

    values: list[int]


@dataclass(frozen=True)
class ExpertAddrGenParams(ContextParams):
    """`step.expert_addr_gen`: `tiles_per_expert` addresses per selected expert."""

    tiles_per_expert: int


@dataclass(frozen=True)
class CacheReadAddrGenParams(ContextParams):
    """`step.cache_read_addr_gen`."""


@dataclass(frozen=True)
class FilterLastTileParams(ContextParams):
    """`step.filter_last_tile`."""


def params_classes() -> list[type[ContextParams]]:
    """Every kind of fabric context (the simulator has one context for each)."""
    return list(ContextParams.__subclasses__())


# -- the placed network ----------------------------------------------------------

@dataclass
class ContextSpec:
    """One context of the placed network.

    `params` says what it does (its class is the kind); `onchip_bytes` is the
    declared on-chip tile of §5.2 and `onchip_row_bytes` the bytes of one row
    of a dynamic-rows tile (the largest number of rows seen counts)."""

    index: int
    name: str
    params: ContextParams
    op: Operation | None  # None for an appended Broadcast
    inputs: list[SSAValue] = field(default_factory=list)
    in_ports: list[Port] = field(default_factory=list)
    out_ports: list[Port | None] = field(default_factory=list)  # per result; None: not produced
    onchip_bytes: int | None = None
    onchip_row_bytes: int | None = None


@dataclass(frozen=True)
class ChannelSpec:
    """A FIFO from `src`'s port to `dst`'s port (context indices)."""

    src: int
    src_port: Port
    dst: int
    dst_port: Port
    depth: int
    elem_bytes: int


@dataclass
class Placement:
    """A graph placed on the fabric (see `fabric_placement`)."""

    graph: GraphOp
    depth: int
    contexts: list[ContextSpec]
    channels: list[ChannelSpec]
    context_of: dict[Operation, int]
    """The context index of every placed op (fused zips and the padding
    consumes of reshapes have none)."""
    broadcasts: list[tuple[SSAValue, int]]
    """(stream, context index) of each appended Broadcast, in order."""
