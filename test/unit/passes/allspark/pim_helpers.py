"""Tiny synthetic workloads and meshes for the Allspark tests."""

from __future__ import annotations

from steplus.passes.allspark.vit import BlockGroup, Stage, VitModel
from steplus.dialects.target.pim import PimHardware


def tiny_stage(index: int = 1, branches: int = 3, blocks: int = 1) -> Stage:
    """C=16, 2 heads of 8, 16 tokens per branch, MLP ratio 4, merge 32 -> 16."""
    return Stage(index, (4, 4 * branches), 16, 2, 8, 4, 32, (1, branches), 16,
                 (BlockGroup(blocks, 16),), "shifted")


def tiny_model(branches: tuple[int, ...] = (3, 2), blocks: tuple[int, ...] = (1, 2)) -> VitModel:
    stages = tuple(tiny_stage(i + 1, n, b) for i, (n, b) in enumerate(zip(branches, blocks)))
    return VitModel("tiny", "tiny", "t", 64, stages)


def tiny_hw(rows: int = 2, cols: int = 2, cap: int = 8 * 1024 * 1024) -> PimHardware:
    return PimHardware("tiny", rows, cols, pe=4, node_cap_bytes=cap)
