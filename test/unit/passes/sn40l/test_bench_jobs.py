"""The SN40L experiments' --jobs (bench/exp_fusion.py, bench/exp_coe.py): the independent
simulations are enumerated by a dry run of the assumption sweep, run by
`steplus.tools.sweep.run_sweep`, and read back by key (exp_fusion) or through primed
caches (exp_coe: `SweepCache`), so the tables are a serial run's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from steplus.examples.workloads.decoder import P2P
from steplus.examples.workloads.sn40l_expert import SweepCache
from steplus.examples.workloads.sn40l_ranges import ASSUMPTIONS, COE_ASSUMPTIONS, defaults
from steplus.tools.sweep import run_sweep

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "bench"))

import exp_coe  # noqa: E402
import exp_fusion  # noqa: E402


def _networks() -> set[tuple[float, float]]:
    """P2P (GB/s, latency us) the sweep visits: the default, each end alone, the corners."""
    g, lat = ASSUMPTIONS["p2p_gbps"], ASSUMPTIONS["p2p_latency_us"]
    return {(a, b) for a in (g.low, g.default, g.high) for b in (lat.low, lat.default,
                                                                 lat.high)}


def test_fusion_plans_every_network_once_per_mode():
    """A decode row needs each mode on the 9 P2P networks (3 x 3: the default, one end
    alone and the corners cover every pair); without P2P (the FFT) one per mode."""
    keys = exp_fusion.needed(exp_fusion.FUSION_ASSUMPTIONS, True, ("unfused", "fused"))
    assert len(keys) == len(set(keys)) == 18
    assert {(g, lat) for _, g, lat in keys} == _networks()
    d = defaults()
    assert keys[:2] == [("unfused", d["p2p_gbps"], d["p2p_latency_us"]),
                        ("fused", d["p2p_gbps"], d["p2p_latency_us"])]
    flat = exp_fusion.needed(exp_fusion.FUSION_ASSUMPTIONS, False,
                             ("unfused", "conventional", "fused"))
    assert [k[0] for k in flat] == ["unfused", "conventional", "fused"]
    # the prefill's range is over the launch costs only: the default network alone
    launch = exp_fusion.needed(("launch_so_us", "launch_ho_us"), True, ("unfused", "fused"))
    assert launch == keys[:2]


def test_fusion_route_plan_counts():
    """--route-only: two decode workloads x 18 simulations + their 32-layer maps, the
    prefill's 2."""
    configs = exp_fusion.plan(True, None)
    kinds = [(c["kind"], c["workload"]) for c in configs]
    assert len(configs) == 2 * 18 + 2 + 2
    assert sum(k == "layers" for k, _ in kinds) == 2
    assert len({exp_fusion._key(c) for c in configs}) == len(configs)


def test_coe_plan_covers_the_visited_assumptions():
    """Each prompt / context / network the sweep visits has its token run and fused
    prefill layers (tokens = the prompt and 8 x the prompt); each context its map, switch
    and kernel count; nothing twice."""
    keys = exp_coe.plan()
    assert len(keys) == len(set(keys))
    a = {n: ASSUMPTIONS[n] for n in COE_ASSUMPTIONS}
    contexts = {int(v) for v in (a["context"].low, a["context"].default, a["context"].high)}
    assert {k[1] for k in keys if k[0] == "map"} == contexts
    assert {k[1] for k in keys if k[0] == "switch"} == contexts
    prompts = {int(v) for v in (a["prompt"].low, a["prompt"].default, a["prompt"].high)}
    fused = {(k[1], k[2]) for k in keys if k[0] == "fused"}
    assert fused == {(t, p) for p in prompts for t in (p, 8 * p)}
    nets = {(k[3] / 1.0, k[4] / 1e3) for k in keys if k[0] == "token"}
    assert nets == {(float(g), float(lat)) for g, lat in _networks()}



def test_sweep_cache_primes_by_bound_arguments():
    calls: list[tuple] = []

    def f(n: int, scale: int = 3) -> tuple[int, int]:
        calls.append((n, scale))
        return n, n * scale

    c = SweepCache(f)
    c.prime((7, 70), 7)  # f(7) and f(7, 3) are one entry
    assert c(7) == (7, 70) and c(7, 3) == (7, 70) and c(n=7, scale=3) == (7, 70)
    assert c(2) == (2, 6) and c(2) == (2, 6) and calls == [(2, 3)]
    c.cache_clear()
    assert c(7) == (7, 21) and calls == [(2, 3), (7, 3)]


def _square(c: dict) -> dict:
    return {"result": c["n"] ** 2}


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_come_back_in_configuration_order(jobs):
    """What both benches rely on: run_sweep's results are in configuration order."""
    rows = run_sweep(_square, [{"n": n} for n in range(7)], workers=jobs, progress=False)
    assert [r["result"] for r in rows] == [n * n for n in range(7)]


def test_coe_keys_rebuild_the_network():
    assert exp_coe._args(("token", 1024, 1, 200, 1000)) == (1024, P2P(1, 200, 1000))
    assert exp_coe._args(("fused", 512, 128, 1, 50, 0)) == (512, 128, P2P(1, 50, 0))
    assert exp_coe._args(("map", 4096)) == (4096,)
