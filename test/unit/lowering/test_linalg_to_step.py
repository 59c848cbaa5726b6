"""convert-linalg-to-step: torch-mlir's SwiGLU FFN -> the reference STeP graph.

- op for op: the lowered graph equals `examples/workloads/graphs.py`'s
  `swiglu(tm, tn)` for all 15 (tm, tn) of spec §8.1 (generic form, SSA names
  and the graph's symbol dropped);
- cycles: the lowered graph simulates to the reference graph's cycles and to
  the cycles golden.SWIGLU_HDL_CYCLES pins, for all 15 configurations;
- traffic: step-metrics and the simulator give spec §5.5's closed form;
- functional: the fabric's functional mode computes the function (numpy; the
  PyTorch module itself when torch is installed);
- bad input: located errors / usage errors, remarks.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.printer import Printer

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.lowering.linalg_to_step import lower_module
from steplus.runtime.fabric.build import build_program
from steplus.passes.step.metrics import compute_metrics
from steplus.dialects.target.fabric import get_preset
from steplus.runtime.fabric.contexts import StoreCtx
from steplus.tools.loading import load_module

from golden import SWIGLU_HDL_CYCLES as CYCLES

REPO = Path(__file__).resolve().parents[3]
LINALG = REPO / "examples" / "linalg"
from steplus.examples.workloads import graphs as workloads

HDL = get_preset("swiglu-hdl")
SWEEP = [(tm, tn) for tm in (16, 32, 64) for tn in (16, 32, 64, 128, 256)]
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_TORCH_MLIR = HAVE_TORCH and importlib.util.find_spec("torch_mlir") is not None


def _lowered(name: str = "swiglu_ffn.mlir", **opts) -> ModuleOp:
    module = load_module(str(LINALG / name), None, False)
    lower_module(module, **opts)
    return module


def _graph(module: ModuleOp) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


def _canonical(module: ModuleOp) -> str:
    """Generic form without SSA name hints and graph symbol: the ops, their
    properties, types and operand wiring, in order."""
    m = module.clone()
    for op in m.walk():
        if isinstance(op, GraphOp):
            op.sym_name = StringAttr("g")
        for r in op.results:
            r.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    a.name_hint = None
    out = __import__("io").StringIO()
    Printer(stream=out, print_generic_format=True).print_op(m)
    return out.getvalue()


# -- op for op and cycles --------------------------------------------------------------
@pytest.mark.parametrize("tm,tn", SWEEP)
def test_swiglu_lowers_op_for_op_to_the_reference_graph(tm, tn):
    got = _canonical(_lowered(tile=f"{tm}x{tn}", schedule="mn_mk"))
    assert got == _canonical(workloads.swiglu(tm, tn))
    assert got.count('"step.linear_offchip_load"') == 4


@pytest.mark.parametrize("tm,tn", SWEEP)
def test_swiglu_simulates_to_the_reference_cycles(tm, tn):
    m = build_program(_lowered(tile=f"{tm}x{tn}"), HDL).run()
    assert m.cycles == CYCLES[(tm, tn)]
    assert m.cycles == build_program(workloads.swiglu(tm, tn), HDL).run().cycles


def _swiglu_traffic(B: int, D: int, F: int, tm: int, tn: int) -> int:
    """Spec §5.5, nb = 4: X per N tile, 3 weights per M tile, f32 output."""
    return 4 * B * D * (F // tn) + 3 * 4 * D * F * (B // tm) + 4 * B * D


@pytest.mark.parametrize("tm,tn", [(16, 16), (32, 128), (64, 256)])
def test_traffic_equals_the_closed_form(tm, tn):
    module = _lowered(tile=f"{tm}x{tn}")
    expected = _swiglu_traffic(64, 256, 512, tm, tn)
    assert compute_metrics(_graph(module)).offchip == expected
    assert build_program(module, HDL).run().offchip_traffic == expected
    # FLOPs: 3 matmuls (2BDF each, plus the accumulating add of every K step)
    # + SiLU (8/elem) + mul on B x F
    flops = compute_metrics(_graph(module)).flops
    adds = 64 * 512 + 64 * 256 * (512 // tn)  # gate/up: one K step; down: F/tn steps
    assert flops == 3 * 2 * 64 * 256 * 512 + adds + 64 * 512 + 9 * 64 * 512


def test_default_memory_layout():
    text = str(_lowered(tile="32x128"))
    bases = [int(s.split(" : ")[0]) for s in text.split("base_addr = ")[1:]]
    # loads X, Wg, Wu, Wd at 16 MiB boundaries, the store at 1 GiB
    assert bases == [0, 16 << 20, 32 << 20, 48 << 20, 1 << 30]
    text = str(_lowered(tile="32x128", memory="arg1=4194304,result0=0x10000000"))
    bases = [int(s.split(" : ")[0]) for s in text.split("base_addr = ")[1:]]
    assert bases == [0, 4 << 20, 16 << 20, 32 << 20, 1 << 28]


# -- functional ------------------------------------------------------------------------
def _run_functional(module: ModuleOp, lowered, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Bind each load to the argument at its base address; the stored results
    reassembled from their [M/tm, N/tn] tile streams."""
    by_addr = {lowered.addresses[f"arg{i}"]: a for i, a in enumerate(arrays)}
    loads = [o for o in _graph(module).body.block.ops if isinstance(o, so.LinearOffChipLoadOp)]
    tensors = {f"linear_offchip_load{k}": np.asarray(by_addr[o.base_addr.value.data], np.float64)
               for k, o in enumerate(loads)}
    prog = build_program(module, HDL, functional=True, tensors=tensors)
    prog.run()
    stores = [c for c in prog.sim.contexts if isinstance(c, StoreCtx)]
    out = []
    for st, lay in zip(stores, lowered.result_layouts):
        tiles = [np.asarray(t) for t in st.stored]
        out.append(np.block([[tiles[i * lay.nt + j] for j in range(lay.nt)]
                             for i in range(lay.mt)]))
    return out


