"""A ViT in timm's style (``timm.models.vision_transformer``), written for steplus.

Same module structure and parameter names as timm (``patch_embed.proj``,
``blocks.N.attn.qkv``, ``blocks.N.attn.proj``, ``blocks.N.mlp.fc1``/``fc2``,
``cls_token``, ``pos_embed``, ``norm``, ``head``), attention through
``F.scaled_dot_product_attention`` as timm's fused path does.  Not copied from
timm; no weights (the Allspark frontend reads shapes only).

    model = vit("vit-b", img=224)     # on the meta device: no memory for weights
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from examples.allspark.layers import Mlp

CONFIGS = {  # name -> (embed_dim, depth, heads, patch), as in ViT's Table 1 / timm
    "vit-t": (192, 12, 3, 16),
    "vit-s": (384, 12, 6, 16),
    "vit-b": (768, 12, 12, 16),
    "vit-l": (1024, 24, 16, 16),
    "vit-h": (1280, 32, 16, 14),
}


class PatchEmbed(nn.Module):
    def __init__(self, patch: int, dim: int):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).flatten(2).transpose(1, 2)  # B, N, C


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int = 4):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, mlp_ratio * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    def __init__(self, img: int, patch: int, dim: int, depth: int, heads: int,
                 classes: int = 1000):
        super().__init__()
        self.patch_embed = PatchEmbed(patch, dim)
        n = (img // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def vit(name: str, img: int = 224, device: str = "meta") -> VisionTransformer:
    dim, depth, heads, patch = CONFIGS[name]
    with torch.device(device):
        return VisionTransformer(img, patch, dim, depth, heads)


def export(name: str, img: int = 224):
    """``torch.export`` of the named ViT on one ``3 x img x img`` image (meta tensors)."""
    model = vit(name, img).eval()
    x = torch.empty(1, 3, img, img, device="meta")
    return torch.export.export(model, (x,))
