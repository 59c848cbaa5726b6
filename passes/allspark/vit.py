"""Vision transformers as stages of computational branches (Allspark seed, Sec. III-A).

Every model is a list of :class:`Stage`; a stage has ``blocks`` identical-shaped
transformer blocks (encoders) and ``branches`` computational branches per block
(windows, stripes, or one global branch), each branch holding ``tokens`` query
patches, ``heads`` attention heads of width ``head_dim`` and attending to
``kv_tokens`` keys/values.  Branch dependencies (local-global interaction)
are given by :func:`dependency_edges`.

Hyper-parameters are the published ones:

- ViT [Dosovitskiy et al., ICLR 2021] B/L/H (patch 16, H uses 14) and the
  DeiT T/S widths [Touvron et al., ICML 2021];
- PVT v1 [Wang et al., ICCV 2021] T/S/M/L: C=(64,128,320,512), heads (1,2,5,8),
  MLP ratios (8,8,4,4), spatial-reduction ratios (8,4,2,1);
- Swin [Liu et al., ICCV 2021] T/S/B/L: window 7, shifted windows;
- Focal [Yang et al., NeurIPS 2021] T/S/B: window 7, two focal levels
  (fine 13x13 surrounding tokens + one pooled token per window, assumed form);
- Twins-SVT [Chu et al., NeurIPS 2021] S/B/L: alternating locally-grouped
  (window 7) and global sub-sampled attention (ratios 8,4,2,1);
- CSWin [Dong et al., CVPR 2022] T/S/B/L: cross-shaped windows, stripe widths
  (1,2,7,7), half of the heads on horizontal and half on vertical stripes.

Windows that do not divide the resolution are padded (Swin at 640^2 and 960^2:
529/144/36/9 and 1225/324/81/25 windows, as in the seed).  Biases, norms,
relative-position tables, class heads and convolutional position encodings
are left out (under 2 % of the weights).

Example::

    >>> m = build("swin-b", 960)
    >>> [s.branches for s in m.stages]
    [1225, 324, 81, 25]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_IMAGE = 1280  # bound on user-chosen input sizes (the seed goes up to 960)


class WorkloadError(ValueError):
    """A model or image size that cannot be built; the message says why."""


@dataclass(frozen=True)
class BlockGroup:
    """``blocks`` consecutive blocks of a stage that share one attention shape."""

    blocks: int
    kv_tokens: int  # keys/values attended by each branch
    extra_weight_params: int = 0  # e.g. the spatial-reduction linear per block
    extra_macs_per_token: int = 0  # its MACs per query token


@dataclass(frozen=True)
class Stage:
    """One model stage: ``blocks`` encoders of ``branches`` identical branches."""

    index: int
    grid: tuple[int, int]  # patch resolution of the stage
    channels: int  # C_s
    heads: int  # heads inside one branch
    head_dim: int  # d
    mlp_ratio: int  # a_1
    merge_in: int  # input width of the patch embedding/merging linear
    branch_grid: tuple[int, int]  # branches laid out as rows x cols of regions
    tokens: int  # N: query patches per branch
    groups: tuple[BlockGroup, ...]
    interaction: str  # none | shifted | focal | subsample | cross

    @property
    def blocks(self) -> int:
        return sum(g.blocks for g in self.groups)

    @property
    def branches(self) -> int:
        return self.branch_grid[0] * self.branch_grid[1]

    @property
    def width(self) -> int:
        """Attention width of a branch (h*d): C, or C/2 for CSWin stripes."""
        return self.heads * self.head_dim

    def block_weight_params(self, group: BlockGroup) -> int:
        """Parameters of one block: QKV, projection, FFN (and reductions)."""
        c = self.channels
        return 4 * c * c + 2 * self.mlp_ratio * c * c + group.extra_weight_params

    @property
    def weight_params(self) -> int:
        """Parameters of all blocks of the stage (without the merging layer)."""
        return sum(g.blocks * self.block_weight_params(g) for g in self.groups)

    @property
    def merge_params(self) -> int:
        return self.merge_in * self.channels


@dataclass(frozen=True)
class VitModel:
    name: str
    family: str
    size: str
    img: int
    stages: tuple[Stage, ...]

    @property
    def weight_params(self) -> int:
        return sum(s.weight_params + s.merge_params for s in self.stages)

    def macs(self) -> int:
        """Multiply-accumulates of one inference (linear layers + attention)."""
        total = 0
        for s in self.stages:
            c, w, n = s.channels, s.width, s.tokens
            merged = s.grid[0] * s.grid[1]
            total += merged * s.merge_in * c
            for g in s.groups:
                per_branch = (
                    n * c * 3 * w  # QKV
                    + 2 * n * g.kv_tokens * w  # QK^T and AV
                    + n * c * w  # projection share
                    + 2 * n * s.mlp_ratio * c * w  # FFN share
                    + n * g.extra_macs_per_token * w // c
                )
                total += g.blocks * s.branches * per_branch
        return total


# family -> size -> (embed/channels per stage, heads per stage, depths, extras)
_VIT = {  # (C, heads, depth, patch)
    "t": (192, 3, 12, 16),
    "s": (384, 6, 12, 16),
    "b": (768, 12, 12, 16),
    "l": (1024, 16, 24, 16),
    "h": (1280, 16, 32, 14),
}
_PVT_C, _PVT_HEADS = (64, 128, 320, 512), (1, 2, 5, 8)
_PVT_MLP, _PVT_SR = (8, 8, 4, 4), (8, 4, 2, 1)
_PVT_DEPTHS = {"t": (2, 2, 2, 2), "s": (3, 4, 6, 3), "m": (3, 4, 18, 3), "l": (3, 8, 27, 3)}
_SWIN = {  # (C, depths, heads)
    "t": (96, (2, 2, 6, 2), (3, 6, 12, 24)),
    "s": (96, (2, 2, 18, 2), (3, 6, 12, 24)),
    "b": (128, (2, 2, 18, 2), (4, 8, 16, 32)),
    "l": (192, (2, 2, 18, 2), (6, 12, 24, 48)),
}
_FOCAL = {k: _SWIN[k] for k in ("t", "s", "b")}
_TWINS = {  # (channels, heads, depths)
    "s": ((64, 128, 256, 512), (2, 4, 8, 16), (2, 2, 10, 4)),
    "b": ((96, 192, 384, 768), (3, 6, 12, 24), (2, 2, 18, 2)),
    "l": ((128, 256, 512, 1024), (4, 8, 16, 32), (2, 2, 18, 2)),
}
_TWINS_SR = (8, 4, 2, 1)
_CSWIN = {  # (C, depths, heads)
    "t": (64, (1, 2, 21, 1), (2, 4, 8, 16)),
    "s": (64, (2, 4, 32, 2), (2, 4, 8, 16)),
    "b": (96, (2, 4, 32, 2), (4, 8, 16, 32)),
    "l": (144, (2, 4, 32, 2), (6, 12, 24, 24)),
}
_CSWIN_SW = (1, 2, 7, 7)
WINDOW = 7

MODELS: dict[str, tuple[str, str]] = {}
for _fam, _table in (
    ("vit", _VIT),
    ("pvt", _PVT_DEPTHS),
    ("swin", _SWIN),
    ("focal", _FOCAL),
    ("twins", _TWINS),
    ("cswin", _CSWIN),
):
    for _size in _table:
        MODELS[f"{_fam}-{_size}"] = (_fam, _size)


def _hier_grids(img: int, first_patch: int) -> list[tuple[int, int]]:
    step = first_patch * 8  # a patch, then three 2x2 merges: every grid exact
    if img % step:
        raise WorkloadError(f"image size {img} is not a multiple of {step} (a {first_patch}-pixel "
                            f"patch, then three 2x2 patch merges); e.g. {img // step * step or step}")
    side = img // first_patch
    grids = []
    for _ in range(4):
        if side < 1:
            raise WorkloadError(f"image {img} is too small for a four-stage model")
        grids.append((side, side))
        side //= 2
    return grids


def _windowed(grid: tuple[int, int], window: int) -> tuple[tuple[int, int], int]:
    """Branch grid and tokens per branch of a padded window partition."""
    wh, ww = min(window, grid[0]), min(window, grid[1])
    return (math.ceil(grid[0] / wh), math.ceil(grid[1] / ww)), wh * ww


def _vit(size: str, img: int) -> list[Stage]:
    c, heads, depth, patch = _VIT[size]
    if img % patch:
        raise WorkloadError(f"image size {img} is not a multiple of the patch size {patch} of "
                            f"vit-{size}; e.g. {img // patch * patch}")
    side = img // patch
    n = side * side + 1  # patches + class token
    return [
        Stage(1, (side, side), c, heads, c // heads, 4, 3 * patch * patch, (1, 1), n,
              (BlockGroup(depth, n),), "none")
    ]


def _pvt(size: str, img: int) -> list[Stage]:
    stages = []
    for i, grid in enumerate(_hier_grids(img, 4)):
        c, h, sr = _PVT_C[i], _PVT_HEADS[i], _PVT_SR[i]
        n = grid[0] * grid[1]
        kv = max(1, grid[0] // sr) * max(1, grid[1] // sr)
        extra_w = sr * sr * c * c if sr > 1 else 0
        extra_m = c * c if sr > 1 else 0
        merge_in = 3 * 16 if i == 0 else 4 * _PVT_C[i - 1]
        group = BlockGroup(_PVT_DEPTHS[size][i], kv, extra_w, extra_m)
        stages.append(Stage(i + 1, grid, c, h, c // h, _PVT_MLP[i], merge_in, (1, 1), n,
                            (group,), "none"))
    return stages


def _swin_like(family: str, size: str, img: int) -> list[Stage]:
    c0, depths, heads = (_SWIN if family == "swin" else _FOCAL)[size]
    stages = []
    for i, grid in enumerate(_hier_grids(img, 4)):
        c = c0 * 2**i
        bgrid, n = _windowed(grid, WINDOW)
        if family == "swin":
            kv, inter = n, "shifted"
        else:  # fine tokens of the 13x13 surrounding region + one pooled token per window
            kv, inter = min(13, grid[0]) * min(13, grid[1]) + bgrid[0] * bgrid[1], "focal"
        merge_in = 48 if i == 0 else 2 * c
        stages.append(Stage(i + 1, grid, c, heads[i], c // heads[i], 4, merge_in, bgrid, n,
                            (BlockGroup(depths[i], kv),), inter if bgrid != (1, 1) else "none"))
    return stages


def _twins(size: str, img: int) -> list[Stage]:
    chans, heads, depths = _TWINS[size]
    stages = []
    for i, grid in enumerate(_hier_grids(img, 4)):
        c, sr = chans[i], _TWINS_SR[i]
        bgrid, n = _windowed(grid, WINDOW)
        kv_global = math.ceil(grid[0] / sr) * math.ceil(grid[1] / sr)
        lsa = BlockGroup((depths[i] + 1) // 2, n)
        gsa = BlockGroup(depths[i] // 2, kv_global,
                         sr * sr * c * c if sr > 1 else 0, c * c if sr > 1 else 0)
        merge_in = 48 if i == 0 else 4 * chans[i - 1]
        groups = tuple(g for g in (lsa, gsa) if g.blocks)
        stages.append(Stage(i + 1, grid, c, heads[i], c // heads[i], 4, merge_in, bgrid, n,
                            groups, "subsample" if bgrid != (1, 1) else "none"))
    return stages


def _cswin(size: str, img: int) -> list[Stage]:
    c0, depths, heads = _CSWIN[size]
    stages = []
    for i, grid in enumerate(_hier_grids(img, 4)):
        c, sw, h = c0 * 2**i, _CSWIN_SW[i], heads[i]
        merge_in = 3 * 49 if i == 0 else 9 * c // 2  # 7x7 stem; 3x3 stride-2 conv merging
        if sw >= grid[0] and sw >= grid[1]:  # last stage at 224^2: full attention
            n = grid[0] * grid[1]
            stages.append(Stage(i + 1, grid, c, h, c // h, 4, merge_in, (1, 1), n,
                                (BlockGroup(depths[i], n),), "none"))
            continue
        stripes = math.ceil(grid[0] / sw) + math.ceil(grid[1] / sw)
        n = sw * grid[1]
        half = max(1, h // 2)
        stages.append(Stage(i + 1, grid, c, half, c // h, 4, merge_in, (1, stripes), n,
                            (BlockGroup(depths[i], n),), "cross"))
    return stages


def build(name: str, img: int) -> VitModel:
    """Build the named model (e.g. ``swin-b``) for an ``img x img`` input."""
    key = name.lower()
    if key not in MODELS:
        raise WorkloadError(f"unknown model '{name}' (choose from {', '.join(MODELS)})")
    if isinstance(img, bool) or not isinstance(img, int) or not 32 <= img <= MAX_IMAGE:
        raise WorkloadError(f"image size must be an integer in [32, {MAX_IMAGE}], got {img}")
    family, size = MODELS[key]
    if family == "vit":
        stages = _vit(size, img)
    elif family == "pvt":
        stages = _pvt(size, img)
    elif family in ("swin", "focal"):
        stages = _swin_like(family, size, img)
    elif family == "twins":
        stages = _twins(size, img)
    else:
        stages = _cswin(size, img)
    return VitModel(key, family, size, img, tuple(stages))


def _king(gh: int, gw: int) -> set[tuple[int, int]]:
    edges = set()
    for r in range(gh):
        for c in range(gw):
            for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < gh and 0 <= cc < gw:
                    a, b = r * gw + c, rr * gw + cc
                    edges.add((min(a, b), max(a, b)))
    return edges


def _ring(n: int) -> set[tuple[int, int]]:
    if n < 2:
        return set()
    return {(min(i, (i + 1) % n), max(i, (i + 1) % n)) for i in range(n)}


def dependency_edges(stage: Stage) -> list[tuple[int, int]]:
    """Edges of G_dp between branches (raster index) for the local-global interaction.

    Shifted windows overlap their 2x2 neighbourhood (king moves); focal adds
    the pooled global context; global sub-sampling and cross-shaped stripes
    exchange with every branch, which the seed realizes as a cyclic transfer
    (ring), so they are a ring here.
    """
    gh, gw = stage.branch_grid
    if stage.interaction == "shifted":
        edges = _king(gh, gw)
    elif stage.interaction == "focal":
        edges = _king(gh, gw) | _ring(gh * gw)
    elif stage.interaction in ("subsample", "cross"):
        edges = _ring(gh * gw)
    else:
        edges = set()
    return sorted(edges)