def _swiglu_inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) / 4 for s in ((8, 16), (16, 32), (16, 32), (32, 16))]


@pytest.mark.parametrize("tile", ["4x8", "2x16", "8x32", "4x4"])
def test_functional_mode_computes_the_ffn(tile):
    module = load_module(str(LINALG / "swiglu_ffn_small.mlir"), None, False)
    (low,) = lower_module(module, tile=tile)
    x, wg, wu, wd = _swiglu_inputs()
    (out,) = _run_functional(module, low, [x, wg, wu, wd])
    g = x @ wg
    np.testing.assert_allclose(out, (g / (1 + np.exp(-g)) * (x @ wu)) @ wd, rtol=1e-5, atol=1e-9)


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (pip install -e .[test])")
def test_functional_mode_equals_the_pytorch_module():
    import torch

    from steplus.examples.workloads.torch_modules import SwiGLUFFN, swiglu_inputs

    args = swiglu_inputs(8, 16, 32, seed=3)
    expected = SwiGLUFFN()(*args).detach().numpy()
    module = load_module(str(LINALG / "swiglu_ffn_small.mlir"), None, False)
    (low,) = lower_module(module, tile="4x8")
    (out,) = _run_functional(module, low, [a.numpy() for a in args])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not HAVE_TORCH_MLIR, reason="torch and torch-mlir are not installed")
def test_the_generator_reproduces_the_committed_files():
    sys.path.insert(0, str(LINALG))
    import gen_swiglu

    for stem, shape in gen_swiglu.SHAPES.items():
        assert gen_swiglu.linalg_text(*shape) == (LINALG / f"{stem}.mlir").read_text()


TRANSPOSED = """
#map = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.generic {indexing_maps = [#t, #map], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x16xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16x32xf32>
  %0 = tensor.empty() : tensor<8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%2, %b : tensor<8x32xf32>, tensor<8x32xf32>) outs(%0 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %4 = arith.addf %in, %in_1 : f32
    %5 = math.exp %4 : f32
    linalg.yield %5 : f32
  } -> tensor<8x32xf32>
  return %3 : tensor<8x32xf32>
}
"""


def test_transposed_weight_bias_and_fused_chain(tmp_path):
    path = tmp_path / "linear.mlir"
    path.write_text(TRANSPOSED)
    module = load_module(str(path), None, False)
    (low,) = lower_module(module, tile="4x8x8", schedule="mnk")
    fns = [a.fn.data for a in module.walk() if isinstance(a, so.ApplyOp)]
    assert fns == ["matmul_t", "add", "zero", "add", "exp"]
    stores = [o for o in module.walk() if isinstance(o, so.LinearOffChipStoreOp)]
    assert len(stores) == 1  # the matmul result and the add never go off-chip
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((8, 16)), rng.standard_normal((32, 16)), rng.standard_normal((8, 32))
    (out,) = _run_functional(module, low, [x, w, b])
    np.testing.assert_allclose(out, np.exp(x @ w.T + b), rtol=1e-5)


# -- bad input -------------------------------------------------------------------------
def _opt(step_opt, tmp_path, text: str, opts: str = ""):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return step_opt([str(path), "-p", f"convert-linalg-to-step{{{opts}}}" if opts
                     else "convert-linalg-to-step"]), str(path)


SWIGLU_SMALL = (LINALG / "swiglu_ffn_small.mlir").read_text()


def test_tile_that_does_not_divide_is_a_located_error_naming_the_option(step_opt, tmp_path):
    r, path = _opt(step_opt, tmp_path, SWIGLU_SMALL, 'tile="3x8"')
    assert r.code == 1 and r.out == ""
    assert r.err.splitlines()[0] == (
        f"{path}:10:5: error: linalg.matmul #0: tile size 3 does not divide M=8 "
        "(option tile; padding is not supported)")


def test_schedule_that_rereads_a_streamed_operand_is_rejected(step_opt, tmp_path):
    r, path = _opt(step_opt, tmp_path, SWIGLU_SMALL, 'tile="4x8" schedule="mn_mn"')
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"{path}:32:5: error: linalg.matmul #2: schedule 'mn' tiles N, but the left operand "
        "streams in from an earlier op and cannot be re-read per N tile without going "
        "off-chip; tile M and K at this level (option schedule)")


