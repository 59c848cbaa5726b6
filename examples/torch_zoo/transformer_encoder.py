"""A Transformer encoder layer: `nn.TransformerEncoderLayer` as the PyTorch docs use it.

`EncoderLayer`: `nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
dropout=0.0, batch_first=True)` (post-norm, ReLU FFN), in eval mode, on
`[batch, seq, d_model]`.

Example::

    layer = EncoderLayer(d_model=32, nhead=4, dim_feedforward=64).eval()
    y = layer(torch.randn(2, 6, 32))      # [2, 6, 32]
"""

from __future__ import annotations

import torch
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int = 32, nhead: int = 4, dim_feedforward: int = 64):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0,
                                                batch_first=True)

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        return self.layer(src)
