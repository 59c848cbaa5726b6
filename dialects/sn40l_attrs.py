# pyright: strict
"""The `sn40l.*` attributes: what the SN40L passes hand each other and the simulator, registered.

`step-kernelize`, `step-allocate-units` and `step-allocate-memory`
(`passes/sn40l/`) write these on `step.graph`s and their operators; the kernel
runner (`runtime/fabric/kernel_run.py`, `runtime/fabric/ddr.py`), `step-run` and
the SN40L workloads read them. Each is a spec of `utils/discardable.py`: its
name, type and range are written once here, `step.graph`'s verifier checks every
one present (a `sn40l.tier = "nvme"` or a negative `sn40l.kernel` is an error
where it is written), and writers and readers go through the spec's `set` /
`get` (never `op.attributes.get("sn40l....")`). The printed form is the builtin
attribute (`sn40l.tier = "ddr"`, `sn40l.kernel = 1 : i64`, `sn40l.readonly`).

| attribute | on | written by | read by | contract |
|---|---|---|---|---|
| `sn40l.kernel` | graph | `step-kernelize` | kernel runner, `step-run` | launch index, an integer >= 0 |
| `sn40l.kernels` | graph | `step-kernelize` | reports | kernels of the source, an integer >= 1 |
| `sn40l.source` | graph | `step-kernelize` | kernel runner, `step-allocate-memory` | the source graph's name |
| `sn40l.symbol` | load/store | `step-kernelize` | `step-allocate-memory`, kernel runner | the cut stream's tensor |
| `sn40l.tier` | load/store | `step-allocate-memory` | simulator (DDR controller) | "hbm" or "ddr" |
| `sn40l.readonly` | load/store | `step-allocate-memory` | CoE runtime | a flag |
| `sn40l.hbm_bytes`, `sn40l.ddr_bytes` | graph | `step-allocate-memory` | reports, workloads | peak bytes, >= 0 |
| `sn40l.pcus`, `sn40l.pmus` | operator | `step-allocate-units` | reports | units given to the op, >= 0 |
| `sn40l.pcus_used`, `sn40l.pmus_used` | graph | `step-allocate-units` | reports | units of the graph, >= 0 |
| `sn40l.sections` | graph | `step-allocate-units` | reports | sections the graph was cut in, >= 1 |

Example (verifies; with `sn40l.tier = "nvme"` it is "step.linear_offchip_load:
'sn40l.tier' must be one of "hbm", "ddr", got "nvme""):

```mlir
step.graph @g_k0 attributes {sn40l.kernel = 0 : i64, sn40l.kernels = 1 : i64, sn40l.source = "g"} {
  %x = step.linear_offchip_load {sn40l.tier = "ddr", sn40l.readonly, base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
  step.linear_offchip_store %x {sn40l.symbol = "g.t0", base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
}
```
"""

from __future__ import annotations

from steplus.utils.discardable import (
    DiscardableSpec,
    IntDiscardable,
    StrDiscardable,
    UnitDiscardable,
    registry,
)

KERNEL = IntDiscardable("sn40l.kernel", on_graph=True, lo=0)
"""A kernel graph's launch index within its source."""
KERNELS = IntDiscardable("sn40l.kernels", on_graph=True, lo=1)
"""How many kernels the source graph was cut into."""
SOURCE = StrDiscardable("sn40l.source", on_graph=True)
"""The name of the graph a kernel was cut from."""
SYMBOL = StrDiscardable("sn40l.symbol", on_graph=False)
"""The tensor (`<graph>.t<k>`) a cut stream's store writes and later kernels' loads read."""
TIERS = ("hbm", "ddr")
TIER = StrDiscardable("sn40l.tier", on_graph=False, choices=TIERS)
"""The memory tier of an off-chip load or store (DDR ops go to the DDR controller)."""
READONLY = UnitDiscardable("sn40l.readonly", on_graph=False)
"""An off-chip op on a symbol no kernel writes (a CoE runtime need not copy it back)."""
HBM_BYTES = IntDiscardable("sn40l.hbm_bytes", on_graph=True, lo=0)
"""The graph's peak HBM bytes."""
DDR_BYTES = IntDiscardable("sn40l.ddr_bytes", on_graph=True, lo=0)
"""The graph's peak DDR bytes."""
PCUS = IntDiscardable("sn40l.pcus", on_graph=False, lo=0)
"""PCUs given to an operator."""
PMUS = IntDiscardable("sn40l.pmus", on_graph=False, lo=0)
"""PMUs given to an operator."""
PCUS_USED = IntDiscardable("sn40l.pcus_used", on_graph=True, lo=0)
"""PCUs of the whole graph (section)."""
PMUS_USED = IntDiscardable("sn40l.pmus_used", on_graph=True, lo=0)
"""PMUs of the whole graph (section)."""
SECTIONS = IntDiscardable("sn40l.sections", on_graph=True, lo=1)
"""How many sections `step-allocate-units` cut the graph into."""

REGISTRY: dict[str, DiscardableSpec] = registry((
    KERNEL, KERNELS, SOURCE, SYMBOL, TIER, READONLY, HBM_BYTES, DDR_BYTES, PCUS, PMUS,
    PCUS_USED, PMUS_USED, SECTIONS))
"""The `sn40l.*` attributes by name."""
