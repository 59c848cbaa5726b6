"""Presets (Table IV) and the ViT workload graphs against published numbers."""

from __future__ import annotations

import math

import pytest

from steplus.passes.allspark.vit import (
    MODELS,
    WorkloadError,
    build,
    dependency_edges,
)
from steplus.dialects.target.pim import (
    MIB,
    PRESETS,
    PimConfigError,
    PimHardware,
    preset,
    with_overrides,
)


def test_table_iv_preset() -> None:
    hw = preset("allspark-16x16")
    assert (hw.rows, hw.cols, hw.pe, hw.freq_mhz) == (16, 16, 8, 400.0)
    assert hw.node_cap_bytes == 8 * MIB and hw.sram_buffer_bytes == 48 * 1024
    assert (hw.flit_bits, hw.noc_pj_per_bit_hop, hw.dram_pj_per_bit) == (64, 1.1, 0.66)
    timings = (hw.t_rp_ns, hw.t_rcd_ns, hw.t_ras_ns, hw.t_rfc_ns, hw.t_refi_ns)
    assert timings == (18, 18, 40, 180, 3904)


def test_gpu_comparison_preset_matches_the_seed_throughput_and_capacity() -> None:
    hw = preset("allspark-24x24")
    # 14.7 TOPS@INT8 and 4.5 GiB aggregate memory (Sec. VIII-A)
    assert hw.peak_tops() == pytest.approx(14.7456)
    assert hw.nodes * hw.node_cap_bytes == 4.5 * 1024 * MIB
    assert set(PRESETS) == {"allspark-16x16", "allspark-24x24", "allspark-8x8"}


def test_effective_dram_bandwidth_closed_form() -> None:
    hw = preset("allspark-8x8")
    # 16 B/cycle, less refresh (tRFC/tREFI) and a (tRP+tRCD)=14.4-cycle miss per 2 KiB row
    assert hw.dram_bytes_per_cycle == pytest.approx(16 * (3724 / 3904) * (128 / 142.4))


@pytest.mark.parametrize("field,value", [("rows", 0), ("node_cap_bytes", -1), ("freq_mhz", 0.0)])
def test_preset_validation_names_the_field(field: str, value: float) -> None:
    with pytest.raises(PimConfigError, match=f"field '{field}' must be positive"):
        with_overrides(preset("allspark-8x8"), **{field: value})


def test_unknown_preset_and_field() -> None:
    with pytest.raises(PimConfigError, match="unknown preset 'x'.*allspark-16x16"):
        preset("x")
    with pytest.raises(PimConfigError, match="unknown field 'speed'"):
        with_overrides(preset("allspark-8x8"), speed=3)
    with pytest.raises(PimConfigError, match="tRFC"):
        PimHardware("h", 2, 2, t_rfc_ns=5000.0)


# Published parameter counts (M) and GFLOPs (GMACs) at 224^2; our graphs leave out
# biases, norms, position tables and the classifier, so allow 6 % / 12 %.
PUBLISHED = {
    "vit-b": (86, 17.6), "vit-l": (304, 61.6), "vit-h": (632, 167.4),
    "pvt-s": (24.5, 3.8), "pvt-l": (61.4, 9.8),
    "swin-t": (28, 4.5), "swin-b": (88, 15.4), "swin-l": (197, 34.5),
    "focal-t": (29.1, 4.9), "focal-b": (89.8, 16.0),
    "twins-s": (24, 2.9), "twins-l": (99.2, 15.1),
    "cswin-t": (23, 4.3), "cswin-b": (78, 15.0),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_models_match_published_size(name: str) -> None:
    params, gmacs = PUBLISHED[name]
    m = build(name, 224)
    assert m.weight_params / 1e6 == pytest.approx(params, rel=0.06)
    assert m.macs() / 1e9 == pytest.approx(gmacs, rel=0.12)


def test_swin_branch_counts_follow_the_seed() -> None:
    # Sec. III-A: 1225, 324, 81 and 25 windows at 960^2 (padded 7x7 windows)
    assert [s.branches for s in build("swin-b", 960).stages] == [1225, 324, 81, 25]
    assert [s.branches for s in build("swin-b", 640).stages] == [529, 144, 36, 9]
    assert [s.branches for s in build("swin-t", 224).stages] == [64, 16, 4, 1]


def test_cswin_stripes_and_twins_groups() -> None:
    cs = build("cswin-b", 224).stages
    # 56x56 with stripe width 1: 56 horizontal + 56 vertical stripes, half the heads each
    assert (cs[0].branches, cs[0].tokens, cs[0].heads) == (112, 56, 2)
    assert (cs[3].branches, cs[3].tokens, cs[3].heads) == (1, 49, 32)
    tw = build("twins-b", 224).stages[0]
    # 1 LSA + 1 GSA block; GSA keys are the 56/8 x 56/8 sub-sampled tokens
    assert [(g.blocks, g.kv_tokens) for g in tw.groups] == [(1, 49), (1, 49)]
    assert build("pvt-s", 640).stages[0].groups[0].kv_tokens == 400  # (160/8)^2


def test_dependency_graphs() -> None:
    swin = build("swin-t", 224).stages[2]  # 2x2 windows: shifted windows touch all 4
    assert dependency_edges(swin) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    twins = build("twins-s", 224).stages[2]  # global sub-sampling: a ring of 4
    assert dependency_edges(twins) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert dependency_edges(build("vit-b", 224).stages[0]) == []
    # 8x8 windows with king moves: 2*8*7 straight + 2*7*7 diagonal
    assert len(dependency_edges(build("swin-t", 224).stages[0])) == 112 + 98


def test_every_family_builds_at_every_size() -> None:
    for name in MODELS:
        # ViT-H's patch is 14: 644 and 952 are the multiples nearest 640 and 960
        for img in (224, 644, 952) if name == "vit-h" else (224, 640, 960):
            stages = build(name, img).stages
            # ViT is one isotropic stage; the hierarchical families have four
            assert len(stages) == (1 if name.startswith("vit-") else 4)
    # Swin (Liu et al. 2021): stage i sees the img/4/2^i token grid in 7x7
    # windows (padded up), one branch per window; Swin-T's depths are 2, 2, 6, 2
    for img in (224, 640, 960):
        windows = [math.ceil(img // 4 // 2**i / 7) ** 2 for i in range(4)]
        assert [(s.blocks, s.branches) for s in build("swin-t", img).stages] == \
            list(zip((2, 2, 6, 2), windows))


@pytest.mark.parametrize("name,img,msg", [
    ("resnet", 224, "unknown model 'resnet'"),
    ("swin-b", 8, r"image size must be an integer in \[32, 1280\]"),
    ("swin-b", 10**6, "image size must be"),
])
def test_bad_workloads(name: str, img: int, msg: str) -> None:
    with pytest.raises(WorkloadError, match=msg):
        build(name, img)
