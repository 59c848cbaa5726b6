"""The fabric's operator contexts, grouped like the step dialect's ops.

- `memory`: off-chip loads and stores (`linear_offchip_load/store`, `random_offchip_load/store`)
- `compute`: map, accum, scan, flat_map (roofline §3) and the zero-cycle re-tilings
- `routing`: partition, reassemble, eager_merge, parallelize, broadcast, consume
- `shape`: flatten, reshape, promote, expand, repeat (zip is fused into its consumer)
- `generators`: select_gen, metadata_gen, expert_addr_gen, cache_read_addr_gen, filter_last_tile
- `collective`: all_reduce, all_gather over a modeled peer-to-peer ring

Example:

```python
from steplus.runtime.fabric.contexts import LoadCtx, StoreCtx
```
"""

from steplus.runtime.fabric.contexts.collective import CollectiveCtx
from steplus.runtime.fabric.contexts.compute import (
    AccumCtx, ComputeCtx, JoinTilesCtx, Kernel, MapCtx, RetileStreamifyCtx, SplitTilesCtx,
)
from steplus.runtime.fabric.contexts.generators import (
    CacheReadAddrGenCtx, ExpertAddrGenCtx, FilterLastTileCtx, MetadataGenCtx, SelectGenCtx,
)
from steplus.runtime.fabric.contexts.memory import (
    LoadCtx, MemCtx, RandomLoadCtx, RandomStoreCtx, StoreCtx, n_requests, stop_level, walk_levels,
)
from steplus.runtime.fabric.contexts.routing import (
    BroadcastCtx, ConsumeCtx, EagerMergeCtx, ParallelizeCtx, PartitionCtx, ReassembleCtx,
)
from steplus.runtime.fabric.contexts.shape import (
    ExpandCtx, FlattenCtx, PromoteCtx, RepeatCtx, ReshapeCtx,
)
from steplus.runtime.fabric.context import StreamCtx

__all__ = [
    "AccumCtx", "BroadcastCtx", "CacheReadAddrGenCtx", "CollectiveCtx", "ComputeCtx", "ConsumeCtx", "EagerMergeCtx",
    "ExpandCtx", "ExpertAddrGenCtx", "FilterLastTileCtx", "FlattenCtx", "JoinTilesCtx", "Kernel",
    "LoadCtx", "MapCtx", "MemCtx", "MetadataGenCtx", "ParallelizeCtx", "PartitionCtx", "PromoteCtx",
    "RandomLoadCtx", "RandomStoreCtx", "ReassembleCtx", "RepeatCtx", "ReshapeCtx",
    "RetileStreamifyCtx", "SelectGenCtx", "SplitTilesCtx", "StoreCtx", "StreamCtx", "n_requests",
    "stop_level", "walk_levels",
]
