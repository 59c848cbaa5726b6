"""Every assumption of the SN40L experiments a range: the labeled table and the sweep.

The SN40L seed states the chip (PCUs, SRAM, HBM/DDR capacity and peak
bandwidth) but not several numbers its headlines depend on. `ASSUMPTIONS`
lists those the experiments use, SN40L and DGX in one table: a default (the
value the experiments print first), a low and a high end, and why. The SN40L
defaults are those of the target table (`dialects/target/sn40l.py`), so
`step-run --preset sn40l` and the experiments agree.

`sweep(f, names)` evaluates a headline `f(values) -> float` at the defaults,
at each assumption's low and high end with the others at their defaults
(one at a time: which assumption moves the headline), and at every corner
of the box of the named assumptions (the joint range: the headline's least
and greatest value when all of them are unknown together; exact for a
headline monotone in each assumption, which every headline here is except
in the prompt/context lengths, where the corners are a sample).

Example:

```python
from steplus.examples.workloads.sn40l_ranges import sweep
r = sweep(lambda v: 1 + v["launch_so_us"], ["launch_so_us"])
(r.value, r.low, r.high)        # (16.0, 6.0, 31.0)
```
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from steplus.dialects.target.sn40l import value
from steplus.examples.workloads.decoder import P2P


@dataclass(frozen=True)
class Assumption:
    name: str
    default: float
    low: float
    high: float
    unit: str
    platform: str  # "sn40l" | "dgx" | "workload"
    why: str


ASSUMPTIONS: dict[str, Assumption] = {a.name: a for a in (
    Assumption("launch_so_us", value("launch_so_us"), 5.0, 30.0, "us/kernel", "sn40l",
               "software-orchestrated launch (§IV-D: Program Load, Argument Load, Kernel "
               "Execute from the host); not in the seed. 5 us: a GPU-like host launch; 30 us: "
               "three PCIe round trips of 10 us"),
    Assumption("launch_ho_us", value("launch_ho_us"), 0.0, 5.0, "us/kernel", "sn40l",
               "hardware-orchestrated launch (the AGCUs walk the schedule, §IV-D); not in the "
               "seed. 0: free; 5: as slow as a host launch's fastest"),
    Assumption("p2p_gbps", value("p2p_gbps"), 50.0, 400.0, "GB/s/socket", "sn40l",
               "peer-to-peer bandwidth per socket for the TP8 collectives; not in the seed "
               "(§IV-D names the protocol only)"),
    Assumption("p2p_latency_us", value("p2p_latency_us"), 0.0, 5.0, "us/all-reduce", "sn40l",
               "fixed cost of one TP8 all-reduce; not in the seed"),
    Assumption("ddr_eff", 1.0, 0.61, 1.0, "of DDR channel peak", "sn40l",
               "fraction of the simulated DDR channel peak (1.64 TB/s per node) an expert copy "
               "reaches; the seed measured 'over 1 TB/s' (§I, §VI-B) = 0.61"),
    Assumption("dgx_eff", 0.6, 0.4, 0.8, "of peak FLOPs and HBM BW", "dgx",
               "achieved fraction of a GPU's peak in the DGX roofline; the seed estimates the "
               "DGX from published latencies [12] it does not reproduce"),
    Assumption("dgx_kernel_us", 2.0, 0.5, 5.0, "us/kernel", "dgx",
               "launch + tail per conventionally fused GPU kernel (0.5: CUDA graphs; 5: eager "
               "launches); not in the seed"),
    Assumption("dgx_allreduce_us", 10.0, 5.0, 20.0, "us/all-reduce", "dgx",
               "fixed cost of one NCCL all-reduce over NVLink (TP8); not in the seed"),
    Assumption("prompt", 512, 128, 2048, "tokens", "workload",
               "prompt length of a CoE request; the seed does not give it"),
    Assumption("context", 1024, 512, 4096, "tokens", "workload",
               "KV length an expert's generated token attends to; the seed does not give it"),
)}

FUSION_ASSUMPTIONS = ("launch_so_us", "launch_ho_us", "p2p_gbps", "p2p_latency_us")
COE_ASSUMPTIONS = ("launch_ho_us", "p2p_gbps", "p2p_latency_us", "ddr_eff", "dgx_eff",
                   "dgx_kernel_us", "dgx_allreduce_us", "prompt", "context")


def defaults() -> dict[str, float]:
    return {n: a.default for n, a in ASSUMPTIONS.items()}


@dataclass
class Range:
    value: float
    low: float
    high: float
    each: dict[str, tuple[float, float]] = field(default_factory=dict)
    """assumption -> (headline at its low end, at its high end), the others at default."""

    def dominant(self) -> str:
        """The assumption that alone moves the headline most ('none' if none moves it)."""
        spread = {n: abs(hi - lo) for n, (lo, hi) in self.each.items()}
        best = max(spread, key=lambda n: spread[n], default=None)
        return best if best is not None and spread[best] > 0 else "none"

    def text(self, fmt: str = "{:.1f}") -> str:
        return f"{fmt.format(self.value)} [{fmt.format(self.low)}-{fmt.format(self.high)}]"


MAX_CORNERS = 1 << 10


def sweep(f: Callable[[dict[str, float]], float], names: Sequence[str],
          table: dict[str, Assumption] | None = None) -> Range:
    """`f` at the defaults, one assumption at a time, and over the corners (module doc)."""
    return sweep_all(lambda v: {"": f(v)}, names, table)[""]


def sweep_all(f: Callable[[dict[str, float]], dict[str, float]], names: Sequence[str],
              table: dict[str, Assumption] | None = None) -> dict[str, Range]:
    """`sweep` of several headlines computed together (`f` returns them by name)."""
    table = ASSUMPTIONS if table is None else table
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown assumption(s): {', '.join(unknown)}")
    if 2 ** len(names) > MAX_CORNERS:
        raise ValueError(f"{len(names)} assumptions: too many corners to sweep")
    base = {n: a.default for n, a in table.items()}
    v = f(base)
    each = {n: (f({**base, n: table[n].low}), f({**base, n: table[n].high})) for n in names}
    seen = {k: [x, *(e[i][k] for e in each.values() for i in (0, 1))] for k, x in v.items()}
    for corner in itertools.product(*((table[n].low, table[n].high) for n in names)):
        for k, x in f({**base, **dict(zip(names, corner))}).items():
            seen[k].append(x)
    return {k: Range(x, min(seen[k]), max(seen[k]),
                     {n: (each[n][0][k], each[n][1][k]) for n in names})
            for k, x in v.items()}


def assumptions_table(names: Sequence[str] | None = None) -> str:
    """The labeled assumptions as a markdown table (every one is 'assumed')."""
    lines = ["| assumption | platform | default | range | unit | source | why |",
             "|---|---|---|---|---|---|---|"]
    for n, a in ASSUMPTIONS.items():
        if names is None or n in names:
            lines.append(f"| {n} | {a.platform} | {a.default:g} | {a.low:g}-{a.high:g} | "
                         f"{a.unit} | assumed | {a.why} |")
    return "\n".join(lines)


# -- the closed forms the experiments sweep (the simulated cycles are fixed) --------------


def allreduce_s(nbytes: int, tp: int, v: dict[str, float]) -> float:
    """One ring all-reduce of `nbytes` over `tp` sockets on the P2P network of `v`."""
    return v["p2p_latency_us"] * 1e-6 + 2 * (tp - 1) / tp * nbytes / (v["p2p_gbps"] * 1e9)


def model_seconds(kernel_cycles: int, kernels: int, launch_us: float, layers: int,
                  collectives_s: float, clock_ghz: float) -> float:
    """`layers` repetitions of a layer: its simulated kernels, one launch per kernel and
    its collectives (charged after the layer)."""
    return layers * (kernel_cycles / (clock_ghz * 1e9) + kernels * launch_us * 1e-6
                     + collectives_s)


def p2p_of(v: dict[str, float]) -> P2P:
    """The peer-to-peer network of the assumptions `v` (one link per socket)."""
    return P2P(links=1, link_gbps=round(v["p2p_gbps"]), latency_ns=round(v["p2p_latency_us"] * 1e3))
