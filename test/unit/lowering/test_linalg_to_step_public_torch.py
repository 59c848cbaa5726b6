"""The ATen forms of the public transformer and mobile-vision code (HF GPT-2/BERT/T5,
torchvision ConvNeXt/MobileNetV3) through the dense path, one form per test, against torch
(rtol 1e-5, f32) on the fabric's functional mode; forms outside them are a remark at the
user's line, never a different computation.

- `addmm(bias, x, w)` (GPT-2's `Conv1D`, the weight `[in, out]`) is a projection;
- `x.split(size, dim)` + its `getitem`s are gathers (`split.py`), any dim, a last chunk
  shorter than the others;
- `x.pow(3)` (gelu_new), `1.0 - x` (`rsub`), Hardswish / Hardsigmoid (in place too);
- a `[C, 1, 1]` parameter (ConvNeXt's layer scale) and a computed `[N, C, 1, 1]` (the SE
  block's scale) times an NCHW tensor: one value per folded row;
- a region never reads, through an op torch runs, a value it computes itself (split in two);
- the eager attention with eval-mode dropout after the softmax and GPT-2's
  `torch.where(bias[..., :S, :S], w, finfo.min)` over a sliced causal buffer; a `where`
  whose fill a score can survive (-1e4) is not read as a mask: not lowered, a remark;
- the masks the attention binds from a buffer, an input or a fill: nanoGPT's compare of a
  buffer with a number (`bias[:, :, :T, :T] == 0`, any of eq/ne/lt/le/gt/ge), DistilBERT's
  `(mask == 0).view().expand_as()` with a `torch.tensor(finfo.min)` fill and `q / sqrt(d)`,
  HF Llama's `torch.full((T, T), finfo.min).triu(1)` built in the forward; a compare of a
  computed value is run by torch.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402

VIEWS = {"aten.view.default", "aten.permute.default", "aten.contiguous.default",
         "aten.transpose.int", "aten.unsqueeze.default", "aten.reshape.default",
         "aten._assert_tensor_metadata.default"}


def _lower(module, args, tile="2x8x8"):
    torch.manual_seed(0)
    ep = torch.export.export(module.eval(), args)
    low = lower_exported(ep, dense=f"tile={tile} schedule=mnk")
    out, ran, torch_ops = run_exported(ep, low, args)
    want = module(*args)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert all(part_cycles(p) > 0 for p in low.graphs)
    return low, ran, torch_ops


class Conv1DSplit(nn.Module):
    """GPT-2's `c_attn`: addmm with an [in, out] weight, then `.split(n_embd, dim=2)`."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 24) * 0.1)
        self.bias = nn.Parameter(torch.randn(24))

    def forward(self, x):
        size_out = x.size()[:-1] + (24,)
        h = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)
        q, k, v = h.split(8, dim=2)
        return q * k + v


def test_gpt2_conv1d_addmm_and_split_are_a_projection_and_gathers():
    low, ran, torch_ops = _lower(Conv1DSplit(), (torch.randn(2, 3, 8),))
    assert ran == ["projection", "move", "move", "move", "elementwise"]
    assert set(torch_ops) <= VIEWS


class SplitRows(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.sizes = sizes

    def forward(self, x):
        a, b = x.split(self.sizes, dim=1)  # [2, 6, 8] -> [2, 4, 8], [2, 2, 8]: rows
        return torch.cat([b, a], dim=1).exp()


@pytest.mark.parametrize("sizes", [4, [4, 2]], ids=["short_last_chunk", "with_sizes"])
def test_a_split_of_another_dim(sizes):
    _low, ran, torch_ops = _lower(SplitRows(sizes), (torch.randn(2, 6, 8),))
    assert ran.count("move") == 3 and ran[-1] == "elementwise"  # two chunks, the cat
    assert set(torch_ops) <= VIEWS


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.hs, self.hsig = nn.Hardswish(inplace=True), nn.Hardsigmoid()

    def forward(self, x):
        cube = 0.5 * x * (1.0 + torch.tanh(0.79788456 * (x + 0.044715 * torch.pow(x, 3.0))))
        return self.hs(x * 2.0) + self.hsig(1.0 - x) + cube


def test_pow3_rsub_and_the_hard_activations_are_elementwise():
    # x in [-6, 6]: both sides of hardswish's clamps
    x = torch.linspace(-6, 6, 64).reshape(4, 16)
    _low, ran, torch_ops = _lower(Activations(), (x,), tile="2x16x16")
    assert "elementwise" in ran and "move" not in ran
    assert not torch_ops


class ChannelScales(nn.Module):
    """ConvNeXt's `layer_scale [C, 1, 1] * x` and the SE block's `scale [N, C, 1, 1] * x`."""

    def __init__(self):
        super().__init__()
        self.layer_scale = nn.Parameter(torch.randn(4, 1, 1))

    def forward(self, x):
        se = torch.sigmoid(nn.functional.adaptive_avg_pool2d(x, 1) * 3.0)
        return self.layer_scale * x + se * x


def test_per_channel_scales_of_nchw_tensors():
    low, ran, torch_ops = _lower(ChannelScales(), (torch.randn(1, 4, 4, 8),), tile="4x8x8")
    # the computed [1, 4, 1, 1] scale is materialized per row (rows (n, c, h) read c) by a
    # move; the parameter is bound as that column
    assert "move" in ran
    assert not [o for o in torch_ops if o not in VIEWS]


class DropoutCausal(nn.Module):
    """GPT-2's `_attn` with eval-mode dropout after the softmax."""

    def __init__(self, fill):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(8, 8, dtype=torch.bool))
                             .view(1, 1, 8, 8), persistent=False)
        self.fill = fill
        self.drop = nn.Dropout(0.1)

    def forward(self, q, k, v):
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], 2.0, dtype=w.dtype)
        s = q.size(-2)
        w = torch.where(self.bias[:, :, :s, :s], w, torch.full([], self.fill, dtype=w.dtype))
        return torch.matmul(self.drop(nn.functional.softmax(w, dim=-1)), v)


