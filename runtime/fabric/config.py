"""Hardware configurations of the simulated fabric, as data.

A `HardwareConfig` holds everything the timing model reads: the HBM tier
(§2.1), the on-chip memory bandwidth `pmu_bw` (§3), the default compute
bandwidth of compute operators, the base FIFO depth (§1.3), `par_dispatch`
(§2.2) and the end-of-run calibration offset (§2.5). Presets:

- `STEP_EVAL` (default): the STeP evaluation hardware — 32 HBM channels of
  64 B with latency 2, II 2, start-up 14 (1024 B/cycle), PMU 64 B/cycle,
  base depth 2, par_dispatch 1.
- `SWIGLU_HDL`: the HDL-validation build (§8.1): 8 channels, PMU 256 B/cycle,
  depth 1, par_dispatch 4, compute 4096 FLOPs/cycle.
- `SN40L`: an SN40L-like chip (1040 PCUs + 1040 PMUs, 520 MiB SRAM, 64 GiB
  HBM at ~2 TB/s, DDR at ~200 GB/s) at 1.6 GHz: 2 TB/s / 1.6 GHz = 1280
  B/cycle = 40 channels x 64 B / II 2.

Configs load from / dump to JSON (`HardwareConfig.from_json`), and
`with_(**changes)` derives variants.

Example:

```python
cfg = get_preset("step-eval").with_(base_depth=1)
cfg.hbm.peak_bytes_per_cycle     # 1024
```
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class HBMConfig:
    """An off-chip tier: `channels` x `request_bytes` per `initiation_interval` cycles."""

    channels: int = 32
    request_bytes: int = 64
    latency: int = 2
    initiation_interval: int = 2
    outstanding: int = 1  # unused by the reference model
    startup: int = 14  # added to every request (reference behaviour, §2.4)
    par_dispatch: int = 1
    capacity_bytes: int = 64 << 30

    @property
    def peak_bytes_per_cycle(self) -> float:
        return self.channels * self.request_bytes / self.initiation_interval


@dataclass(frozen=True)
class HardwareConfig:
    """Everything the timing model reads (see module doc)."""

    name: str = "step-eval"
    hbm: HBMConfig = field(default_factory=HBMConfig)
    ddr: HBMConfig | None = None
    pmu_bw: int = 64
    compute_bw: int = 4096
    base_depth: int = 2
    end_offset: int = 2  # total = last memory-operator clock + end_offset (§2.5)
    compute_units: int = 0
    memory_units: int = 0
    sram_bytes: int = 0
    clock_ghz: float = 1.0
    systolic_tile: tuple[int, int] = (16, 16)

    def with_(self, **changes) -> "HardwareConfig":
        hbm_changes = {k: changes.pop(k) for k in list(changes) if k in _HBM_FIELDS}
        cfg = dataclasses.replace(self, **changes)
        if hbm_changes:
            cfg = dataclasses.replace(cfg, hbm=dataclasses.replace(cfg.hbm, **hbm_changes))
        return cfg

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "HardwareConfig":
        d = json.loads(text)
        if not isinstance(d, dict):
            raise ValueError("a hardware config is a JSON object")
        base = get_preset(d.pop("preset", "step-eval"))
        hbm = d.pop("hbm", None)
        ddr = d.pop("ddr", None)
        if "systolic_tile" in d:
            d["systolic_tile"] = tuple(d["systolic_tile"])
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown hardware config field(s): {', '.join(sorted(unknown))}")
        cfg = dataclasses.replace(base, **d)
        if hbm is not None:
            cfg = dataclasses.replace(cfg, hbm=dataclasses.replace(cfg.hbm, **hbm))
        if ddr is not None:
            cfg = dataclasses.replace(cfg, ddr=HBMConfig(**ddr))
        return cfg


_HBM_FIELDS = {f.name for f in dataclasses.fields(HBMConfig)}

STEP_EVAL = HardwareConfig()
SWIGLU_HDL = HardwareConfig(
    name="swiglu-hdl", hbm=HBMConfig(channels=8, par_dispatch=4), pmu_bw=256,
    compute_bw=4096, base_depth=1, end_offset=2)
SN40L = HardwareConfig(
    name="sn40l", hbm=HBMConfig(channels=40, par_dispatch=1),
    ddr=HBMConfig(channels=4, request_bytes=64, initiation_interval=2, latency=40,
                  startup=14, capacity_bytes=1536 << 30),
    pmu_bw=64, compute_bw=4096, base_depth=2, compute_units=1040, memory_units=1040,
    sram_bytes=520 << 20, clock_ghz=1.6)

PRESETS = {c.name: c for c in (STEP_EVAL, SWIGLU_HDL, SN40L)}


def get_preset(name: str) -> HardwareConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(
            f"unknown hardware preset '{name}' (choose from {', '.join(sorted(PRESETS))})"
        ) from None
