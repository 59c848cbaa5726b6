"""Both FLOP totals of a graph, named and explained the same way by step-run and
step-metrics (issue 28 item 5): the static count of what the fabric executes
(`GraphMetrics.executed_flops`: step-metrics' `flops` minus the accumulator adds
the PCUs fuse into the matmuls) equals the count the simulator accumulates."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_tool
from steplus.passes.step.fabric_placement import find_graph
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.reports import format_metrics, fused_adds_note
from steplus.tools.loading import load_module
from steplus.tools.step_run import main as step_run

SWIGLU = Path(__file__).parents[2] / "filecheck/tools/inputs/swiglu-tm32-tn128.mlir"
# SwiGLU FFN, B=64, D=256, F=512: three matmuls 2*B*D*F, SiLU 8 per scalar of
# the B x F product, the product itself B*F; the fused accumulator adds are one
# per output scalar per K tile: gate and up one K tile (B*F each), down four
# K tiles of 128 over a B x D output (4*B*D).
B, D, F = 64, 256, 512
EXECUTED = 3 * 2 * B * D * F + 8 * B * F + B * F
FUSED = 2 * B * F + 4 * B * D


def test_static_executed_count_is_the_simulators():
    res = run_tool(step_run, [str(SWIGLU), "--json"])
    assert res.code == 0, res.err
    simulated = json.loads(res.out)["flops"]
    gm = compute_metrics(find_graph(load_module(str(SWIGLU)), None))
    assert simulated == EXECUTED
    assert gm.executed_flops == EXECUTED
    assert gm.fused_flops == FUSED
    assert gm.flops == EXECUTED + FUSED


def test_step_metrics_names_the_executed_count_as_step_run_does():
    gm = compute_metrics(find_graph(load_module(str(SWIGLU)), None))
    text = format_metrics([gm], "text")
    note = fused_adds_note("executed on the fabric", EXECUTED, FUSED)
    assert f"total flops = {EXECUTED + FUSED}   {note}\n" in text
    totals = json.loads(format_metrics([gm], "json"))["graphs"][0]["totals"]
    assert (totals["flops"], totals["flops_executed"]) == (EXECUTED + FUSED, EXECUTED)
    run = run_tool(step_run, [str(SWIGLU)])
    assert fused_adds_note("step-metrics", EXECUTED + FUSED, FUSED) in run.out
