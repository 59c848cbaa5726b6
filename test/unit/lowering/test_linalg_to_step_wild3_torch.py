"""The forms TORCH-WILD-3's zoo models brought, one per test, against torch on the fabric's
functional mode (rtol 1e-5, f32), every part simulated:

- `nn.Conv1d` (Whisper's stem): the conv2d of height 1 (strided, padded, a batch; depthwise
  with `padding="same"`; a 1x1 read directly);
- Qwen2-MoE's router without renormalization: `row_softmax_topk_raw[k]` equals torch's
  `topk(softmax(x))`;
- an additive attention mask built by `torch.log(triu(tril(full(1)), -w))` (transformers
  4.34's Mistral sliding window) and one gathered from a table by an index buffer (Swin's
  relative position bias) are bound with the attention: torch runs none of their ops;
- a column `[.., 1]` a projection computes (Qwen2-MoE's shared-expert gate) times a tensor:
  the column is another region's result, read from memory.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from steplus.dialects.step.functions import get_function  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402

VIEWS = {"aten.view.default", "aten.transpose.int", "aten.unsqueeze.default",
         "aten.reshape.default", "aten.contiguous.default", "aten.permute.default",
         "aten.expand.default", "aten.to.dtype"}


def _run(module, args, tile="4x8x8"):
    ep = torch.export.export(module.eval(), args)
    low = lower_exported(ep, dense=f"tile={tile} schedule=mnk")
    out, ran, torch_ops = run_exported(ep, low, args)
    np.testing.assert_allclose(out.detach().numpy(), module(*args).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert all(part_cycles(p) > 0 for p in low.graphs)
    return low, ran, torch_ops


@pytest.mark.parametrize("conv,batch,parts", [
    (lambda: nn.Conv1d(4, 8, 3, stride=2, padding=1), 2, ["im2col", "conv", "move"]),
    (lambda: nn.Conv1d(4, 4, 3, padding="same", groups=4, bias=False), 1, ["im2col", "conv"]),
    (lambda: nn.Conv1d(4, 8, 1), 1, ["conv"]),
])
def test_conv1d_is_a_conv2d_of_height_one(conv, batch, parts):
    torch.manual_seed(0)
    net = nn.Sequential(conv(), nn.GELU())
    low, ran, torch_ops = _run(net, (torch.randn(batch, 4, 16),))
    assert ran == [*parts, "elementwise"]
    assert torch_ops == []
    assert not low.remarks


def test_the_softmax_topk_without_renormalization_is_torchs():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 8, generator=g, dtype=torch.float64)
    f = get_function("row_softmax_topk_raw[2]")
    assert f is not None and f.out_shape([(6, 8)]) == (6, 2)
    assert f.flops([(6, 8)]) == 6 * 9 * 8
    want = torch.topk(torch.softmax(logits, dim=-1), 2, dim=-1).values
    np.testing.assert_allclose(f.numpy(logits.numpy()), want.numpy(), rtol=1e-12)


class SlidingWindowAttention(nn.Module):
    """Eager attention with transformers 4.34's Mistral mask (window 2 over 6 tokens)."""

    def forward(self, q, k, v):
        T = q.shape[2]
        mask = torch.tril(torch.full((T, T), fill_value=1), diagonal=0)
        mask = torch.log(torch.triu(mask, diagonal=-2)).to(q.dtype)
        mask = mask[None, None, :, :].expand(q.shape[0], 1, T, T)
        w = torch.matmul(q, k.transpose(2, 3)) * 8 ** -0.5 + mask
        return torch.matmul(torch.softmax(w, dim=-1, dtype=torch.float32), v)


