"""step-hierarchical-tiling on the SwiGLU layer (seed §4.3, appendix A.2) at small shapes
(B=32, D=32, F=64, tm=tn=32 logical tiles, 16x16 physical tiles): off-chip traffic
and FLOPs are those of the logical graph, the graph simulates, and in functional
simulation it writes the same values as the logical graph — which are SwiGLU's.
"""

from __future__ import annotations


import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.runtime.fabric.build import build_program
from steplus.passes.step.hierarchical_tiling import StepHierarchicalTilingPass
from steplus.passes.step.metrics import compute_metrics
from steplus.dialects.target.fabric import get_preset
from steplus.runtime.fabric.contexts import AccumCtx, MapCtx
from steplus.runtime.fabric.contexts import StoreCtx

from steplus.examples.workloads import graphs as workloads

CFG = get_preset("swiglu-hdl")


def _swiglu(tile: str | None = None) -> ModuleOp:
    module = workloads.swiglu(32, 32, batch=32, hidden=32, inter=64)
    if tile is not None:
        StepHierarchicalTilingPass(tile=tile).apply(Context(), module)
    return module


def _graph(module: ModuleOp) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


def _memory(module: ModuleOp) -> dict[str, np.ndarray]:
    """Name the loads ld0.. and give each the same small integers in both graphs."""
    rng = np.random.default_rng(0)
    tensors = {}
    loads = [o for o in _graph(module).body.block.ops if isinstance(o, so.LinearOffChipLoadOp)]
    for k, op in enumerate(loads):
        op.attributes["name"] = StringAttr(f"ld{k}")
        el = op.output.type.element
        in_shape = [int(x) for x in op.tiled_in_shape.get_values()]
        total = int(np.prod(in_shape))
        inner = in_shape[-1] if len(in_shape) >= 2 else 1  # as the load reads it
        shape = (-(-total // inner) * el.rows.data, inner * el.cols.data)
        tensors[f"ld{k}"] = rng.integers(-2, 3, shape).astype(np.float64)
    return tensors


def _stored(module: ModuleOp):
    prog = build_program(module, CFG, functional=True, tensors=_memory(module))
    prog.run()
    out = [np.asarray(v) for c in prog.sim.contexts if isinstance(c, StoreCtx) for v in c.stored]
    return out, prog.tensors


def test_traffic_and_flops_are_unchanged_on_chip_grows():
    before = compute_metrics(_graph(_swiglu()))
    after = compute_metrics(_graph(_swiglu("16x16")))
    # X twice (n = 2), Wg, Wu, Wd (2 tiles each) of 32x32 f32, the 32x32 output
    assert before.offchip == after.offchip == (2 + 2 + 2 + 2 + 1) * 32 * 32 * 4
    # 3 matmuls of 32x32x64 + their accumulating adds + SiLU (8/elem) + mul
    assert before.flops == after.flops == 3 * (2 * 32 * 32 * 64 + 2 * 32 * 32) + 9 * 32 * 64
    assert after.onchip > before.onchip  # repeats, physical accumulators, joins


def test_every_compute_operator_works_on_16x16_tiles():
    graph = _graph(_swiglu("16x16"))
    shapes = {(a.fn.data, tuple((t.type.rows.data, t.type.cols.data) for t in a.args))
              for a in graph.walk() if isinstance(a, so.ApplyOp)
              and a.fn.data in ("matmul", "matmul_acc", "silu", "mul")}
    phys = ((16, 16),)
    assert shapes == {("matmul_acc", phys * 3), ("silu", phys), ("mul", phys * 2)}


def test_the_tiled_graph_simulates_with_the_same_traffic():
    base = build_program(_swiglu(), CFG).run()
    tiled = build_program(_swiglu("16x16"), CFG).run()
    assert tiled.offchip_traffic == base.offchip_traffic == 36864
    # the simulator counts the logical accumulating add once it is no longer
    # fused with the matmul (it is its own accum after the join)
    assert tiled.flops == compute_metrics(_graph(_swiglu("16x16"))).flops


def test_the_physical_operators_take_the_roofline_cycles_of_16x16_tiles():
    """§3 on every firing of a 16x16 operator (swiglu-hdl: compute 4096,
    PMU_BW 256): an operand tile that comes from a memory unit costs
    ceil(16*16*4 / 256) = 4 cycles to read, a 16x16x16 matmul 2*16^3/4096 = 2.
    The gate and up matmuls read X and W tiles (both split from loads): max(8, 2);
    down reads only Wd from memory (its other operand is the computed product):
    max(4, 2); SiLU ceil(8*256/4096) = 1 and Mul 1 per 16x16 tile. The logical
    accumulating adds after the joins (32x32: ceil(1024/4096) = 1) fire once per
    logical step: gate and up (B/32)(F/32) output tiles x 1 K step, down
    (B/32) output tiles x F/32 K steps."""
    prog = build_program(_swiglu("16x16"), CFG)
    prog.run()
    fired = sorted((c.firings, c.busy) for c in prog.contexts
                   if isinstance(c, (AccumCtx, MapCtx)))
    B = D = 32
    F = 64
    gate_up = (B // 16) * (F // 16) * (D // 16)  # output tiles x K steps
    down = (B // 16) * (D // 16) * (F // 16)
    elementwise = (B // 16) * (F // 16)
    steps = (B // 32) * (F // 32)  # the logical steps of gate, of up and of down
    adds = [(steps, steps)] * 3  # 1 cycle each
    assert fired == sorted([(gate_up, 8 * gate_up)] * 2 + [(down, 4 * down)]
                           + [(elementwise, elementwise)] * 2 + adds)


def test_the_tiled_graph_computes_swiglu():
    (base,), mem = _stored(_swiglu())
    (tiled,), _ = _stored(_swiglu("16x16"))
    np.testing.assert_allclose(tiled, base, rtol=1e-12)
    # and both are SwiGLU of the tensors as laid out ([B, D], [D, F], [D, F], [F, D])
    x, wg, wu, wd = (mem[f"ld{k}"] for k in range(4))
    g = x @ wg
    np.testing.assert_allclose(tiled, (g / (1 + np.exp(-g)) * (x @ wu)) @ wd, rtol=1e-9)


def test_a_physical_tile_that_does_not_divide_leaves_the_graph_alone():
    module = _swiglu("24x24")
    assert str(module) == str(_swiglu())


@pytest.mark.parametrize("tile", ["16", "0x16", "16x", "axb"])
def test_bad_tile_option(tile):
    with pytest.raises(ValueError, match="tile must be RxC"):
        StepHierarchicalTilingPass(tile=tile)


MMT = """
step.graph @mmt {
  %a = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : () -> !step.stream<[2], !step.tile<32x64xf32>>
  %b = step.linear_offchip_load {base_addr = 16384 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : () -> !step.stream<[2], !step.tile<16x64xf32>>
  %z = step.zip %a, %b : (!step.stream<[2], !step.tile<32x64xf32>>, !step.stream<[2], !step.tile<16x64xf32>>) -> !step.stream<[2], !step.tuple<!step.tile<32x64xf32>, !step.tile<16x64xf32>>>
  %c = step.map %z : !step.stream<[2], !step.tuple<!step.tile<32x64xf32>, !step.tile<16x64xf32>>> -> !step.stream<[2], !step.tile<32x16xf32>> {
  ^bb0(%x: !step.tile<32x64xf32>, %y: !step.tile<16x64xf32>):
    %p = step.apply "matmul_t"(%x, %y) : (!step.tile<32x64xf32>, !step.tile<16x64xf32>) -> !step.tile<32x16xf32>
    step.yield %p : !step.tile<32x16xf32>
  }
  %s = step.map %c : !step.stream<[2], !step.tile<32x16xf32>> -> !step.stream<[2], !step.tile<32x16xf32>> {
  ^bb0(%t: !step.tile<32x16xf32>):
    %u = step.apply "silu"(%t) : (!step.tile<32x16xf32>) -> !step.tile<32x16xf32>
    step.yield %u : !step.tile<32x16xf32>
  }
  step.linear_offchip_store %s {base_addr = 65536 : i64} : !step.stream<[2], !step.tile<32x16xf32>>
}
"""


def test_a_times_b_transposed_on_physical_tiles(tmp_path):
    """Fig. 12's A x B^T map (I = 2, J = 1, Kp = 4) and a SiLU on its tiles."""
    from steplus.tools.loading import load_module

    src = tmp_path / "mmt.mlir"
    src.write_text(MMT)
    base = load_module(str(src))
    tiled = load_module(str(src), "step-hierarchical-tiling{tile=16x16}")
    fns = {a.fn.data for a in tiled.walk() if isinstance(a, so.ApplyOp)}
    assert "matmul_t" not in fns and "matmul_t_acc" in fns
    assert compute_metrics(_graph(tiled)).flops == compute_metrics(_graph(base)).flops
    got, mem = _stored(tiled)
    want, _ = _stored(base)
    assert len(got) == len(want) == 2
    for g, w, k in zip(got, want, range(2)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
        p = mem["ld0"][32 * k:32 * (k + 1)] @ mem["ld1"][16 * k:16 * (k + 1)].T
        np.testing.assert_allclose(g, p / (1 + np.exp(-p)), rtol=1e-9)
