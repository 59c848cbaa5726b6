"""The higher-order Monarch FFT convolution (issue 31 item 3): exact per-kernel Table I
numbers, values against numpy, the decomposition against np.fft, the speedup's sweep."""

from __future__ import annotations

import math

import numpy as np
import pytest

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.target.fabric import SN40L
from steplus.examples.workloads.fftconv import Const, monarch_fftconv, monarch_reference
from steplus.examples.workloads.sn40l import Run, simulate
from steplus.examples.workloads.sn40l_fft import (
    LEVELS, ORDERS, closed_form, complex_bf16_flops, fft_speedups, monarch_intensities,
)
from steplus.passes.sn40l.kernels import ensure_names
from steplus.runtime.fabric.build import build_program


def _per_kernel(f, b):
    """Each level's kernels (FLOPs, bytes), derived stage by stage: a GEMM stage along
    axis i is 2 n_i N FLOPs and reads its n_i x n_i matrix, a twiddle T_i is N FLOPs and
    reads M_i = n_i ... n_p elements, the kernel product reads N; every kernel streams the
    signal in and out (4 bytes per f32), all of it per signal."""
    p, n = len(f), math.prod(f)
    m = [math.prod(f[i:]) for i in range(p)]  # M_1 .. M_p
    gemm = [(2 * f[i] * n, f[i] ** 2) for i in range(p)]
    tw = [(n, m[i]) for i in range(p - 1)]
    kmul = (n, n)

    def k(*parts):  # one kernel of these stages: a stream in and out, each stage's constant
        return (b * sum(x for x, _ in parts), 4 * b * (2 * n + sum(c for _, c in parts)))

    fwd = [s for i in range(p - 1) for s in (gemm[i], tw[i])]
    inv = [s for i in range(p - 2, -1, -1) for s in (tw[i], gemm[i])]
    unfused = [k(s) for s in [*fwd, gemm[p - 1], kmul, gemm[p - 1], *inv]]
    conventional = [k(gemm[i], tw[i]) for i in range(p - 1)] + [k(gemm[p - 1], kmul)] + \
        [k(gemm[p - 1], tw[p - 2])] + [k(gemm[i], tw[i - 1]) for i in range(p - 2, 0, -1)] + \
        [k(gemm[0])]
    every = [*fwd, gemm[p - 1], kmul, gemm[p - 1], *inv]
    fused = [(b * sum(x for x, _ in every), 4 * b * (2 * n + sum(c for _, c in every)))]
    return {"unfused": unfused, "conventional": conventional, "fused": fused}


@pytest.mark.parametrize("order", [2, 3, 4])
def test_table_i_per_kernel_is_the_closed_form_at_1m_points(order):
    f = ORDERS[order]
    lv, want = monarch_intensities(f), _per_kernel(f, 1)
    for m in LEVELS:
        assert list(zip(lv[m].flops, lv[m].offchip)) == want[m], m
        assert (sum(lv[m].flops), sum(lv[m].offchip)) == closed_form(f)[m]
    # the numbers the guide and the bench print
    printed = {2: (97.6, 136.6, 227.6), 3: (12.8, 21.3, 63.2), 4: (3.9, 6.8, 25.6)}[order]
    assert tuple(round(lv[m].intensity, 1) for m in LEVELS) == printed
    assert len(lv["unfused"].flops) == 4 * order - 1 and len(lv["conventional"].flops) == 2 * order


def test_batch_scales_every_byte_and_flop():
    f = (4, 2, 2, 4)
    one, two = monarch_intensities(f, 1), monarch_intensities(f, 2)
    for m in LEVELS:
        assert two[m].flops == [2 * x for x in one[m].flops]
        assert two[m].offchip == [2 * x for x in one[m].offchip]
        assert list(zip(two[m].flops, two[m].offchip)) == _per_kernel(f, 2)[m]


def test_complex_bf16_flops():
    # 32^4: 16 * 128 + 6 * 7 = 2090 FLOPs per point (GEMMs 4x, element-wise 6x the real ones)
    assert complex_bf16_flops(ORDERS[4]) == (1 << 20) * 2090
    assert complex_bf16_flops((4, 4), batch=3) == 3 * 16 * (16 * 8 + 6 * 3)


def _simulated_values(f, b):
    m, consts = monarch_fftconv(f, b)
    g = next(o for o in m.walk() if isinstance(o, GraphOp))
    ensure_names(g)
    ctx = {o.results[0].name_hint: o.attributes["name"].data for o in g.body.block.ops
           if isinstance(o, so.LinearOffChipLoadOp)}
    rng = np.random.default_rng(0)  # unit-scale values: every stage's error shows
    t = {c.name: rng.standard_normal((math.prod(c.sizes[:-1]), c.sizes[-1])) for c in consts}
    t["u"] = rng.standard_normal((b * math.prod(f[:-1]), f[-1]))
    prog = build_program(m, SN40L, functional=True, tensors={ctx[k]: v for k, v in t.items()})
    prog.run()
    return np.vstack(prog.context("st0").stored), monarch_reference(t["u"], t, f, consts, b)


