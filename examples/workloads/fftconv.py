"""Monarch / FlashFFTConv FFT convolutions as step graphs (the SN40L seed's Fig. 3, Table I).

`fftconv(n, blocks)`: an FFT convolution `y = iFFT(FFT(u) * FFT(k))` of
`blocks` independent length-`n^2` blocks with the order-2 Monarch
decomposition, each block an `n x n` tile `U`:

    X = ((F @ U) * T) @ F          (DFT along both axes, twiddles between)
    Y = X * K                      (the kernel's transform)
    y = ((Fi @ Y) * Ti) @ Fi       (the inverse)

with `F`, `T`, `K`, `Fi`, `Ti` `n x n` constant tiles, loaded once and
repeated over the blocks (the seed's Fig. 4 keeps them in PMUs).

`monarch_fftconv(factors, batch)`: the order-`p` decomposition of `batch`
signals of `N = n_1 ... n_p` points each, the FlashFFTConv algorithm at the
seed's size (1M points: `(32, 32, 32, 32)`, FlashFFTConv's 32-point outer
butterfly around its 32x32x32 kernel and the seed's "32 x 32 x 32 or
smaller" GEMMs; or `(128, 128, 64)`). A signal is the tensor
`x[t_1, ..., t_p]` (row-major), streamed as `[batch, t_1 .. t_{p-2}]` of
`n_{p-1} x n_p` tiles. Cooley-Tukey with `t = t_1 M + s`, `k = k_1 + n_1 k'`
(`M = N / n_1`):

    X[k_1 + n_1 k'] = DFT_M( w_N^(s k_1) * DFT_{n_1}(x[., s])[k_1] )[k']

so stage `i = 1 .. p-1` is a DFT along `t_i` (a GEMM `F_i @ tile` once
`step.regroup` has exchanged the stream dim holding `t_i` with the tile
rows, on chip), then a twiddle `T_i[k_i, t_(i+1) .. t_p] = w^(k_i s)`
(element-wise); stage `p` is `tile @ F_p`. The spectrum comes out in the
digit-reversed layout, where `K` (the kernel's spectrum in the same layout)
multiplies it; the inverse runs the stages backwards, each regroup undone
by the same regroup, so `y` is stored in the input's layout. A twiddle is
loaded where the stream dims it depends on are outside, repeated on chip
(`step.repeat`) over the ones inside; every constant is re-read per signal
(a signal is a channel with its own `K`, FlashFFTConv's `(B H)` rows).

Both use real-valued stand-ins for the complex matrices: the same shapes
and traffic structure; a complex GEMM has 4x the FLOPs on 2x the bytes.
`monarch_reference` computes the same thing axis by axis in numpy.

Example:

```python
from steplus.examples.workloads.fftconv import fftconv, monarch_fftconv
module = fftconv(n=32, blocks=1024)
module, consts = monarch_fftconv((32, 32, 32, 32), batch=1)   # 1M points, order 4
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp, f32

from steplus.dialects.step.builder import Graph, Stream


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


# -- the higher-order Monarch decomposition at the paper's size --------------------------------

@dataclass(frozen=True)
class Const:
    """A constant of `monarch_fftconv`: the load's name and the axes of its tensor.

    The tensor a functional run reads is 2-D: `prod(walked) * rows` x `cols`,
    i.e. the tiles of the walked stream dims (row-major) stacked; `axes` names
    the walked dims, then the tile rows, then the columns (`t<i>`: signal axis
    `i` in time, `k<i>`: in frequency)."""

    name: str
    axes: tuple[str, ...]
    sizes: tuple[int, ...]


def monarch_fftconv(factors: Sequence[int], batch: int = 1,
                    name: str | None = None) -> tuple[ModuleOp, list[Const]]:
    """The order-`p` Monarch FFT convolution of `batch` signals of `prod(factors)` points.

    See the module doc; `factors = (n_1, ..., n_p)`, `p >= 2`. Returns the
    module and its constants (for a functional run's reference)."""
    p = len(factors)
    if p < 2 or any(n < 2 for n in factors):
        raise ValueError("monarch_fftconv: at least two factors, each at least 2")
    n = {f"t{i + 1}": v for i, v in enumerate(factors)}
    n |= {f"k{i + 1}": v for i, v in enumerate(factors)}
    g = Graph(name or "monarch_" + "x".join(map(str, factors)) + f"_b{batch}")
    pos = [f"t{i + 1}" for i in range(p - 2)]  # what each stream dim after the batch holds
    rows, cols = f"t{p - 1}", f"t{p}"
    consts: list[Const] = []
    base = [1 << 32]

    def load(tag: str, deps: set[str], r: str, c: str) -> Stream:
        """A constant over the axes `deps` (and its tile's `r`, `c`) in the current layout:
        walked where a stream dim it depends on is outside, repeated on chip inside."""
        k = len(pos)
        while k and pos[k - 1] not in deps:
            k -= 1
        walked = pos[:k]
        dep = [a for a in walked if a in deps]
        tiles = math.prod(n[a] for a in dep)
        strides = [0]  # the batch: every signal re-reads it
        for j, a in enumerate(walked):
            strides.append(math.prod(n[b] for b in dep[dep.index(a) + 1:]) if a in deps else 0)
        addr = base[0]
        base[0] += -(-tiles * 4 * n[r] * n[c] // 4096) * 4096
        s = g.load((n[r], n[c]), f32, [batch, *(n[a] for a in walked)],
                   in_shape=[tiles] + [1] * k, stride=strides, base_addr=addr, name=tag)
        for a in pos[k:]:
            s = s.repeat(n[a])
        consts.append(Const(tag, (*dep, r, c), (*(n[a] for a in dep), n[r], n[c])))
        return s

    def twiddle(i: int, tag: str) -> Stream:  # depends on k_i and t_{i+1}..t_p
        return load(tag, {f"t{j}" for j in range(i + 1, p + 1)}, rows, cols)

    def regroup(x: Stream, axis: str) -> Stream:
        """Exchange the stream dim holding `axis` with the tile rows."""
        nonlocal rows
        j = pos.index(axis)
        pos[j], rows = rows, axis
        return x.regroup(len(pos) - 1 - j, 0)

    total = math.prod(factors)
    x = g.load((factors[-2], factors[-1]), f32, [batch, *factors[:-2]],
               in_shape=[batch * total // (factors[-2] * factors[-1])] + [1] * (p - 2),
               stride=[math.prod(factors[i:p - 2]) for i in range(p - 1)],
               base_addr=0, name="u")
    swaps: dict[int, int] = {}  # stage -> the stream dim its regroup exchanged
    for i in range(1, p):  # DFT along t_i (in the rows, after a regroup), twiddle
        if f"t{i}" in pos:
            swaps[i] = pos.index(f"t{i}")
            x = regroup(x, f"t{i}")
        x = load(f"F{i}", set(), f"k{i}", f"t{i}").map("matmul", x, name=f"dft{i}")
        rows = f"k{i}"
        x = x.map("mul", twiddle(i, f"T{i}"), name=f"twiddle{i}")
    x = x.map("matmul", load(f"F{p}", set(), f"t{p}", f"k{p}"), name=f"dft{p}")
    cols = f"k{p}"
    x = x.map("mul", load("K", {*pos}, rows, cols), name="kmul")
    x = x.map("matmul", load(f"F{p}i", set(), f"k{p}", f"t{p}"), name=f"idft{p}")
    cols = f"t{p}"
    for i in range(p - 1, 0, -1):  # the inverse, stage by stage
        x = x.map("mul", twiddle(i, f"T{i}i"), name=f"itwiddle{i}")
        x = load(f"F{i}i", set(), f"t{i}", f"k{i}").map("matmul", x, name=f"idft{i}")
        rows = f"t{i}"
        if i in swaps:
            x = regroup(x, pos[swaps[i]])
    x.store(base_addr=(1 << 31))
    return g.module(), consts


def monarch_reference(u: np.ndarray, tensors: dict[str, np.ndarray], factors: Sequence[int],
                      consts: Sequence[Const], batch: int = 1) -> np.ndarray:
    """What `monarch_fftconv` computes, in numpy, axis by axis (no layout): `u` and the
    result are `(batch * prod(factors) / n_p, n_p)` as the graph loads and stores them;
    `tensors[name]` is each constant as a functional run reads it (`Const`)."""
    p = len(factors)
    lab = {c.name: (c.axes, np.asarray(tensors[c.name]).reshape(c.sizes)) for c in consts}
    axes = ["b", *(f"t{i + 1}" for i in range(p))]
    x = np.asarray(u).reshape(batch, *factors)
    letters: dict[str, str] = {}

    def ch(a: str) -> str:
        return letters.setdefault(a, chr(ord("a") + len(letters)))

    def apply(name: str, old: str | None, new: str | None) -> None:
        """Contract `old` with the constant (it becomes `new`), or multiply element-wise."""
        nonlocal x
        c_axes, c = lab[name]
        out = list(axes) if new is None else [new if a == old else a for a in axes]
        spec = f"{''.join(map(ch, axes))},{''.join(map(ch, c_axes))}->{''.join(map(ch, out))}"
        x = np.einsum(spec, x, c)
        axes[:] = out

    for i in range(1, p):
        apply(f"F{i}", f"t{i}", f"k{i}")
        apply(f"T{i}", None, None)
    apply(f"F{p}", f"t{p}", f"k{p}")
    apply("K", None, None)
    apply(f"F{p}i", f"k{p}", f"t{p}")
    for i in range(p - 1, 0, -1):
        apply(f"T{i}i", None, None)
        apply(f"F{i}i", f"k{i}", f"t{i}")
    return x.reshape(-1, factors[-1])
