"""ResNet-20 for CIFAR-10 (He et al. 2016, §4.2): 3x3 conv, three stages of three
BasicBlocks (3x3 conv-BN-ReLU, 3x3 conv-BN, identity or 1x1-conv-BN projection
shortcut as in the Gluon `cifar_resnet20_v1` D2A used), global average pool, linear.

Widths 8/16/32 instead of the paper's 16/32/64 (keeps the import under ~2 MB and
every conv inside HLSCNN's output buffer); input 1x3x32x32, 10 classes.

    python examples/isel/models/resnet20.py     # writes resnet20.mlir
"""

import torch
from torch import nn

from _export import main

WIDTHS = (8, 16, 32)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet20(nn.Module):
    def __init__(self, widths=WIDTHS, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(widths[0])
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            for j in range(3):
                layers.append(BasicBlock(cin, w, 2 if (i > 0 and j == 0) else 1))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        y = self.layers(torch.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


def build():
    return ResNet20(), (torch.randn(1, 3, 32, 32),)


def build_full():
    """D2A's size: the Gluon CIFAR ResNet-20, widths 16/32/64 (bench only)."""
    return ResNet20(widths=(16, 32, 64)), (torch.randn(1, 3, 32, 32),)


HEADER = "// ResNet-20 (CIFAR), widths 8/16/32, random weights (seed 0)."

if __name__ == "__main__":
    main("resnet20", build, HEADER)