def test_a_tile_larger_than_the_dim_is_a_remark(step_opt, tmp_path):
    r, path = _opt(step_opt, tmp_path, SWIGLU_SMALL, 'tile="4x64"')
    assert r.code == 0 and "step.graph @swiglu_ffn" in r.out
    assert [ln for ln in r.err.splitlines() if "remark:" in ln] == [
        f"{path}:10:5: remark: linalg.matmul #0: N=32 is smaller than the tile size 64: "
        "not tiled along N",
        f"{path}:24:5: remark: linalg.matmul #1: N=32 is smaller than the tile size 64: "
        "not tiled along N"]


@pytest.mark.parametrize("opts,message", [
    ('tile="32"', "'convert-linalg-to-step': tile: expected MxN or MxNxK, got '32'"),
    ('tile="0x8"', "'convert-linalg-to-step': tile: tile sizes must be in 1..1048576, got 0"),
    ('tile="4x8;x=4x4"', "'convert-linalg-to-step': tile: expected an override I=MxN[xK], "
                         "got 'x=4x4'"),
    ('schedule="mq"', "'convert-linalg-to-step': schedule: 'mq' is not a list of tiled dims "
                      "like 'mn_mk' (letters m, n, k once each, '_' between matmul levels)"),
    ('memory="arg0=-1"', "'convert-linalg-to-step': memory: arg0=-1 is out of range 0..2^62"),
    ('memory="w=0"', "'convert-linalg-to-step': memory: expected argI=ADDR, resultI=ADDR or "
                     "align=BYTES, got 'w=0'"),
])
def test_malformed_options_are_usage_errors(step_opt, tmp_path, opts, message):
    r, _ = _opt(step_opt, tmp_path, SWIGLU_SMALL, opts)
    assert r.code == 2 and r.out == ""
    assert r.err == f"step-opt: error: invalid options for pass {message}\n"


def test_overlapping_memory_is_a_located_error(step_opt, tmp_path):
    r, path = _opt(step_opt, tmp_path, SWIGLU_SMALL, 'memory="arg1=100"')
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"{path}:5:3: error: memory: arg1 at 100 overlaps arg0 [0, 512) (option memory)")


BAD = {
    "dynamic": ("""func.func @f(%a: tensor<?x16xf32>) -> tensor<?x16xf32> {
  return %a : tensor<?x16xf32>
}""", "1:1", "argument 0 has a dynamic shape tensor<?x16xf32>: convert-linalg-to-step "
      "needs static shapes (the tiling cannot express '?')"),
    "integer": ("""func.func @f(%a: tensor<8x16xi32>, %b: tensor<16x4xi32>) -> tensor<8x4xi32> {
  %c = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x4xi32>
  %z = linalg.fill ins(%c : i32) outs(%e : tensor<8x4xi32>) -> tensor<8x4xi32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xi32>, tensor<16x4xi32>) outs(%z : tensor<8x4xi32>) -> tensor<8x4xi32>
  return %r : tensor<8x4xi32>
}""", "1:1", "argument 0 is tensor<8x16xi32>: convert-linalg-to-step lowers floating-point "
      "tensors (tiles compute in f32)"),
    "unsupported": ("""func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tensor.empty() : tensor<8x16xf32>
  %1 = linalg.copy ins(%a : tensor<8x16xf32>) outs(%0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}""", "3:3", "'linalg.copy' is not supported by convert-linalg-to-step (supported: "
      "tensor.empty, linalg.fill, linalg.matmul, linalg.matmul_transpose_b, "
      "linalg.batch_matmul, linalg.transpose, element-wise and row-reduction linalg.generic, "
      "tensor.collapse_shape, tensor.expand_shape)"),
    "sin": ("""#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tensor.empty() : tensor<8x16xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<8x16xf32>, tensor<8x16xf32>) outs(%0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %2 = math.sin %in : f32
    linalg.yield %2 : f32
  } -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}""", "4:3", "'math.sin' in a linalg.generic body has no step library function "
      "(supported: arith.addf, arith.subf, arith.mulf, arith.divf, arith.negf, "
      "arith.maximumf, arith.minimumf, math.exp, math.rsqrt, math.erf, math.tanh, "
      "math.fpowi/powf by 2, arith.cmpf as a 0/1 mask (arith.uitofp, arith.select of 1.0 "
      "and 0.0))"),
    "weights computed": ("""func.func @f(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x16xf32>
  %1 = linalg.fill ins(%c0 : f32) outs(%0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %2 = linalg.matmul ins(%b, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  %3 = linalg.matmul ins(%a, %2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}""", "8:3", "linalg.matmul #1: the right operand must be a function argument (a weight in "
      "memory); a computed right operand is not supported"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_unsupported_input_is_a_located_error(step_opt, tmp_path, case):
    text, where, message = BAD[case]
    r, path = _opt(step_opt, tmp_path, text)
    assert r.code == 1 and r.out == ""
    assert r.err.splitlines()[0] == f"{path}:{where}: error: {message}"
