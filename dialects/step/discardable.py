# pyright: strict
"""The discardable attributes passes hand each other on step ops, registered with verifiers.

A pass that writes an attribute another pass or the simulator reads (rather
than a property the op defines) names it here, with its type and range;
`step.graph`'s verifier checks every one present on the graph and on the ops
of its body, so a typo'd value (`compute_bw = "fast"`, which the placement
silently ignored, falling back to the fabric's default) is a located error.

| attribute | on | written by | read by | contract |
|---|---|---|---|---|
| `compute_bw` | map, accum, scan | `step-allocate-units`, by hand | fabric placement | an integer in [1, 2^40] (FLOPs/cycle) |
| `pmu_bw` | map, accum, scan | `step-allocate-units`, by hand | fabric placement | an integer in [1, 2^40] (B/cycle) |
| `write_back_mu` | map, accum, scan, partition, reassemble | the torch lowering, by hand | fabric placement | a flag: the result lives in a memory unit |
| `add_outer_dim` | reshape | by hand | fabric placement | a flag: the simulated reshape adds an outer dim |
| `switch_cycles` | partition, reassemble | by hand | fabric placement | an array of integers in [0, 2^40], one per branch (the count checked where read; `step.parallelize` has it as a property) |
| `rank` | partition, reassemble, eager_merge | by hand | fabric placement | an integer in [0, 64]: the group rank, overriding the one the types give |
| `fanout_depth` | broadcast | the SN40L layer graph (`sn40l_route`), by hand | fabric placement, `step-allocate-units` | an integer in [1, 2^40]: tiles each output channel holds |
| `name` | any operator | builders, `step-kernelize`, by hand | fabric placement, kernel runner, reports | a string: the context's name (default `<op><k>`) |
| `runtime.context` | op | `convert-step-to-runtime` | a reader of the placement | an integer >= 0 |
| `runtime.depth` | graph | `convert-step-to-runtime` | a reader of the placement | an integer >= 1 |
| `sn40l.*` | graph or op | the SN40L passes | the kernel runner | `dialects/sn40l_attrs.py` |

Which op class reads which knob is the fabric placement's registry
(`passes/step/fabric_placement.py`, `KNOBS`: op class -> the specs its
placement function reads -> the params of its simulator context). Each is a
spec of `utils/discardable.py`: writers call its `set`, readers its `get` or
`value` (the typed value, the default when absent, an error when malformed),
so the name and type are written once. (`buffer_depth` of
`step.random_offchip_store` is a property of the op, verified by it.)

Example (verifies; with `runtime.depth = 0` it is "step.graph: 'runtime.depth'
must be an integer >= 1, got 0", with `compute_bw = "fast"` "step.map:
'compute_bw' must be an integer in [1, 1099511627776], got "fast""):

```mlir
step.graph @g attributes {runtime.depth = 1 : i64} {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  %y = step.map %x {compute_bw = 64 : i64, write_back_mu, name = "act"} : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%t: !step.tile<16x16xf32>):
    %s = step.apply "silu"(%t) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %s : !step.tile<16x16xf32>
  }
  step.consume %y : !step.stream<[4], !step.tile<16x16xf32>>
}
```
"""

from __future__ import annotations

from xdsl.ir import Operation

from steplus.dialects.sn40l_attrs import REGISTRY as SN40L_REGISTRY
from steplus.utils.discardable import (
    DiscardableSpec,
    IntArrayDiscardable,
    IntDiscardable,
    StrDiscardable,
    UnitDiscardable,
    registry,
    verify_registered,
)

MAX_KNOB = 1 << 40
"""The largest value of a per-op knob (cycles, FLOPs/cycle, bytes/cycle)."""
MAX_GROUP_RANK = 64
"""The largest group rank a routing op's `rank` may name."""

COMPUTE_BW = IntDiscardable("compute_bw", on_graph=False, lo=1, hi=MAX_KNOB)
"""An operator's compute bandwidth (FLOP/cycle) for the fabric placement."""
PMU_BW = IntDiscardable("pmu_bw", on_graph=False, lo=1, hi=MAX_KNOB)
"""An operator's on-chip memory bandwidth (B/cycle) for the fabric placement."""
WRITE_BACK_MU = UnitDiscardable("write_back_mu", on_graph=False)
"""The operator's result is written back to a memory unit (§8.1)."""
ADD_OUTER_DIM = UnitDiscardable("add_outer_dim", on_graph=False)
"""The simulated `step.reshape` adds an outer dim of size 1."""
SWITCH_CYCLES = IntArrayDiscardable("switch_cycles", on_graph=False, lo=0, hi=MAX_KNOB)
"""The cycles a routing op spends switching to each branch (one entry per branch)."""
RANK = IntDiscardable("rank", on_graph=False, lo=0, hi=MAX_GROUP_RANK)
"""The group rank of a partition / reassemble / eager_merge (overrides the types')."""
NAME = StrDiscardable("name", on_graph=False)
"""The operator's name: its fabric context's, its tensor's for a load or store."""
FANOUT_DEPTH = IntDiscardable("fanout_depth", on_graph=False, lo=1, hi=MAX_KNOB)
"""The FIFO entries (tiles) of each output of a `step.broadcast` (default: the fabric's
base depth): a fan-out whose branches read at different times holds what the later one
has not read yet (the SN40L layer graph sizes it from the row its residual must hold)."""
RUNTIME_CONTEXT = IntDiscardable("runtime.context", on_graph=False, lo=0)
"""The index of the simulator context an operator is placed in."""
RUNTIME_DEPTH = IntDiscardable("runtime.depth", on_graph=True, lo=1)
"""The channel depth (FIFO entries) a graph was placed with."""

PLACEMENT_KNOBS: tuple[DiscardableSpec, ...] = (
    COMPUTE_BW, PMU_BW, WRITE_BACK_MU, ADD_OUTER_DIM, SWITCH_CYCLES, RANK, NAME, FANOUT_DEPTH)
"""The per-op knobs the fabric placement reads."""

REGISTRY: dict[str, DiscardableSpec] = registry(
    (*PLACEMENT_KNOBS, RUNTIME_CONTEXT, RUNTIME_DEPTH, *SN40L_REGISTRY.values()))
"""The registered attributes by name: the placement's knobs, the runtime's, and
the SN40L passes' (`dialects/sn40l_attrs.py`)."""


def verify_discardable(op: Operation, *, is_graph: bool) -> None:
    """Check the registered attributes `op` carries (a graph's or one of its operators')."""
    verify_registered(op, REGISTRY, is_graph=is_graph)
