"""step-dynamic-parallelize on the statically parallelized GQA decode
attention graphs (interleaved round-robin and coarse blocks of 16) gives
exactly the dynamically parallelized graph the workload builder writes by
hand (reference spec §8.4), op for op and type for type; graphs without the
pattern are left alone."""

from __future__ import annotations

import re
from io import StringIO

import numpy as np
import pytest
import sympy
from xdsl.context import Context
from xdsl.printer import Printer

from conftest import REPO
from steplus.dialects.step import GraphOp
from steplus.passes.step.metrics import compute_metrics
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.utils.diagnostics import NotApplicable
from steplus.passes.step.dynamic_parallelize import (
    StepDynamicParallelizePass,
    dynamic_parallelize,
    find_static_parallel,
)

from steplus.examples.workloads import attention


def _canonical(module) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    text = re.sub(r"%[A-Za-z0-9_]+", "%v", out.getvalue())
    return re.sub(r'sym_name = "[^"]*"', "", text)


def _trace(batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [int(x) for x in rng.integers(1, 9, batch)], [int(x) for x in rng.integers(0, 32, batch)]


def _graph(module) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


@pytest.mark.parametrize("strategy", ["interleaved", "coarse"])
@pytest.mark.parametrize("batch", [16, 32, 64])
def test_dynamic_parallelization_of_static_attention_is_the_dynamic_graph(strategy, batch):
    seq_len, offset = _trace(batch)
    module = attention.attention(strategy, batch, seq_len, offset)
    StepDynamicParallelizePass(factor=4).apply(Context(), module)
    module.verify()
    assert "step.bind" not in _graph(module).attributes  # the per-region sums now vary per run
    assert _canonical(module) == _canonical(attention.attention("dynamic", batch, seq_len, offset))


def test_the_shipped_interleaved_example_becomes_the_shipped_dynamic_example():
    from steplus.tools.loading import load_module

    path = lambda stem: str(REPO / "examples" / "step" / f"{stem}.mlir")  # noqa: E731
    module = load_module(path("attention_interleaved_b16_high"),
                         "step-dynamic-parallelize{factor=4}")
    assert _canonical(module) == _canonical(load_module(path("attention_dynamic_b16_high")))


def test_other_factors_copy_region_zero():
    seq_len, offset = _trace(16)
    module = attention.attention("interleaved", 16, seq_len, offset)
    dynamic_parallelize(_graph(module), 2)
    module.verify()
    text = _canonical(module)
    assert text.count('"step.eager_merge"') == 1
    assert text.count('"step.random_offchip_load"') == 4  # K and V cache of 2 regions
    assert text.count('"step.parallelize"') == 0
    # §5.1 (bf16, HD 64, tN 32, 8 queries): per request the query, the new K and
    # V rows, the K and V write-back tiles and the output; per KV tile region r
    # reads (sum_L<r>) one K and one V tile — two regions, two such terms
    kv_tile = attention.TILE_N * attention.HD * 2
    per_request = 2 * (attention.GROUP * attention.HD * 2) + 2 * (attention.HD * 2) + 2 * kv_tile
    sum_l = [sympy.Symbol(f"sum_L{r}", integer=True, nonnegative=True) for r in range(2)]
    offchip = compute_metrics(_graph(module)).offchip
    assert sympy.expand(offchip - (16 * per_request + 2 * kv_tile * sum(sum_l))) == 0


def test_graphs_without_static_parallelization_are_left_alone():
    seq_len, offset = _trace(16)
    module = attention.attention("dynamic", 16, seq_len, offset)
    before = _canonical(module)
    graph = _graph(module)
    with pytest.raises(NotApplicable, match="^no step.parallelize, and the graph's sources are "
                                             "not per-request loads and metadata$"):
        find_static_parallel(graph)
    assert not dynamic_parallelize(graph, 4)
    assert _canonical(module) == before


def test_coarse_blocks_that_are_not_adjacent_are_refused():
    # At B = 80 region 0 takes requests 0..15 and 64..79 (spec §8.4).
    seq_len, offset = _trace(80)
    module = attention.attention("coarse", 80, seq_len, offset)
    with pytest.raises(NotApplicable, match="^the regions' blocks of requests are not adjacent in memory$"):
        find_static_parallel(_graph(module))


def test_fewer_requests_than_regions_is_an_error():
    seq_len, offset = _trace(16)
    module = attention.attention("interleaved", 16, seq_len, offset)
    with pytest.raises(OpDiagnosticError, match="16 requests cannot be dispatched over 17 regions"):
        dynamic_parallelize(_graph(module), 17)
