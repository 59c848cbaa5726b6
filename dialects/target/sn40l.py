# pyright: strict
"""The SN40L chip and node as numbers: what the seed gives and what is assumed.

Every parameter is a `Param(value, unit, source, why)`: `source` is `"seed"`
(with the section of the SN40L paper it comes from) or `"assumed"` (with the
reason for the value), or `"derived"` (computed from the others, the formula
in `why`). `step-run --preset sn40l --explain` prints this table; the
`sn40l` hardware preset (`dialects/target/fabric.py`), the SN40L passes
(`passes/sn40l/`) and the CoE model read their numbers from here, so a change here
changes all of them.

`check()` validates the table when the module is loaded: every bandwidth,
capacity, count and clock must be a positive finite number (launch costs and
latencies may be 0). `with_changes({...})` is the table with some seed or
assumed parameters changed and the derived ones recomputed from them (what a
module's `#target.sn40l<{pcus = 520 : i64}>` attribute names,
`dialects/target/attrs.py`), checked the same way.

Example:

```python
from steplus.dialects.target.sn40l import SN40L, value
value("pcus")                  # 1040
SN40L["clock_ghz"].source      # 'assumed'
```
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import cast


@dataclass(frozen=True)
class Param:
    value: float
    unit: str
    source: str  # "seed" | "assumed" | "derived"
    why: str


def _p(value: float, unit: str, source: str, why: str) -> Param:
    return Param(value, unit, source, why)


_CLOCK = 1.6
_TFLOPS = 638.0
_PCUS = 1040

SN40L: dict[str, Param] = {
    # -- from the seed ------------------------------------------------------
    "pcus": _p(_PCUS, "units/socket", "seed", "§I, §IV: 1040 Pattern Compute Units"),
    "pmus": _p(1040, "units/socket", "seed", "§I, §IV: 1040 Pattern Memory Units"),
    "pmu_bytes": _p(512 << 10, "B", "seed",
                    "§I: 520 MiB of PMU SRAM over 1040 PMUs = 512 KiB each"),
    "sram_bytes": _p(520 << 20, "B/socket", "seed", "§I: 520 MiB on-chip SRAM"),
    "socket_tflops": _p(_TFLOPS, "BF16 TFLOP/s", "seed", "§I: 638 BF16 TFLOPS per socket"),
    "hbm_bytes": _p(64 << 30, "B/socket", "seed", "§IV: 64 GiB of HBM"),
    "hbm_gbps": _p(2000.0, "GB/s/socket", "seed", "§IV: about 2 TB/s per socket"),
    "ddr_bytes": _p(1536 << 30, "B/socket", "seed", "§IV: up to 1.5 TiB of DDR"),
    "ddr_gbps": _p(200.0, "GB/s/socket", "seed",
                   "§IV: over 200 GB/s per socket (§I: >1 TB/s DDR->HBM per node)"),
    "sockets": _p(8, "sockets/node", "seed", "§V, §VI: an SN40L Node has 8 sockets"),
    "tp": _p(8, "sockets", "seed", "§VI-B: models mapped TP8 over the 8 sockets"),
    # -- assumed ------------------------------------------------------------
    "clock_ghz": _p(_CLOCK, "GHz", "assumed",
                    "not in the seed; a typical TSMC 5 nm accelerator clock. It only "
                    "converts the seed's per-second figures to cycles"),
    "hbm_channels": _p(40, "channels x 64 B / 2 cycles", "assumed",
                       "channel granularity not in the seed; 40 x 64 B / II 2 = 1280 "
                       "B/cycle = 2.05 TB/s at 1.6 GHz, the seed's 'about 2 TB/s'"),
    "agcu_requests": _p(4, "64 B requests/cycle/stream", "assumed",
                        "how many requests one load/store stream issues per cycle (the "
                        "fabric's par_dispatch); the seed: software creates more streams "
                        "for more HBM bandwidth (§VII). 4 gives a fused Llama2-7B decode "
                        "layer 65% of peak HBM bandwidth (the seed: ~85%); 1 gives 23%"),
    "ddr_channels": _p(4, "channels x 64 B / 2 cycles", "assumed",
                       "4 x 64 B / II 2 = 128 B/cycle = 205 GB/s at 1.6 GHz, the seed's "
                       "'over 200 GB/s'; 8 sockets give 1.64 TB/s, the seed's '>1 TB/s'"),
    "ddr_latency": _p(40, "cycles", "assumed",
                      "DRAM behind a DDR controller is slower to first byte than HBM "
                      "(the STeP model's 2); 40 + 14 start-up = 34 ns. Bandwidth "
                      "dominates the transfers simulated here"),
    "pmu_gbps_each": _p(128, "B/cycle/PMU", "assumed",
                        "the seed: 'hundreds of TBps' aggregate; 1040 x 128 B x 1.6 GHz "
                        "= 213 TB/s"),
    "launch_so_us": _p(15.0, "us/kernel", "assumed",
                       "software orchestration: the host issues Program Load, Argument "
                       "Load and Kernel Execute (§IV-D) over PCIe per kernel, a few us "
                       "each (a GPU launch is ~5 us)"),
    "launch_ho_us": _p(1.0, "us/kernel", "assumed",
                       "hardware orchestration: the AGCUs walk a static kernel schedule "
                       "(§IV-D); what remains is the on-device program/argument load"),
    "p2p_gbps": _p(200.0, "GB/s/socket", "assumed",
                   "P2P bandwidth is not in the seed; taken equal to the DDR interface"),
    "p2p_latency_us": _p(1.0, "us/all-reduce", "assumed",
                         "fixed cost of one TP8 all-reduce over the P2P network"),
    # -- derived ------------------------------------------------------------
    "pcu_flops": _p(math.floor(_TFLOPS * 1e12 / (_PCUS * _CLOCK * 1e9)), "FLOP/cycle/PCU",
                    "derived", "floor(socket_tflops / (pcus x clock)) = floor(383.4)"),
    # the node: 8 sockets (what the CoE model and the TP8 layer times use)
    "node_hbm_bytes": _p(8 * (64 << 30), "B/node", "derived", "sockets x hbm_bytes = 512 GiB"),
    "node_ddr_bytes": _p(8 * (1536 << 30), "B/node", "derived",
                         "sockets x ddr_bytes = 12 TiB"),
    "node_ddr_gbps": _p(8 * 4 * 64 / 2 * _CLOCK, "GB/s/node", "derived",
                        "sockets x ddr_channels x 64 B / 2 cycles x clock = 1638 GB/s "
                        "(the seed: DDR->HBM 'over 1 TB/s' per node)"),
    "node_tflops": _p(8 * _TFLOPS, "BF16 TFLOP/s/node", "derived", "sockets x socket_tflops"),
}

POSITIVE = ("pcus", "pmus", "pmu_bytes", "sram_bytes", "socket_tflops", "hbm_bytes",
            "hbm_gbps", "ddr_bytes", "ddr_gbps", "sockets", "tp", "clock_ghz",
            "hbm_channels", "ddr_channels", "agcu_requests", "pmu_gbps_each", "p2p_gbps",
            "pcu_flops")
NON_NEGATIVE = ("ddr_latency", "launch_so_us", "launch_ho_us", "p2p_latency_us")


def check(table: dict[str, Param], skip: tuple[str, ...] = ()) -> None:
    """ValueError unless every bandwidth/capacity/count is positive, every cost >= 0
    (the parameters of `skip` are not looked at)."""
    for name in (*POSITIVE, *NON_NEGATIVE):
        if name in skip:
            continue
        if name not in table:
            raise ValueError(f"sn40l parameter '{name}' is missing")
        v = cast(object, table[name].value)  # a table built by hand: checked, whatever the annotation
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                or not (v > 0 if name in POSITIVE else v >= 0):
            want = "positive" if name in POSITIVE else "non-negative"
            raise ValueError(f"sn40l parameter '{name}' must be a {want} number, got {v!r}")
        if table[name].source not in ("seed", "assumed", "derived"):
            raise ValueError(f"sn40l parameter '{name}': unknown source {table[name].source!r}")


check(SN40L)


def value(name: str, table: Mapping[str, Param] = SN40L) -> float:
    return table[name].value


DERIVED: dict[str, Callable[[Mapping[str, float]], float]] = {
    "pcu_flops": lambda v: math.floor(v["socket_tflops"] * 1e12
                                      / (v["pcus"] * v["clock_ghz"] * 1e9)),
    "node_hbm_bytes": lambda v: v["sockets"] * v["hbm_bytes"],
    "node_ddr_bytes": lambda v: v["sockets"] * v["ddr_bytes"],
    "node_ddr_gbps": lambda v: v["sockets"] * v["ddr_channels"] * 64 / 2 * v["clock_ghz"],
    "node_tflops": lambda v: v["sockets"] * v["socket_tflops"],
}
"""The formula of each derived parameter (the one its `why` states)."""


def with_changes(changes: Mapping[str, float]) -> dict[str, Param]:
    """The table with the seed/assumed parameters of `changes` set (their source
    becomes "assumed", the reason "changed by the target attribute") and every
    derived parameter recomputed; ValueError for an unknown or derived name or a
    value `check` rejects. No changes: the table itself."""
    if not changes:
        return SN40L
    table = dict(SN40L)
    for name, v in changes.items():
        if name not in table:
            raise ValueError(f"unknown sn40l parameter '{name}' (expected one of "
                             f"{', '.join(sorted(n for n in table if n not in DERIVED))})")
        if name in DERIVED:
            raise ValueError(f"sn40l parameter '{name}' is derived ({table[name].why}); "
                             "change what it is derived from")
        if isinstance(table[name].value, int) and not isinstance(v, int):
            raise ValueError(f"sn40l parameter '{name}' must be an integer, got {v!r}")
        table[name] = replace(table[name], value=v, source="assumed",
                              why="changed by the target attribute")
    check({n: p for n, p in table.items() if n not in DERIVED}, skip=tuple(DERIVED))
    values = {n: p.value for n, p in table.items()}
    for name, formula in DERIVED.items():
        try:
            values[name] = formula(values)
        except OverflowError:  # floor of an infinite quotient (a denormal clock)
            raise ValueError(f"sn40l parameter '{name}' overflows ({table[name].why})") from None
        table[name] = replace(table[name], value=values[name])
    try:
        check(table)
    except ValueError as e:  # a derived parameter: name the changes it comes from
        changed = ", ".join(f"{n} = {v!r}" for n, v in changes.items())
        raise ValueError(f"{e} (derived from the changed {changed})") from None
    return table


def us_to_cycles(us: float, table: Mapping[str, Param] = SN40L) -> int:
    """`us` microseconds as cycles of the table's clock (ValueError if that is not finite)."""
    cycles = us * 1e3 * value("clock_ghz", table)
    if not math.isfinite(cycles):
        raise ValueError(f"{us} us at {value('clock_ghz', table)} GHz is not a finite cycle count")
    return round(cycles)


def explain(table: dict[str, Param] = SN40L) -> str:
    """The parameter table: name, value, unit, source and the reason, one per line."""
    lines = [f"{'parameter':<16}{'value':>16}  {'unit':<28}{'source':<9}why"]
    for src in ("seed", "assumed", "derived"):
        for name, p in table.items():
            if p.source == src:
                v = f"{p.value:g}" if isinstance(p.value, float) else str(p.value)
                lines.append(f"{name:<16}{v:>16}  {p.unit:<28}{p.source:<9}{p.why}")
    return "\n".join(lines)
