"""A Focal Transformer (Yang et al., NeurIPS 2021) in the style of its official code, for steplus.

timm has no Focal Transformer (its FocalNet is a different model); structure and
names follow the authors' release (``patch_embed.proj``, ``layers.N.blocks.M.attn``
with ``qkv`` / ``proj``, ``layers.N.downsample``): 7x7 windows (padded), and
focal attention with two levels, as the Allspark workload table assumes: each
window's 49 queries attend to the 13x13 fine tokens around it (its window and a
3-token border, ``F.unfold``) and to one pooled token per window of the whole
map (level 1, window pooling by ``avg_pool2d``).  A map no larger than the
window is one window whose fine keys are the map itself.  Attention through
``F.scaled_dot_product_attention``; no relative position bias, no masks for the
padded border (shapes only).  Not copied; no weights.

    model = focal("focal-t", img=224)     # on the meta device
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from examples.allspark.layers import Mlp

CONFIGS = {  # name -> (embed_dim, depths, heads): Focal-T/S/B (Focal's Table 1)
    "focal-t": (96, (2, 2, 6, 2), (3, 6, 12, 24)),
    "focal-s": (96, (2, 2, 18, 2), (3, 6, 12, 24)),
    "focal-b": (128, (2, 2, 18, 2), (4, 8, 16, 32)),
}
WINDOW, FINE, PATCH = 7, 13, 4


class FocalAttention(nn.Module):
    def __init__(self, dim: int, heads: int, resolution: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.window = min(WINDOW, resolution)
        self.fine = min(FINE, resolution)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def _split(self, t: torch.Tensor) -> torch.Tensor:  # (B', n, C) -> (B', heads, n, d)
        return t.reshape(t.shape[0], t.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        ws = self.window
        pad_h, pad_w = (ws - h % ws) % ws, (ws - w % ws) % ws
        q, k, v = F.pad(self.qkv(x), (0, 0, 0, pad_w, 0, pad_h)).chunk(3, dim=-1)
        hp, wp = h + pad_h, w + pad_w
        gh, gw = hp // ws, wp // ws
        nw = gh * gw
        qw = q.reshape(b, gh, ws, gw, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b * nw, ws * ws, c)

        def keys(t: torch.Tensor) -> torch.Tensor:
            # level 0: the fine x fine tokens around each window
            border = (self.fine - ws) // 2
            fine = F.unfold(t.permute(0, 3, 1, 2), self.fine, padding=border, stride=ws)
            fine = fine.reshape(b, c, self.fine * self.fine, nw).permute(0, 3, 2, 1)
            # level 1: one pooled token per window, seen by every window
            pooled = F.avg_pool2d(t.permute(0, 3, 1, 2), ws).flatten(2).transpose(1, 2)
            pooled = pooled.unsqueeze(1).expand(b, nw, nw, c)
            return torch.cat([fine, pooled], dim=2).reshape(b * nw, -1, c)

        out = F.scaled_dot_product_attention(self._split(qw), self._split(keys(k)),
                                             self._split(keys(v)))
        out = out.transpose(1, 2).reshape(b, gh, gw, ws, ws, c).permute(0, 1, 3, 2, 4, 5)
        return self.proj(out.reshape(b, hp, wp, c)[:, :h, :w, :])


class FocalTransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, resolution: int):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), FocalAttention(dim, heads, resolution)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    """Patch embedding (stage 1) or the downsampling between stages: a strided conv."""

    def __init__(self, cin: int, dim: int, patch: int):
        super().__init__()
        self.proj = nn.Conv2d(cin, dim, patch, patch)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # NCHW or NHWC -> NHWC
        return self.norm(self.proj(x).permute(0, 2, 3, 1))


class BasicLayer(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int, resolution: int, downsample: bool):
        super().__init__()
        self.blocks = nn.Sequential(*[FocalTransformerBlock(dim, heads, resolution)
                                      for _ in range(depth)])
        self.downsample = PatchEmbed(dim, 2 * dim, 2) if downsample else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(x)
        return x if self.downsample is None else self.downsample(x.permute(0, 3, 1, 2))


class FocalTransformer(nn.Module):
    def __init__(self, img: int, dim: int, depths: tuple[int, ...], heads: tuple[int, ...],
                 classes: int = 1000):
        super().__init__()
        self.patch_embed = PatchEmbed(3, dim, PATCH)
        side = img // PATCH
        layers = []
        for i, (depth, h) in enumerate(zip(depths, heads)):
            layers.append(BasicLayer(dim * 2**i, depth, h, side, i < len(depths) - 1))
            side //= 2
        self.layers = nn.Sequential(*layers)
        last = dim * 2 ** (len(depths) - 1)
        self.norm, self.head = nn.LayerNorm(last), nn.Linear(last, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.patch_embed(x))
        return self.head(self.norm(x).mean(dim=(1, 2)))


def focal(name: str, img: int = 224, device: str = "meta") -> FocalTransformer:
    if img % 32:
        raise ValueError(f"image size {img} is not a multiple of 32 (a 4-pixel patch, then "
                         f"three 2x2 patch embeddings)")
    dim, depths, heads = CONFIGS[name]
    with torch.device(device):
        return FocalTransformer(img, dim, depths, heads)
