"""One workload, three ways of running it on an SN40L socket: fused, conventional, unfused.

`simulate(module, mode)` prepares and simulates the graph of `module`:

- `fused`: `step-allocate-units` (PCUs by FLOPs, PMUs by capacity and
  bandwidth; sections when the chip is full), the sections run one after
  the other;
- `conventional` / `unfused`: `step-kernelize{mode=...}`, then every
  kernel gets the whole chip (`step-allocate-units` per kernel: each kernel
  "is still parallelized to run efficiently", seed §VI-A);
- then `step-allocate-memory` (one socket's 64 GiB HBM, 1.5 TiB DDR): the
  off-chip symbols get addresses by lifetime, spills go to DDR channels.

Each mode is simulated with load/store streams of 4 and of 20 requests per
cycle (`STREAM_RATES`) and reported at the faster. It returns the simulated
kernel cycles, the kernel count, the off-chip
traffic and the FLOPs (also `step-metrics`' operational intensity, from the
same graphs), from which `Run.cycles(orchestration)` adds the launch costs
(`so` / `ho`, the preset's assumed per-kernel costs). The fusion speedup of
a workload is then `unfused.cycles("so") / fused.cycles("so" or "ho")`: two
simulations of one graph.

Example:

```python
from steplus.examples.workloads.decoder import LLAMA2_7B, decoder_layer
fused = simulate(decoder_layer(LLAMA2_7B, 1, 4096), "fused")
fused.kernels, fused.cycles("ho")
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from steplus.dialects.step import GraphOp
from steplus.passes.sn40l.allocate_memory import StepAllocateMemoryPass
from steplus.passes.sn40l.allocate_units import StepAllocateUnitsPass
from steplus.passes.sn40l.kernelize import StepKernelizePass
from steplus.dialects.sn40l_attrs import DDR_BYTES, HBM_BYTES
from steplus.passes.sn40l.kernels import bound, kernel_groups
from steplus.passes.step.metrics import compute_metrics
from steplus.dialects.target.fabric import SN40L, HardwareConfig
from steplus.runtime.fabric.kernel_run import launch_cycles, run_kernels

MODES = ("fused", "conventional", "unfused")


@dataclass
class Run:
    mode: str
    kernel_cycles: int
    kernels: int
    offchip: int  # simulated bytes
    flops: int
    metric_offchip: int  # step-metrics' bytes
    metric_flops: int
    config: HardwareConfig
    hbm_bytes: int = 0  # step-allocate-memory's HBM peak (symbols sharing by lifetime)
    ddr_bytes: int = 0

    def cycles(self, orchestration: str) -> int:
        return self.kernel_cycles + self.kernels * launch_cycles(self.config, orchestration)

    @property
    def intensity(self) -> float:
        """FLOPs per off-chip byte (step-metrics)."""
        return self.metric_flops / self.metric_offchip if self.metric_offchip else 0.0

    def hbm_gbps(self) -> float:
        """Off-chip bandwidth used while the kernels run."""
        if not self.kernel_cycles:
            return 0.0
        return self.offchip / self.kernel_cycles * self.config.clock_ghz


def prepare(module: ModuleOp, mode: str, memory: bool = True) -> list[GraphOp]:
    """The kernels of `module`'s first graph for `mode` (annotated with units)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode '{mode}' (choose from {', '.join(MODES)})")
    if mode != "fused":
        StepKernelizePass(mode=mode).apply(Context(), module)
    StepAllocateUnitsPass().apply(Context(), module)
    if memory:
        StepAllocateMemoryPass().apply(Context(), module)
    return kernel_groups(module)[0]


STREAM_RATES = (4, 20)
"""Requests per cycle a load/store stream may issue (the fabric's `par_dispatch`):
the preset's 4 (many concurrent streams, fused) and 20 (one stream saturates
the 40 HBM channels at II 2: an unfused kernel's few tensors spread over
every AGCU). Each mode is reported at its better one, as software picks the
number of streams (seed §VII)."""


def simulate(module: ModuleOp, mode: str, config: HardwareConfig = SN40L,
             rates: tuple[int, ...] = STREAM_RATES) -> Run:
    graphs = prepare(module, mode)
    res = min((run_kernels(graphs, config.with_(par_dispatch=r)) for r in rates),
              key=lambda r: r.kernel_cycles)
    moff = mflops = 0
    for g in graphs:
        gm = compute_metrics(g)
        moff += int(bound(gm.offchip, g))  # ragged totals from the graph's step.bind
        mflops += int(bound(gm.flops, g))
    return Run(mode, res.kernel_cycles, len(graphs), res.offchip, res.flops, moff, mflops,
               config, HBM_BYTES.require(graphs[0]), DDR_BYTES.require(graphs[0]))