def _qkv():
    g = torch.Generator().manual_seed(3)
    return tuple(torch.randn(2, 2, 6, 4, generator=g) for _ in range(3))


def test_a_causal_where_over_a_sliced_buffer_and_dropout_are_the_dense_attention():
    low, ran, torch_ops = _lower(DropoutCausal(torch.finfo(torch.float32).min), _qkv(),
                                 tile="2x4x4")
    assert ran == ["attention"]
    assert not [o for o in torch_ops if o not in VIEWS]  # the slices are the mask's binding
    (part,) = low.graphs
    assert {n.name for n in part.covered} >= {"slice_1", "slice_2", "where", "dropout"}


def test_a_where_fill_that_a_score_survives_is_not_a_mask():
    module = DropoutCausal(-1e4)
    ep = torch.export.export(module.eval(), _qkv())
    low = lower_exported(ep, dense="tile=2x4x4 schedule=mnk")
    assert all(p.role != "attention" for p in low.graphs)
    (rest,) = [r for r in low.remarks if "outside the recognized layers" in r.message]
    assert "aten.where.self" in rest.message and "aten.matmul.default" in rest.message
    src, first = inspect.getsourcelines(DropoutCausal.forward)
    line = first + next(i for i, t in enumerate(src) if "w = torch.matmul(q, k" in t)
    assert rest.where == f"{inspect.getsourcefile(DropoutCausal)}:{line}"  # the user's line
    out, _, _ = run_exported(ep, low, _qkv())  # torch runs what is not lowered: still equal
    np.testing.assert_allclose(out.numpy(), module(*_qkv()).numpy(), rtol=1e-5, atol=1e-6)


class TorchBetween(nn.Module):
    """Two projections of one input (one region) with an op torch runs between one of them
    and their product (T5's gated FFN with an activation the dense path has not)."""

    def __init__(self):
        super().__init__()
        self.wi_0 = nn.Linear(8, 16, bias=False)
        self.wi_1 = nn.Linear(8, 16, bias=False)

    def forward(self, x):
        return torch.floor(self.wi_0(x) * 4.0) * self.wi_1(x)


def test_a_region_never_reads_what_torch_computes_from_it():
    """The product waits for torch's floor of a projection its region would compute: it is
    a region of its own, after (before the fix the fabric run failed on the missing value)."""
    low, ran, torch_ops = _lower(TorchBetween(), (torch.randn(4, 8),), tile="4x16x8")
    assert ran == ["projection", "elementwise"]
    assert torch_ops == ["aten.floor.default"]
    (rest,) = [r for r in low.remarks if "outside the recognized layers" in r.message]
    assert rest.message.endswith("(aten.floor.default)")


