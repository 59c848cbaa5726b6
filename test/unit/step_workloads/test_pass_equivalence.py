"""The optimization passes preserve values: at small shapes the transformed
graph computes the same output as the baseline in functional simulation
(`build_program(..., functional=True)`).

Off-chip memory is one model for both graphs: the tile at byte address `a`
holds small integers drawn from a generator seeded by `a`, so a load reads the
same numbers whichever graph, load operator or address stream reaches that
tile. The values written are compared: a linear store's tiles in order, a
random store's tiles by address. Matmuls of integers are exact; the
non-linear functions (SiLU, exp) run the same numpy code on the same tiles,
so results are compared with rtol 1e-9.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr

from conftest import REPO
from steplus.dialects import step_ops as so
from steplus.dialects.step import GraphOp
from steplus.dialects.step_types import StreamType, TileType
from steplus.lowering.step_to_runtime import build_program
from steplus.runtime.fabric.ops_memory import RandomStoreCtx, StoreCtx

sys.path.insert(0, str(REPO / "examples" / "step"))
import attention  # noqa: E402
import workloads  # noqa: E402


def _tile_at(addr: int, rows: int, cols: int) -> np.ndarray:
    rng = np.random.default_rng(addr % (1 << 63))
    return rng.integers(-2, 3, (rows, cols)).astype(np.float64)


def _bind_memory(graph: GraphOp) -> dict:
    """Name every load `ld<k>` and give it its view of the memory model."""
    tensors = {}
    stores = [op for op in graph.body.block.ops if isinstance(op, so.RandomOffChipStoreOp)]
    for k, op in enumerate(stores):  # the written tensor (its base) names the store
        op.attributes["name"] = StringAttr(f"st{op.base_addr.value.data}_{k}")
    loads = [op for op in graph.body.block.ops
             if isinstance(op, so.LinearOffChipLoadOp | so.RandomOffChipLoadOp)]
    for k, op in enumerate(loads):
        name = f"ld{k}"
        op.attributes["name"] = StringAttr(name)
        t = op.output.type
        assert isinstance(t, StreamType) and isinstance(t.element, TileType)
        rows, cols = t.element.rows.data, t.element.cols.data
        nbytes = rows * cols * t.element.bytes_per_scalar()
        base = op.base_addr.value.data
        if isinstance(op, so.RandomOffChipLoadOp):
            tensors[name] = lambda i, b=base, r=rows, c=cols, n=nbytes: _tile_at(b + i * n, r, c)
            continue
        in_shape = [int(x) for x in op.tiled_in_shape.get_values()]
        ref = op.ref
        if ref is not None and ref.owner is graph.body.block:  # a bound reference argument
            in_shape = [int(d) for d in ref.type.dims] + in_shape
        total = int(np.prod(in_shape))
        inner = in_shape[-1] if len(in_shape) >= 2 else 1
        dense = np.zeros((-(-total // inner) * rows, inner * cols))
        for lin in range(total):
            bi, bj = divmod(lin, inner)
            dense[bi * rows:(bi + 1) * rows, bj * cols:(bj + 1) * cols] = \
                _tile_at(base + lin * nbytes, rows, cols)
        tensors[name] = dense
    return tensors


def _written(module: ModuleOp) -> tuple[dict, list]:
    """Run functionally; (random stores: address -> tile, linear stores' tiles in order)."""
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    prog = build_program(graph, functional=True, tensors=_bind_memory(graph))
    prog.run()
    by_addr, ordered = {}, []
    for ctx in prog.sim.contexts:
        if isinstance(ctx, RandomStoreCtx):
            for a, v in ctx.stored:
                key = (ctx.name.split("_")[0], int(np.ravel(a)[0]))
                by_addr[key] = np.asarray(v)
        elif isinstance(ctx, StoreCtx):
            ordered.extend(np.asarray(v) for v in ctx.stored)
    return by_addr, ordered


def _assert_same(a: ModuleOp, b: ModuleOp) -> int:
    (ra, la), (rb, lb) = _written(a), _written(b)
    assert ra.keys() == rb.keys()
    for k in ra:
        np.testing.assert_allclose(ra[k], rb[k], rtol=1e-9, err_msg=str(k))
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(x, y, rtol=1e-9)
    return len(ra) + len(la)


# -- step-dynamic-parallelize: GQA decode attention, 6 requests of 1-3 KV tiles ----------

SEQ_LEN = [2, 1, 3, 1, 1, 2]
OFFSET = [5, 0, 17, 31, 2, 9]


@pytest.mark.parametrize("strategy", ["interleaved"])
def test_dynamic_parallelization_computes_the_same_attention(strategy):
    from steplus.passes.step.dynamic_parallelize import StepDynamicParallelizePass

    baseline = attention.attention(strategy, 6, SEQ_LEN, OFFSET)
    module = attention.attention(strategy, 6, SEQ_LEN, OFFSET)
    StepDynamicParallelizePass(factor=4).apply(Context(), module)
    assert _assert_same(baseline, module) == 6 * 3  # outputs, K and V tiles written back


# -- step-dynamic-tiling / step-time-multiplex: a 4-expert top-2 MoE layer, 8 tokens -------

TINY = workloads.MoEModel("tiny", experts=4, top_k=2, hidden=32, inter=64)
ROUTING = np.array([[0, 1], [1, 2], [0, 2], [1, 0], [2, 1], [0, 1], [1, 2], [2, 0]])


def _moe(tile_n: int | None, tile_f: int, tmp_path) -> ModuleOp:
    from steplus.passes.step.specialize import StepSpecializePass

    trace = tmp_path / "routing.npz"
    np.savez(trace, data=ROUTING)
    module = workloads.moe(TINY, tile_n, tile_f)
    StepSpecializePass(routing=str(trace), rewrite=True).apply(Context(), module)
    return module


def _specialized(module: ModuleOp, tmp_path) -> ModuleOp:
    from steplus.passes.step.specialize import StepSpecializePass

    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    graph.attributes.pop("step.bind", None)
    trace = tmp_path / "routing.npz"
    StepSpecializePass(routing=str(trace), rewrite=True).apply(Context(), module)
    return module


@pytest.mark.parametrize("tile_n", [2, 4])
def test_dynamic_tiling_computes_the_same_moe_layer(tile_n, tmp_path):
    from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass

    baseline = _moe(tile_n, 16, tmp_path)
    module = workloads.moe(TINY, tile_n, 16)
    StepDynamicTilingPass().apply(Context(), module)
    assert _assert_same(baseline, _specialized(module, tmp_path)) == 8  # one output row per token


@pytest.mark.parametrize("tile_n", [2, None], ids=["tn2", "dynamic"])
def test_time_multiplexing_computes_the_same_moe_layer(tile_n, tmp_path):
    from steplus.passes.step.time_multiplex import StepTimeMultiplexPass

    baseline = _moe(tile_n, 16, tmp_path)
    module = workloads.moe(TINY, tile_n, 16)
    StepTimeMultiplexPass(regions=2).apply(Context(), module)
    assert _assert_same(baseline, _specialized(module, tmp_path)) == 8
