"""Table I at 1M points: step-metrics' per-kernel operational intensity equals the closed form."""

from __future__ import annotations

import pytest

from steplus.examples.workloads.sn40l_fft import TABLE_I, fusion_intensities


@pytest.mark.parametrize(("n", "blocks"), [(1024, 1), (32, 1024)])
def test_intensity_per_kernel_matches_closed_form(n, blocks):
    lv = fusion_intensities(n, blocks)
    b, p, c = blocks, n * n, n ** 3
    gemm, mul = 2 * c * b, p * b
    tile = 4 * p * b  # an f32 n x n tile per block
    const = 4 * p  # an n x n constant, loaded once and repeated over the blocks
    # unfused: 4 GEMMs and 3 elementwise muls alternate, each reads a stream and a
    # constant and writes a stream
    assert lv["unfused"].flops == [gemm, mul] * 3 + [gemm]
    assert lv["unfused"].offchip == [const + 2 * tile] * 7
    # conventional: GEMM + mul epilogue (two constants, one stream in, one out), last GEMM
    assert lv["conventional"].flops == [gemm + mul] * 3 + [gemm]
    assert lv["conventional"].offchip == [2 * const + 2 * tile] * 3 + [const + 2 * tile]
    # fused: u, the seven constants, y
    assert lv["fused"].flops == [4 * gemm + 3 * mul]
    assert lv["fused"].offchip == [7 * const + 2 * tile]
    total = 4 * gemm + 3 * mul
    assert lv["unfused"].intensity == pytest.approx(total / (7 * const + 14 * tile))
    assert lv["conventional"].intensity == pytest.approx(total / (7 * const + 8 * tile))
    assert lv["fused"].per_kernel() == [pytest.approx(total / (7 * const + 2 * tile))]
    if blocks == 1:  # at one block every constant is a tile: (8n + 3) / (84, 60, 36) n^2 * 4
        assert [lv[m].intensity for m in ("unfused", "conventional", "fused")] == [
            pytest.approx((8 * n + 3) / d) for d in (84, 60, 36)]


def test_table_i_is_the_seeds():
    assert TABLE_I == {"unfused": 39.5, "conventional": 102.6, "fused": 410.4}
