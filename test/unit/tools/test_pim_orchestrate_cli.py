"""pim-orchestrate: the schedule report, bad input and exit codes (in-process)."""

from __future__ import annotations

import pytest
from conftest import run_tool

from steplus.tools.pim_orchestrate import main


def test_schedule_report() -> None:
    r = run_tool(main, ["--model", "swin-t", "--img", "224", "--baselines", "--check-noc"])
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "model swin-t img 224x224 on allspark-16x16 (16x16 nodes, 8 MiB/node)"
    assert lines[1].startswith("solver: optimal, gap 0.00%")
    assert lines[2].split()[:4] == ["stage", "branches", "blocks", "layers"]
    assert [ln.split()[:3] for ln in lines[3:7]] == [
        ["1", "64", "2"], ["2", "16", "2"], ["3", "4", "6"], ["4", "1", "2"]]
    b = next(ln for ln in lines if ln.startswith("baseline B: "))
    # B overflows 8 MiB: it streams what it cannot keep, one temporal layer per stage at
    # 224^2, at 8 bytes per cycle and 2.5 ns per cycle
    streamed = float(b.split("streams ")[1].split(" MiB")[0])
    paid = float(b.split("latency ")[1].split(" ms")[0])
    free = float(b.split("memory ignored: ")[1].split(" ms")[0])
    assert "exceeds node_cap" in b
    assert paid - free == pytest.approx(streamed * 2**20 / 8 * 2.5e-6, abs=2e-3)  # MiB printed to 0.01
    assert "memory fits node_cap" in next(ln for ln in lines if ln.startswith("baseline AH: "))
    assert any("contention stalls 0" in ln for ln in lines)
    assert r.err == ""


def test_help_lists_models_and_presets() -> None:
    r = run_tool(main, ["--help"])
    assert r.code == 0
    assert "models: vit-t," in r.out and "cswin-l" in r.out
    assert "presets: allspark-16x16, allspark-24x24, allspark-8x8" in r.out


def test_user_errors_exit_1() -> None:
    r = run_tool(main, ["--model", "swin-b", "--mesh", "2x2"])
    assert r.code == 1 and r.out == ""
    assert r.err.startswith("pim-orchestrate: error: model 'swin-b' cannot fit the node "
                            "capacity under any scheme")
    assert "constraint 5" in r.err and r.err.count("\n") == 1
    r = run_tool(main, ["--model", "gpt-2"])
    assert (r.code, r.err.split(" (")[0]) == (1, "pim-orchestrate: error: unknown model 'gpt-2'")
    r = run_tool(main, ["--model", "swin-t", "--preset", "tpu"])
    assert r.code == 1 and "unknown preset 'tpu'" in r.err
    r = run_tool(main, ["--model", "swin-t", "--img", "16"])
    assert r.code == 1 and "image size must be an integer in [32, 1280]" in r.err


def test_usage_errors_exit_2() -> None:
    for argv, msg in [
        (["--model", "swin-t", "--time-limit", "-1"], "argument --time-limit: expected a positive"),
        (["--model", "swin-t", "--mesh", "0x4"], "argument --mesh: mesh sides must be in [1, 64]"),
        (["--model", "swin-t", "--form", "dense"], "argument --form: invalid choice"),
        (["--model", "swin-t", "--batch", "0"], "argument --batch: expected an integer batch"),
        (["--model", "swin-t", "--batch", "1e9"], "argument --batch: expected an integer batch"),
        ([], "the following arguments are required: --model"),
    ]:
        r = run_tool(main, argv)
        assert r.code == 2, argv
        assert r.err.startswith(f"pim-orchestrate: error: {msg}"), r.err
        assert r.err.count("\n") == 1


def test_cpsat_form_reaches_the_same_latency() -> None:
    """The compact ILP under CP-SAT and under HiGHS: same optimum, same latency (the
    schedule itself may differ between tied optima)."""
    a = run_tool(main, ["--model", "swin-t", "--img", "224"])
    b = run_tool(main, ["--model", "swin-t", "--img", "224", "--form", "cpsat"])
    assert a.code == b.code == 0, b.err
    assert b.out.splitlines()[1].startswith("solver: optimal, gap 0.00%")
    lat = [[ln for ln in r.out.splitlines() if ln.startswith("latency ")] for r in (a, b)]
    assert lat[0] == lat[1] and len(lat[0]) == 1


