"""Layers the Allspark example models share, as timm keeps them in `timm.layers`.

`Mlp` is the transformer block's feed-forward network (timm's `Mlp` with GELU and no
dropout): fc1 -> GELU -> fc2, the two GEMMs the PIM frontend reads as the block's FFN.
"""

from __future__ import annotations

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))
