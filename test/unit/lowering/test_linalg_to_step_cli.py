"""`step-run FILE --lower OPTIONS`: a linalg file lowered by convert-linalg-to-step and
simulated (issue 18 item 5); without --lower step-run names the flag."""

from __future__ import annotations

import pytest

from conftest import REPO, run_tool
from golden import SWIGLU_HDL_CYCLES

LINALG = REPO / "examples" / "linalg"


def _step_run(argv):
    from steplus.tools.step_run import main

    return run_tool(main, argv)


def test_step_run_lowers_and_simulates_a_linalg_file():
    # the lowered graph is op for op the reference swiglu_tm32_tn128 graph
    # (test_linalg_to_step), so it simulates to that graph's cycles on swiglu-hdl
    r = _step_run([str(LINALG / "swiglu_ffn.mlir"), "--lower", 'tile="32x128" schedule="mn_mk"',
                   "--preset", "swiglu-hdl", "--json"])
    assert r.code == 0, r.err
    import json

    metrics = json.loads(r.out)
    assert metrics["cycles"] == SWIGLU_HDL_CYCLES[(32, 128)]
    # spec §5.5, nb = 4: X per N tile (F/tn = 4), 3 weights per M tile (B/tm = 2), output
    B, D, F = 64, 256, 512
    assert metrics["offchip_traffic_bytes"] == 4 * B * D * 4 + 3 * 4 * D * F * 2 + 4 * B * D


def test_a_linalg_file_without_lower_names_the_flag():
    path = str(LINALG / "swiglu_ffn_small.mlir")
    r = _step_run([path])
    assert r.code == 2 and r.out == ""
    assert r.err.startswith(f"step-run: error: {path} is a tensor program (func.func on "
                            "tensors), not a step graph: lower it with --lower ")
    assert r.err.count("\n") == 1


@pytest.mark.parametrize("argv,code,first", [
    (['--lower', 'tile="3x8"'], 1, "swiglu_ffn_small.mlir:10:5: error: linalg.matmul #0: tile "
                                  "size 3 does not divide M=8 (option tile; padding is not "
                                  "supported)"),
    (['--lower', 'tile="4x8"', '--ticks', '3'], 2,
     "step-run: error: --ticks does not apply with --lower: the lowered step graph runs on "
     "the fabric simulator"),
    (['--lower', 'tile="4x8"', '--backend', 'ila'], 2,
     "step-run: error: --backend does not apply with --lower: the lowered step graph runs on "
     "the fabric simulator"),
    (['--lower', 'tile="4x8"}{'], 2, "step-run: error: --lower takes convert-linalg-to-step "
                                     "options (tile=... schedule=... memory=...), got "
                                     "'tile=\"4x8\"}{'"),
])
def test_bad_lower_requests_are_one_line_errors(argv, code, first):
    r = _step_run([str(LINALG / "swiglu_ffn_small.mlir"), *argv])
    assert r.code == code and r.out == ""
    assert r.err.splitlines()[0].endswith(first)


def test_step_run_lowers_torch_mlirs_rmsnorm():
    """The RMSNorm of the forms FileCheck test (torch-mlir's linalg) through step-run:
    its traffic is x twice, w per row tile, the f32 result: 4 (2MN + (M/tm) N + MN)."""
    import json

    forms = (REPO / "test" / "filecheck" / "lowering" / "convert-linalg-to-step-forms.mlir")
    chunk = next(c for c in forms.read_text().split("// -----") if "func.func @rms" in c)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "rms.mlir"
        path.write_text(chunk)
        r = _step_run([str(path), "--lower", 'tile="2x8"', "--json"])
    assert r.code == 0, r.err
    M, N, tm = 8, 16, 2
    assert json.loads(r.out)["offchip_traffic_bytes"] == 4 * (2 * M * N + (M // tm) * N + M * N)
