"""Data movement (issue 26 item 2): permutes and transposes torch emits (batch_first, the
head split/merge), selects and slices along any dim become gather parts (`move.py`):
rows (`1 x D` tiles) when the last dim is kept, elements otherwise; on the fabric's
functional mode the module's output equals torch's (rtol 1e-5) and torch runs only views."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from steplus.dialects.step import ops as so  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402


class HeadMixer(nn.Module):
    """The multi-head split/merge of attention code: [B, S, H*D] -> [B, H, S, D] (scaled)
    -> back; then the last step (`x[:, -1]`), a feature slice and a transposed copy."""

    def __init__(self, heads=2, dim=8):
        super().__init__()
        self.heads, self.proj = heads, nn.Linear(heads * dim, heads * dim)

    def forward(self, x):
        B, S, E = x.shape
        h = self.proj(x).view(B, S, self.heads, E // self.heads).transpose(1, 2)
        h = h * 0.5
        merged = h.transpose(1, 2).reshape(B, S, E)
        return merged[:, -1], merged[..., 2:6], merged.transpose(-2, -1)


def _gather_tile(part) -> str:
    (op,) = [o for o in part.module.walk() if isinstance(o, so.RandomOffChipLoadOp)]
    return str(op.output.type.element)


def test_head_split_merge_select_slice_transpose_equal_torch():
    torch.manual_seed(0)
    m = HeadMixer().eval()
    x = torch.randn(2, 3, 16)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=2x8")
    outs, ran, torch_ops = run_exported(ep, low, (x,))
    for got, want in zip(outs, m(x)):
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert set(torch_ops) <= {"aten.view.default", "aten.reshape.default"}
    moves = {p.outputs[0]: p for p in low.graphs if p.role == "move"}
    assert set(moves) == {"transpose", "transpose_1", "select", "slice_1", "transpose_2"}
    # the head split and merge: per batch the [S, H] (then [H, S]) matrix of D = 8 element
    # rows transposed on chip, one tile each
    for name, tile in (("transpose", "3x16"), ("transpose_1", "2x24")):
        mv = moves[name].module
        assert [str(o.output.type) for o in mv.walk() if isinstance(o, so.LinearOffChipLoadOp)] \
            == [f"!step.stream<[2, 1], !step.tile<{tile}xf32>>"]
        assert [o.fn.data for o in mv.walk() if isinstance(o, so.ApplyOp)] == \
            ["block_transpose[8]"]
    # a select of a leading dim keeps whole rows: gathered as rows
    assert _gather_tile(moves["select"]) == "!step.tile<1x16xf32>"
    # a slice of the last dim moves elements
    assert _gather_tile(moves["slice_1"]) == "!step.tile<1x1xf32>"
    # a transpose of the last two dims: each batch's [S, E] matrix one tile, transposed on chip
    t = moves["transpose_2"].module
    assert [str(o.output.type) for o in t.walk() if isinstance(o, so.LinearOffChipLoadOp)] \
        == ["!step.stream<[2, 1], !step.tile<3x16xf32>>"]
    assert [o.fn.data for o in t.walk() if isinstance(o, so.ApplyOp)] == ["transpose"]
    assert all(part_cycles(p) > 0 for p in moves.values())


def test_batch_first_swap_is_a_block_transpose():
    m = nn.Sequential(nn.Linear(4, 4)).eval()

    class TimeMajor(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):  # [B, T, F] -> [T, B, F]
            return self.m(x).permute(1, 0, 2)

    x = torch.randn(2, 5, 4)
    tm = TimeMajor().eval()
    ep = torch.export.export(tm, (x,))
    low = lower_exported(ep, dense="tile=2x4")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), tm(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ran == ["projection", "move"] and torch_ops == []
    (mv,) = [p for p in low.graphs if p.role == "move"]
    # the [B, T] matrix of F-element rows transposed on chip: one [2, 5*4] tile in, [5, 2*4] out
    assert [str(o.output.type) for o in mv.module.walk()
            if isinstance(o, so.LinearOffChipLoadOp)] == \
        ["!step.stream<[1, 1], !step.tile<2x20xf32>>"]
    assert [o.fn.data for o in mv.module.walk() if isinstance(o, so.ApplyOp)] == \
        ["block_transpose[4]"]


class Concat(nn.Module):
    def forward(self, a, b):  # along rows (whole rows move) and along the last dim
        return torch.cat([a, b * 2], dim=1), torch.cat([a, b], dim=-1)


def test_cat_along_any_dim_equals_torch():
    a, b = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    m = Concat()
    ep = torch.export.export(m, (a, b))
    low = lower_exported(ep, dense="tile=2x4")
    outs, ran, torch_ops = run_exported(ep, low, (a, b))
    for got, want in zip(outs, m(a, b)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert torch_ops == [] and sorted(ran) == ["elementwise", "move", "move"]
    rows, elems = (p for p in low.graphs if p.role == "move")
    assert _gather_tile(rows) == "!step.tile<1x4xf32>"
    assert _gather_tile(elems) == "!step.tile<1x1xf32>"


class RepeatKV(nn.Module):
    """HuggingFace's `repeat_kv` (expand + reshape) outside an attention, then a residual."""

    def forward(self, k, y):
        b, h, s, d = k.shape
        k = k[:, :, None, :, :].expand(b, h, 2, s, d).reshape(b, h * 2, s, d)
        return k + y


def test_expand_is_materialized_by_a_move_part():
    """The expand's broadcast rows are gathered (a move part of rows: the last dim kept),
    the reshape is a view, the add reads the materialized tensor; the fabric equals
    torch and torch runs no expand."""
    torch.manual_seed(6)
    m = RepeatKV()
    k, y = torch.randn(1, 2, 3, 8), torch.randn(1, 4, 3, 8)
    ep = torch.export.export(m, (k, y))
    low = lower_exported(ep, dense="tile=3x8")
    out, ran, torch_ops = run_exported(ep, low, (k, y))
    np.testing.assert_allclose(out.numpy(), m(k, y).numpy(), rtol=1e-6)
    assert ran == ["move", "elementwise"] and torch_ops == ["aten.unsqueeze.default"]
    (move,) = [p for p in low.graphs if p.role == "move"]
    # k's 6 rows of 8, each gathered twice: 12 rows of the [1, 2, 2, 3, 8] expand
    assert move.lowered.result_shapes == [(12, 8)] and move.out_shapes == [(1, 2, 2, 3, 8)]
