"""MobileNet-V2 for CIFAR-10 (Sandler et al. 2018; the kuangliu/pytorch-cifar layout
D2A used): 3x3 conv, seven stages of inverted residual blocks (1x1 expand conv-BN-ReLU,
3x3 depthwise conv-BN-ReLU, 1x1 project conv-BN, residual when stride 1 and the
widths agree), 1x1 conv to the last width, global average pool, linear.

Width multiplier 0.25 (channels 8, 4, 8, 8, 16, 24, 40, 80 instead of 32, 16, 24,
32, 64, 96, 160, 320) and a last width of 320 instead of 1280 keep the import under
~2 MB; expansion factors, repeats and strides are the paper's (CIFAR strides: the
first conv and stage 2 keep stride 1).  Input 1x3x32x32, 10 classes.

    python examples/isel/models/mobilenetv2.py     # writes mobilenetv2.mlir
"""

import torch
from torch import nn

from _export import main

# (expansion, out_planes, num_blocks, stride), the CIFAR version
CFG = [(1, 16, 1, 1), (6, 24, 2, 1), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
WIDTH = 0.25
LAST = 320


def _c(ch, width=WIDTH):
    return max(4, int(ch * width))


class Block(nn.Module):
    def __init__(self, cin, cout, expansion, stride):
        super().__init__()
        mid = expansion * cin
        self.stride = stride
        self.conv1 = nn.Conv2d(cin, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride == 1 and cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        if self.stride == 1:
            y = y + (x if self.shortcut is None else self.shortcut(x))
        return y


class MobileNetV2(nn.Module):
    def __init__(self, classes=10, width=WIDTH, last=LAST):
        super().__init__()
        self.conv1 = nn.Conv2d(3, _c(32, width), 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(_c(32, width))
        layers, cin = [], _c(32, width)
        for expansion, out, n, stride in CFG:
            for s in [stride] + [1] * (n - 1):
                layers.append(Block(cin, _c(out, width), expansion, s))
                cin = _c(out, width)
        self.layers = nn.Sequential(*layers)
        self.conv2 = nn.Conv2d(cin, last, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(last)
        self.linear = nn.Linear(last, classes)

    def forward(self, x):
        y = self.layers(torch.relu(self.bn1(self.conv1(x))))
        y = torch.relu(self.bn2(self.conv2(y)))
        return self.linear(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


def build():
    return MobileNetV2(), (torch.randn(1, 3, 32, 32),)


def build_full():
    """D2A's size: kuangliu's CIFAR MobileNet-V2 at width 1.0, last width 1280 (bench only)."""
    return MobileNetV2(width=1.0, last=1280), (torch.randn(1, 3, 32, 32),)


HEADER = "// MobileNet-V2 (CIFAR), width 0.25, last width 320, random weights (seed 0)."

if __name__ == "__main__":
    main("mobilenetv2", build, HEADER)
