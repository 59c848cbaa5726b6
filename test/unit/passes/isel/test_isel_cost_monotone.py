"""The extraction cost of a slice is strictly monotone in the sliced tensor's cost.

egglog's extractor (Bellman-Ford over e-classes, `extract.rs`) keeps, for each e-class, a node whose
cost equals the class's best and whose children were settled before it; it assumes a node's cost
drops whenever a child's does.  A slice (`rows`/`bsel`) pays its share of the sliced tensor,
`child / share`: taken with a floor, a cheaper child could leave the slice's cost as it was, so a
class had no such node and egglog panicked (`extract.rs:546`; HF Whisper's encoder had 0 calls, now
25: test_torch_zoo_isel.py)."""

from __future__ import annotations

from fractions import Fraction

from egglog import i64

from steplus.passes.isel.fused import rows
from steplus.passes.isel.terms import HOST_COST, Sh, Ten, _primary, bsel, reshape


def test_a_row_block_pays_its_exact_share_of_the_tensor():
    # rows 2..3 of an [8, 4] tensor: one of 8 / 2 = 4 blocks; `rows` itself costs 1 (a layout op)
    block = rows(reshape(Ten.leaf(0), Sh.s2(8, 4)), i64(2), i64(2), i64(4))
    assert _primary(block, "rows", [3 * HOST_COST + 1, 0, 0, 0]) == 1 + Fraction(3 * HOST_COST + 1, 4)
    # a tensor one cheaper makes the block cheaper (with `// 4` both were 1 + 750)
    assert _primary(block, "rows", [3 * HOST_COST, 0, 0, 0]) < _primary(block, "rows", [3 * HOST_COST + 1, 0, 0, 0])


def test_one_batch_pays_its_exact_share_of_the_batched_tensor():
    one = bsel(Ten.leaf(0), i64(1), i64(3), i64(4), i64(4))  # batch 1 of 3
    costs = [_primary(one, "bsel", [c, 0, 0, 0, 0]) for c in (2 * HOST_COST, 2 * HOST_COST + 1, 2 * HOST_COST + 2)]
    assert costs == [1 + Fraction(2000, 3), 1 + Fraction(2001, 3), 1 + Fraction(2002, 3)]
    assert costs[0] < costs[1] < costs[2]
