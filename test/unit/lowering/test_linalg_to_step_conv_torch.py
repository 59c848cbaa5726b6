"""2-D convolutions of real PyTorch modules (issue 26 item 3): `nn.Conv2d` (strided,
padded, dilated, grouped/depthwise, 1x1) lowers to an im2col gather part (compile-time
address generation streamed into a `random_offchip_load`) and a matmul part
(`conv.py`); run on the fabric's functional mode (`run_exported`) the module's output
equals torch's (rtol 1e-5, f32), with cycles per part. The im2col addresses equal
`torch.nn.functional.unfold`'s column matrix; a batch of images is gathered back to
NCHW. An even kernel's padding='same' is not lowered: the conv runs in torch, never a
different computation."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from steplus.dialects.step import ops as so  # noqa: E402
from steplus.lowering.linalg_to_step import conv  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402


class ConvNet(nn.Module):
    """A torchvision-style stem: strided padded 3x3 with bias, BatchNorm, ReLU, then a
    depthwise 3x3 (groups = channels), a 1x1 pointwise conv, and a dilated grouped conv."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.pw = nn.Conv2d(8, 4, 1, bias=False)
        self.dil = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2)

    def forward(self, x):
        y = self.relu(self.bn(self.stem(x)))
        return self.dil(self.pw(self.dw(y)))


@pytest.fixture(scope="module")
def convnet():
    torch.manual_seed(0)
    m = ConvNet().eval()
    with torch.no_grad():
        m.bn.running_mean.uniform_(-0.5, 0.5)
        m.bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    return m, x, torch.export.export(m, (x,))


def test_convnet_on_the_fabric_equals_torch(convnet):
    m, x, ep = convnet
    low = lower_exported(ep, dense="tile=4x16x8")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert torch_ops == []
    # stem (padded: a gather), BN + ReLU, depthwise 3x3 (a tile-level depthwise_same[3] per
    # image plane: no gather), 1x1 (direct: no gather), dilated (a gather)
    assert ran == ["im2col", "conv", "elementwise", "dwconv", "conv", "im2col", "conv"]
    assert all(part_cycles(p) > 0 for p in low.graphs)
    stem_cols, stem = low.graphs[0], low.graphs[1]
    assert stem.inputs == {"arg0": "p_stem_weight", "arg1": "conv2d:cols",
                           "arg2": "p_stem_bias"}
    # the gather: 27 patch elements x 16 output pixels, one address each
    ops = list(next(iter(stem_cols.module.body.block.ops)).body.block.ops)
    assert [type(o) for o in ops] == [so.MetadataGenOp, so.RandomOffChipLoadOp,
                                      so.LinearOffChipStoreOp]
    assert str(ops[1].output.type) == "!step.stream<[432], !step.tile<1x1xf32>>"
    dw = next(p for p in low.graphs if p.outputs == ["conv2d_1"])
    fns = [a.fn.data for a in dw.module.walk() if isinstance(a, so.ApplyOp)]
    assert fns == ["depthwise_same[3]"]  # no bias; each 4x4 plane with its channel's 1x9 kernel
    loads = [str(o.output.type) for o in dw.module.walk()
             if isinstance(o, so.LinearOffChipLoadOp)]
    assert loads == ["!step.stream<[1, 8, 1], !step.tile<4x4xf32>>",
                     "!step.stream<[1, 8, 1], !step.tile<1x9xf32>>"]


@pytest.mark.parametrize("geometry", [
    dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(3, 2), stride=(1, 2)),
    dict(kernel_size=3, padding=2, dilation=2, groups=2), dict(kernel_size=1, stride=2)])
def test_im2col_addresses_equal_unfold(geometry):
    m = nn.Conv2d(4, 4, **geometry)
    x = torch.randn(1, 4, 7, 6)
    ep = torch.export.export(m, (x,))
    (node,) = [n for n in ep.graph.nodes if conv.is_conv(n)]
    c = conv.read(node)
    assert not isinstance(c, str)
    padded = np.append(x.numpy().ravel(), 0.0)
    got = padded[c.addresses()].reshape(c.groups * c.Kg, c.P)
    g = geometry.get("groups", 1)
    ref = torch.nn.functional.unfold(x, m.kernel_size, m.dilation, m.padding, m.stride)[0]
    # unfold's rows are (c, i, j) over all channels; groups take their channel block
    np.testing.assert_array_equal(got, ref.numpy().reshape(g * c.Kg, c.P))


def test_a_batch_of_images_is_gathered_back_to_nchw():
    """Batch 2: the columns span both images, the matmul gives [O, N, OH*OW] (CNHW) and a
    move part gathers its rows into NCHW."""
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU()).eval()
    x = torch.randn(2, 3, 4, 4)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=4x4")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert torch_ops == [] and ran == ["im2col", "conv", "move", "elementwise"]
    mv = low.graphs[2]
    addrs = next(o for o in mv.module.walk() if isinstance(o, so.MetadataGenOp))
    assert list(addrs.values.get_values()) == [0, 2, 4, 6, 1, 3, 5, 7]  # row (n, o) <- (o, n)


@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel:UserWarning")
@pytest.mark.parametrize("padding,kernel,lowered", [("same", 3, True), ("valid", 3, True),
                                                    ("same", 2, False)])
def test_string_paddings(padding, kernel, lowered):
    """'same' is half of d*(k-1) on each side and 'valid' none; an even kernel's 'same'
    pads one side more: not lowered, the conv runs in torch."""
    m = nn.Conv2d(3, 4, kernel, padding=padding).eval()
    x = torch.randn(1, 3, 4, 4)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=4x4")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    if lowered:
        assert ran == ["im2col", "conv"] and torch_ops == []
    else:
        assert [r.message for r in low.remarks if r.message.startswith("convolution")] == [
            "convolution not lowered: padding='same' with an even kernel pads one side more "
            "(not lowered)"]
        assert ran == [] and torch_ops == ["aten.conv2d.padding"]


def test_an_argument_form_not_foreseen_is_a_remark_not_a_traceback(monkeypatch):
    """A reader that meets a form it did not foresee (here: made to raise) gives a
    remark naming the op; the lowering goes on and the conv runs in torch."""
    m = nn.Sequential(nn.Conv2d(2, 2, 3), nn.ReLU()).eval()
    x = torch.randn(1, 2, 4, 4)
    ep = torch.export.export(m, (x,))

    def unforeseen(n):
        raise TypeError("an argument of a type the reader does not expect")

    monkeypatch.setattr(conv, "read", unforeseen)
    low = lower_exported(ep, dense="tile=2x4")
    assert [r.message for r in low.remarks if r.message.startswith("convolution")] == [
        "convolution not lowered: an argument form not foreseen (TypeError)"]
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert torch_ops == ["aten.conv2d.default"] and ran == ["elementwise"]
