"""RoPE's rotate_half as an on-chip tile map (column_perm.py, the `rotate_half[w]` library
family): the slice/neg/cat chain is one part mapping `rotate_half[D]` over row tiles that
hold the whole last dim; the fabric's functional mode equals torch (the chain alone, a
RoPE, and the whole Llama2 / Mistral decode layer through `run_exported`); permutations
other than rotate_half, or slices used elsewhere, stay gathers (move.py)."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.functions import get_function

torch = pytest.importorskip("torch")

from steplus.examples.workloads.sn40l_llama import (  # noqa: E402
    LLAMA2_7B, MISTRAL_7B, LlamaDecoderLayer, decode_inputs, rotate_half,
)
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import run_exported  # noqa: E402


def test_rotate_half_function_is_torchs_per_group_with_its_flops_and_shape_rule():
    f = get_function("rotate_half[4]")
    assert f is not None
    a = np.arange(24, dtype=np.float64).reshape(2, 12)  # three groups of 4 columns
    want = torch.cat([rotate_half(g) for g in torch.tensor(a).split(4, dim=-1)], -1)
    np.testing.assert_array_equal(f.numpy(a), want.numpy())
    # one negation per element of each group's second half: R * C / 2
    assert f.flops([(2, 12)]) == 12
    assert f.out_shape([(2, 12)]) == (2, 12)
    assert f.out_shape([(2, 10)]) == (2, 0)  # 10 columns are not groups of 4: no tile
    assert get_function("rotate_half[3]").out_shape([(2, 6)]) == (2, 0)  # odd width


class Rope(torch.nn.Module):
    def forward(self, x, cos, sin):
        return x * cos + rotate_half(x) * sin


def _parts(low, role):
    return [p for p in low.graphs if p.role == role]


def test_rope_lowers_rotate_half_as_one_tile_map_and_equals_torch():
    torch.manual_seed(1)
    x, cos, sin = torch.randn(2, 4, 1, 8), torch.randn(1, 8), torch.randn(1, 8)
    ep = torch.export.export(Rope(), (x, cos, sin))
    low = lower_exported(ep, dense="tile=8x4")
    (rot,) = _parts(low, "move")
    assert rot.inputs == {"arg0": "x"} and rot.outputs == ["cat"]
    assert {n.name for n in rot.covered} == {"slice_1", "slice_2", "neg", "cat"}
    ops = list(next(o for o in rot.module.walk() if isinstance(o, GraphOp)).body.block.ops)
    # rows (b, h) = 8 in one tile holding the whole head dim, then the consumer's 8x4 tiles
    (ld,) = [o for o in ops if isinstance(o, so.LinearOffChipLoadOp)]
    assert str(ld.output.type) == "!step.stream<[1], !step.tile<8x8xf32>>"
    (mp,) = [o for o in ops if isinstance(o, so.MapOp)]
    assert [a.fn.data for a in mp.body.walk() if isinstance(a, so.ApplyOp)] == ["rotate_half[8]"]
    (st,) = [o for o in ops if isinstance(o, so.LinearOffChipStoreOp)]
    assert str(st.input.type) == "!step.stream<[1, 2], !step.tile<8x4xf32>>"
    assert not [o for o in ops if isinstance(o, so.RandomOffChipLoadOp)]  # no gather
    # the element-wise consumer reads `cat` in exactly the walk the part stores
    (ew,) = _parts(low, "elementwise")
    cat_load = [o for o in ew.module.walk() if isinstance(o, so.LinearOffChipLoadOp)][2]
    assert cat_load.output.type == st.input.type
    out, ran, torch_ops = run_exported(ep, low, (x, cos, sin))
    np.testing.assert_allclose(out.numpy(), Rope()(x, cos, sin).numpy(), rtol=1e-6, atol=1e-6)
    assert ran == ["move", "elementwise"] and torch_ops == []


class Swap(torch.nn.Module):
    """cat((x2, x1)) (no sign) and a rotate_half whose slice is also read elsewhere."""

    def forward(self, x):
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return torch.cat((x2, x1), -1), torch.cat((-x2, x1), -1) + x1.sum()


def test_an_empty_tensor_is_not_a_tile_map():
    from steplus.lowering.linalg_to_step import column_perm

    ep = torch.export.export(Rope(), (torch.randn(0, 4, 1, 8), torch.randn(1, 8),
                                      torch.randn(1, 8)))
    (cat,) = [n for n in ep.graph.nodes if n.op == "call_function" and "cat" in str(n.target)]
    assert isinstance(column_perm.read(cat), str) and not column_perm.is_rotate_half(cat)
    ep = torch.export.export(Swap(), (torch.randn(3, 8),))
    cats = [n for n in ep.graph.nodes if n.op == "call_function" and "cat" in str(n.target)]
    # x1 feeds both cats and the sum: neither chain is a tile map
    assert {column_perm.read(n) for n in cats} == {
        "an input is not a slice of the last dim used only here"}


def test_other_permutations_and_shared_slices_stay_gathers():
    x = torch.randn(3, 8)
    ep = torch.export.export(Swap(), (x,))
    low = lower_exported(ep, dense="tile=3x4")
    for p in _parts(low, "move"):
        assert not any(isinstance(a, so.ApplyOp) and a.fn.data.startswith("rotate_half")
                       for a in p.module.walk())
    outs, _, _ = run_exported(ep, low, (x,))
    for got, want in zip(outs, Swap()(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cached", [31, 40])
@pytest.mark.parametrize("cfg", [LLAMA2_7B.small(), MISTRAL_7B.small()], ids=lambda c: c.name)
def test_decode_layer_with_rotate_half_on_the_fabric_equals_pytorch(cfg, cached):
    """The route's functional check: every lowered part of a TP shard's decode step (the
    recognized attention, RoPE's two rotate_half maps, norms, projections, SwiGLU) run on
    the fabric, torch running only views and casts, equals the PyTorch layer. Cached 31
    fills the last KV tile; 40 leaves it 9 of 32 rows (Llama 2's shard has 1 query per
    KV head: a [1, 9] score value, test_linalg_to_step_attention_ragged.py)."""
    torch.manual_seed(0)
    layer = LlamaDecoderLayer(cfg, tp=2)
    args = decode_inputs(layer, batch=4, cached=cached)
    ep = torch.export.export(layer, args)
    low = lower_exported(ep, strategy="interleaved", dense="tile=2x8x1024 schedule=mnk")
    rots = [p for p in low.graphs if any(isinstance(a, so.ApplyOp) and a.fn.data ==
                                         f"rotate_half[{cfg.head_dim}]"
                                         for a in p.module.walk())]
    assert [p.outputs for p in rots] == [["cat"], ["cat_1"]]
    out, ran, torch_ops = run_exported(ep, low, args)
    np.testing.assert_allclose(out.numpy(), layer(*args).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    assert set(torch_ops) <= {"aten.to.dtype", "aten.view.default", "aten.reshape.default"}
    assert "attention" in ran
