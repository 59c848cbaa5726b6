"""A Twins-SVT in timm's style (``timm.models.twins``), written for steplus.

Same structure and names as timm (``patch_embeds.N.proj``, ``blocks.N.M.attn``
with ``qkv`` / ``proj`` for locally-grouped attention (LSA) and ``q`` / ``kv`` /
``sr`` / ``norm`` / ``proj`` for global sub-sampled attention (GSA),
``pos_block.N.proj`` for the conditional position encoding after each stage's
first block): blocks alternate LSA over 7x7 windows (padded, as timm pads
them, attention on ``(B, windows_h, windows_w, heads, 49, d)`` tensors) and
GSA with the stage's sub-sampling ratio; attention through
``F.scaled_dot_product_attention``.  No weights (shapes only).

    model = twins("twins-s", img=224)     # on the meta device
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from examples.allspark.layers import Mlp

CONFIGS = {  # name -> (dims, heads, depths): Twins-SVT-S/B/L (Twins' Table 2)
    "twins-s": ((64, 128, 256, 512), (2, 4, 8, 16), (2, 2, 10, 4)),
    "twins-b": ((96, 192, 384, 768), (3, 6, 12, 24), (2, 2, 18, 2)),
    "twins-l": ((128, 256, 512, 1024), (4, 8, 16, 32), (2, 2, 18, 2)),
}
SR_RATIOS, WINDOW = (8, 4, 2, 1), 7


class PatchEmbed(nn.Module):
    def __init__(self, cin: int, dim: int, patch: int):
        super().__init__()
        self.proj = nn.Conv2d(cin, dim, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int]]:
        x = self.proj(x)
        size = (x.shape[2], x.shape[3])
        return self.norm(x.flatten(2).transpose(1, 2)), size


class LocallyGroupedAttn(nn.Module):
    def __init__(self, dim: int, heads: int, ws: int):
        super().__init__()
        self.heads, self.head_dim, self.ws = heads, dim // heads, ws
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        b, n, c = x.shape
        h, w = size
        ws = self.ws
        x = x.view(b, h, w, c)
        pad_r, pad_b = (ws - w % ws) % ws, (ws - h % ws) % ws
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        hp, wp = x.shape[1], x.shape[2]
        gh, gw = hp // ws, wp // ws
        x = x.reshape(b, gh, ws, gw, ws, c).transpose(2, 3)
        qkv = self.qkv(x).reshape(b, gh * gw, ws * ws, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(3, 0, 1, 4, 2, 5).unbind(0)  # B, windows, heads, 49, d
        x = F.scaled_dot_product_attention(q, k, v)
        x = x.transpose(2, 3).reshape(b, gh, gw, ws, ws, c).transpose(2, 3)
        x = x.reshape(b, hp, wp, c)[:, :h, :w, :].reshape(b, n, c)
        return self.proj(x)


class GlobalSubSampleAttn(nn.Module):
    def __init__(self, dim: int, heads: int, sr: int):
        super().__init__()
        self.heads, self.head_dim, self.sr_ratio = heads, dim // heads, sr
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)
        if sr > 1:
            self.sr = nn.Conv2d(dim, dim, kernel_size=sr, stride=sr)
            self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.heads, self.head_dim).permute(0, 2, 1, 3)
        if self.sr_ratio > 1:
            x = x.permute(0, 2, 1).reshape(b, c, *size)
            x = self.norm(self.sr(x).reshape(b, c, -1).permute(0, 2, 1))
        kv = self.kv(x).reshape(b, -1, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = kv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, sr: int, ws: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn: nn.Module = (GlobalSubSampleAttn(dim, heads, sr) if ws == 1
                                else LocallyGroupedAttn(dim, heads, ws))
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, 4 * dim)

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), size)
        return x + self.mlp(self.norm2(x))


class PosConv(nn.Module):
    """Conditional position encoding (PEG): a depthwise 3x3 convolution, residual."""

    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Sequential(nn.Conv2d(dim, dim, 3, 1, 1, groups=dim))

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        b, n, c = x.shape
        feat = x.transpose(1, 2).view(b, c, *size)
        return (self.proj(feat) + feat).flatten(2).transpose(1, 2)


class Twins(nn.Module):
    def __init__(self, img: int, dims: tuple[int, ...], heads: tuple[int, ...],
                 depths: tuple[int, ...], classes: int = 1000):
        super().__init__()
        cins = (3,) + tuple(dims[:-1])
        self.patch_embeds = nn.ModuleList(
            [PatchEmbed(cin, d, 4 if i == 0 else 2) for i, (cin, d) in enumerate(zip(cins, dims))])
        self.blocks = nn.ModuleList(
            [nn.ModuleList([Block(dims[k], heads[k], SR_RATIOS[k], 1 if i % 2 else WINDOW)
                            for i in range(depths[k])]) for k in range(len(depths))])
        self.pos_block = nn.ModuleList([PosConv(d) for d in dims])
        self.norm, self.head = nn.LayerNorm(dims[-1]), nn.Linear(dims[-1], classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        for i, (embed, blocks, peg) in enumerate(zip(self.patch_embeds, self.blocks,
                                                     self.pos_block)):
            x, size = embed(x)
            for j, blk in enumerate(blocks):
                x = blk(x, size)
                if j == 0:
                    x = peg(x, size)
            if i < len(self.blocks) - 1:
                x = x.reshape(b, *size, -1).permute(0, 3, 1, 2)
        return self.head(self.norm(x).mean(dim=1))


def twins(name: str, img: int = 224, device: str = "meta") -> Twins:
    if img % 32:
        raise ValueError(f"image size {img} is not a multiple of 32 (a 4-pixel patch, then "
                         f"three 2x2 patch embeddings)")
    dims, heads, depths = CONFIGS[name]
    with torch.device(device):
        return Twins(img, dims, heads, depths)
