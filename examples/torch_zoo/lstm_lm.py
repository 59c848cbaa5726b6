"""An nn.LSTM language model, as PyTorch's word_language_model example writes it.

`RNNModel`: token embedding (`nn.Embedding`), dropout, a 2-layer `nn.LSTM`
(sequence-first), dropout, the decoder `nn.Linear` to vocabulary logits.
`init_hidden(bsz)` gives the zero `(h0, c0)`. Eval mode (dropout is identity).

Example::

    lm = RNNModel(ntoken=50, ninp=16, nhid=32, nlayers=2).eval()
    tokens = torch.randint(0, 50, (6, 2))          # [seq, batch]
    logits, (h, c) = lm(tokens, lm.init_hidden(2))  # [6, 2, 50]
"""

from __future__ import annotations

import torch
from torch import nn


class RNNModel(nn.Module):
    """Encoder (embedding), a recurrent module (LSTM) and a decoder (linear)."""

    def __init__(self, ntoken: int = 50, ninp: int = 16, nhid: int = 32, nlayers: int = 2,
                 dropout: float = 0.2):
        super().__init__()
        self.ntoken, self.nhid, self.nlayers = ntoken, nhid, nlayers
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input: torch.Tensor, hidden: tuple[torch.Tensor, torch.Tensor]):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        return decoded, hidden

    def init_hidden(self, bsz: int) -> tuple[torch.Tensor, torch.Tensor]:
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))
