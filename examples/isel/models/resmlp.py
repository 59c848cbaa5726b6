"""ResMLP (Touvron et al. 2021; lucidrains/res-mlp-pytorch, the implementation D2A used):
patch embedding (linear on non-overlapping patches), `depth` residual blocks of
[Affine, cross-patch linear (over the patch axis), LayerScale] and [Affine, MLP
dim -> 4 dim -> dim with GELU, LayerScale], Affine, mean over patches, linear.
Affine(x) = alpha * x + beta per channel.

dim 64, depth 4, patch 8 on 32x32 (16 patches) instead of D2A's 384 / 12 / 16 (keeps the
import under ~2 MB; patch 8 gives the cross-patch linear 16 rows). GELU is the tanh
approximation (the erf form has no numpy-free closed form in the IR body). 10 classes.

    python examples/isel/models/resmlp.py     # writes resmlp.mlir
"""

import torch
from torch import nn

from _export import main

DIM, DEPTH, PATCH, IMAGE = 64, 4, 8, 32


class Affine(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.g = nn.Parameter(torch.ones(1, 1, dim) + 0.1 * torch.randn(1, 1, dim))
        self.b = nn.Parameter(0.1 * torch.randn(1, 1, dim))

    def forward(self, x):
        return x * self.g + self.b


class Block(nn.Module):
    def __init__(self, dim, patches, scale=0.1):
        super().__init__()
        self.aff1, self.aff2 = Affine(dim), Affine(dim)
        self.cross_patch = nn.Conv1d(patches, patches, 1)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))
        self.s1 = nn.Parameter(torch.full((1, 1, dim), scale))
        self.s2 = nn.Parameter(torch.full((1, 1, dim), scale))

    def forward(self, x):
        x = x + self.s1 * self.cross_patch(self.aff1(x))
        return x + self.s2 * self.mlp(self.aff2(x))


class ResMLP(nn.Module):
    def __init__(self, dim=DIM, depth=DEPTH, patch=PATCH, image=IMAGE, classes=10):
        super().__init__()
        self.patch = patch
        n = (image // patch) ** 2
        self.embed = nn.Linear(3 * patch * patch, dim)
        self.blocks = nn.Sequential(*[Block(dim, n) for _ in range(depth)])
        self.aff = Affine(dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, img):
        b, c, h, w = img.shape
        p = self.patch
        x = img.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)
        x = self.aff(self.blocks(self.embed(x)))
        return self.fc(x.mean(dim=1))


def build():
    return ResMLP(), (torch.randn(1, 3, IMAGE, IMAGE),)


def build_full():
    """D2A's size: 384 features, 12 blocks, patch 16 on 32x32 CIFAR images (4 patches), 10 classes
    (bench only): 38 linear layers (embedding, 12 x (cross-patch + 2 MLP), classifier)."""
    return ResMLP(dim=384, depth=12, patch=16), (torch.randn(1, 3, IMAGE, IMAGE),)


HEADER = "// ResMLP, dim 64, depth 4, patch 8 on 32x32, random weights (seed 0)."

if __name__ == "__main__":
    main("resmlp", build, HEADER)
