"""The timm-style vision transformers of examples/allspark, by name, and their torch.export.

    ep = export("swin-b", 640)            # a torch.export.ExportedProgram (meta tensors)
    save("swin-b", 640, "swin-b.pt2")     # torch.export.save: what `convert-torch-to-pim` reads

Families: ViT (``vit_timm``), Swin (``swin_timm``), PVT v1 (``pvt_timm``), Twins-SVT
(``twins_timm``), and, after the authors' releases as timm has neither, CSWin
(``cswin_official``) and Focal (``focal_official``): every family of the Allspark paper.
"""

from __future__ import annotations

import torch
from torch import nn

from examples.allspark import (
    cswin_official,
    focal_official,
    pvt_timm,
    swin_timm,
    twins_timm,
    vit_timm,
)

BUILDERS = {
    **{n: vit_timm.vit for n in vit_timm.CONFIGS},
    **{n: swin_timm.swin for n in swin_timm.CONFIGS},
    **{n: pvt_timm.pvt for n in pvt_timm.CONFIGS},
    **{n: twins_timm.twins for n in twins_timm.CONFIGS},
    **{n: cswin_official.cswin for n in cswin_official.CONFIGS},
    **{n: focal_official.focal for n in focal_official.CONFIGS},
}
MODELS = tuple(BUILDERS)


def build(name: str, img: int = 224) -> nn.Module:
    """The named model for ``img x img`` inputs on the meta device (no weight memory)."""
    if name not in BUILDERS:
        raise ValueError(f"unknown model '{name}' (choose from {', '.join(MODELS)})")
    return BUILDERS[name](name, img).eval()


def export(name: str, img: int = 224, batch: int = 1):
    """``torch.export`` of the named model on ``batch`` images of ``3 x img x img``."""
    model = build(name, img)
    x = torch.empty(batch, 3, img, img, device="meta")
    return torch.export.export(model, (x,))


def save(name: str, img: int, path: str, batch: int = 1) -> None:
    """Write the exported program as a ``.pt2`` archive (``torch.export.save``)."""
    torch.export.save(export(name, img, batch), path)
