"""The MoE layer (reference spec §8.2) in functional simulation equals a numpy
MoE with SwiGLU experts: out[t] = sum_k w[t,k] * Wd_e(silu(x_t Wg_e) * (x_t Wu_e)),
e = routing[t,k], for static and dynamic tiling (issue: the simulator's
functional mode on "a small MoE layer").

Memory is the address-seeded integer model of `memory_model.py`; the numpy side
assembles the same tensors from it at the graph's addresses (workloads.moe:
tokens at 0, routing weights at 2^31, weights at 2^32 as [up | gate | down],
each kind's experts contiguous)."""

from __future__ import annotations


import numpy as np
import pytest
from xdsl.context import Context

from memory_model import tile_at, written

from steplus.examples.workloads import graphs as workloads

TINY = workloads.MoEModel("tiny", experts=4, top_k=2, hidden=32, inter=64)
ROUTING = np.array([[0, 1], [1, 2], [0, 2], [1, 0], [2, 1], [0, 1], [1, 2], [2, 0], [3, 0]])
BF16 = 2


def _silu(x):
    return x / (1 + np.exp(-x))


def reference(tile_f: int) -> np.ndarray:
    E, D, F = TINY.experts, TINY.hidden, TINY.inter
    B, K = ROUTING.shape
    x = np.vstack([tile_at(t * D * BF16, 1, D) for t in range(B)])
    w = np.array([[tile_at((1 << 31) + (t * K + k) * BF16, 1, 1)[0, 0] for k in range(K)]
                  for t in range(B)])
    matrix, tile = D * F * BF16, D * tile_f * BF16

    def weights(which: int, e: int) -> np.ndarray:
        base = (1 << 32) + (which * E + e) * matrix
        shape = (D, tile_f) if which < 2 else (tile_f, D)
        tiles = [tile_at(base + j * tile, *shape) for j in range(F // tile_f)]
        return np.hstack(tiles) if which < 2 else np.vstack(tiles)

    out = np.zeros((B, D))
    for t in range(B):
        for k in range(K):
            e = int(ROUTING[t, k])
            h = _silu(x[t] @ weights(1, e)) * (x[t] @ weights(0, e))
            out[t] += w[t, k] * (h @ weights(2, e))
    return out


@pytest.mark.parametrize("tile_n", [2, 4, None], ids=["tn2", "tn4", "dynamic"])
def test_the_simulated_moe_layer_computes_the_numpy_moe(tile_n, tmp_path):
    from steplus.passes.step.specialize import StepSpecializePass

    trace = tmp_path / "routing.npz"
    np.savez(trace, data=ROUTING)
    module = workloads.moe(TINY, tile_n, 16)
    StepSpecializePass(routing=str(trace), rewrite=True).apply(Context(), module)
    by_addr, rows = written(module)
    assert not by_addr and len(rows) == len(ROUTING)  # one stored row per token
    np.testing.assert_allclose(np.vstack(rows), reference(16), rtol=1e-9, atol=1e-9)
