"""2-D pooling (issue 26 item 3): `nn.MaxPool2d` / `nn.AvgPool2d` become a window gather
(compile-time addresses; padding reads -inf for max, 0 for average) and a row reduction
(`pool.py`), `nn.AdaptiveAvgPool2d(1)` the reduction alone; on the fabric's functional
mode the outputs equal torch's (rtol 1e-5, f32) and every part simulates. A `ceil_mode`
that adds partial windows is a remark and runs in torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from steplus.dialects.step import ops as so  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402


class PoolNet(nn.Module):
    """torchvision's ResNet stem pool (3x3, stride 2, padding 1), an average pool and the
    classifier's global average pool; the max pool of the negated image as well (every
    window maximum negative: a padding that read 0 would show)."""

    def __init__(self):
        super().__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.avgpool = nn.AvgPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))

    def forward(self, x):
        return self.gap(self.avgpool(self.maxpool(x))), self.maxpool(-(x * x) - 1)


def test_pools_on_the_fabric_equal_torch():
    m = PoolNet().eval()
    x = torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(3))
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=4x4")
    outs, ran, torch_ops = run_exported(ep, low, (x,))
    for got, want in zip(outs, m(x)):
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert torch_ops == []
    assert ran.count("pool_gather") == 3 and ran.count("pool") == 4  # the global pool: direct
    assert all(part_cycles(p) > 0 for p in low.graphs)
    gather = next(p for p in low.graphs if p.role == "pool_gather")
    rows = next(o for o in gather.module.walk() if isinstance(o, so.RandomOffChipLoadOp))
    assert str(rows.output.type) == "!step.stream<[1152], !step.tile<1x1xf32>>"  # 128 x 9
    fns = [a.fn.data for p in low.graphs if p.role == "pool"
           for a in p.module.walk() if isinstance(a, so.ApplyOp)]
    assert fns.count("row_max") == 2 and fns.count("div_scalar[4.0]") == 2  # 2x2, 2x2 image


def test_partial_windows_stay_in_torch_with_a_remark():
    m = nn.MaxPool2d(2, ceil_mode=True)
    x = torch.randn(1, 2, 5, 5)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=2x4")
    assert [r.message for r in low.remarks if r.message.startswith("pooling")] == [
        "pooling not lowered: ceil_mode changes the output size (partial windows)"]
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_array_equal(out.numpy(), m(x).numpy())
    assert ran == [] and torch_ops == ["aten.max_pool2d.default"]
