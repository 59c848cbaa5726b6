"""When an accelerator call pays: FlexASR's padded linear layer against the host's GEMM.

FlexASR's driver pads a linear layer's in features to a multiple of 16 and its outputs to a
multiple of 64 (4 PEs x 16 lanes), so flexible isel can map any GEMM with in <= 4080 onto it,
including a 10-class head on one row or a grouped convolution's one-filter GEMMs, which run 64
outputs to keep 1.  `isel{offload=profitable}` selects such a call only when it costs less than
the host's GEMM, both counted in one unit:

- the accelerator (`flexasr_linear_cost`): every MMIO command the driver issues (the command
  counts of `runtime/ila/flexasr_driver.run_linear`, call by call of its tiling: the padded
  weight rows, bias vectors, input vectors, 19 configuration and start writes, one read per
  output vector and timestep), plus the PE cores' compute: one 16x16 weight tile times one input
  vector per PE step, the 4 PEs in parallel, over the padded tile products;
- the host (`host_gemm_cost`): one 16-wide multiply-accumulate per step, m·n·ceil(k/16) of them.

The unit: one MMIO command moves 16 bytes (16 codes) across the host's bus, and one host vector
step multiplies 16 values it has read; the two are taken as equal (`MMIO_COST`, `HOST_VECTOR_COST`,
`PE_TILE_COST` below: assumptions, not measured; D2A gives no timing).  A costlier MMIO only
refuses more calls.  Under this model a call on one row never pays (the padded weights alone are
as many commands as the host's vector steps), nor does a GEMM whose outputs are padded past what
its rows repay: the rule is where the waste is, not a size threshold.

Example::

    flexasr_linear_pays(1, 64, 10)      # False: ResNet-20's classifier, 287 commands vs 40 steps
    flexasr_linear_pays(1024, 27, 16)   # True: its stem convolution via im2col
"""

from __future__ import annotations

from steplus.dialects.target.ila import FLEXASR
from steplus.passes.isel.terms import HOST_COST, cost_model, expr_name

OFFLOAD_MODES = ("always", "profitable")

MMIO_COST = 1
"""One MMIO write or read (16 bytes across the host's bus)."""
HOST_VECTOR_COST = 1
"""One 16-wide multiply-accumulate on the host."""
PE_TILE_COST = 1
"""One PE core step: a 16x16 weight tile times an input vector (16 lanes x 16 products, spec §1.4.3)."""
CONFIG_WRITES = 19
"""A linear call's configuration and start writes: 4 per PE, the GB memory manager, control, start."""

UNPAID = 2 * HOST_COST + 1
"""Added to a call that does not pay: more than the host's `bias_add(dense)` form of the same GEMM,
so extraction keeps the host form (or another accelerator's)."""

_MIB = 1 << 20
_U8, _U16 = 1 << 8, 1 << 16


