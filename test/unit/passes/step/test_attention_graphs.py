"""The GQA decode attention graphs (examples/workloads/attention.py, reference spec §8.4):
they verify and pass shape inference, their off-chip traffic equals a closed
form written here from the trace (§5.1, §6.2), and the committed .mlir files
are the builder's output."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import bf16

from conftest import REPO
from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import TileType
from steplus.dialects.step.inference import infer_graph
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.specialize import parse_bind_attr

from steplus.examples.workloads import attention

KV = REPO / "examples" / "data" / "step-traces" / "azure_kv"
B16_HIGH = KV / "b16" / "conv_stdev1456_2805_2820.npy"
B80 = KV / "b80" / "conv_stdev0987_4687_4766.npy"
STRATEGIES = ["coarse", "interleaved", "dynamic"]


def _graph(module) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


@functools.cache
def _built(strategy: str, path=B16_HIGH):
    return attention.from_trace(strategy, path, f"attention_{strategy}_b16_high")


def _trace(path):
    x = np.load(path).astype(np.int64)
    return [int(-(-(v + 1) // 32)) for v in x], [int(v % 32) for v in x]


def _expected_traffic(path) -> int:
    """§5.1 per operator, mock bf16 (2 bytes), HD = 64, tN = 32, 8 queries per request."""
    seq_len, _ = _trace(path)
    B = len(seq_len)
    kv_tile = 32 * 64 * 2
    q_load = B * 8 * 64 * 2  # one 8 x HD query tile per request
    kv_rows = 2 * B * 64 * 2  # the new key row and value row (1 x HD each)
    cache = 2 * sum(seq_len) * kv_tile  # K and V: seq_len_i tiles each
    write_back = 2 * B * kv_tile  # K and V: the last tile of each request
    out = B * 8 * 64 * 2  # RandomOffChipStore of the 8 x HD output, nb = 2
    return q_load + kv_rows + cache + write_back + out


def _bound_traffic(module, path) -> sympy.Expr:
    graph = _graph(module)
    gm = compute_metrics(graph)
    if "step.bind" in graph.attributes:
        return gm.bind(parse_bind_attr(graph.attributes["step.bind"])).offchip
    # dynamic: the per-region tile totals depend on the run; their sum does not
    total = sympy.sympify(gm.offchip)
    sums = sorted((s for s in total.free_symbols if s.name.startswith("sum_L")), key=str)
    assert [s.name for s in sums] == ["sum_L0", "sum_L1", "sum_L2", "sum_L3"]
    return sympy.expand(total.subs(sums[-1], sum(_trace(path)[0]) - sum(sums[:-1])))


def test_the_trace_gives_lengths_and_offsets():
    seq_len, offset = _trace(B16_HIGH)
    assert len(seq_len) == 16 and sum(seq_len) == 877
    assert seq_len[:3] == [27, 29, 13] and offset[:3] == [19, 6, 1]  # x = 851, 902, 385


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_graphs_verify_and_infer(strategy):
    module = _built(strategy)
    module.verify()
    types = infer_graph(_graph(module))
    loads = [o for o in _graph(module).body.block.ops if isinstance(o, so.RandomOffChipLoadOp)]
    for op in loads:  # every cache read is [requests, ?L<r>] tiles of 32 x 64 bf16
        assert types[op.output].element == TileType(32, 64, bf16)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_offchip_traffic_equals_the_closed_form(strategy):
    assert _bound_traffic(_built(strategy), B16_HIGH) == _expected_traffic(B16_HIGH) == 7352320


def test_coarse_b80_gives_region_0_two_blocks_and_matches_the_closed_form():
    blocks = attention.coarse_blocks(80)
    assert [len(b) for b in blocks] == [32, 16, 16, 16]
    assert blocks[0] == [*range(16), *range(64, 80)]
    module = attention.from_trace("coarse", B80)
    assert _bound_traffic(module, B80) == _expected_traffic(B80)


def test_memory_operator_order_follows_the_spec():
    def order(strategy):
        ops = _graph(_built(strategy)).body.block.ops
        mem = (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp, so.RandomOffChipStoreOp)
        return [o.results[0].name_hint for o in ops if isinstance(o, mem)]

    region = lambda r: [f"k_cache{r}", f"k_wb{r}", f"v_cache{r}", f"v_wb{r}", f"o_store{r}"]  # noqa: E731
    assert order("coarse") == ["load_q0", "load_k0", "load_v0", *region(0)]
    four = [x for r in range(4) for x in region(r)]
    assert order("interleaved") == ["load_q", "load_k", "load_v", *four]
    assert order("dynamic") == ["load_q", "load_k", "load_v", *four]


def test_dynamic_merges_the_regions_read_signals():
    graph = _graph(_built("dynamic"))
    (em,) = [o for o in graph.body.block.ops if isinstance(o, sr.EagerMergeOp)]
    assert [v.owner.results[0].name_hint for v in em.inputs] == ["sig0", "sig1", "sig2", "sig3"]
    assert not graph.body.block.args  # the feedback placeholders are gone


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_committed_examples_are_the_builders_output(strategy):
    path = REPO / "examples" / "step" / f"attention_{strategy}_b16_high.mlir"
    assert path.read_text() == attention.mlir_text(_built(strategy)), \
        f"{path} is stale: run examples/workloads/attention.py"
