"""The recognized decode attention on the fabric when the request's last KV tile is
partly filled (defect found by SN40L-5).

A request with `cached` rows has `ceil((cached + 1) / 32)` KV tiles, the new row
appended at row `cached mod 32` of the last one (spec §6.2): that tile holds
`cached mod 32 + 1` valid rows, so its score tile `exp(q K^T)` has that many valid
columns of its `[group, 32]` type, and the tile-wise row sum (`accum add` into a
`[group, 32]` accumulator) adds it into the accumulator's first columns.

Two ways that went wrong in functional mode (runtime/fabric/contexts/compute.py's
accumulating add took a value with a dim of 1 for a row/column broadcast):
- group 1 (an MHA head, or a TP shard of Llama 2): a `[1, 9]` score value is no
  broadcast: numpy raised "could not be broadcast (1,32) (1,9)" (cached 40);
- cached a multiple of 32: the last tile holds the new row only, its `[group, 1]`
  score value was broadcast over the 32 columns: the row sums counted it 32 times
  (a wrong output, no error).
The declared tile shapes (the types) now decide: a dim broadcasts only where the
declared dim is 1.

Every residue class that matters against PyTorch: cached 0 (one tile, the new row
only), 1, 31 (a full last tile), 32 (a new tile with 1 row), 33, 40, 47, 63, 64.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from steplus.examples.workloads.attention_torch import GQADecodeAttention, attention_inputs  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.lowering.linalg_to_step.attention_graph import AttnShape  # noqa: E402
from steplus.runtime.fabric.contexts.compute import Kernel  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402

CACHED = [0, 1, 31, 32, 33, 40, 47, 63, 64]


def _lowered(q_heads: int, kv_heads: int, head_dim: int, cached: int, batch: int = 2):
    layer = GQADecodeAttention()
    args = attention_inputs(batch, q_heads, kv_heads, head_dim, cached, seed=cached)
    ep = torch.export.export(layer, args)
    low = lower_exported(ep)
    return layer, args, ep, low


@pytest.mark.parametrize("q_heads,kv_heads,head_dim", [(2, 2, 8), (16, 2, 16)],
                         ids=["group1", "group8"])
@pytest.mark.parametrize("cached", CACHED)
def test_a_partly_filled_last_kv_tile_runs_equal_to_pytorch(q_heads, kv_heads, head_dim,
                                                            cached):
    layer, args, ep, low = _lowered(q_heads, kv_heads, head_dim, cached)
    (part,) = low.graphs
    assert part.kind == "attention" and isinstance(part.shape, AttnShape)
    assert part.shape.group == q_heads // kv_heads
    tiles, fill = -(-(cached + 1) // 32), cached % 32
    assert part.seq_len == [tiles] * 2 * kv_heads and part.offset == [fill] * 2 * kv_heads
    out, ran, torch_ops = run_exported(ep, low, args)
    assert ran == ["attention"] and torch_ops == []
    np.testing.assert_allclose(np.asarray(out), layer(*args).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cached", [31, 32, 40])
def test_the_timing_run_of_the_same_lengths_still_runs(cached):
    """Timing mode does not look at values: the graph of `ceil((cached+1)/32)` tiles
    per request runs to completion; one more tile per request costs cycles."""
    (part,) = _lowered(2, 2, 8, cached, batch=4)[3].graphs
    (longer,) = _lowered(2, 2, 8, cached + 32, batch=4)[3].graphs
    assert 0 < part_cycles(part) < part_cycles(longer)


# -- the accumulating add's rule, on the kernel ------------------------------------------
def _rsum_kernel() -> Kernel:
    return Kernel(n_args=2, calls=[("add", [1, 0])], acc_slot=1)  # accum add: acc + x


def test_a_partly_filled_score_value_adds_into_the_first_columns():
    acc = np.arange(32.0).reshape(1, 32)
    x = np.full((1, 9), 100.0)  # 9 valid columns of a [1, 32] score tile
    got = _rsum_kernel().run([x, acc], ((1, 32), (1, 32)))
    want = acc.copy()
    want[0, :9] += 100.0
    np.testing.assert_array_equal(got, want)


def test_a_one_column_score_value_is_not_broadcast():
    acc = np.zeros((4, 32))
    x = np.arange(1.0, 5.0).reshape(4, 1)  # the new row only: 1 valid column of [4, 32]
    got = _rsum_kernel().run([x, acc], ((4, 32), (4, 32)))
    want = np.zeros((4, 32))
    want[:, 0] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(got, want)
    assert got.sum() == 10.0  # a broadcast would have counted it 32 times (320)


def test_a_declared_row_still_broadcasts():
    acc = np.ones((4, 8))
    x = np.arange(8.0).reshape(1, 8)  # a [1, 8] tile: a row, broadcast over the 4 rows
    got = _rsum_kernel().run([x, acc], ((1, 8), (4, 8)))
    np.testing.assert_array_equal(got, np.ones((4, 8)) + np.arange(8.0))
