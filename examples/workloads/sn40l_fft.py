"""The seed's Table I at the paper's size: operational intensity per kernel of a 1M-point FFT conv.

`fusion_intensities(n, blocks)` builds the Monarch FFT convolution of
`examples/workloads/fftconv.py` (`blocks` blocks of `n x n` points), cuts it
into kernels at the seed's three fusion levels with `step-kernelize`
(`unfused`: one kernel per operator; `conventional`: a GEMM with its
elementwise epilogue, the seed's "Gemm0 - Mul - Transpose" row, the transpose
being absorbed by multiplying on the right; `fused`: the whole graph, one
kernel) and computes each kernel's FLOPs and off-chip bytes with
`step-metrics`. At the paper's 1M points the default is one block of
1024 x 1024 (an order-2 decomposition, 1024-point DFT GEMMs); `n=32,
blocks=1024` is the same 1M points in 32 x 32 blocks (the cross-block
levels of an order-4 decomposition left out, see docs/guide/sn40l.md).

Closed form (f32, `b` blocks; the seven `n x n` constants `F`, `T`, `F`,
`K`, `Fi`, `Ti`, `Fi` are loaded once and repeated over the blocks, `c = 4
n^2` bytes each; a stream of blocks is `s = 4 b n^2` bytes): FLOPs
`b (8 n^3 + 3 n^2)`; bytes unfused `7 c + 14 s` (seven kernels, each a
constant, a stream in and a stream out), conventional `7 c + 8 s` (three
GEMM+mul kernels, one GEMM), fused `7 c + 2 s`. At one block of 1024 x 1024
the intensities are `(8n + 3) / (84, 60, 36)` = 97.6 / 136.6 / 227.6.

Example:

```python
from steplus.examples.workloads.sn40l_fft import TABLE_I, fusion_intensities
levels = fusion_intensities(1024, 1)       # {"unfused": Level(...), ...}
levels["fused"].intensity, TABLE_I["fused"]
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context

from steplus.dialects.step.dims import to_expr
from steplus.examples.workloads.fftconv import fftconv
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


def fusion_intensities(n: int = 1024, blocks: int = 1) -> dict[str, Level]:
    """`step-metrics` FLOPs and off-chip bytes per kernel at each fusion level."""
    out = {}
    for mode in LEVELS:
        module = fftconv(n, blocks)
        if mode != "fused":
            StepKernelizePass(mode=mode).apply(Context(), module)
        flops, offchip = [], []
        for g in kernel_groups(module)[0]:
            gm = compute_metrics(g)
            flops.append(int(to_expr(gm.flops)))
            offchip.append(int(to_expr(gm.offchip)))
        out[mode] = Level(mode, flops, offchip)
    return out