def test_table_vi_ablations() -> None:
    """Without weight reuse Swin-B at 640^2 does not fit 8 MiB per node under any
    schedule (Table VI's claim); without sharing the report says what was scheduled."""
    r = run_tool(main, ["--model", "swin-b", "--img", "640", "--no-reuse"])
    assert r.code == 1 and r.out == ""
    assert "with the least memory needs" in r.err and "(constraint 5" in r.err
    r = run_tool(main, ["--model", "swin-t", "--no-sharing"])
    assert r.code == 0, r.err
    assert "weight sharing 0.0000" in r.out
    assert "note: scheduled without weight sharing;" in r.out


def test_simulate_runs_the_lowered_programs(tmp_path) -> None:
    ir = tmp_path / "swin.mlir"
    r = run_tool(main, ["--model", "swin-t", "--img", "224", "--simulate", "--emit-mlir",
                        str(ir)])
    assert r.code == 0, r.err
    line = next(ln for ln in r.out.splitlines() if ln.startswith("simulated latency "))
    sim = float(line.split("simulated latency ")[1].split(" ms")[0])
    ana = float(line.split("eq. 12 ")[1].split(" ms")[0])
    inter = float(line.split("interaction ")[1].split(" ms")[0])
    lat = float(next(ln for ln in r.out.splitlines() if ln.startswith("latency "))
                .split()[1])
    assert ana == lat  # eq. 12 is the latency the report prints
    assert sim > ana + inter > ana  # rings with hops + the interaction eq. 12 leaves out
    text = ir.read_text()
    assert text.count('"pim.stage"') == 4 and '"pim.ring"' in text and '"pim.interact"' in text


def test_simulate_takes_batches_and_simulates_the_baselines() -> None:
    r = run_tool(main, ["--model", "swin-t", "--batch", "2", "--simulate", "--baselines"])
    assert r.code == 0, r.err
    line = next(ln for ln in r.out.splitlines() if ln.startswith("simulated latency"))
    total = float(line.split()[2])
    per = float(line.split("(")[1].split()[0])
    assert per == pytest.approx(total / 2, abs=1e-4)
    lat = float(next(ln for ln in r.out.splitlines() if ln.startswith("latency "))
                .split()[1])
    assert float(line.split("eq. 12 ")[1].split()[0]) == lat  # eq. 12 with N_bt = 2
    sims = [ln for ln in r.out.splitlines() if " simulated: " in ln]
    assert [ln.split()[1] for ln in sims] == ["B", "P", "AH"]
    for ln in sims:  # simulated over simulated: the baseline's latency over Allspark's
        b = float(ln.split("latency ")[1].split()[0])
        assert float(ln.split("speedup ")[1].split("x")[0]) == pytest.approx(
            b / total, abs=0.006)


def test_run_needs_a_lowered_file(tmp_path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("garbage\n")
    r = run_tool(main, ["--run", str(bad)])
    assert r.code == 1 and r.err == (f"pim-orchestrate: error: {bad}:2:1: error: Operation "
                                     f"garbage is not registered\n")
    r = run_tool(main, ["--run", str(tmp_path / "missing.mlir")])
    assert r.code == 1 and "No such file or directory" in r.err
    r = run_tool(main, [])
    assert r.code == 2 and "--model (or --run FILE)" in r.err


def test_run_refuses_a_fifo(tmp_path) -> None:
    import os

    fifo = tmp_path / "in.mlir"
    os.mkfifo(fifo)  # opening it waited for a writer forever
    r = run_tool(main, ["--run", str(fifo)])
    assert (r.code, r.err) == (1, f"pim-orchestrate: error: {fifo}: not a regular file\n")


def test_emit_mlir_to_an_unwritable_path_is_a_user_error(tmp_path) -> None:
    # was "internal error: IsADirectoryError" / "FileNotFoundError" after the report
    for target, why in [(tmp_path, "Is a directory"),
                        (tmp_path / "no" / "x.mlir", "No such file or directory")]:
        r = run_tool(main, ["--model", "vit-t", "--emit-mlir", str(target)])
        assert r.code == 1, r.err
        assert r.err == f"pim-orchestrate: error: --emit-mlir {target}: {why}\n"
