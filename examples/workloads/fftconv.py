"""A Monarch / FlashFFTConv-like FFT convolution as a step graph (the SN40L seed's Fig. 3).

An FFT convolution `y = iFFT(FFT(u) * FFT(k))` of a length `n^2` block with
the order-2 Monarch decomposition: the block as an `n x n` tile `U`,

    X = ((F @ U) * T) @ F          (DFT along both axes, twiddles between)
    Y = X * K                      (the kernel's transform)
    y = ((Fi @ Y) * Ti) @ Fi       (the inverse)

with `F`, `T`, `K`, `Fi`, `Ti` `n x n` constant tiles, loaded once and
repeated over the blocks (the seed's Fig. 4 keeps them in PMUs). Real-valued
stand-ins for the complex DFT matrices: the same shapes, FLOPs within 4x
and the same traffic structure (the complex version doubles every tile).
The seed's transpose is absorbed by multiplying `F` on the right; its
`n = 32` matrices are the "32 x 32 x 32 or smaller" GEMMs it describes.
`blocks` blocks of `n^2` points stream through (1M points: `blocks=1024`
with `n=32`; the cross-block levels of a 1M-point FFT are not modelled).

Example:

```python
from steplus.examples.workloads.fftconv import fftconv
module = fftconv(n=32, blocks=1024)
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, f32

from steplus.dialects.step.builder import Graph


def fftconv(n: int = 32, blocks: int = 1024, name: str | None = None) -> ModuleOp:
    """The FFT convolution of `blocks` blocks of `n x n` points (see module doc)."""
    g = Graph(name or f"fftconv_n{n}_b{blocks}")
    tile = 4 * n * n
    base = [1 << 32]

    def const(tag: str):
        a = base[0]
        base[0] += 1 << 20
        return g.load((n, n), f32, [1], base_addr=a, name=tag).repeat(blocks, name=f"{tag}_rep")

    u = g.load((n, n), f32, [1, blocks], base_addr=0, name="u")
    a = const("F1").map("matmul", u, name="gemm0")
    b = a.map("mul", const("T"), name="twiddle")
    x = b.map("matmul", const("F2"), name="gemm1")
    y = x.map("mul", const("K"), name="kmul")
    c = const("F1i").map("matmul", y, name="igemm0")
    d = c.map("mul", const("Ti"), name="itwiddle")
    out = d.map("matmul", const("F2i"), name="igemm1")
    out.store(base_addr=(1 << 31) + blocks * tile)
    return g.module()
