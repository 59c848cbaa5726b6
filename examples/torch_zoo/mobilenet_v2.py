"""A MobileNetV2 inverted residual block, as torchvision's mobilenetv2.py writes it.

`InvertedResidual(inp, oup, stride, expand_ratio)`: a 1x1 expansion
`Conv2dNormActivation` (conv + BatchNorm + ReLU6), a 3x3 depthwise one
(`groups=hidden`), the 1x1 linear projection + BatchNorm, and the residual
when `stride == 1 and inp == oup`. Eval mode.

Example::

    block = InvertedResidual(8, 8, stride=1, expand_ratio=4).eval()
    y = block(torch.randn(1, 8, 8, 8))      # [1, 8, 8, 8]
"""

from __future__ import annotations

import torch
from torch import nn


class Conv2dNormActivation(nn.Sequential):
    """Conv2d + BatchNorm2d + ReLU6 (torchvision's ConvBNReLU)."""

    def __init__(self, in_planes: int, out_planes: int, kernel_size: int = 3, stride: int = 1,
                 groups: int = 1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups,
                      bias=False),
            nn.BatchNorm2d(out_planes),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    def __init__(self, inp: int = 8, oup: int = 8, stride: int = 1, expand_ratio: int = 4):
        super().__init__()
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1))
        layers.extend([
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ])
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)
