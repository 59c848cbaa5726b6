"""A GRU sequence classifier, as PyTorch tutorials write it (batch-first).

`GRUClassifier`: token embedding, a single-layer `nn.GRU(batch_first=True)`,
the last time step's hidden state through `nn.Linear` to class logits.

Example::

    clf = GRUClassifier(vocab=40, embed=16, hidden=32, classes=5).eval()
    logits = clf(torch.randint(0, 40, (2, 7)))      # [2, 5]
"""

from __future__ import annotations

import torch
from torch import nn


class GRUClassifier(nn.Module):
    """`tokens [batch, seq]` (int64) -> `[batch, classes]`."""

    def __init__(self, vocab: int = 40, embed: int = 16, hidden: int = 32, classes: int = 5):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.gru = nn.GRU(embed, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        embedded = self.embedding(tokens)
        output, hidden = self.gru(embedded)
        return self.fc(output[:, -1, :])
