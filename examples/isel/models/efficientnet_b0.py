"""EfficientNet-B0 (Tan & Le 2019, Table 1): 3x3 stem conv, seven stages of MBConv blocks
(1x1 expand conv-BN-swish, kxk depthwise conv-BN-swish, squeeze-and-excitation with
ratio 0.25 of the block input width, 1x1 project conv-BN, identity skip when stride 1
and widths agree), 1x1 head conv, global average pool, linear.  swish(x) = x*sigmoid(x).

Width multiplier 0.2 (stem 6 channels, stage widths 4, 4, 8, 16, 22, 38, 64 instead of
16, 24, 40, 80, 112, 192, 320; head 256 instead of 1280) and 32x32 input with the
ImageNet strides keep the import under ~2 MB; expansion factors, kernel sizes, repeats
and strides are the B0 table.  No dropout (inference).  10 classes.

    python examples/isel/models/efficientnet_b0.py     # writes efficientnet_b0.mlir
"""

import torch
from torch import nn

from _export import main

# (expansion, kernel, stride, out, repeats) of EfficientNet-B0
CFG = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
       (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]
WIDTH = 0.2
HEAD = 256


def _c(ch, width=WIDTH):
    return max(4, int(ch * width))


class MBConv(nn.Module):
    def __init__(self, cin, cout, expansion, k, stride):
        super().__init__()
        mid = cin * expansion
        self.expand = None
        if expansion != 1:
            self.expand = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False),
                                nn.BatchNorm2d(mid), nn.SiLU())
        sq = max(1, int(cin * 0.25))
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, sq, 1), nn.SiLU(), nn.Conv2d(sq, mid, 1),
                                nn.Sigmoid())
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = stride == 1 and cin == cout

    def forward(self, x):
        y = x if self.expand is None else self.expand(x)
        y = self.dw(y)
        y = self.project(y * self.se(y))
        return x + y if self.skip else y


class EfficientNetB0(nn.Module):
    def __init__(self, classes=10, width=WIDTH, head=HEAD):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, _c(32, width), 3, 2, 1, bias=False), nn.BatchNorm2d(_c(32, width)),
                                  nn.SiLU())
        blocks, cin = [], _c(32, width)
        for e, k, s, out, n in CFG:
            for stride in [s] + [1] * (n - 1):
                blocks.append(MBConv(cin, _c(out, width), e, k, stride))
                cin = _c(out, width)
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Sequential(nn.Conv2d(cin, head, 1, bias=False), nn.BatchNorm2d(head), nn.SiLU())
        self.fc = nn.Linear(head, classes)

    def forward(self, x):
        y = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


def build():
    return EfficientNetB0(), (torch.randn(1, 3, 32, 32),)


def build_full():
    """D2A's size: B0 at width 1.0, head 1280, 224x224 ImageNet input, 1000 classes (bench only)."""
    return EfficientNetB0(classes=1000, width=1.0, head=1280), (torch.randn(1, 3, 224, 224),)


HEADER = "// EfficientNet-B0, width 0.2, head 256, 32x32 input, random weights (seed 0)."

if __name__ == "__main__":
    main("efficientnet_b0", build, HEADER)
