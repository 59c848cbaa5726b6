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

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException


@dataclass(frozen=True)
class DiscardableAttr:
    """One registered discardable attribute: an integer, at least `lo` when `lo` is set."""

    name: str
    on_graph: bool
    lo: int | None = None

    def verify(self, owner: Operation, attr: Attribute) -> None:
        value = attr.value.data if isinstance(attr, IntegerAttr) else None
        if not isinstance(value, int) or (self.lo is not None and value < self.lo):
            want = "an integer" if self.lo is None else f"an integer >= {self.lo}"
            got = value if isinstance(value, int) else attr
            raise VerifyException(f"{owner.name}: '{self.name}' must be {want}, got {got}")


REGISTRY: dict[str, DiscardableAttr] = {a.name: a for a in (
    DiscardableAttr("compute_bw", on_graph=False),
    DiscardableAttr("pmu_bw", on_graph=False),
    DiscardableAttr("runtime.context", on_graph=False, lo=0),
    DiscardableAttr("runtime.depth", on_graph=True, lo=1),
)}
"""The registered attributes by name."""


def verify_discardable(op: Operation, *, is_graph: bool) -> None:
    """Check the registered attributes `op` carries (a graph's or one of its operators')."""
    for name, attr in op.attributes.items():
        spec = REGISTRY.get(name)
        if spec is not None and spec.on_graph == is_graph:
            spec.verify(op, attr)