class RelativeBiasAttention(nn.Module):
    """Swin's window attention scores plus a bias table gathered by an index buffer."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(9, 2))
        self.register_buffer("index", torch.randint(0, 9, (4, 4)))

    def forward(self, q, k, v):
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(8)
        bias = self.table[self.index.view(-1)].view(4, 4, -1).permute(2, 0, 1).contiguous()
        return torch.matmul(torch.softmax(s + bias.unsqueeze(0), dim=-1), v)


@pytest.mark.parametrize("make,shape", [(SlidingWindowAttention, (2, 2, 6, 8)),
                                        (RelativeBiasAttention, (3, 2, 4, 8))])
def test_a_mask_built_in_the_forward_is_bound_with_the_attention(make, shape):
    torch.manual_seed(0)
    q, k, v = (torch.randn(*shape) for _ in range(3))
    low, ran, torch_ops = _run(make(), (q, k, v), tile="2x8x8")
    assert ran == ["attention"]
    assert set(torch_ops) <= VIEWS, torch_ops  # no full/tril/triu/log/index/permute of it


class GatedShared(nn.Module):
    """Qwen2-MoE's shared expert gate: sigmoid(Linear(D, 1)(x)) * expert(x)."""

    def __init__(self):
        super().__init__()
        self.up, self.gate = nn.Linear(8, 8, bias=False), nn.Linear(8, 1, bias=False)

    def forward(self, x):
        return torch.sigmoid(self.gate(x)) * torch.relu(self.up(x)) + x


def test_a_computed_column_is_read_from_memory():
    torch.manual_seed(0)
    low, ran, torch_ops = _run(GatedShared(), (torch.randn(4, 8),))
    assert torch_ops == []
    assert ran == ["projection", "elementwise"]  # the gate's column: stored, read back


@pytest.mark.parametrize("k,batch,bias", [(7, 1, True), (3, 2, False), (5, 2, True)])
def test_a_depthwise_conv_is_one_tile_level_part(k, batch, bias):
    """ConvNeXt's depthwise 7x7 (MobileNet's 3x3): `depthwise_same[k]` on each [H, W] plane
    with its channel's kernel, no im2col gather."""
    torch.manual_seed(k)
    conv = nn.Conv2d(4, 4, k, padding=k // 2, groups=4, bias=bias)
    low, ran, torch_ops = _run(nn.Sequential(conv), (torch.randn(batch, 4, 6, 8),))
    assert ran == ["dwconv"] and torch_ops == []
    (part,) = low.graphs
    fns = [o.fn.data for o in part.module.walk() if o.name == "step.apply"]
    assert fns == [f"depthwise_same[{k}]", *(["add"] if bias else [])]


def test_the_depthwise_function_is_torchs_conv2d():
    g = torch.Generator().manual_seed(5)
    x, w = torch.randn(6, 8, generator=g), torch.randn(1, 1, 5, 5, generator=g)
    f = get_function("depthwise_same[5]")
    assert f is not None and f.out_shape([(6, 8), (1, 25)]) == (6, 8)
    assert f.flops([(6, 8), (1, 25)]) == 2 * 25 * 48
    assert f.onchip_bytes([(6, 8), (1, 25)], 4) == 10 * 12 * 4  # the padded plane
    want = torch.nn.functional.conv2d(x[None, None].double(), w.double(), padding=2)[0, 0]
    np.testing.assert_allclose(f.numpy(x.numpy(), w.reshape(1, 25).numpy()), want.numpy(),
                               rtol=1e-6, atol=1e-6)
    even = get_function("depthwise_same[4]")
    assert even is not None
    with pytest.raises(ValueError):  # an even kernel has no "same" padding of k // 2 each side
        even.out_shape([(6, 8), (1, 16)])


class ChannelsLast(nn.Module):
    """torchvision ConvNeXt's `Permute([0, 2, 3, 1])` ... `Permute([0, 3, 1, 2])` around a
    channels-last op, and a swap of the two leading dims (a `[2, 4]` matrix of 15-element
    blocks transposed)."""

    def forward(self, x):
        y = x.permute(0, 2, 3, 1) * 2.0
        return y.permute(0, 3, 1, 2) + 1.0, x.permute(1, 0, 2, 3) - 1.0


def test_a_batched_transpose_is_a_tile_map_not_a_gather():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, 5)
    ep = torch.export.export(ChannelsLast().eval(), (x,))
    low = lower_exported(ep, dense="tile=4x8x8 schedule=mnk")
    outs, ran, torch_ops = run_exported(ep, low, (x,))
    for got, want in zip(outs, ChannelsLast()(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    moves = [p for p in low.graphs if p.role == "move"]
    fns = [sorted({o.fn.data for o in p.module.walk() if o.name == "step.apply"})
           for p in moves]
    # NCHW -> NHWC: each image's [C, H*W] transposed; back: its [H*W, C]; the leading swap
    assert sorted(map(tuple, fns)) == [("block_transpose[15]",), ("transpose",),
                                       ("transpose",)]
    assert all(part_cycles(p) > 0 for p in low.graphs)
