"""The seed's Table I and FFT fusion speedup at the paper's size: 1M-point FFT convolutions.

`fusion_intensities(n, blocks)` builds the order-2 Monarch FFT convolution
of `examples/workloads/fftconv.py` (`blocks` blocks of `n x n` points),
`monarch_intensities(factors)` the order-`p` one (`monarch_fftconv`, with
`step.regroup` between the stages), cuts it into kernels at the seed's three
fusion levels with `step-kernelize` (`unfused`: one kernel per operator, a
regroup being a view of its consumer as a transpose is in PyTorch;
`conventional`: a GEMM with its elementwise epilogue, the seed's "Gemm0 -
Mul - Transpose" row; `fused`: the whole graph, one kernel) and computes
each kernel's FLOPs and off-chip bytes with `step-metrics`. `ORDERS` are the
1M-point decompositions compared: one 1024 x 1024 block (order 2),
128 x 128 x 64 (order 3) and 32^4 (order 4, FlashFFTConv's).

Closed form (f32, `B` signals of `N = n_1 ... n_p` points, `p >= 2`):
FLOPs `B N (4 sum(n_i) + 2p - 1)` (a GEMM stage `2 n_i N`, `p - 1`
twiddles each way, the kernel product); the constants are `C = 2 sum(n_i^2)
+ 2 sum_(i<p) M_i + N` elements (`F_i` and its inverse, the twiddles `T_i`
of `M_i = n_i ... n_p` elements and their inverses, `K`), each re-read per
signal; bytes unfused `4 B ((8p - 2) N + C)` (`4p - 1` kernels, each a
stream in and out), conventional `4 B (4p N + C)` (`2p` kernels), fused `4
B (2 N + C)`. At order 2 with one 1024 x 1024 block: 97.6 / 136.6 / 227.6;
order 3 (128, 128, 64): 12.8 / 21.3 / 63.2; order 4 (32^4): 3.9 / 6.8 /
25.6 FLOP/B (`closed_form`).

`fft_speedups(factors, batch)` simulates the fused graph and its unfused
kernels on the `sn40l` preset (`examples/workloads/sn40l.py`) and gives the
fusion speedups (SO, HO) and HO/SO with their range over the labeled
assumptions: the launch costs (`sn40l_ranges`) and `hbm_eff`, the fraction
of the HBM channels' peak the streams get (simulated again with that many
channels).

Example:

```python
from steplus.examples.workloads.sn40l_fft import TABLE_I, fusion_intensities, monarch_intensities
levels = fusion_intensities(1024, 1)       # {"unfused": Level(...), ...}
levels["fused"].intensity, TABLE_I["fused"]
monarch_intensities((32, 32, 32, 32))["fused"].intensity   # 25.6
```
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from steplus.dialects.step.dims import to_expr
from steplus.dialects.target.fabric import SN40L, HardwareConfig
from steplus.examples.workloads.fftconv import fftconv, monarch_fftconv
from steplus.examples.workloads.sn40l import Run, simulate
from steplus.examples.workloads.sn40l_ranges import (
    ASSUMPTIONS, Assumption, Range, model_seconds, sweep_all,
)
from steplus.passes.sn40l.kernelize import StepKernelizePass
from steplus.passes.sn40l.kernels import kernel_groups
from steplus.passes.step.metrics import compute_metrics

TABLE_I = {"unfused": 39.5, "conventional": 102.6, "fused": 410.4}
"""The seed's Table I (Ops / Byte): no fusion, Gemm0 - Mul - Transpose, fully spatially fused."""

LEVELS = ("unfused", "conventional", "fused")


@dataclass(frozen=True)
class Level:
    mode: str
    flops: list[int]  # per kernel, in kernel order
    offchip: list[int]  # bytes per kernel

    @property
    def intensity(self) -> float:
        """The level's FLOPs over its off-chip bytes (all kernels)."""
        return sum(self.flops) / sum(self.offchip)

    def per_kernel(self) -> list[float]:
        return [f / b if b else 0.0 for f, b in zip(self.flops, self.offchip)]


def _levels(build: Callable[[], ModuleOp]) -> dict[str, Level]:
    out = {}
    for mode in LEVELS:
        module = build()
        if mode != "fused":
            StepKernelizePass(mode=mode).apply(Context(), module)
        flops, offchip = [], []
        for g in kernel_groups(module)[0]:
            gm = compute_metrics(g)
            flops.append(int(to_expr(gm.flops)))
            offchip.append(int(to_expr(gm.offchip)))
        out[mode] = Level(mode, flops, offchip)
    return out


def fusion_intensities(n: int = 1024, blocks: int = 1) -> dict[str, Level]:
    """`step-metrics` FLOPs and off-chip bytes per kernel at each fusion level (order 2)."""
    return _levels(lambda: fftconv(n, blocks))


ORDERS = {2: (1024, 1024), 3: (128, 128, 64), 4: (32, 32, 32, 32)}
"""The 1M-point Monarch decompositions compared with Table I (order -> factors)."""


def monarch_intensities(factors: Sequence[int], batch: int = 1) -> dict[str, Level]:
    """`step-metrics` per kernel at each fusion level of `monarch_fftconv(factors, batch)`."""
    return _levels(lambda: monarch_fftconv(factors, batch)[0])


def closed_form(factors: Sequence[int], batch: int = 1) -> dict[str, tuple[int, int]]:
    """(FLOPs, off-chip bytes) of each fusion level (module doc), independent of step-metrics."""
    p, big = len(factors), math.prod(factors)
    flops = batch * big * (4 * sum(factors) + 2 * p - 1)
    c = 2 * sum(x * x for x in factors) + 2 * sum(math.prod(factors[i:]) for i in range(p - 1)) \
        + big
    streams = {"unfused": 2 * (4 * p - 1), "conventional": 4 * p, "fused": 2}
    return {m: (flops, 4 * batch * (k * big + c)) for m, k in streams.items()}


