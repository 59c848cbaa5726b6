"""step-kernelize: the cuts, the kernel order, functional equivalence, launch costs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f32

from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import Graph
from steplus.runtime.fabric.build import build_program
from steplus.passes.sn40l.kernelize import kernelize_graph
from steplus.passes.sn40l.kernels import ensure_names
from steplus.dialects.target.fabric import SN40L, STEP_EVAL
from steplus.runtime.fabric.kernel_run import run_kernels


def _graph(name="g"):
    """x @ w -> exp -> (sum over 4 tiles -> st0, * v -> st1)."""
    g = Graph(name)
    x = g.load((16, 16), f32, [4], name="x")
    w = g.load((16, 16), f32, [4], base_addr=1 << 20, name="w")
    e = x.map("matmul", w, name="y").map("exp", name="e")
    a, b = e.broadcast(2, ["e1", "e2"])
    a.accum("add", 1, name="s").store(base_addr=4096)
    b.map("mul", g.load((16, 16), f32, [4], base_addr=2 << 20, name="v"), name="m") \
        .store(base_addr=8192)
    return g.module()


def _graph_op(module) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


def test_unfused_is_one_kernel_per_operator():
    ks = kernelize_graph(_graph_op(_graph()), "unfused")
    # matmul, exp, accum, mul: four operators, four kernels, in graph order
    assert [k.sym_name.data for k in ks] == ["g_k0", "g_k1", "g_k2", "g_k3"]
    fns = [[a.fn.data for a in k.walk() if a.name == "step.apply" and a.fn.data != "zero"]
           for k in ks]
    assert fns == [["matmul"], ["exp"], ["add"], ["mul"]]


def test_conventional_fuses_the_gemm_epilogue():
    ks = kernelize_graph(_graph_op(_graph()), "conventional")
    fns = [[a.fn.data for a in k.walk() if a.name == "step.apply" and a.fn.data != "zero"]
           for k in ks]
    # exp is the matmul's epilogue; the reduction and the later mul are not
    assert fns == [["matmul", "exp"], ["add"], ["mul"]]


@pytest.mark.parametrize("mode", ["unfused", "conventional"])
def test_kernels_compute_what_the_fused_graph_computes(mode):
    fused = _graph()
    ensure_names(_graph_op(fused))
    prog = build_program(fused, STEP_EVAL, functional=True)
    prog.run()
    want = {c.name: np.vstack(c.stored) for c in prog.contexts if c.name in ("st0", "st1")}
    # an independent numpy reference of the same graph
    t = prog.tensors
    e = np.vstack([np.exp(t["ld0"][16 * i:16 * i + 16] @ t["ld1"][16 * i:16 * i + 16])
                   for i in range(4)])
    np.testing.assert_allclose(want["st0"], sum(e[16 * i:16 * i + 16] for i in range(4)))
    np.testing.assert_allclose(want["st1"], e * t["ld2"])
    ks = kernelize_graph(_graph_op(_graph()), mode)
    res = run_kernels(ks, STEP_EVAL, functional=True, tensors=dict(prog.tensors))
    for name, value in want.items():
        np.testing.assert_allclose(np.vstack(res.stored[name]), value)


def test_every_cut_stream_goes_through_memory_once_written_reread_per_consumer():
    fused = build_program(_graph(), STEP_EVAL).run()
    ks = kernelize_graph(_graph_op(_graph()), "unfused")
    res = run_kernels(ks, STEP_EVAL)
    tile = 16 * 16 * 4
    # cut streams: y (4 tiles: written once, read once), e (written once, read by 2 kernels)
    assert res.offchip == fused.offchip_traffic + (4 + 4) * tile + (4 + 2 * 4) * tile
    assert res.flops == fused.flops


def test_launch_cost_per_kernel():
    ks = kernelize_graph(_graph_op(_graph()), "unfused")
    so, ho, none = (run_kernels(ks, SN40L, o) for o in ("so", "ho", "none"))
    assert so.cycles - none.cycles == 4 * SN40L.launch_so_cycles
    assert ho.cycles - none.cycles == 4 * SN40L.launch_ho_cycles
    # 15 us and 1 us at the assumed 1.6 GHz
    assert (SN40L.launch_so_cycles, SN40L.launch_ho_cycles) == (24000, 1600)


def test_a_stream_with_symbolic_dims_keeps_its_kernels_together():
    """A stream that cannot go through memory (here symbolic dims) is not cut: the two
    maps, one kernel each otherwise, are merged into one kernel."""
    g = Graph("r")
    x = g.load((1, 16), f32, ["B", 1], name="x")
    x.map("exp", name="e").map("exp", name="f").store()
    ks = kernelize_graph(_graph_op(g.module()), "unfused")
    assert len(ks) == 1
    assert [o.name for o in ks[0].body.block.ops].count("step.map") == 2


def test_kernels_between_an_address_stream_and_its_user_are_merged():
    """An address stream (1x1 i64) produced in kernel 0 and used in kernel 2 merges
    kernels 0..2; the exp after it stays a kernel of its own."""
    g = Graph("a")
    idx = g.metadata_gen([0, 1, 2, 3], name="idx")
    a = idx.map("add_scalar[1]", name="shift")  # an anchor producing addresses
    w = g.load((1, 16), f32, [4], name="w").map("exp", name="e1")
    t = g.random_load(a, (1, 16), f32, [8], 4096, name="gather")
    t.map("add", w, name="sum").map("exp", name="e2").store(8192)
    ks = kernelize_graph(_graph_op(g.module()), "unfused")
    maps = [[o.results[0].name_hint for o in k.body.block.ops if o.name == "step.map"]
            for k in ks]
    assert maps == [["shift", "e1", "sum"], ["e2"]]