class MaskedFillCausal(nn.Module):
    """The `masked_fill` idiom: a strictly-upper-triangular bool buffer, sliced to the
    sequence, filled with -inf (True masks)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.triu(torch.ones(8, 8, dtype=torch.bool), 1))

    def forward(self, q, k, v):
        s = q.size(-2)
        w = torch.matmul(q, k.transpose(-1, -2)) * 0.5
        w = w.masked_fill(self.mask[:s, :s], float("-inf"))
        return torch.matmul(torch.softmax(w, dim=-1), v)


def test_a_masked_fill_over_a_sliced_buffer_is_the_dense_attention():
    low, ran, torch_ops = _lower(MaskedFillCausal(), _qkv(), tile="2x4x4")
    assert ran == ["attention"]
    assert not [o for o in torch_ops if o not in VIEWS]


class CompareCausal(nn.Module):
    """nanoGPT's `att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))`, the compare
    any of eq/ne/lt/le/gt/ge with a number, over a float buffer (2 below the diagonal, 1 on
    it, 0 above)."""

    def __init__(self, rel, c):
        super().__init__()
        levels = torch.tril(torch.ones(8, 8), -1) * 2 + torch.eye(8)
        self.register_buffer("bias", levels.view(1, 1, 8, 8))
        self.rel, self.c = rel, c

    def forward(self, q, k, v):
        t = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * 0.5
        att = att.masked_fill(getattr(torch, self.rel)(self.bias[:, :, :t, :t], self.c),
                              float("-inf"))
        return nn.functional.softmax(att, dim=-1) @ v


@pytest.mark.parametrize("rel,c", [("eq", 0), ("ne", 1), ("lt", 1), ("le", 0.5), ("gt", 1),
                                   ("ge", 2)])
def test_a_compare_of_a_buffer_is_the_masks_binding(rel, c):
    """The compare with a number is applied to the buffer's value when the attention part is
    bound (as its slices are): torch runs views only; equal to torch (each row keeps its
    diagonal, so no row is all -inf)."""
    low, ran, torch_ops = _lower(CompareCausal(rel, c), _qkv(), tile="2x4x4")
    assert ran == ["attention"]
    assert not [o for o in torch_ops if o not in VIEWS]
    (part,) = low.graphs
    assert {n.name for n in part.covered} >= {"slice_1", "slice_2", rel, "masked_fill"}


class DistilBertAttention(nn.Module):
    """DistilBERT's `q / sqrt(d)` before the product, `(mask == 0).view(bs, 1, 1, k)
    .expand_as(scores)` of the `[bs, k]` 0/1 input mask, `masked_fill` with a 0-D
    `torch.tensor(finfo.min)` (a lifted constant)."""

    def forward(self, q, k, v, mask):
        q = q / 2.0
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(2, 1, 1, 6).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        return torch.matmul(nn.functional.softmax(scores, dim=-1), v)


def test_distilbert_mask_eq_zero_and_a_tensor_fill_are_the_dense_attention():
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0  # padding: the second sequence's last two keys
    low, ran, torch_ops = _lower(DistilBertAttention(), (*_qkv(), mask), tile="2x4x4")
    assert ran == ["attention"]
    assert not [o for o in torch_ops if o not in VIEWS]
    (part,) = low.graphs
    assert {n.name for n in part.covered} >= {"div", "eq", "view", "expand_as",
                                              "lift_fresh_copy", "masked_fill"}


class LlamaPrefillMask(nn.Module):
    """HF Llama's eager prefill: the causal mask the forward builds,
    `torch.full((T, T), finfo.min).triu(1)`, viewed to 4-D, sliced and added."""

    def forward(self, q, k, v):
        t = q.size(-2)
        causal = torch.full((t, t), torch.finfo(q.dtype).min, dtype=q.dtype).triu(1)
        causal = causal[None, None, :, :].expand(q.size(0), 1, -1, -1)
        w = torch.matmul(q, k.transpose(2, 3)) * 0.5 + causal[:, :, :, : k.shape[-2]]
        return torch.matmul(nn.functional.softmax(w, dim=-1, dtype=torch.float32), v)


def test_llama_prefill_mask_built_in_the_forward_is_the_masks_binding():
    low, ran, torch_ops = _lower(LlamaPrefillMask(), _qkv(), tile="2x4x4")
    assert ran == ["attention"]
    assert not [o for o in torch_ops if o not in VIEWS]  # no full, triu run by torch
    (part,) = low.graphs
    assert {n.name for n in part.covered} >= {"full", "triu", "expand"}


class ComputedCompare(nn.Module):
    """A compare of a value the program computes is no constant: torch runs it."""

    def forward(self, q, k, v):
        w = torch.matmul(q, k.transpose(-1, -2))
        return torch.matmul(torch.softmax(w.masked_fill(w > 1.5, float("-inf")), dim=-1), v)


def test_a_compare_of_a_computed_value_is_not_folded():
    ep = torch.export.export(ComputedCompare(), _qkv())
    low = lower_exported(ep, dense="tile=2x4x4 schedule=mnk")
    out, _, torch_ops = run_exported(ep, low, _qkv())
    assert "aten.gt.Scalar" in torch_ops
    np.testing.assert_allclose(out.numpy(), ComputedCompare()(*_qkv()).numpy(), rtol=1e-5,
                               atol=1e-6)


class CompareMasks(nn.Module):
    """`(x > t).float()`, `(y == 1.0).to(x.dtype)`: compares of a float tensor with a number,
    cast to f32 (a 0/1 mask), in element-wise arithmetic."""

    def forward(self, x, y):
        keep = (x > 0.25).float()
        drop = (y == 1.0).to(x.dtype)
        return x * keep + drop - (x <= -0.5).float()


def test_a_compare_cast_to_float_is_the_librarys_compare():
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(4, 8, generator=g), torch.randint(0, 3, (4, 8), generator=g).float()
    low, ran, torch_ops = _lower(CompareMasks(), (x, y), tile="4x8x8")
    assert torch_ops == []  # no compare, no cast run by torch
    assert ran == ["elementwise"]  # one region: export's dtype asserts read no values
    applied = sorted(o.fn.data for p in low.graphs for o in p.module.walk()
                     if o.name == "step.apply")
    assert applied == ["add", "eq_scalar[1.0]", "gt_scalar[0.25]", "le_scalar[-0.5]", "mul",
                       "sub"]