def complex_bf16_flops(factors: Sequence[int], batch: int = 1) -> int:
    """FLOPs of the same convolution on complex data (bf16 complex = 4 bytes, the f32
    stand-in's bytes): a complex multiply-add is 8 real FLOPs (4x a GEMM's 2), an
    element-wise complex product 6 (6x): `B N (16 sum(n_i) + 6 (2p - 1))`."""
    p, big = len(factors), math.prod(factors)
    return batch * big * (16 * sum(factors) + 6 * (2 * p - 1))


def _kernels(xs: list[float]) -> str:
    if len(xs) <= 8:
        return ", ".join(f"{x:.1f}" for x in xs)
    return ", ".join(f"{x:.1f}" for x in xs[:6]) + f", ... ({len(xs)} kernels)"


def table_i() -> tuple[str, list[dict]]:
    """Table I beside step-metrics per order (markdown) and its rows (`bench/exp_fft.py`,
    `bench/exp_fusion.py`); checks each level against `closed_form`."""
    rows, lines = [], [
        "Table I: FLOPs per off-chip byte of a 1M-point FFT convolution (step-metrics, f32 "
        "real stand-ins, every constant read once; per kernel in brackets):", "",
        "| order (factors) | fusion level | seed | step-metrics | per kernel | closed form | "
        "complex bf16 (closed form) |", "|---|---|---|---|---|---|---|"]
    score = {}
    for order, f in ORDERS.items():
        lv, cf = monarch_intensities(f), closed_form(f)
        logs = []
        for m in LEVELS:
            flops, nbytes = cf[m]
            if (sum(lv[m].flops), sum(lv[m].offchip)) != (flops, nbytes):
                raise AssertionError(f"order {order} {m}: step-metrics differs from the closed form")
            cx = complex_bf16_flops(f) / nbytes
            logs.append(abs(math.log(cx / TABLE_I[m])))
            lines.append(f"| {order} ({'x'.join(map(str, f))}) | {m} | {TABLE_I[m]} | "
                         f"{lv[m].intensity:.1f} | {_kernels(lv[m].per_kernel())} | "
                         f"{flops / nbytes:.1f} | {cx:.1f} |")
            rows.append({"order": order, "factors": "x".join(map(str, f)), "level": m,
                         "seed": TABLE_I[m], "intensity": round(lv[m].intensity, 2),
                         "kernels": len(lv[m].flops), "complex_bf16": round(cx, 2)})
        score[order] = sum(logs) / len(logs)
    best = min(score, key=lambda o: score[o])
    lines += ["", "Mean |log(complex bf16 / seed)| over the three levels: " + ", ".join(
        f"order {o}: {s:.2f}" for o, s in score.items()) + f"; closest: order {best}."]
    return "\n".join(lines), rows


# -- the fusion speedup, simulated -------------------------------------------------------------

HBM_EFF = Assumption(
    "hbm_eff", 1.0, 0.6, 1.0, "of the HBM channels' peak", "sn40l",
    "fraction of the simulated HBM peak (40 channels x 64 B / 2 cycles = 2 TB/s) the FFT's "
    "streams get; not in the seed. 1: the channel model as is; 0.6: 24 channels (a sustained "
    "fraction, as DDR's 'over 1 TB/s' of 1.64)")
FFT_ASSUMPTIONS = ("launch_so_us", "launch_ho_us", "hbm_eff")
TABLE = {**ASSUMPTIONS, "hbm_eff": HBM_EFF}
SEED_SPEEDUP = 13.0
"""§VI-A: fused FlashFFTConv is 13x faster than unfused (one kernel, HO = SO)."""


def _config(eff: float) -> HardwareConfig:
    return SN40L.with_(channels=max(1, round(SN40L.hbm.channels * eff)))


def fft_speedups(factors: Sequence[int], batch: int = 8,
                 simulate_fn: Callable[[ModuleOp, str, HardwareConfig], Run] | None = None,
                 ) -> tuple[dict[str, Range], dict[tuple[str, float], Run]]:
    """Fusion SO / HO and HO/SO of `monarch_fftconv(factors, batch)`: the fused graph
    and its unfused kernels simulated (once per `hbm_eff` end), the launch costs in
    closed form; value at the defaults and range over `FFT_ASSUMPTIONS`."""
    sim = simulate_fn or (lambda m, mode, cfg: simulate(m, mode, cfg))
    runs: dict[tuple[str, float], Run] = {}
    ghz = SN40L.clock_ghz

    def run(mode: str, eff: float) -> Run:
        if (mode, eff) not in runs:
            runs[(mode, eff)] = sim(monarch_fftconv(factors, batch)[0], mode, _config(eff))
        return runs[(mode, eff)]

    def t(mode: str, launch: str, v: dict[str, float]) -> float:
        r = run(mode, v["hbm_eff"])
        return model_seconds(r.kernel_cycles, r.kernels, v[launch], 1, 0.0, ghz)

    ranges = sweep_all(lambda v: {
        "fusion_so": t("unfused", "launch_so_us", v) / t("fused", "launch_so_us", v),
        "fusion_ho": t("unfused", "launch_so_us", v) / t("fused", "launch_ho_us", v),
        "ho_over_so": t("fused", "launch_so_us", v) / t("fused", "launch_ho_us", v),
    }, FFT_ASSUMPTIONS, TABLE)
    return ranges, runs
