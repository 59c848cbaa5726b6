"""step-specialize{kv=...} / step-run --kv (issue 24, round one's "a huge KV option is accepted"):
a KV trace only binds the batch symbol B, so a trace for a graph without B (a graph built for
one trace, static shapes) or one contradicting bind= is an error at the graph, not accepted
and ignored (a trace of 2**40-token lengths or of 3 requests for a 16-request graph ran as if
it were the graph's own)."""

from __future__ import annotations

import numpy as np

from conftest import REPO

ATTENTION = REPO / "examples" / "step" / "attention_coarse_b16_high.mlir"
SYMBOLIC = """step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 1], !step.tile<1x8xbf16>>
  step.consume %x : !step.stream<[B, 1], !step.tile<1x8xbf16>>
}
"""


def _kv(tmp_path, lengths) -> str:
    path = tmp_path / "kv.npy"
    np.save(path, np.array(lengths, dtype=np.int64))
    return str(path)


def test_a_kv_trace_for_a_static_graph_is_an_error(tmp_path, step_opt):
    kv = _kv(tmp_path, [2**40] * 3)
    r = step_opt([str(ATTENTION), "-p", f'step-specialize{{kv="{kv}"}}'])
    assert r.code == 1 and r.out == ""
    assert r.err.splitlines()[0] == (
        f"{ATTENTION}:3:3: error: step-specialize: kv= binds the batch symbol B to the trace's 3 "
        "lengths, but @attention_coarse_b16_high has no symbol B (its shapes are static); build "
        "the graph for this trace instead")


def test_step_run_kv_on_a_static_graph_is_the_same_error(tmp_path):
    from conftest import run_tool
    from steplus.tools.step_run import main

    r = run_tool(main, [str(ATTENTION), "--kv", _kv(tmp_path, [5] * 16)])
    assert r.code == 1 and r.out == ""
    assert "has no symbol B (its shapes are static)" in r.err.splitlines()[0]


def test_a_kv_trace_binds_b_of_a_symbolic_graph(tmp_path, step_opt):
    src = tmp_path / "g.mlir"
    src.write_text(SYMBOLIC)
    r = step_opt([str(src), "-p", f'step-specialize{{kv="{_kv(tmp_path, [4, 8, 2**40])}"}}'])
    assert r.code == 0, r.err
    assert "step.bind = {B = 3 : i64}" in r.out


def test_bind_contradicting_the_kv_batch_is_an_error(tmp_path, step_opt):
    src = tmp_path / "g.mlir"
    src.write_text(SYMBOLIC)
    kv = _kv(tmp_path, [4, 8, 16])
    r = step_opt([str(src), "-p", f'step-specialize{{kv="{kv}" bind="B=4"}}'])
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"{src}:1:1: error: step-specialize: bind= gives B=4 but the KV trace has 3 lengths")
