"""LSTM-WLM, the PyTorch word language model example (pytorch/examples
word_language_model, RNNModel with rnn_type LSTM): embedding, 2-layer LSTM, linear
decoder; dropout off (inference).  As in D2A (Appendix B) the function returns the
sequence output only, not the final hidden and cell states.

Vocabulary 256, embedding and hidden size 64 (the example's defaults are 33278 / 200 /
200 on WikiText-2), sequence length 35 and batch 1 (D2A's).  The token ids are the
function's i64 argument; the initial states are zeros.

    python examples/isel/models/lstm_wlm.py     # writes lstm_wlm.mlir
"""

import torch
from torch import nn

from _export import main

NTOKEN, NINP, NHID, NLAYERS, SEQ = 256, 64, 64, 2, 35


class RNNModel(nn.Module):
    def __init__(self, ntoken=NTOKEN, ninp=NINP, nhid=NHID, nlayers=NLAYERS):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, tokens):
        emb = self.encoder(tokens)
        out, _ = self.rnn(emb)
        return self.decoder(out).view(-1, self.decoder.out_features)


def build():
    return RNNModel(), (torch.randint(0, NTOKEN, (SEQ, 1)),)


# D2A's LSTM-WLM (Appendix B): WikiText-2's vocabulary, the example's 200/200 sizes, ONE LSTM layer
FULL = dict(ntoken=33278, ninp=200, nhid=200, nlayers=1)


def build_full():
    """D2A's size (bench only): vocabulary 33278, embedding and hidden 200, one layer, 35 steps."""
    return RNNModel(**FULL), (torch.randint(0, FULL["ntoken"], (SEQ, 1)),)


HEADER = "// LSTM-WLM, vocabulary 256, 2-layer LSTM 64/64, 35 steps, random weights (seed 0)."

if __name__ == "__main__":
    main("lstm_wlm", build, HEADER)