def _region_end(t: int, nv: int, base: int = 0) -> int:
    """One past the last byte of a [t, nv] GB-large region at byte `base` (spec §1.4.3's layout)."""
    return base + ((t - 1) // 16) * (nv * 256) + ((t - 1) % 16) * 16 + (nv - 1) * 256 + 16


def _fits_gb(t: int, nvi: int, nvo: int) -> bool:
    """The driver's input and output regions of a t-row call fit the 1 MiB global buffer and its fields."""
    base1 = (t // 16 + 2) * 16 * nvi
    return (0 < t < _U16 and 0 < nvi < _U8 and 0 < nvo < _U8 and base1 < _U16
            and _region_end(t, nvi) <= _MIB and _region_end(t, nvo, 16 * base1) <= _MIB)


def flexasr_linear_calls(m: int, k: int, n: int) -> list[tuple[int, int]]:
    """The calls the driver makes for x[m, k]·W[n, k]ᵀ, as (rows, output vectors) each: the padded
    layer split as `flexasr_driver.linear_tiles` splits it (output vectors evenly into chunks a PE's
    input window, weight buffer and the 8-bit vector fields hold; rows into chunks the global buffer
    holds)."""
    nvi, nvo = -(-k // FLEXASR.vector), FLEXASR.pes * -(-n // FLEXASR.lanes)
    npe_max = min(FLEXASR.max_vectors // FLEXASR.pes, FLEXASR.pe_input_vectors - nvi,
                  FLEXASR.pe_weight_bytes // (256 * nvi))
    nb = nvo // FLEXASR.pes
    pn = -(-nb // npe_max)
    cuts = [FLEXASR.pes * (nb * i // pn) for i in range(pn + 1)]
    widths = [b - a for a, b in zip(cuts, cuts[1:])]
    per_t = m
    if not _fits_gb(m, nvi, max(widths)):
        per_t = 16 * max(1, min((_U16 - 32 * nvi) // (16 * (nvi + max(widths))), 4095))
        while per_t > 16 and not _fits_gb(per_t, nvi, max(widths)):
            per_t -= 16
    pt = -(-m // per_t)
    rows = [m * (i + 1) // pt - m * i // pt for i in range(pt)]
    return [(r, w) for r in rows for w in widths]


def flexasr_linear_commands(m: int, k: int, n: int) -> tuple[int, int]:
    """(writes, reads) of the driver's calls for x[m, k]·W[n, k]ᵀ + b."""
    nvi = -(-k // FLEXASR.vector)
    writes = reads = 0
    for rows, nvo in flexasr_linear_calls(m, k, n):
        writes += 16 * nvo * nvi + nvo + rows * nvi + CONFIG_WRITES
        reads += rows * nvo
    return writes, reads


def flexasr_linear_cost(m: int, k: int, n: int) -> int:
    """The call's cost: its MMIO commands and the PE steps of its padded tile products (4 PEs)."""
    nvi = -(-k // FLEXASR.vector)
    writes, reads = flexasr_linear_commands(m, k, n)
    steps = sum(-(-(rows * nvo * nvi) // FLEXASR.pes) for rows, nvo in flexasr_linear_calls(m, k, n))
    return MMIO_COST * (writes + reads) + PE_TILE_COST * steps


def host_gemm_cost(m: int, k: int, n: int) -> int:
    """The host's GEMM: m·n dot products of ceil(k/16) 16-wide steps."""
    return HOST_VECTOR_COST * m * n * -(-k // FLEXASR.vector)


def flexasr_linear_pays(m: int, k: int, n: int) -> bool:
    """Does FlexASR's padded call cost less than the host's GEMM?"""
    return flexasr_linear_cost(m, k, n) < host_gemm_cost(m, k, n)


def _literal(x) -> int | None:
    from egglog import i64

    return int(x) if isinstance(x, i64) else None


def profitable_cost_model(egraph, expr, child_costs):
    """`terms.cost_model`, with a FlexASR linear call that does not pay (`flexasr_linear_pays`)
    priced past the host's form of its GEMM (`UNPAID`): isel then keeps the GEMM on the host, or
    gives it to another target whose rule holds."""
    cost, tie, label = cost_model(egraph, expr, child_costs)
    if expr_name(expr) == "flex_linear":
        from egglog import get_callable_args

        m, k, n = (_literal(a) for a in get_callable_args(expr)[3:6])
        if m and k and n and m > 0 and k > 0 and n > 0 and not flexasr_linear_pays(m, k, n):
            cost += UNPAID
    return cost, tie, label


def cost_model_for(offload: str):
    """The extraction cost model of an `offload` mode: `always` takes every call the targets' rules
    admit (D2A's counts), `profitable` only FlexASR linear calls that pay."""
    if offload not in OFFLOAD_MODES:
        raise ValueError(f"offload must be one of {', '.join(OFFLOAD_MODES)}, got '{offload}'")
    return profitable_cost_model if offload == "profitable" else cost_model
