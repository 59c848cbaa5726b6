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


import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from memory_model import assert_same_writes as _assert_same
from steplus.dialects.step import GraphOp

from steplus.examples.workloads import attention
from steplus.examples.workloads import graphs as workloads


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
