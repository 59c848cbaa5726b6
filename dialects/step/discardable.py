"""The discardable attributes passes hand each other on step ops, registered with verifiers.

A pass that writes an attribute another pass or the simulator reads (rather
than a property the op defines) names it here, with its type and range;
`step.graph`'s verifier checks every one present on the graph and on the ops
of its body, so a typo'd value (`compute_bw = "fast"`, which the placement
silently ignored, falling back to the fabric's default) is a located error.

| attribute | on | written by | read by | contract |
|---|---|---|---|---|
| `compute_bw` | compute op | `step-allocate-units`, by hand | fabric placement | an integer (range [1, 2^40] checked where read) |
| `pmu_bw` | compute op | `step-allocate-units`, by hand | fabric placement | an integer (range [1, 2^40] checked where read) |
| `runtime.context` | op | `convert-step-to-runtime` | a reader of the placement | an integer >= 0 |
| `runtime.depth` | graph | `convert-step-to-runtime` | a reader of the placement | an integer >= 1 |
| `sn40l.*` | graph or op | the SN40L passes | the kernel runner | `dialects/sn40l_attrs.py` |

Each is a spec of `utils/discardable.py`: writers call its `set`, readers its
`get` (the typed value or None), so the name and type are written once.

Example (verifies; with `runtime.depth = 0` it is "step.graph: 'runtime.depth'
must be an integer >= 1, got 0", with `compute_bw = "fast"` "step.map:
'compute_bw' must be an integer, got "fast""):

```mlir
step.graph @g attributes {runtime.depth = 1 : i64} {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  %y = step.map %x {compute_bw = 64 : i64} : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
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
from steplus.utils.discardable import DiscardableSpec, IntDiscardable, registry, verify_registered

COMPUTE_BW = IntDiscardable("compute_bw", on_graph=False)
"""An operator's compute bandwidth (FLOP/cycle) for the fabric placement."""
PMU_BW = IntDiscardable("pmu_bw", on_graph=False)
"""An operator's on-chip memory bandwidth (B/cycle) for the fabric placement."""
RUNTIME_CONTEXT = IntDiscardable("runtime.context", on_graph=False, lo=0)
"""The index of the simulator context an operator is placed in."""
RUNTIME_DEPTH = IntDiscardable("runtime.depth", on_graph=True, lo=1)
"""The channel depth (FIFO entries) a graph was placed with."""

REGISTRY: dict[str, DiscardableSpec] = registry(
    (COMPUTE_BW, PMU_BW, RUNTIME_CONTEXT, RUNTIME_DEPTH, *SN40L_REGISTRY.values()))
"""The registered attributes by name: step's and the runtime's above, and the
SN40L passes' (`dialects/sn40l_attrs.py`)."""


def verify_discardable(op: Operation, *, is_graph: bool) -> None:
    """Check the registered attributes `op` carries (a graph's or one of its operators')."""
    verify_registered(op, REGISTRY, is_graph=is_graph)
