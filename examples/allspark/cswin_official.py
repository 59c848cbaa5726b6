"""A CSWin Transformer (Dong et al., CVPR 2022) in the style of its official code, for steplus.

timm has no CSWin; module structure and names follow the authors' release
(``stage1_conv_embed``, ``stageN`` blocks with ``qkv``, ``attns`` of
``LePEAttention`` (one for horizontal, one for vertical stripes, half the heads
each; one with all the heads in the last stage when it is a single stripe),
``proj``, ``mlp``, ``mergeN`` 3x3 stride-2 convolutions).  The locally-enhanced
position encoding (LePE: a depthwise 3x3 convolution of V) is kept; stripes that
do not divide the map are padded (the release requires divisibility).  Attention
through ``F.scaled_dot_product_attention``.  Not copied; no weights (shapes only).

    model = cswin("cswin-t", img=224)     # on the meta device
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from examples.allspark.layers import Mlp

CONFIGS = {  # name -> (embed_dim, depths, heads): CSWin-T/S/B/L (CSWin's Table 1)
    "cswin-t": (64, (1, 2, 21, 1), (2, 4, 8, 16)),
    "cswin-s": (64, (2, 4, 32, 2), (2, 4, 8, 16)),
    "cswin-b": (96, (2, 4, 32, 2), (4, 8, 16, 32)),
    "cswin-l": (144, (2, 4, 32, 2), (6, 12, 24, 24)),
}
SPLIT = (1, 2, 7, 7)  # stripe widths per stage


class LePEAttention(nn.Module):
    """Attention within horizontal (``axis = 0``) or vertical (``axis = 1``) stripes."""

    def __init__(self, dim: int, heads: int, sw: int, axis: int, full: bool):
        super().__init__()
        self.heads, self.head_dim, self.sw, self.axis, self.full = heads, dim // heads, sw, axis, full
        self.get_v = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)

    def _stripes(self, x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
        b, h, w, c = x.shape  # padded map
        sh, sw = (h, w) if self.full else (self.sw, w) if self.axis == 0 else (h, self.sw)
        x = x.reshape(b, h // sh, sh, w // sw, sw, c).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(-1, sh * sw, self.heads, self.head_dim).transpose(1, 2), sh, sw

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        b, h, w, c = q.shape
        s = self.sw
        pad_h = 0 if self.full or self.axis == 1 else (s - h % s) % s
        pad_w = 0 if self.full or self.axis == 0 else (s - w % s) % s
        q, k, v = (F.pad(t, (0, 0, 0, pad_w, 0, pad_h)) for t in (q, k, v))
        hp, wp = h + pad_h, w + pad_w
        lepe = self.get_v(v.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        (q, sh, sw), (k, _, _), (v, _, _) = (self._stripes(t) for t in (q, k, v))
        x = F.scaled_dot_product_attention(q, k, v)
        x = x.transpose(1, 2).reshape(b, hp // sh, wp // sw, sh, sw, c)
        x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, hp, wp, c) + lepe
        return x[:, :h, :w, :]


class CSWinBlock(nn.Module):
    def __init__(self, dim: int, heads: int, sw: int, resolution: int):
        super().__init__()
        self.full = resolution <= sw  # the last stage: one stripe, all heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        if self.full:
            self.attns = nn.ModuleList([LePEAttention(dim, heads, sw, 0, True)])
        else:
            self.attns = nn.ModuleList([LePEAttention(dim // 2, heads // 2, sw, a, False)
                                        for a in (0, 1)])
        self.proj = nn.Linear(dim, dim)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        if self.full:
            att = self.attns[0](q, k, v)
        else:
            c = q.shape[-1] // 2
            att = torch.cat([self.attns[0](q[..., :c], k[..., :c], v[..., :c]),
                             self.attns[1](q[..., c:], k[..., c:], v[..., c:])], dim=-1)
        x = x + self.proj(att)
        return x + self.mlp(self.norm2(x))


class MergeBlock(nn.Module):
    def __init__(self, dim: int, out: int):
        super().__init__()
        self.conv = nn.Conv2d(dim, out, 3, 2, 1)
        self.norm = nn.LayerNorm(out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1))


class CSWinTransformer(nn.Module):
    def __init__(self, img: int, dim: int, depths: tuple[int, ...], heads: tuple[int, ...],
                 classes: int = 1000):
        super().__init__()
        self.stage1_conv_embed = nn.Conv2d(3, dim, 7, 4, 2)
        self.norm1 = nn.LayerNorm(dim)
        side, stages, merges = img // 4, [], []
        for i, (depth, h) in enumerate(zip(depths, heads)):
            d = dim * 2**i
            stages.append(nn.Sequential(*[CSWinBlock(d, h, SPLIT[i], side)
                                          for _ in range(depth)]))
            if i < len(depths) - 1:
                merges.append(MergeBlock(d, 2 * d))
                side = (side + 1) // 2
        self.stages, self.merges = nn.ModuleList(stages), nn.ModuleList(merges)
        self.norm = nn.LayerNorm(dim * 2 ** (len(depths) - 1))
        self.head = nn.Linear(dim * 2 ** (len(depths) - 1), classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(self.stage1_conv_embed(x).permute(0, 2, 3, 1))  # B, H, W, C
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i < len(self.merges):
                x = self.merges[i](x)
        return self.head(self.norm(x).mean(dim=(1, 2)))


def cswin(name: str, img: int = 224, device: str = "meta") -> CSWinTransformer:
    if img % 32:
        raise ValueError(f"image size {img} is not a multiple of 32 (a 4-pixel stem, then "
                         f"three stride-2 merges)")
    dim, depths, heads = CONFIGS[name]
    with torch.device(device):
        return CSWinTransformer(img, dim, depths, heads)
