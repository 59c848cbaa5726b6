"""Collectives in the graph (issue 31 item 1): step.all_reduce / step.all_gather on a modeled
P2P ring, simulated and overlapped with the layer; closed forms for the link time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import bf16
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import Graph
from steplus.dialects.target.fabric import SN40L
from steplus.examples.workloads.decoder import P2P, TINY, decoder_layer
from steplus.examples.workloads.sn40l import prepare
from steplus.passes.sn40l.kernels import ensure_names
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.kernel_run import run_kernels

N, ROWS, COLS = 64, 16, 1024  # 64 tiles of 16 x 1024 bf16 = 32 KiB


def _graph(kind: str, ranks: int, gbps: int = 200, latency_ns: int = 1000, links: int = 1):
    g = Graph("coll")
    x = g.load((ROWS, COLS), bf16, [N], base_addr=0, name="x")
    y = x.collective(kind, ranks, links, gbps, latency_ns, name="c")
    y.store(base_addr=1 << 30)
    return g.module()


def _run(m, functional=False):
    prog = build_program(m, SN40L, functional=functional)
    return prog, prog.run()


def test_all_reduce_link_time_is_the_ring_closed_form():
    prog, m = _run(_graph("all_reduce", 8))
    c = prog.context("all_reduce0")
    per_tile = math.ceil(2 * 7 / 8 * ROWS * COLS * 2 / (200 / SN40L.clock_ghz))  # 459 cycles
    assert c.busy == N * per_tile
    assert c.p2p_bytes == N * 2 * 7 * ROWS * COLS * 2 // 8
    # pipelined: the total is the link time plus one latency and the first load/last
    # store, not N latencies
    latency = round(1000 * SN40L.clock_ghz)
    assert N * per_tile + latency < m.cycles < N * per_tile + latency + 1000
    prog1, m1 = _run(_graph("all_reduce", 1))  # a group of one socket costs nothing:
    assert prog1.context("all_reduce0").busy == 0  # the copy's time, not more
    g = Graph("copy")
    g.load((ROWS, COLS), bf16, [N], base_addr=0, name="x").store(base_addr=1 << 30)
    assert m1.cycles <= _run(g.module())[1].cycles + 2
    # two links per socket halve the link time
    prog2, _ = _run(_graph("all_reduce", 8, links=2))
    assert prog2.context("all_reduce0").busy == N * math.ceil(2 * 7 / 8 * ROWS * COLS * 2 / 250)


def test_all_gather_link_time_and_shape():
    prog, _ = _run(_graph("all_gather", 4))
    c = prog.context("all_gather0")
    assert c.busy == N * math.ceil(3 * ROWS * COLS * 2 / 125)
    _, m = _run(_graph("all_gather", 4))
    assert m.offchip_written == 4 * N * ROWS * COLS * 2  # every tile 4 x as wide


def test_functional_values_are_the_symmetric_spmd_sum_and_concatenation():
    for kind, ranks, want in (("all_reduce", 8, lambda x: 8 * x),
                              ("all_gather", 2, lambda x: np.tile(x, (1, 2)))):
        prog, _ = _run(_graph(kind, ranks), functional=True)
        (x,) = prog.tensors.values()  # the one load's seeded tensor
        out = np.vstack(prog.context("linear_offchip_store0").stored)
        np.testing.assert_allclose(out, want(np.asarray(x)), rtol=1e-12)


@pytest.mark.parametrize("props, msg", [
    ({"ranks": 0}, "ranks must be in"),
    ({"ranks": 1 << 17}, "ranks must be in"),
    ({"links": 0}, "links must be in 1..65536"),
    ({"link_gbps": 0}, "link_gbps must be in 1..1000000"),
    ({"link_gbps": 10**7}, "link_gbps must be in"),
    ({"latency_ns": -1}, "latency_ns must be in 0..1000000000"),
    ({"latency_ns": 10**10}, "latency_ns must be in"),
])
def test_collective_verifier(props, msg):
    from xdsl.dialects.builtin import IntegerAttr, i64

    m = _graph("all_reduce", 8)
    op = next(o for o in m.walk() if o.name == "step.all_reduce")
    for k, v in props.items():
        op.properties[k] = IntegerAttr(v, i64)
    with pytest.raises(VerifyException, match=msg):
        op.verify()


def _tp2(p2p):
    return decoder_layer(TINY, 4, 32, tp=2, kv_tile=16, ffn_tile=16, p2p=p2p)


@pytest.mark.parametrize("mode", ["unfused", "conventional"])
def test_decoder_with_collectives_kernelized_computes_the_fused_values(mode):
    m = _tp2(P2P(1, 200, 1000))
    g = next(o for o in m.walk() if isinstance(o, GraphOp))
    ensure_names(g)
    assert sum(o.name == "step.all_reduce" for o in g.body.block.ops) == 2
    prog = build_program(m, SN40L, functional=True)
    prog.run()
    want = {c.name: np.vstack(c.stored) for c in prog.contexts if c.name.startswith("st")}
    ks = prepare(_tp2(P2P(1, 200, 1000)), mode)
    # each all-reduce is a kernel of its own (the casts stay with their GEMMs)
    assert sum(any(o.name == "step.all_reduce" for o in k.body.block.ops) for k in ks) == 2
    res = run_kernels(ks, SN40L, functional=True, tensors=dict(prog.tensors))
    for name, v in want.items():
        np.testing.assert_allclose(np.vstack(res.stored[name]), v, rtol=1e-12)


def test_slower_network_costs_the_fused_layer_less_than_serial_collectives():
    fast = prepare(_tp2(P2P(1, 400, 0)), "fused")
    slow = prepare(_tp2(P2P(1, 50, 5000)), "fused")
    t_fast = run_kernels(fast, SN40L).kernel_cycles
    t_slow = run_kernels(slow, SN40L).kernel_cycles
    assert t_slow > t_fast


def test_builder_names_an_unknown_collective():
    from steplus.dialects.step.builder import FrontendError

    g = Graph("bad")
    x = g.load((ROWS, COLS), bf16, [N], base_addr=0, name="x")
    with pytest.raises(FrontendError, match="unknown kind 'all_to_all'"):
        x.collective("all_to_all", 8, 1, 200, 1000)
    with pytest.raises(FrontendError, match="ranks"):
        x.collective("all_reduce", -1, 1, 200, 1000)
