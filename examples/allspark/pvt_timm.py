"""A PVT (v1, Wang et al., ICCV 2021) in timm's naming style, written for steplus.

Parameter names follow timm's PVT modules (``patch_embed.proj``,
``stages.N.blocks.M.attn.q`` / ``kv`` / ``sr`` / ``norm`` / ``proj``,
``mlp.fc1`` / ``fc2``): four stages, each a strided patch embedding (4, then
2) and blocks of spatial-reduction attention (keys and values from a
``sr x sr`` strided convolution of the map), attention through
``F.scaled_dot_product_attention``.  PVT v1's class token in the last stage is
left out (as in the Allspark workload table); no weights (shapes only).

    model = pvt("pvt-s", img=224)     # on the meta device
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from examples.allspark.layers import Mlp

DIMS, HEADS, MLP_RATIOS, SR_RATIOS = (64, 128, 320, 512), (1, 2, 5, 8), (8, 8, 4, 4), (8, 4, 2, 1)
CONFIGS = {  # name -> depths (PVT's Table 1)
    "pvt-t": (2, 2, 2, 2),
    "pvt-s": (3, 4, 6, 3),
    "pvt-m": (3, 4, 18, 3),
    "pvt-l": (3, 8, 27, 3),
}


class PatchEmbed(nn.Module):
    def __init__(self, cin: int, dim: int, patch: int):
        super().__init__()
        self.proj = nn.Conv2d(cin, dim, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
        x = self.proj(x)
        h, w = x.shape[2], x.shape[3]
        return self.norm(x.flatten(2).transpose(1, 2)), h, w


class Attention(nn.Module):
    """Spatial-reduction attention (SRA)."""

    def __init__(self, dim: int, heads: int, sr: int):
        super().__init__()
        self.heads, self.head_dim, self.sr_ratio = heads, dim // heads, sr
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)
        if sr > 1:
            self.sr = nn.Conv2d(dim, dim, kernel_size=sr, stride=sr)
            self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, h: int, w: int) -> torch.Tensor:
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.heads, self.head_dim).permute(0, 2, 1, 3)
        if self.sr_ratio > 1:
            x = x.permute(0, 2, 1).reshape(b, c, h, w)
            x = self.norm(self.sr(x).reshape(b, c, -1).permute(0, 2, 1))
        kv = self.kv(x).reshape(b, -1, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = kv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int, sr: int):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads, sr)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, mlp_ratio * dim)

    def forward(self, x: torch.Tensor, h: int, w: int) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.mlp(self.norm2(x))


class PvtStage(nn.Module):
    def __init__(self, cin: int, dim: int, patch: int, depth: int, heads: int,
                 mlp_ratio: int, sr: int, tokens: int):
        super().__init__()
        self.patch_embed = PatchEmbed(cin, dim, patch)
        self.pos_embed = nn.Parameter(torch.zeros(1, tokens, dim))
        self.blocks = nn.ModuleList([Block(dim, heads, mlp_ratio, sr) for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, h, w = self.patch_embed(x)
        x = x + self.pos_embed
        for blk in self.blocks:
            x = blk(x, h, w)
        return x.reshape(x.shape[0], h, w, -1).permute(0, 3, 1, 2)  # B, C, H, W


class PyramidVisionTransformer(nn.Module):
    def __init__(self, img: int, depths: tuple[int, ...], classes: int = 1000):
        super().__init__()
        stages, cin, side = [], 3, img
        for i, depth in enumerate(depths):
            patch = 4 if i == 0 else 2
            side //= patch
            stages.append(PvtStage(cin, DIMS[i], patch, depth, HEADS[i], MLP_RATIOS[i],
                                   SR_RATIOS[i], side * side))
            cin = DIMS[i]
        self.stages = nn.Sequential(*stages)
        self.norm, self.head = nn.LayerNorm(DIMS[-1]), nn.Linear(DIMS[-1], classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(x).mean(dim=(2, 3))
        return self.head(self.norm(x))


def pvt(name: str, img: int = 224, device: str = "meta") -> PyramidVisionTransformer:
    if img % 32:
        raise ValueError(f"image size {img} is not a multiple of 32 (a 4-pixel patch, then "
                         f"three 2x2 patch embeddings)")
    with torch.device(device):
        return PyramidVisionTransformer(img, CONFIGS[name])
