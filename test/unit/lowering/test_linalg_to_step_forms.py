"""convert-linalg-to-step beyond the SwiGLU FFN (issue 18, item 1): batch_matmul,
matmul_transpose_b, row reductions, reshapes, 1-D and 3-D tensors, broadcasts.

Each function of `test/filecheck/lowering/convert-linalg-to-step-forms.mlir`
(whose lowered graphs that file checks line by line) and a few more run in
the fabric's functional mode and equal numpy on random inputs (rtol 1e-9 in
float64; the reference is written from the function's meaning, not its IR).
Bad forms are located errors.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

from steplus.lowering.linalg_to_step import lower_module
from steplus.tools.loading import load_module
from steplus.tools.step_run_linalg import run_function

REPO = Path(__file__).resolve().parents[3]
FORMS = REPO / "test" / "filecheck" / "lowering" / "convert-linalg-to-step-forms.mlir"
EPS = float(np.float32(1e-6))  # torch's eps, rounded to f32 as the IR does


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


REFERENCE = {
    "bmm": lambda a, b: [np.einsum("bmk,bkn->bmn", a, b)],
    "linear_t": lambda x, w, b: [x @ w.T + b],
    "rms": lambda x, w: [x / np.sqrt((x ** 2).mean(-1, keepdims=True) + EPS) * w],
    "red": lambda x: [x.sum(-1), x.max(-1)],
    "resh": lambda x, w: [(x.reshape(4, 32) @ w).reshape(2, 2, 16)],
}


def _chunks(text: str) -> dict[str, str]:
    out = {}
    for chunk in text.split("// -----"):
        name = chunk.split("func.func @", 1)[1].split("(", 1)[0]
        out[name] = chunk
    return out


def _run(tmp_path, text: str, tile: str, schedule: str = "mnk", seed: int = 0):
    path = tmp_path / "f.mlir"
    path.write_text(text)
    module = load_module(str(path), None, False)
    fn = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    shapes = [tuple(t.get_shape()) for t in fn.function_type.inputs]
    (low,) = lower_module(module, tile=tile, schedule=schedule)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s) for s in shapes]
    return args, run_function(module, low, args)


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("tile", ["2x4x8", "8x16x16"])
def test_the_filecheck_forms_compute_their_function(tmp_path, name, tile):
    text = _chunks(FORMS.read_text())[name]
    args, got = _run(tmp_path, text, tile if name != "resh" or tile != "8x16x16" else "2x16x16")
    expected = REFERENCE[name](*args)
    assert [g.shape for g in got] == [e.shape for e in expected]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


SOFTMAX = """#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @soft(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<8xi64>) -> tensor<8xi64>
  %2 = tensor.empty() : tensor<8xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x16xf32>) outs(%3, %1 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %12 = linalg.index 1 : index
    %13 = arith.index_cast %12 : index to i64
    %14 = arith.maximumf %in, %out : f32
    %15 = arith.cmpf ogt, %in, %out : f32
    %16 = arith.select %15, %13, %out_1 : i64
    linalg.yield %14, %16 : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %5 = tensor.empty() : tensor<8x16xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<8x16xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.subf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<8x16xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<8x16xf32>) outs(%5 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = math.exp %in : f32
    linalg.yield %12 : f32
  } -> tensor<8x16xf32>
  %8 = tensor.empty() : tensor<8x1xf32>
  %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<8x16xf32>) outs(%9 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.addf %in, %out : f32
    linalg.yield %12 : f32
  } -> tensor<8x1xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %10 : tensor<8x16xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.divf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<8x16xf32>
  return %11 : tensor<8x16xf32>
}
"""  # torch.softmax(x, -1) through torch_mlir.fx.export_and_import (linalg-on-tensors)


@pytest.mark.parametrize("tile", ["2x16", "8x32"])
def test_torch_softmax_with_whole_rows(tmp_path, tile):
    (x,), (got,) = _run(tmp_path, SOFTMAX, tile)
    np.testing.assert_allclose(got, _softmax(x), rtol=1e-9)


BATCH_3D = """#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d2)>
func.func @f(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>, %s: tensor<8x4xf32>, %r: tensor<4xf32>, %w: tensor<4x8xf32>) -> (tensor<2x8x4xf32>, tensor<16x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%z : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %d = linalg.generic {indexing_maps = [#id, #mn, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %s, %r : tensor<2x8x4xf32>, tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %q: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %n = arith.subf %m, %q : f32
    linalg.yield %n : f32
  } -> tensor<2x8x4xf32>
  %flat = tensor.collapse_shape %d [[0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%flat, %w : tensor<16x4xf32>, tensor<4x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %d, %o : tensor<2x8x4xf32>, tensor<16x8xf32>
}
"""


def test_batched_stream_broadcasts_and_a_flattened_chain(tmp_path):
    """A 3-D stream (batch outermost) times a [8, 4] argument broadcast over the
    batch, minus a [4] row; flattened into the rows of a second matmul (its left
    operand streams in: schedule "mnk" then "mk")."""
    (a, b, s, r, w), (d, o) = _run(tmp_path, BATCH_3D, "4x4x8", "mnk_mk")
    expected = np.einsum("bmk,bkn->bmn", a, b) * s - r
    np.testing.assert_allclose(d, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(o, expected.reshape(16, 4) @ w, rtol=1e-9, atol=1e-12)


ONE_D = """#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = arith.constant 2.000000e+00 : f32
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %b : f32
    %n = arith.subf %c, %m : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
"""


def test_one_dimensional_tensors_are_rows(tmp_path):
    (x, y), (got,) = _run(tmp_path, ONE_D, "4x8")
    np.testing.assert_allclose(got, 2.0 - np.maximum(x, y), rtol=1e-12)


# -- bad forms: located errors -----------------------------------------------------------
def _err(step_opt, tmp_path, text: str, opts: str) -> tuple[str, str]:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    r = step_opt([str(path), "-p", f"convert-linalg-to-step{{{opts}}}"])
    assert r.code == 1 and r.out == ""
    return r.err.splitlines()[0], str(path)


def test_a_split_row_feeding_a_reduction_and_its_user_is_rejected(step_opt, tmp_path):
    line, path = _err(step_opt, tmp_path, SOFTMAX, 'tile="2x8"')
    assert line == (f"{path}:28:3: error: this value feeds a row reduction and another op "
                    "that waits for it, and a row is 2 tiles: tile N whole (16; option tile) "
                    "or return it and reload it")


BAD_FORMS = {
    "argmax used": (SOFTMAX.replace("return %11 : tensor<8x16xf32>",
                                    "return %11, %4#1 : tensor<8x16xf32>, tensor<8xi64>")
                    .replace("-> tensor<8x16xf32> {\n  %c0_i64",
                             "-> (tensor<8x16xf32>, tensor<8xi64>) {\n  %c0_i64"),
                    "12:3", "the index result of a max reduction (argmax) is used: not "
                    "supported (only the values)"),
    "sum from one": (SOFTMAX.replace("%cst_0 = arith.constant 0.000000e+00",
                                     "%cst_0 = arith.constant 1.000000e+00"),
                     "35:3", "a row sum must start from a linalg.fill of 0.0 (its identity)"),
    "computed reshape": ("""func.func @f(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>) -> tensor<2x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%z : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %r = tensor.collapse_shape %c [[0], [1, 2]] : tensor<2x8x4xf32> into tensor<2x32xf32>
  return %r : tensor<2x32xf32>
}""", "6:3", "tensor.collapse_shape of a computed 2x8x4 into 2x32 changes the tiling: only "
        "unit dims, merging the batch into the rows and splitting rows into a batch are "
        "supported (reshape arguments instead: they are views of memory)"),
    "rank 4": ("""func.func @f(%a: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  return %a : tensor<2x2x8x16xf32>
}""", "1:1", "argument 0 is tensor<2x2x8x16xf32>: only tensors of rank 1 to 3 are supported "
        "(rows, columns and one batch dim)"),
    "column reduction": ("""#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @f(%a: tensor<8x16xf32>) -> tensor<16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<8x16xf32>) outs(%z : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}""", "7:3", "only reductions over the last dim are supported (row sums and row maxima)"),
    "batch broadcast of a computed value": ("""#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @f(%a: tensor<8x16xf32>, %w: tensor<16x4xf32>, %s: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e3 = tensor.empty() : tensor<2x8x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %c : tensor<2x8x4xf32>, tensor<8x4xf32>) outs(%e3 : tensor<2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}""", "9:3", "input map affine_map<(d0, d1, d2) -> (d1, d2)> is not a broadcast the tiling can "
        "express of a computed tensor (rows of a [N] argument, columns of a row reduction, "
        "the batch of an argument)"),
    "transposed left operand": ("""func.func @f(%a: tensor<16x8xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %et = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%a : tensor<16x8xf32>) outs(%et : tensor<8x16xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = linalg.matmul ins(%t, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}""", "7:3", "a transposed left operand of linalg.matmul is not supported (only the right one, "
        "as matmul_t)"),
}


@pytest.mark.parametrize("case", sorted(BAD_FORMS))
def test_bad_forms_are_located_errors(step_opt, tmp_path, case):
    text, where, message = BAD_FORMS[case]
    line, path = _err(step_opt, tmp_path, text, 'tile="2x16"')
    assert line == f"{path}:{where}: error: {message}"


@pytest.mark.parametrize("tile,tm", [("2x4", 2), ("4x8", 4), ("8x16", 8)])
def test_rmsnorm_traffic_is_its_closed_form(tmp_path, tile, tm):
    """RMSNorm of x [M, N] (f32) by w [N]: x is read twice (the row reduction, and the
    product that waits for it), w once per row tile, the f32 result written once:
    4 (2MN + (M/tm) N + MN) bytes — by step-metrics and by the simulator."""
    from steplus.passes.step.metrics import compute_metrics
    from steplus.runtime.fabric.build import build_program
    from steplus.dialects.step import GraphOp

    path = tmp_path / "rms.mlir"
    path.write_text(_chunks(FORMS.read_text())["rms"])
    module = load_module(str(path), None, False)
    lower_module(module, tile=tile)
    M, N = 8, 16
    expected = 4 * (2 * M * N + (M // tm) * N + M * N)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    assert compute_metrics(graph).offchip == expected
    assert build_program(module).run().offchip_traffic == expected


@pytest.mark.skipif(importlib.util.find_spec("torch_mlir") is None,
                    reason="torch-mlir is not installed")
@pytest.mark.parametrize("name", ["rms", "red", "resh"])
def test_the_torch_forms_are_torch_mlirs_output(name):
    """@rms, @red, @resh of the FileCheck forms are what torch-mlir's FX importer
    (linalg-on-tensors) emits for examples/workloads/torch_modules.py's modules."""
    import warnings

    import torch
    from torch_mlir import fx

    from steplus.examples.workloads.torch_modules import FORMS as MODULES

    cls, shapes = MODULES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(cls(), *(torch.zeros(s) for s in shapes),
                                        output_type="linalg-on-tensors", func_name=name))

    def canon(t: str) -> list[str]:
        return [ln.strip() for ln in t.splitlines()
                if ln.strip() and ln.strip() not in ("module {", "}") and not ln.startswith("//")]

    assert canon(text) == canon(_chunks(FORMS.read_text())[name])
