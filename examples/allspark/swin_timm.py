"""A Swin Transformer in timm's style (``timm.models.swin_transformer``), written for steplus.

Same structure and parameter names as timm (``patch_embed.proj``,
``layers.N.downsample.reduction``, ``layers.N.blocks.M.attn.qkv`` / ``proj``,
``mlp.fc1`` / ``fc2``), NHWC feature maps, windows padded to a multiple of the
window as timm pads them, shifted windows through ``torch.roll`` with the
shift mask, attention through ``F.scaled_dot_product_attention`` (timm's fused
path).  A block whose resolution is not larger than the window uses the whole
map as one window and no shift, as timm does.  Left out (no effect on GEMM
shapes): the relative position bias table, dropout, stochastic depth.  Not
copied from timm; no weights (the Allspark frontend reads shapes only).

    model = swin("swin-t", img=224)     # on the meta device
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from examples.allspark.layers import Mlp

CONFIGS = {  # name -> (embed_dim, depths, heads), Swin's Table / timm's swin_*_patch4_window7
    "swin-t": (96, (2, 2, 6, 2), (3, 6, 12, 24)),
    "swin-s": (96, (2, 2, 18, 2), (3, 6, 12, 24)),
    "swin-b": (128, (2, 2, 18, 2), (4, 8, 16, 32)),
    "swin-l": (192, (2, 2, 18, 2), (6, 12, 24, 48)),
}
WINDOW, PATCH = 7, 4


def window_partition(x: torch.Tensor, ws: int) -> torch.Tensor:
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c)


def window_reverse(windows: torch.Tensor, ws: int, h: int, w: int) -> torch.Tensor:
    c = windows.shape[-1]
    x = windows.view(-1, h // ws, w // ws, ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, h, w, c)


class PatchEmbed(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=PATCH, stride=PATCH)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.proj(x).permute(0, 2, 3, 1))  # B, H, W, C


class WindowAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        b, n, c = x.shape  # b = batch x windows
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


def shift_mask(h: int, w: int, ws: int, shift: int) -> torch.Tensor:
    """timm's attention mask of the shifted windows of an ``h x w`` (padded) map:
    ``(windows, 1, ws^2, ws^2)``, -100 between tokens from different regions."""
    img = torch.zeros(1, h, w, 1)
    cnt = 0
    for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
        for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            img[:, hs, wsl, :] = cnt
            cnt += 1
    mw = window_partition(img, ws).squeeze(-1)
    mask = mw.unsqueeze(1) - mw.unsqueeze(2)
    return mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0).unsqueeze(1)


class SwinTransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, resolution: tuple[int, int], shift: bool):
        super().__init__()
        self.window = WINDOW
        self.shift = WINDOW // 2 if shift else 0
        if min(resolution) <= self.window:  # the whole map is one window, no shift (timm)
            self.window, self.shift = min(resolution), 0
        self.norm1, self.attn = nn.LayerNorm(dim), WindowAttention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, 4 * dim)
        h, w = resolution
        hp, wp = -(-h // self.window) * self.window, -(-w // self.window) * self.window
        mask = shift_mask(hp, wp, self.window, self.shift) if self.shift else None
        self.register_buffer("attn_mask", mask, persistent=False)

    def _attn(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        ws = self.window
        pad_h, pad_w = (ws - h % ws) % ws, (ws - w % ws) % ws
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
        hp, wp = h + pad_h, w + pad_w
        if self.shift:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        windows = window_partition(x, ws)
        mask = self.attn_mask
        if mask is not None:
            mask = mask.repeat(b, 1, 1, 1)
        x = window_reverse(self.attn(windows, mask), ws, hp, wp)
        if self.shift:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        return x[:, :h, :w, :]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self._attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        x = x.reshape(b, h // 2, 2, w // 2, 2, c).permute(0, 1, 3, 4, 2, 5).flatten(3)
        return self.reduction(self.norm(x))


class SwinTransformerStage(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int, resolution: tuple[int, int],
                 downsample: bool):
        super().__init__()
        self.downsample = PatchMerging(dim // 2) if downsample else nn.Identity()
        self.blocks = nn.Sequential(*[SwinTransformerBlock(dim, heads, resolution, i % 2 == 1)
                                      for i in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.downsample(x))


class SwinTransformer(nn.Module):
    def __init__(self, img: int, dim: int, depths: tuple[int, ...], heads: tuple[int, ...],
                 classes: int = 1000):
        super().__init__()
        self.patch_embed = PatchEmbed(dim)
        side = img // PATCH
        stages = []
        for i, (depth, h) in enumerate(zip(depths, heads)):
            stages.append(SwinTransformerStage(dim * 2**i, depth, h, (side, side), i > 0))
            side //= 2
        self.layers = nn.Sequential(*stages)
        self.norm = nn.LayerNorm(dim * 2 ** (len(depths) - 1))
        self.head = nn.Linear(dim * 2 ** (len(depths) - 1), classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(self.layers(self.patch_embed(x)))
        return self.head(x.mean(dim=(1, 2)))


def swin(name: str, img: int = 224, device: str = "meta") -> SwinTransformer:
    if img % (PATCH * 8):
        raise ValueError(f"image size {img} is not a multiple of 32 (a 4-pixel patch, then "
                         f"three 2x2 patch merges)")
    dim, depths, heads = CONFIGS[name]
    with torch.device(device):
        return SwinTransformer(img, dim, depths, heads)
