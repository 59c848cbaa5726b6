"""Transformer encoder (Vaswani et al. 2017) as torch's `nn.TransformerEncoder` of
`nn.TransformerEncoderLayer`s (post-norm, ReLU feed-forward), the module D2A's
nn.Transformer is built from: per layer multi-head self-attention
softmax(q kᵀ / sqrt(d)) v, residual, layer norm, feed-forward, residual, layer norm.

d_model 64, 4 heads (head size 16), feed-forward 256, 2 layers, sequence 16, batch 1
instead of D2A's 256 features, 8 heads, 6+6 layers (the decoder stack is not built);
keeps the import under ~2 MB.  No dropout (inference).

    python examples/isel/models/transformer.py     # writes transformer.mlir
"""

import torch
from torch import nn

from _export import main

D, HEADS, FF, LAYERS, SEQ = 64, 4, 256, 2, 16


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def build():
    return Encoder(), (torch.randn(1, SEQ, D),)


class FullTransformer(nn.Module):
    """D2A's `nn.Transformer`: 256 features, 8 heads, 6 encoder and 6 decoder layers, torch's
    default feed-forward 2048 (the paper gives neither it nor the sequence lengths: 16 each)."""

    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(256, 8, 6, 6, dropout=0.0, batch_first=True)

    def forward(self, src, tgt):
        return self.t(src, tgt)


def build_full():
    """D2A's size (bench only): see `FullTransformer`."""
    return FullTransformer(), (torch.randn(1, SEQ, 256), torch.randn(1, SEQ, 256))


HEADER = "// Transformer encoder, d_model 64, 4 heads, ff 256, 2 layers, seq 16, random weights (seed 0)."

if __name__ == "__main__":
    main("transformer", build, HEADER)
