# pyright: strict
"""Hardware configurations of the simulated fabric, as data.

A configuration is the *target description* that placing a graph on the
fabric is parameterised by (the base channel depth, the default compute and
memory-unit bandwidths): the fabric placement (`passes/step/fabric_placement.py`),
`convert-step-to-runtime` and the simulator (`runtime/fabric`) all read the same
object, so it sits below all of them, with the other target descriptions in
`dialects/target/`. The `sn40l` preset is built from the SN40L table of
`dialects/target/sn40l.py`; a module names its fabric with the
`#target.fabric<"preset", {changed fields}>` attribute (`attrs.py`).

A `HardwareConfig` holds everything the timing model reads: the HBM tier
(§2.1), the on-chip memory bandwidth `pmu_bw` (§3), the default compute
bandwidth of compute operators, the base FIFO depth (§1.3), `par_dispatch`
(§2.2) and the end-of-run calibration offset (§2.5). Presets:

- `STEP_EVAL` (default): the STeP evaluation hardware — 32 HBM channels of
  64 B with latency 2, II 2, start-up 14 (1024 B/cycle), PMU 64 B/cycle,
  base depth 2, par_dispatch 1.
- `SWIGLU_HDL`: the HDL-validation build (§8.1): 8 channels, PMU 256 B/cycle,
  depth 1, par_dispatch 4, compute 4096 FLOPs/cycle.
- `SN40L`: one SN40L socket (1040 PCUs + 1040 PMUs, 520 MiB SRAM, 638 BF16
  TFLOPS, 64 GiB HBM at ~2 TB/s, 1.5 TiB DDR at ~200 GB/s) at an assumed
  1.6 GHz: 2 TB/s / 1.6 GHz = 1280 B/cycle = 40 channels x 64 B / II 2.
  Built from `steplus.dialects.target.sn40l.SN40L`, where every number is
  marked seed / assumed / derived with its reason (`step-run --explain`):
  `unit_flops` = 638 TFLOPS / (1040 PCUs x 1.6 GHz) = 383 FLOPs/cycle per
  PCU, `compute_bw` (an operator step-allocate-units did not size) the whole
  socket, `launch_so_cycles` / `launch_ho_cycles` the per-kernel launch cost
  of software / hardware orchestration (`step-run --orchestration`). A module
  carrying `#target.sn40l<{...}>` gets the preset built from that table
  (`sn40l_config`, through `attrs.fabric_target_of` / `fabric_preset_of`).

Configs load from / dump to JSON (`HardwareConfig.from_json`), and
`with_(**changes)` derives variants. Every field is validated when a config
is built (`FIELD_LIMITS`): a wrong JSON type, a value out of range (zero
channels, a negative bandwidth, a string depth) or an unknown key raises
`ValueError` naming the key (`hbm.channels: expected an integer in
[1, 1024], got 0`). The upper bounds keep the simulator's allocations bounded
(the HBM model's per-channel tables grow with `channels`^2).

Example:

```python
cfg = get_preset("step-eval").with_(base_depth=1)
cfg.hbm.peak_bytes_per_cycle     # 1024
```
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from steplus.dialects.target import sn40l

MAX_CHANNELS = 1024
"""At most this many HBM/DDR channels (the controller keeps channels^2 entries)."""
_BIG = 1 << 40
_HUGE = 1 << 62

FIELD_LIMITS: dict[str, tuple[type, float, float]] = {
    # HBMConfig
    "channels": (int, 1, MAX_CHANNELS),
    "request_bytes": (int, 1, 1 << 20),
    "latency": (int, 0, _BIG),
    "initiation_interval": (int, 1, _BIG),
    "startup": (int, 0, _BIG),
    "par_dispatch": (int, 1, MAX_CHANNELS),
    "capacity_bytes": (int, 1, _HUGE),
    # HardwareConfig
    "pmu_bw": (int, 1, _BIG),
    "compute_bw": (int, 1, _BIG),
    "base_depth": (int, 1, 1 << 20),
    "end_offset": (int, 0, _BIG),
    "compute_units": (int, 0, _BIG),
    "memory_units": (int, 0, _BIG),
    "sram_bytes": (int, 0, _HUGE),
    "clock_ghz": (float, 1e-6, 1e6),
    "unit_flops": (int, 0, _BIG),
    "launch_so_cycles": (int, 0, _BIG),
    "launch_ho_cycles": (int, 0, _BIG),
}
"""Field -> (type, minimum, maximum), both bounds inclusive."""


def _check_value(path: str, value: Any) -> None:
    """Raise ValueError unless `value` suits the field at `path` (`hbm.channels`)."""
    kind, lo, hi = FIELD_LIMITS[path.rsplit(".", 1)[-1]]
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
        want = f"an integer in [{lo}, {hi}]"
    else:
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value) and lo <= value <= hi)
        want = f"a number in [{lo:g}, {hi:g}]"
    if not ok:
        got = json.dumps(value) if isinstance(value, str | bool | type(None)) else repr(value)
        raise ValueError(f"{path}: expected {want}, got {got[:40]}")


def _check_fields(obj: object, prefix: str = "") -> None:
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        if f.name in FIELD_LIMITS:
            _check_value(prefix + f.name, getattr(obj, f.name))


def _check_keys(d: dict[str, Any], allowed: set[str], prefix: str) -> None:
    unknown = sorted(k for k in d if k not in allowed)
    if unknown:
        names = ", ".join(prefix + str(k) for k in unknown)
        raise ValueError(f"unknown hardware config field(s): {names} "
                         f"(expected {', '.join(sorted(allowed))})")


def _section(d: dict[str, Any], key: str) -> dict[str, Any] | None:
    value: object = d.pop(key, None)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{key}: expected a JSON object, got {json.dumps(value)[:40]}")
    return cast(dict[str, Any], value)


@dataclass(frozen=True)
class HBMConfig:
    """An off-chip tier: `channels` x `request_bytes` per `initiation_interval` cycles."""

    channels: int = 32
    request_bytes: int = 64
    latency: int = 2
    initiation_interval: int = 2
    startup: int = 14  # added to every request (reference behaviour, §2.4)
    par_dispatch: int = 1
    capacity_bytes: int = 64 << 30

    def __post_init__(self) -> None:
        _check_fields(self)

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
    unit_flops: int = 0  # FLOPs/cycle of one compute unit (0: not modelled)
    launch_so_cycles: int = 0  # per-kernel launch, software-orchestrated
    launch_ho_cycles: int = 0  # per-kernel launch, hardware-orchestrated

    def __post_init__(self) -> None:
        _check_fields(self)
        name = cast(object, self.name)  # from JSON: checked, whatever the annotation says
        if not isinstance(name, str):
            raise ValueError(f"name: expected a string, got {name!r}"[:80])
        tile = cast(object, self.systolic_tile)
        if not (isinstance(tile, tuple) and len(cast(tuple[object, ...], tile)) == 2 and all(
                isinstance(t, int) and not isinstance(t, bool) and 1 <= t <= 4096
                for t in cast(tuple[object, ...], tile))):
            raise ValueError(f"systolic_tile: expected two integers in [1, 4096], got {tile!r}"[:100])

    def with_(self, **changes: Any) -> "HardwareConfig":
        hbm_changes = {k: changes.pop(k) for k in list(changes) if k in _HBM_FIELDS}
        cfg = dataclasses.replace(self, **changes)
        if hbm_changes:
            cfg = dataclasses.replace(cfg, hbm=dataclasses.replace(cfg.hbm, **hbm_changes))
        return cfg

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "HardwareConfig":
        """A config from JSON: the fields of a preset (`"preset"`, default
        step-eval) overridden by the given ones; ValueError names a bad key."""
        raw: object = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("a hardware config is a JSON object")
        d = cast(dict[str, Any], raw)
        preset: object = d.pop("preset", "step-eval")
        if not isinstance(preset, str):
            raise ValueError(f"preset: expected a preset name, got {json.dumps(preset)[:40]}")
        base = get_preset(preset)
        hbm, ddr = _section(d, "hbm"), _section(d, "ddr")
        tile: object = d.get("systolic_tile")
        if isinstance(tile, list):
            d["systolic_tile"] = tuple(cast(list[object], tile))
        _check_keys(d, {f.name for f in dataclasses.fields(cls)} | {"preset"}, "")
        for key, value in d.items():
            if key in FIELD_LIMITS:
                _check_value(key, value)
        cfg = dataclasses.replace(base, **d)
        if hbm is not None:
            cfg = dataclasses.replace(cfg, hbm=_hbm_from(cfg.hbm, hbm, "hbm."))
        if ddr is not None:
            cfg = dataclasses.replace(cfg, ddr=_hbm_from(HBMConfig(), ddr, "ddr."))
        return cfg


def _hbm_from(base: HBMConfig, d: dict[str, Any], prefix: str) -> HBMConfig:
    """`base` with the fields of the JSON object `d` (keys checked, named `prefix`+key)."""
    _check_keys(d, _HBM_FIELDS, prefix)
    for key, value in d.items():
        _check_value(prefix + key, value)
    return dataclasses.replace(base, **d)


_HBM_FIELDS = {f.name for f in dataclasses.fields(HBMConfig)}

STEP_EVAL = HardwareConfig()
SWIGLU_HDL = HardwareConfig(
    name="swiglu-hdl", hbm=HBMConfig(channels=8, par_dispatch=4), pmu_bw=256,
    compute_bw=4096, base_depth=1, end_offset=2)


def sn40l_config(table: Mapping[str, sn40l.Param] = sn40l.SN40L) -> HardwareConfig:
    """One SN40L socket from a parameter table of `dialects/target/sn40l.py` (the
    seed/assumed table itself by default, or `with_changes(...)` of it, which a
    module's `#target.sn40l` names): the one mapping from the table to the fabric."""
    def v(name: str) -> float:
        return sn40l.value(name, table)

    pcus, unit = int(v("pcus")), int(v("pcu_flops"))
    return HardwareConfig(
        name="sn40l",
        hbm=HBMConfig(channels=int(v("hbm_channels")), par_dispatch=int(v("agcu_requests")),
                      capacity_bytes=int(v("hbm_bytes"))),
        ddr=HBMConfig(channels=int(v("ddr_channels")), request_bytes=64,
                      initiation_interval=2, latency=int(v("ddr_latency")), startup=14,
                      par_dispatch=int(v("agcu_requests")), capacity_bytes=int(v("ddr_bytes"))),
        # one PMU's read port (64 of its 128 B/cycle, reads and writes are concurrent)
        pmu_bw=int(v("pmu_gbps_each")) // 2, compute_bw=pcus * unit, base_depth=2,
        compute_units=pcus, memory_units=int(v("pmus")),
        sram_bytes=int(v("sram_bytes")), clock_ghz=float(v("clock_ghz")),
        unit_flops=unit, launch_so_cycles=sn40l.us_to_cycles(v("launch_so_us"), table),
        launch_ho_cycles=sn40l.us_to_cycles(v("launch_ho_us"), table))


SN40L = sn40l_config()

PRESETS = {c.name: c for c in (STEP_EVAL, SWIGLU_HDL, SN40L)}


def get_preset(name: str, sn40l_table: Mapping[str, sn40l.Param] | None = None) -> HardwareConfig:
    """The preset `name`; `sn40l_table` (a module's `#target.sn40l`, see
    `attrs.fabric_preset_of`) replaces the seed's table in the `sn40l` preset
    and is ignored by the others. ValueError for an unknown name."""
    if name == "sn40l" and sn40l_table is not None and sn40l_table is not sn40l.SN40L:
        return sn40l_config(sn40l_table)
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(
            f"unknown hardware preset '{name}' (choose from {', '.join(sorted(PRESETS))})"
        ) from None
