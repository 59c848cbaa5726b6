"""The decoder-layer and FFT-convolution graphs: numpy references, fused == kernelized values."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.examples.workloads.decoder import (
    LLAMA2_7B, MISTRAL_7B, TINY, decoder_layer, layer_weight_bytes, shard,
)
from steplus.examples.workloads.fftconv import fftconv
from steplus.examples.workloads.sn40l import prepare
from steplus.runtime.fabric.build import build_program
from steplus.passes.sn40l.kernels import ensure_names
from steplus.dialects.target.fabric import SN40L
from steplus.runtime.fabric.kernel_run import run_kernels

D, HQ, HD, F, T, S, KT, TF = 64, 4, 16, 96, 4, 32, 16, 32


def _tiny():
    return decoder_layer(TINY, T, S, tp=1, kv_tile=KT, ffn_tile=TF)


def _fused_run(module):
    g = next(o for o in module.walk() if isinstance(o, GraphOp))
    ensure_names(g)
    names = {o.attributes["name"].data: o.results[0].name_hint for o in g.body.block.ops
             if isinstance(o, so.LinearOffChipLoadOp)}
    prog = build_program(module, SN40L, functional=True)
    prog.run()
    tensors = {names[k]: v for k, v in prog.tensors.items() if k in names}
    return prog, tensors


def _reference(t):
    def norm(x, g):
        return x / (x * x).sum(axis=1, keepdims=True) * g

    def rope(q, tag):
        return q * t[f"{tag}_cos"] + (q @ t[f"{tag}_R"]) * t[f"{tag}_sin"]

    x = t["x"]
    xn = norm(x, t["norm1_g"])
    attn = 0
    for h in range(HQ):
        cols = slice(h * HD, (h + 1) * HD)
        q = rope(xn @ t["q_w"][:, cols], "q")
        pv, rs = 0, 0
        for s in range(S // KT):
            k = t["k_cache"][h * KT:(h + 1) * KT, s * HD:(s + 1) * HD]
            v = t["v_cache"][h * KT:(h + 1) * KT, s * HD:(s + 1) * HD]
            e = np.exp(q @ k.T)
            pv, rs = pv + e @ v, rs + e
        attn = attn + (pv / rs.sum(axis=1, keepdims=True)) @ t["o_w"][:, h * D:(h + 1) * D]
    h1 = attn + x
    hn = norm(h1, t["norm2_g"])
    down = 0
    for j in range(F // TF):
        gt = hn @ t["gate_w"][:, j * TF:(j + 1) * TF]
        up = hn @ t["up_w"][:, j * TF:(j + 1) * TF]
        down = down + (up * gt / (1 + np.exp(-gt))) @ t["down_w"][j * TF:(j + 1) * TF]
    return down + h1


def test_tiny_decoder_layer_matches_numpy():
    prog, t = _fused_run(_tiny())
    out = [c for c in prog.contexts if c.name == "st2"][0]  # k, v cache stores, then the output
    np.testing.assert_allclose(np.vstack(out.stored), _reference(t), rtol=1e-9)


@pytest.mark.parametrize("mode", ["unfused", "conventional", "fused"])
def test_kernelized_decoder_layer_computes_the_fused_values(mode):
    prog, _ = _fused_run(_tiny())
    want = {c.name: np.vstack(c.stored) for c in prog.contexts if c.name.startswith("st")}
    ks = prepare(_tiny(), mode)
    res = run_kernels(ks, SN40L, functional=True, tensors=dict(prog.tensors))
    assert set(want) <= set(res.stored)
    for name, v in want.items():
        np.testing.assert_allclose(np.vstack(res.stored[name]), v, rtol=1e-12)


def test_fftconv_matches_numpy_and_its_kernels():
    m = fftconv(n=8, blocks=3)
    g = next(o for o in m.walk() if isinstance(o, GraphOp))
    ensure_names(g)
    names = {o.attributes["name"].data: o.results[0].name_hint for o in g.body.block.ops
             if isinstance(o, so.LinearOffChipLoadOp)}
    prog = build_program(m, SN40L, functional=True)
    prog.run()
    t = {names[k]: v for k, v in prog.tensors.items() if k in names}
    want = np.vstack(prog.context("st0").stored)
    ref = [(((t["F1i"] @ ((((t["F1"] @ t["u"][:, 8 * b:8 * b + 8]) * t["T"]) @ t["F2"])
                          * t["K"])) * t["Ti"]) @ t["F2i"]) for b in range(3)]
    np.testing.assert_allclose(want, np.vstack(ref), rtol=1e-9)
    res = run_kernels(prepare(fftconv(n=8, blocks=3), "unfused"), SN40L, functional=True,
                      tensors=dict(prog.tensors))
    np.testing.assert_allclose(np.vstack(res.stored["st0"]), want, rtol=1e-12)


def test_shards_and_weight_bytes():
    assert shard(LLAMA2_7B, 8) == (4, 4, 1376)
    assert shard(MISTRAL_7B, 8) == (4, 1, 1792)
    # Llama2-7B: 6.74e9 parameters (the published count)
    assert abs(LLAMA2_7B.params() - 6.74e9) < 0.01e9
    # one socket's layer weights: (4096*128*(4+4+4) + 128*4096*4 + 3*4096*1376 + 2*4096) * 2 B
    assert layer_weight_bytes(LLAMA2_7B) == 2 * (4096 * 128 * 12 + 128 * 4096 * 4
                                                 + 3 * 4096 * 1376 + 2 * 4096)
