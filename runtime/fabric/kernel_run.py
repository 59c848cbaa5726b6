"""Running a graph's kernels one after the other, with a launch cost each.

`run_kernels(graphs, config, orchestration)` simulates the kernels of one
source graph (`step-kernelize`, or the sections of `step-allocate-units`) in
launch order, each on an empty fabric (a kernel starts when the previous one
has finished: the chip is reconfigured between them), and adds the
per-kernel launch cost of the orchestration: `so` (software, the host issues
every launch) -> `config.launch_so_cycles`, `ho` (hardware, the AGCUs walk a
static schedule) -> `config.launch_ho_cycles`, `none` -> 0. A graph that was
not cut is one kernel.

Memory ops marked `sn40l.tier = "ddr"` (step-allocate-memory's spills) go to
the DDR channels (`ddr.TieredMemory`).

Functional mode chains the values: what a kernel stores under a symbol
(`sn40l.symbol`) is what later kernels load under it, and the source graph's
own tensors (by `name`, see `kernels.ensure_names`) are shared by all
kernels, so the outputs can be compared with the fused graph's.

Example:

```python
res = run_kernels(kernel_graphs, get_preset("sn40l"), "so")
res.cycles, res.launch_cycles, len(res.kernels)
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from steplus.dialects.step import ops as so
from steplus.dialects.sn40l_attrs import SYMBOL, TIER
from steplus.dialects.step.discardable import NAME
from steplus.dialects.step import GraphOp
from steplus.passes.sn40l.kernels import ensure_names
from steplus.dialects.target.fabric import HardwareConfig
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.ddr import tiered_factory
from steplus.runtime.fabric.program import Metrics

ORCHESTRATIONS = ("none", "so", "ho")


def launch_cycles(config: HardwareConfig, orchestration: str) -> int:
    if orchestration not in ORCHESTRATIONS:
        raise ValueError(f"unknown orchestration '{orchestration}' (choose from so, ho)")
    return {"none": 0, "so": config.launch_so_cycles, "ho": config.launch_ho_cycles}[orchestration]


@dataclass
class KernelRun:
    name: str
    metrics: Metrics


@dataclass
class KernelsResult:
    kernels: list[KernelRun]
    launch_each: int
    stored: dict[str, list] = field(default_factory=dict)
    """Functional mode: the tiles every store wrote, by context name."""

    @property
    def kernel_cycles(self) -> int:
        return sum(k.metrics.cycles for k in self.kernels)

    @property
    def launch_cycles(self) -> int:
        return self.launch_each * len(self.kernels)

    @property
    def cycles(self) -> int:
        return self.kernel_cycles + self.launch_cycles

    @property
    def offchip(self) -> int:
        return sum(k.metrics.offchip_traffic for k in self.kernels)

    @property
    def flops(self) -> int:
        return sum(k.metrics.flops for k in self.kernels)

    def to_dict(self) -> dict:
        return {"cycles": self.cycles, "kernel_cycles": self.kernel_cycles,
                "launch_cycles": self.launch_cycles, "kernels": len(self.kernels),
                "offchip_traffic_bytes": self.offchip, "flops": self.flops,
                "per_kernel": [{"graph": k.name, "cycles": k.metrics.cycles,
                                "offchip_traffic_bytes": k.metrics.offchip_traffic}
                               for k in self.kernels]}


def ddr_contexts(graph: GraphOp) -> set[str]:
    """Names of the memory ops step-allocate-memory placed in DDR."""
    out = set()
    for op in graph.body.block.ops:
        name = NAME.get(op)
        if TIER.get(op) == "ddr" and name is not None:
            out.add(name)
    return out


def _symbols(graph: GraphOp, cls) -> dict[str, str]:
    """context name -> symbol, for the cut loads or stores of a kernel."""
    out = {}
    for op in graph.body.block.ops:
        if isinstance(op, cls):
            sym, name = SYMBOL.get(op), NAME.get(op)
            if sym is not None and name is not None:
                out[name] = sym
    return out


def run_kernels(graphs: list[GraphOp], config: HardwareConfig, orchestration: str = "none",
                *, functional: bool = False, tensors: dict | None = None, seed: int = 0,
                limits: bool = True) -> KernelsResult:
    """Simulate `graphs` in order (see module doc)."""
    each = launch_cycles(config, orchestration)
    tensors = {} if tensors is None else tensors
    values: dict[str, np.ndarray] = {}  # symbol -> stacked tiles
    result = KernelsResult([], each)
    for g in graphs:
        ensure_names(g)  # tier and symbol attributes are found by context name
        ddr = ddr_contexts(g)
        factory = tiered_factory(config, ddr) if ddr else None
        if functional:
            for name, sym in _symbols(g, so.LinearOffChipLoadOp).items():
                if sym in values:
                    tensors[name] = values[sym]
        prog = build_program(g, config, functional=functional, tensors=tensors, seed=seed,
                             hbm_factory=factory, limits=limits)
        m = prog.run()
        result.kernels.append(KernelRun(g.sym_name.data, m))
        if functional:
            stores = _symbols(g, so.LinearOffChipStoreOp)
            for c in prog.contexts:
                if isinstance(getattr(c, "stored", None), list) and c.stored \
                        and not isinstance(c.stored[0], tuple):
                    result.stored[c.name] = list(c.stored)
                    if c.name in stores:
                        values[stores[c.name]] = np.vstack([np.asarray(t) for t in c.stored])
    return result
