"""User-written schedules: parsing, the constraint verifier, and the seed's Table V."""

from __future__ import annotations

import pytest
from conftest import run_tool

from steplus.passes.allspark.vit import build
from steplus.dialects.target.pim import MIB, preset, with_overrides
from steplus.passes.allspark.ilp_compact import ScheduleError
from steplus.passes.allspark.orchestrate import given_schedule, orchestrate
from steplus.passes.allspark.partition import Scheme
from steplus.passes.allspark.schedule import layers_of, parse_schedule, verify
from steplus.tools.pim_orchestrate import main

TABLE_V = "1x1,1x1,4x2;2x1,4x4;8x2,8x2,16x4;4x4"


def test_parse_table_v() -> None:
    spec = parse_schedule(TABLE_V, 4)
    assert [[s for s, _ in st] for st in spec] == [
        [Scheme(1, 1), Scheme(1, 1), Scheme(4, 2)], [Scheme(2, 1), Scheme(4, 4)],
        [Scheme(8, 2), Scheme(8, 2), Scheme(16, 4)], [Scheme(4, 4)]]
    assert all(n is None for st in spec for _, n in st)
    assert parse_schedule(" 1x1:3 , 2x1 ", 1) == [[(Scheme(1, 1), 3), (Scheme(2, 1), None)]]


@pytest.mark.parametrize("text,msg", [
    ("1x1;1x1", "2 stages given, the model has 4"),
    ("1x1;1x1;1x1;axb", "stage 4: expected GxM or GxM:BRANCHES with positive integers, got 'axb'"),
    ("0x1;1x1;1x1;1x1", "got '0x1'"),
    ("1x1;1x1;1x1;" + ",".join(["1x1"] * 65), "stage 4 has more than 64 temporal layers"),
    ("1" * 5000, "longer than 4096 characters"),
])
def test_parse_errors(text: str, msg: str) -> None:
    with pytest.raises(ScheduleError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        parse_schedule(text, 4)


def test_table_v_counts_and_memory() -> None:
    """Swin-B 640^2 (529/144/36/9 windows): Table V's layers filled largest capacity first
    ([1,1]: 256, [4,2]: 32, [2,1]: 128, [4,4]: 16, [8,2]: 16, [16,4]: 4 sub-arrays)."""
    model, hw = build("swin-b", 640), preset("allspark-16x16")
    layers = layers_of(model, hw, parse_schedule(TABLE_V, 4))
    assert [[lay.branches for lay in st] for st in layers] == [
        [256, 256, 17], [128, 16], [16, 16, 4], [9]]
    assert verify(model, hw, layers, memory=False) == []
    # weights with reuse+sharing: Table VI's 12*C^2*N_bk terms (6.94 MiB, test_pim_cost)
    # plus the merging layers C_in*C: 48*128 on [1,1]; 512*256 / 2 + / 16;
    # 1024*512 / 16 + / 64; 2048*1024 / 16.
    blocks = 393216 + 884736 + 4423680 + 1572864
    merge = 48 * 128 + 131072 // 2 + 131072 // 16 + 524288 // 16 + 524288 // 64 + 2097152 // 16
    errors = verify(model, hw, layers)
    assert len(errors) == 1 and "(constraint 5, with weight reuse and sharing)" in errors[0]
    assert errors[0].startswith(f"memory per node {(blocks + merge) / MIB:.2f} MiB weights")


def test_verifier_names_each_rule() -> None:
    model, hw = build("swin-b", 640), preset("allspark-16x16")
    bad = layers_of(model, hw, parse_schedule("1x1:100,1x1:200;2x1:144;8x2:36;4x4:9", 4))
    errors = verify(model, hw, bad, memory=False)
    assert any("stage 1: 300 of 529 branches assigned (constraint 2" in e for e in errors)
    assert any("stage 1: branch counts [100, 200] increase" in e and "(constraint 4)" in e
               for e in errors)
    assert any("stage 2, temporal layer 1: 144 sub-arrays of [2,1] but the 16x16 mesh "
               "packs 128 (constraint 1)" in e for e in errors)
    assert any("stage 3, temporal layer 1: 36 sub-arrays of [8,2]" in e for e in errors)
    with pytest.raises(ScheduleError, match=r"\[9,1\] is not a partition candidate of 4 heads"
                       r" x 49 patches .*g in \[1, 2, 4\]"):
        layers_of(model, hw, parse_schedule("9x1;2x1;8x2;4x4", 4))


def test_optimum_is_no_slower_than_table_v_when_it_fits() -> None:
    """With 9 MiB per node Table V is feasible, so the ILP optimum cannot be slower."""
    hw = with_overrides(preset("allspark-16x16"), node_cap_bytes=9 * MIB)
    seed = given_schedule("swin-b", 640, hw, TABLE_V, bind=False)
    assert seed.fits
    assert orchestrate("swin-b", 640, hw, bind=False).cycles <= seed.cycles


def test_cli_schedule() -> None:
    r = run_tool(main, ["--model", "swin-b", "--img", "640", "--schedule", TABLE_V])
    assert r.code == 1 and r.out == ""
    assert r.err.startswith("pim-orchestrate: error: schedule: memory per node")
    assert "(constraint 5" in r.err and r.err.count("\n") == 1
    r = run_tool(main, ["--model", "swin-b", "--img", "640", "--schedule", TABLE_V,
                        "--ignore-memory"])
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[1] == "schedule: given on the command line (not solved)"
    assert lines[6].split()[:5] == ["4", "9", "2", "1", "[4,4]:9"]
    assert "reuse+sharing: " in r.out and "(exceeds)" in r.out