@pytest.mark.parametrize(("factors", "batch"), [((4, 4), 2), ((2, 3, 4), 2),
                                                ((2, 3, 4, 5), 2), ((3, 2, 2, 4), 1)])
def test_graph_computes_the_reference(factors, batch):
    """The simulated graph (regroups, repeats, stride-0 loads) equals the axis-by-axis
    numpy computation with the same constants."""
    got, want = _simulated_values(factors, batch)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def _complex_constants(f, consts: list[Const], kernel: np.ndarray) -> dict[str, np.ndarray]:
    """The true (complex) DFT matrices, twiddles and kernel spectrum in each constant's axes."""
    p, n = len(f), math.prod(f)
    size = {f"{c}{i + 1}": v for i, v in enumerate(f) for c in "tk"}
    spectrum = np.fft.fft(kernel)
    out = {}
    for c in consts:
        idx = dict(zip(c.axes, np.indices(c.sizes)))
        name = c.name.rstrip("i")
        inverse = c.name.endswith("i") and c.name != "K"
        if name.startswith("F"):
            i = int(name[1:])
            v = np.exp(-2j * np.pi * idx[f"t{i}"] * idx[f"k{i}"] / size[f"t{i}"])
            v = np.conj(v) / size[f"t{i}"] if inverse else v
        elif name.startswith("T"):
            i = int(name[1:])
            s = sum(idx[f"t{j}"] * math.prod(f[j:]) for j in range(i + 1, p + 1))
            v = np.exp(-2j * np.pi * idx[f"k{i}"] * s / math.prod(f[i - 1:]))
            v = np.conj(v) if inverse else v
        else:  # K[k_1..k_p] = spectrum[k_1 + n_1 (k_2 + n_2 (...))]
            k = sum(idx[f"k{i + 1}"] * math.prod(f[:i]) for i in range(p))
            v = spectrum[k]
        assert v.shape == c.sizes and v.size <= n * n
        out[c.name] = v.reshape(-1, c.sizes[-1])
    return out


@pytest.mark.parametrize("factors", [(4, 8), (2, 3, 4), (4, 2, 2, 4), (3, 2, 5)])
def test_the_decomposition_is_an_fft_convolution(factors):
    """With complex matrices the graph's computation (monarch_reference, in the graph's
    constant layouts) is the circular convolution, checked against np.fft."""
    rng = np.random.default_rng(3)
    n = math.prod(factors)
    u, kernel = rng.standard_normal((2, n)), rng.standard_normal(n)
    _, consts = monarch_fftconv(factors, 2)
    t = _complex_constants(factors, consts, kernel)
    got = monarch_reference(u.reshape(-1, factors[-1]), t, factors, consts, 2).reshape(2, n)
    want = np.fft.ifft(np.fft.fft(u, axis=1) * np.fft.fft(kernel), axis=1)
    np.testing.assert_allclose(got, want, atol=1e-10)


def test_simulated_traffic_is_the_closed_form():
    f, b = (4, 4, 2, 4), 2
    for mode in ("fused", "unfused"):
        r = simulate(monarch_fftconv(f, b)[0], mode)
        assert (r.metric_flops, r.metric_offchip) == closed_form(f, b)[mode]
        assert r.offchip == closed_form(f, b)[mode][1]  # the bytes the HBM model moved
        assert r.kernels == {"fused": 1, "unfused": 15}[mode]


def test_speedup_sweep_is_the_closed_form_of_the_simulated_cycles():
    """The launch costs enter in closed form, hbm_eff through the simulated config."""
    seen = []

    def fake(module, mode, cfg):
        seen.append((mode, cfg.hbm.channels))
        cyc = {"fused": 160_000, "unfused": 1_600_000}[mode] * (40 // cfg.hbm.channels)
        return Run(mode, cyc, 1 if mode == "fused" else 11, 0, 0, 0, 0, SN40L)

    h, runs = fft_speedups((4, 4, 4), 1, simulate_fn=fake)
    assert sorted(seen) == [("fused", 24), ("fused", 40), ("unfused", 24), ("unfused", 40)]
    ghz = SN40L.clock_ghz
    us = {m: c / (ghz * 1e3) for m, c in (("fused", 160_000), ("unfused", 1_600_000))}
    # default: SO launch 15 us, HO 1 us (sn40l_ranges), hbm_eff 1.0
    assert h["fusion_so"].value == pytest.approx((us["unfused"] + 11 * 15) / (us["fused"] + 15))
    assert h["fusion_ho"].value == pytest.approx((us["unfused"] + 11 * 15) / (us["fused"] + 1))
    # the joint range: 40 // 24 = 1, so hbm_eff does not move this fake; the launches do
    # (u + 11 L) / (f + L) with u / f = 10 < 11 grows with L: lowest at the 5 us end
    assert h["fusion_so"].low == pytest.approx((us["unfused"] + 11 * 5) / (us["fused"] + 5))
    assert h["fusion_ho"].high == pytest.approx((us["unfused"] + 11 * 30) / us["fused"])
    assert h["fusion_so"].dominant() == "launch_so_us"
