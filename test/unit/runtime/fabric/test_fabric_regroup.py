"""`step.regroup` on the fabric: values against numpy, stop levels, on-chip bytes, placement limits."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import f32
from xdsl.rewriter import Rewriter

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import FrontendError, Graph
from steplus.dialects.step.types import StreamType, TileType
from steplus.dialects.target.fabric import SN40L
from steplus.passes.step.fabric_placement import LoweringError, place
from steplus.passes.step.metrics import compute_metrics
from steplus.runtime.fabric.build import build_program


def _graph(dims, tile, dim, axis, then=None):
    g = Graph("rg")
    n = int(np.prod(dims))
    x = g.load(tile, f32, list(dims), in_shape=[n] + [1] * (len(dims) - 1),
               stride=[int(np.prod(dims[k + 1:])) for k in range(len(dims))], name="x")
    y = x.regroup(dim, axis, name="y")
    if then is not None:
        y = then(y)
    y.store(base_addr=1 << 30)
    return g.module()


def _run(module, x):
    prog = build_program(module, SN40L, functional=True,
                         tensors={"linear_offchip_load0": x})
    prog.run()
    store = next(c for c in prog.contexts if type(c).__name__ == "StoreCtx")
    return store.stored


@pytest.mark.parametrize(("dims", "tile", "dim", "axis"), [
    ((2, 3), (2, 4), 0, 0),      # the innermost dim with the rows
    ((2, 3), (2, 4), 0, 1),      # ... with the columns
    ((2, 3, 2), (2, 4), 1, 0),   # a dim with one inside it
    ((3, 2, 2), (3, 5), 1, 1),
    ((4,), (3, 2), 0, 0),        # the whole stream is one block
])
def test_values_are_numpys_transpose(dims, tile, dim, axis):
    rng = np.random.default_rng(1)
    n = int(np.prod(dims))
    x = rng.standard_normal((n * tile[0], tile[1]))
    got = _run(_graph(dims, tile, dim, axis), x)
    # in[outer..., i, inner..., r, c] -> axis 0: out[outer..., r, inner..., i, c]
    k = len(dims) - 1 - dim
    t = x.reshape(*dims, *tile)
    moved = np.moveaxis(t, [k, len(dims) + axis], [len(dims) + axis, k])
    want = moved.reshape(-1, moved.shape[-1])
    out_tile = (dims[k], tile[1]) if axis == 0 else (tile[0], dims[k])
    assert all(s.shape == out_tile for s in got)
    np.testing.assert_array_equal(np.vstack(got), want)


def test_stop_levels_group_the_exchanged_stream():
    """An accum over the innermost dim after the regroup sums exactly the tiles of one
    group: the levels the regroup emits are the result stream's."""
    dims, tile = (2, 3, 2), (2, 4)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((12 * 2, 4))
    m = _graph(dims, tile, 1, 0, then=lambda y: y.accum("add", rank=1))
    got = np.vstack(_run(m, x))
    t = x.reshape(2, 3, 2, 2, 4)                 # [b, i, q] of 2x4 tiles
    out = np.moveaxis(t, [1, 3], [3, 1])          # [b, r, q] of 3x4 tiles
    want = out.sum(axis=2).reshape(-1, 4)         # accum over q
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_metrics_one_block_on_chip_no_traffic():
    m = _graph((2, 3, 2), (2, 4), 1, 0)
    g = next(o for o in m.walk() if isinstance(o, GraphOp))
    op = next(o for o in g.body.block.ops if isinstance(o, so.RegroupOp))
    for mode, copies in (("artifact", 1), ("paper", 2)):
        gm = compute_metrics(g, onchip=mode)
        om = next(x for x in gm.ops if x.op is op)
        assert om.offchip == 0
        assert om.onchip == copies * 3 * 2 * (2 * 4 * 4)  # the dim (3) x the one inside (2)
        assert om.flops == 0


def test_symbolic_or_oversized_dims_are_refused():
    with pytest.raises(FrontendError, match="the exchanged dim must be a number"):
        Graph("s").argument([4, "B"], TileType(2, 3, f32), "x").regroup(0, 0)
    g = Graph("sym")  # B inside the block: fine for the rule, not for the simulator
    x = g.load((2, 3), f32, [4, 2], name="x")
    x.value = Rewriter.replace_value_with_new_type(  # as an unbound rewrite could leave it
        x.value, StreamType([4, sympy.Symbol("B")], x.element))
    x.regroup(1, 0).store()
    with pytest.raises(LoweringError, match="must be numbers"):
        place(g.op, SN40L)
    big = Graph("big")
    with pytest.raises(FrontendError, match=r"in 1\.\.65536"):
        big.argument([1 << 17], TileType(2, 3, f32), "x").regroup(0, 0)
    assert sympy.Integer(1 << 16) == so.MAX_REGROUP_EXTENT


def test_double_buffer_costs_one_block_of_latency_not_throughput():
    """Between two maps the regroup delays the stream by one block (it cannot emit before
    a block is in) but, double-buffered, not per block: the cycles it adds are the same
    for 1 and for 16 blocks."""
    def cycles(blocks: int, regroup: bool) -> int:
        g = Graph("t")
        x = g.load((8, 8), f32, [blocks, 8], name="x").map("exp")
        if regroup:
            x = x.regroup(0, 0)
        x.map("exp").store(base_addr=1 << 30)
        return build_program(g.module(), SN40L).run().cycles

    extra = {b: cycles(b, True) - cycles(b, False) for b in (1, 16)}
    assert extra[1] > 8  # at least the block's 8 tiles
    assert extra[16] == extra[1]
