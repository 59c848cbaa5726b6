# pyright: strict
"""PIM system presets of the Allspark seed (Table IV), validated on load.

A preset describes a mesh of ``rows x cols`` PIM nodes; each node holds an
``pe x pe`` PE array (NVDLA-style, one MAC per PE and cycle), SRAM buffers and a
DRAM memory submodule of ``node_cap_bytes``.  Nodes talk over a mesh NoC with
input-queued routers, dimension-order (XY) routing and 64-bit flits.

Values from Table IV are plain fields; parameters the seed does not give are
listed in :data:`ASSUMED_FIELDS` (and documented in ``docs/guide/allspark.md``).

Example::

    >>> hw = preset("allspark-16x16")
    >>> hw.nodes, hw.link_bytes_per_cycle
    (256, 8)
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

MIB = 1024 * 1024


class PimConfigError(ValueError):
    """A hardware description violates a rule; the message names the field."""


@dataclass(frozen=True)
class PimHardware:
    """A mesh of PIM nodes (Table IV of the seed unless marked assumed)."""

    name: str
    rows: int  # H_A
    cols: int  # W_A
    pe: int = 8  # r: PE array is pe x pe
    sram_buffer_bytes: int = 48 * 1024
    node_cap_bytes: int = 8 * MIB  # one 8 MiB bank per node
    dram_width_bits: int = 128
    freq_mhz: float = 400.0
    flit_bits: int = 64
    noc_pj_per_bit_hop: float = 1.1
    dram_pj_per_bit: float = 0.66
    t_rp_ns: float = 18.0
    t_rcd_ns: float = 18.0
    t_ras_ns: float = 40.0
    t_rfc_ns: float = 180.0
    t_refi_ns: float = 3904.0
    # ---- assumed (not given by the seed) ----
    bytes_per_elem: int = 1  # INT8 (seed: 8-bit ACU, TOPS@INT8; Table VI matches 1 B/param)
    router_delay_cycles: int = 1  # per-hop pipeline latency of a router
    acu_elems_per_cycle: int = 16  # softmax/layernorm/GELU throughput of the ACU
    dram_row_bytes: int = 2048  # DRAM row (page) size, for activation overhead
    mac_pj: float = 0.2  # energy of one INT8 MAC incl. buffer access (28 nm)
    p_min: int = 8  # minimum patch-chunk granularity (PE array size)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "name":
                if not value:
                    raise PimConfigError("hardware: field 'name' must not be empty")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise PimConfigError(f"hardware: field '{f.name}' must be a number")
            if not value > 0:
                raise PimConfigError(
                    f"hardware: field '{f.name}' must be positive, got {value}"
                )
        if self.t_rfc_ns >= self.t_refi_ns:
            raise PimConfigError("hardware: tRFC must be smaller than tREFI")
        if self.flit_bits % 8:
            raise PimConfigError("hardware: field 'flit_bits' must be a multiple of 8")

    @property
    def nodes(self) -> int:
        return self.rows * self.cols

    @property
    def macs_per_cycle(self) -> int:
        return self.pe * self.pe

    @property
    def link_bytes_per_cycle(self) -> int:
        """BW: one flit per cycle per link."""
        return self.flit_bits // 8

    @property
    def cycle_ns(self) -> float:
        return 1000.0 / self.freq_mhz

    @property
    def dram_bytes_per_cycle(self) -> float:
        """Effective DRAM bandwidth: bus width, less refresh and row overheads."""
        peak = self.dram_width_bits / 8
        refresh = 1.0 - self.t_rfc_ns / self.t_refi_ns
        row_cycles = self.dram_row_bytes / peak
        miss_cycles = (self.t_rp_ns + self.t_rcd_ns) / self.cycle_ns
        return peak * refresh * row_cycles / (row_cycles + miss_cycles)

    def peak_tops(self) -> float:
        """Peak throughput in tera-MAC/s (the seed counts one op per MAC)."""
        return self.nodes * self.macs_per_cycle * self.freq_mhz * 1e6 / 1e12


ASSUMED_FIELDS: tuple[str, ...] = (
    "bytes_per_elem",
    "router_delay_cycles",
    "acu_elems_per_cycle",
    "dram_row_bytes",
    "mac_pj",
    "p_min",
)

PRESETS: dict[str, PimHardware] = {
    # Table IV: 16x16 nodes.
    "allspark-16x16": PimHardware("allspark-16x16", 16, 16),
    # GPU comparison: 576 nodes x 64 PEs x 400 MHz = 14.7 TMAC/s, 576 x 8 MiB = 4.5 GiB.
    "allspark-24x24": PimHardware("allspark-24x24", 24, 24),
    # PVT is deployed on an 8x8 node array (Section VIII-A).
    "allspark-8x8": PimHardware("allspark-8x8", 8, 8),
}


def preset(name: str) -> PimHardware:
    """Return the named preset; raise ``PimConfigError`` naming the choices."""
    try:
        return PRESETS[name]
    except KeyError:
        raise PimConfigError(
            f"unknown preset '{name}' (choose from {', '.join(sorted(PRESETS))})"
        ) from None


def with_overrides(hw: PimHardware, **changes: object) -> PimHardware:
    """A copy of ``hw`` with some fields changed, validated again."""
    known = {f.name: getattr(hw, f.name) for f in fields(hw)}
    for key, v in changes.items():
        if key not in known:
            raise PimConfigError(f"hardware: unknown field '{key}'")
        if isinstance(known[key], int) and (isinstance(v, bool) or not isinstance(v, int)):
            raise PimConfigError(f"hardware: field '{key}' must be an integer, got {v!r}")
    return replace(hw, **changes)  # type: ignore[arg-type]
