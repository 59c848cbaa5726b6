"""A runnable fabric program and its metrics (cycles, traffic, on-chip, per-context time).

`Program` wraps a `Simulator` whose contexts and channels are already built
(by `steplus.runtime.fabric.build.build_program`, or by hand). `run()`
returns `Metrics`:

- `cycles`: the last memory operator's final clock + the config's
  `end_offset` (§2.5), or the largest context clock if that is later;
- `offchip_read` / `offchip_written`: bytes moved by loads / stores;
- `onchip_peak`: the on-chip requirement of §5.2 evaluated on the tiles seen
  (one tile per memory operator, the accumulator of every Accum/MapAccum, the
  repeated tile of Repeat/Expand) of every context that received an element
  (as step-metrics, an idle operator allocates nothing), plus `fifo_peak_bytes` (largest occupancy
  of every FIFO, counted separately as the reference does not count FIFOs);
- per context: busy, stalled-in, stalled-out, waiting-for-memory cycles and
  utilization (busy / cycles);
- `firings`: elements processed, the simulator's unit of work.

`chrome_trace()` gives a Chrome/Perfetto trace (one track per context, busy
intervals as complete events) when the program ran with `trace=True`.

Example:

```python
prog = build_program(graph, get_preset("swiglu-hdl"))
m = prog.run()
print(m.table())
```
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from steplus.runtime.fabric.context import DeadlockError
from steplus.runtime.fabric.engine import Simulator
from steplus.runtime.fabric.contexts.memory import MemCtx, RandomStoreCtx


@dataclass
class ContextStats:
    name: str
    kind: str
    clock: int
    busy: int
    stall_in: int
    stall_out: int
    stall_mem: int
    firings: int
    utilization: float


@dataclass
class Metrics:
    cycles: int
    offchip_read: int
    offchip_written: int
    onchip_peak: int
    fifo_peak_bytes: int
    flops: int
    firings: int
    hbm_requests: int
    hbm_segments: int
    contexts: list[ContextStats] = field(default_factory=list)

    @property
    def offchip_traffic(self) -> int:
        return self.offchip_read + self.offchip_written

    def to_dict(self) -> dict:
        return {
            "cycles": self.cycles,
            "offchip_read_bytes": self.offchip_read,
            "offchip_written_bytes": self.offchip_written,
            "offchip_traffic_bytes": self.offchip_traffic,
            "onchip_peak_bytes": self.onchip_peak,
            "fifo_peak_bytes": self.fifo_peak_bytes,
            "flops": self.flops,
            "firings": self.firings,
            "hbm_requests": self.hbm_requests,
            "contexts": [vars(c) for c in self.contexts],
        }

    def table(self) -> str:
        lines = [
            f"cycles                 {self.cycles}",
            f"off-chip read (B)      {self.offchip_read}",
            f"off-chip written (B)   {self.offchip_written}",
            f"off-chip traffic (B)   {self.offchip_traffic}",
            f"on-chip peak (B)       {self.onchip_peak}",
            f"FIFO peak (B)          {self.fifo_peak_bytes}",
            f"FLOPs                  {self.flops}",
            "",
            f"{'context':<24} {'kind':<14} {'busy':>9} {'stall-in':>9} {'stall-out':>9} "
            f"{'mem-wait':>9} {'util%':>6}",
        ]
        for c in self.contexts:
            lines.append(
                f"{c.name:<24} {c.kind:<14} {c.busy:>9} {c.stall_in:>9} {c.stall_out:>9} "
                f"{c.stall_mem:>9} {100 * c.utilization:>6.1f}")
        return "\n".join(lines)


class Program:
    """A built network of contexts (see module doc)."""

    def __init__(self, sim: Simulator):
        self.sim = sim
        self.metrics: Metrics | None = None
        self.unbound: list[str] = []
        """Symbols left in the graph's stream dims (named in a deadlock report)."""
        self.tensors: dict[str, Any] = {}
        """Functional mode: each load's input tensor (given, or the random one it drew)."""

    @property
    def contexts(self):
        return self.sim.contexts

    def context(self, name: str):
        for c in self.sim.contexts:
            if c.name == name:
                return c
        raise KeyError(name)

    def run(self) -> Metrics:
        sim = self.sim
        try:
            sim.run()
        except DeadlockError as e:
            if not self.unbound:
                raise
            names = ", ".join(self.unbound[:6]) + (", ..." if len(self.unbound) > 6 else "")
            raise DeadlockError(f"{e}\n  note: the stream dims still have unbound symbols "
                                f"({names}); bind them (step-run --bind/--routing/--kv)") from None
        mem = [c for c in sim.contexts if c.is_memory]
        cycles = max((c.clock for c in sim.contexts), default=0)
        if mem:
            cycles = max(cycles, max(c.clock for c in mem) + sim.config.end_offset)
        onchip = 0
        for c in sim.contexts:
            if c.ins and not any(ch.n_deq for ch in c.ins):
                continue  # received nothing (an expert no token went to): allocates nothing
            if c.onchip_bytes is not None:
                onchip += c.onchip_bytes
            elif c.onchip_row_bytes is not None:  # a dynamic-rows tile: the largest seen
                onchip += c.onchip_row_bytes * c.max_rows
            elif isinstance(c, RandomStoreCtx):
                onchip += c.max_tile_bytes * c.buffer_depth
            elif isinstance(c, MemCtx):
                onchip += c.max_tile_bytes
        fifo = 0
        for ch in sim.channels:
            fifo += ch.peak * ch.elem_bytes
        stats = [ContextStats(c.name, type(c).__name__.removesuffix("Ctx"), c.clock, c.busy,
                              c.stall_in, c.stall_out, c.stall_mem, c.firings,
                              c.busy / cycles if cycles else 0.0)
                 for c in sim.contexts]
        self.metrics = Metrics(
            cycles=cycles,
            offchip_read=sum(c.bytes_read for c in mem),
            offchip_written=sum(c.bytes_written for c in mem),
            onchip_peak=onchip,
            fifo_peak_bytes=fifo,
            flops=sum(c.flops for c in sim.contexts),
            firings=sum(c.firings for c in sim.contexts),
            hbm_requests=sim.hbm.requests,
            hbm_segments=sim.hbm.segments,
            contexts=stats,
        )
        return self.metrics

    def chrome_trace(self) -> dict:
        """Chrome trace events (1 cycle = 1 us on the timeline)."""
        events = []
        for tid, c in enumerate(self.sim.contexts):
            events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid,
                           "args": {"name": c.name}})
            for start, dur in c.events or ():
                events.append({"name": type(c).__name__.removesuffix("Ctx"), "ph": "X",
                               "pid": 0, "tid": tid, "ts": start, "dur": dur})
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    def write_trace(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)
