"""Composition-of-Experts serving (issue 15 item 5; the seed's Fig. 1, 12, 13, Table III).

    python bench/exp_coe.py [--out bench/out/sn40l_coe]

Platform costs come from `examples/workloads/coe.py`: the SN40L Node from
simulations on the `sn40l` preset (fused decoder layers, a DDR->HBM copy on
the DDR channels), DGX A100 / H100 from the documented roofline. Sweeps:
10..1000 experts, batch 1 and 8, 20 and 200 output tokens, routing uniform /
Zipf / same expert, 100 measured batches after 20 warm-up batches of a
seeded trace per configuration. Writes

- `coe.csv`: every configuration's switch / router / expert / total
  milliseconds per batch (NaN + `oom` when the DGX cannot hold the experts)
  and the nodes each platform needs to keep all experts resident;
- `latency_split.png` (BS=8, 20 tokens, uniform), `footprint.png`;
- `table3.md`: Table III-style ratios, computed, beside the seed's, each at
  the default assumptions with its range over the labeled assumptions
  (`examples/workloads/sn40l_ranges.py`: SN40L launch, P2P, DDR efficiency;
  DGX efficiency, kernel and all-reduce cost; prompt and context), the
  switching ratios, and the footprint at the number of experts our SN40L
  node holds (from step-allocate-memory's map of an expert), not the seed's
  850.

About three minutes serially (each prompt/context/P2P variant is simulated once, the
whole expert per context and network); `--jobs N` runs these simulations in N worker
processes (default one per core, `steplus.tools.sweep.run_sweep`) and the tables from
their results: the same rows as `--jobs 1`.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

from steplus.examples.workloads import coe
from steplus.examples.workloads.coe import (
    DGX_A100, DGX_H100, dgx_costs, footprint, serve, sn40l_costs,
)
from steplus.examples.workloads.decoder import P2P
from steplus.examples.workloads.sn40l_expert import expert_map, switch_seconds, token_run
from steplus.tools.progress import status
from steplus.tools.sweep import SweepError, add_jobs_argument, run_sweep
from steplus.examples.workloads.sn40l_ranges import (
    COE_ASSUMPTIONS, Range, assumptions_table, defaults, p2p_of, sweep_all,
)

EXPERTS = (10, 20, 50, 100, 150, 200, 500, 850, 1000)
SEED_TABLE3 = {
    "Overall speedup, BS=8, 20 tokens": (6.6, 3.7),
    "Overall speedup, BS=1, 20 tokens": (4.8, 2.8),
    "Expert speedup, BS=1, 20 tokens": (2.0, 1.5),
    "Overall speedup, BS=8, 200 tokens": (4.2, 2.7),
    "Overall speedup, BS=1, 200 tokens": (3.9, 2.6),
    "Expert speedup, BS=1, 200 tokens": (3.2, 2.3),
    "Model switching time": (31, 15),
}
RATIO_EXPERTS = 100
"""Table III's overall speedups are the seed's 'over 50 experts' regime (DGX
experts partly in host memory); we evaluate them at 100 experts, uniform routing."""


def sweep(platforms) -> list[dict]:
    rows = []
    for c in platforms:
        for e in EXPERTS:
            for bs in (1, 8):
                for tok in (20, 200):
                    for routing in ("uniform", "zipf", "same"):
                        lat = serve(c, e, bs, tok, routing)
                        rows.append({"platform": c.name, "experts": e, "batch": bs,
                                     "tokens": tok, "routing": routing,
                                     "switch_ms": round(lat.switch_ms, 3),
                                     "router_ms": round(lat.router_ms, 3),
                                     "expert_ms": round(lat.expert_ms, 3),
                                     "total_ms": round(lat.total_ms, 3), "oom": lat.oom,
                                     "nodes": footprint(c, e)})
    return rows


def headlines(v: dict[str, float]) -> dict[str, float]:
    """Every Table III ratio, the switching ratios and the footprint ratio under the
    assumptions `v`: the platforms' costs are recomputed (simulations are cached)."""
    sn, a100, h100 = sn40l_costs(v), dgx_costs(DGX_A100, v), dgx_costs(DGX_H100, v)
    out: dict[str, float] = {}
    for bs, tok in ((8, 20), (1, 20), (8, 200), (1, 200)):
        lat = {c.name: serve(c, RATIO_EXPERTS, bs, tok, "uniform") for c in (sn, a100, h100)}
        for d in (a100, h100):
            out[f"Overall speedup, BS={bs}, {tok} tokens|{d.name}"] = \
                lat[d.name].total_ms / lat["sn40l"].total_ms
            if bs == 1:
                out[f"Expert speedup, BS=1, {tok} tokens|{d.name}"] = \
                    lat[d.name].expert_ms / lat["sn40l"].expert_ms
    for d in (a100, h100):
        out[f"Model switching time|{d.name}"] = d.switch_s / sn.switch_s
        # the footprint at the capacity our SN40L node finds (not the seed's 850)
        out[f"Footprint at one SN40L node's capacity (DGX nodes)|{d.name}"] = \
            footprint(d, sn.backing_experts)
    out["experts one SN40L node holds in DDR|sn40l"] = sn.backing_experts
    return out


SEED_EXTRA = {"Footprint at one SN40L node's capacity (DGX nodes)": (19, 19)}
"""The seed: 19 DGX nodes to hold the 850 experts one SN40L node serves (§VI-B)."""


def ranges() -> dict[str, Range]:
    return sweep_all(headlines, COE_ASSUMPTIONS)


# -- the simulations, in parallel -------------------------------------------------------
SIMULATIONS = {  # what a key's first entry names: the cached simulation (or map) it is
    "map": expert_map, "switch": switch_seconds, "token": token_run,
    "fused": coe._fused, "conventional": coe._conventional,
}


def _args(key: tuple) -> tuple:
    """A simulation key's arguments (`P2P` rebuilt from its fields)."""
    what, *rest = key
    if what == "token":
        return (rest[0], P2P(*rest[1:]))
    if what == "fused":
        return (rest[0], rest[1], P2P(*rest[2:]))
    return tuple(rest)


def plan() -> list[tuple]:
    """The distinct simulations the experiment reads: a dry run of the assumption sweep
    gives every prompt / context / P2P network visited; each needs the expert's map,
    switch copy and conventional kernels (the DGX's) at its context, the token run at its
    context and network, the fused prefill layers at its prompt and network, and their
    conventional kernels at its prompt."""
    seen = [defaults()]
    sweep_all(lambda v: (seen.append(dict(v)), {"x": 0.0})[1], COE_ASSUMPTIONS)
    keys: dict[tuple, None] = {}
    for v in seen:
        prompt, context, net = int(v["prompt"]), int(v["context"]), p2p_of(v)
        n = (net.links, net.link_gbps, net.latency_ns)
        for k in [("map", context), ("switch", context), ("conventional", 1, context),
                  ("token", context, *n),
                  *(("fused", t, prompt, *n) for t in (prompt, 8 * prompt)),
                  *(("conventional", t, prompt) for t in (prompt, 8 * prompt))]:
            keys[k] = None
    return list(keys)


def _task(c: dict) -> dict:
    """One simulation of `plan` (a worker process runs it; `run_sweep` keeps the order)."""
    key = tuple(c["key"])
    return {"result": SIMULATIONS[key[0]](*_args(key))}


def simulate_all(jobs: int | None) -> int:
    """Run `plan`'s simulations (`jobs` worker processes, default one per core; 1: in this
    process) and prime the caches the experiment reads, so its rows are a serial run's.
    Returns the number of simulations."""
    keys = plan()
    done = run_sweep(_task, [{"key": list(k)} for k in keys], workers=jobs, desc="exp_coe")
    for k, r in zip(keys, done):
        SIMULATIONS[k[0]].prime(r["result"], *_args(k))
    return len(keys)


def table(r: dict[str, Range]) -> list[str]:
    lines = ["| metric | ours vs DGX A100 | ours vs DGX H100 | seed vs A100 | seed vs H100 |",
             "|---|---|---|---|---|"]
    metrics = [k.split("|")[0] for k in r if k.endswith("|dgx-a100")]
    for m in metrics:
        a, h = r[f"{m}|dgx-a100"], r[f"{m}|dgx-h100"]
        sa, sh = {**SEED_TABLE3, **SEED_EXTRA}[m]
        fmt = "{:.0f}" if m.startswith("Footprint") else "{:.1f}"
        lines.append(f"| {m} | {a.text(fmt)}x ({a.dominant()}) | {h.text(fmt)}x "
                     f"({h.dominant()}) | {sa}x | {sh}x |")
    n = r["experts one SN40L node holds in DDR|sn40l"]
    lines.append(f"| experts one SN40L node holds in DDR | {n.text('{:.0f}')} ({n.dominant()}) "
                 f"| | 850 | |")
    return lines


def one_at_a_time(r: dict[str, Range]) -> list[str]:
    keys = [k for k in r if "BS=8, 20" in k or "switching" in k or "Footprint" in k]
    lines = ["| headline | " + " | ".join(COE_ASSUMPTIONS) + " |",
             "|---|" + "---|" * len(COE_ASSUMPTIONS)]
    for k in keys:
        cells = [f"{r[k].each[n][0]:.1f}-{r[k].each[n][1]:.1f}" for n in COE_ASSUMPTIONS]
        lines.append(f"| {k.replace('|', ' vs ')} | " + " | ".join(cells) + " |")
    return lines


def _figures(out: Path, rows: list[dict]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no figures", file=sys.stderr)
        return
    sel = [r for r in rows if r["batch"] == 8 and r["tokens"] == 20 and r["routing"] == "uniform"]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), sharey=True)
    for ax, plat in zip(axes, ("sn40l", "dgx-a100", "dgx-h100")):
        rs = [r for r in sel if r["platform"] == plat]
        xs = [str(r["experts"]) for r in rs]
        bottom = [0.0] * len(rs)
        for part in ("router_ms", "switch_ms", "expert_ms"):
            vals = [0.0 if r["oom"] else r[part] / 1e3 for r in rs]
            ax.bar(xs, vals, bottom=bottom, label=part.removesuffix("_ms"))
            bottom = [b + v for b, v in zip(bottom, vals)]
        for x, r in zip(xs, rs):
            if r["oom"]:
                ax.text(x, 0.1, "OOM", ha="center", rotation=90)
        ax.set_title(plat)
        ax.set_xlabel("experts")
    axes[0].set_ylabel("seconds per batch (BS=8, 20 tokens)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "latency_split.png", dpi=110)
    fig, ax = plt.subplots(figsize=(6, 4))
    for plat in ("sn40l", "dgx-a100", "dgx-h100"):
        rs = [r for r in rows if r["platform"] == plat and r["batch"] == 1
              and r["tokens"] == 20 and r["routing"] == "uniform"]
        ax.plot([r["experts"] for r in rs], [r["nodes"] for r in rs], marker="o", label=plat)
    ax.set_xlabel("experts")
    ax.set_ylabel("nodes to hold every expert (TP8 latency)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "footprint.png", dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/out/sn40l_coe", help="output directory")
    add_jobs_argument(p)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # the independent simulations in parallel (--jobs; a progress bar on stderr on a
    # terminal), then the sweeps read them from the primed caches
    try:
        simulate_all(args.jobs)
    except SweepError as e:
        print(f"exp_coe.py: error: {e}", file=sys.stderr)
        return 1
    platforms = (sn40l_costs(), dgx_costs(DGX_A100), dgx_costs(DGX_H100))
    # a status line on stderr while the long stages run (only on a terminal)
    with status("exp_coe", "the expert sweep") as line:
        rows = sweep(platforms)
        line.set("the assumption ranges")
        r = ranges()
    with open(out / "coe.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    _figures(out, rows)
    sn = platforms[0]
    lines = ["Headlines at 100 experts, uniform routing: value at the default assumptions "
             "[range over the labeled assumptions] (the assumption that alone moves it most).",
             "", *table(r)]
    oom = {c.name: min((e for e in EXPERTS if serve(c, e, 1, 20, "same").oom), default=None)
           for c in platforms}
    lines.append(f"| first expert count the DGX cannot hold (of {', '.join(map(str, EXPERTS))}) "
                 f"| {oom['dgx-a100']} | {oom['dgx-h100']} | > 150 (OOM) | > 150 (OOM) |")
    m = expert_map(int(defaults()["context"]))
    lines += ["",
              f"SN40L (defaults): token {sn.token_s * 1e3:.2f} ms; step-allocate-memory places "
              f"one socket's share of an expert in {m.hbm_bytes / 2**30:.3f} GiB of HBM "
              f"({m.weight_bytes / 2**30:.3f} GiB of weights in {len(m.runs)} contiguous "
              f"run(s), the rest KV cache and activations), so HBM holds {sn.hbm_slots} "
              f"experts beside the router and DDR {sn.backing_experts}; a switch copies "
              f"{m.copy_bytes * 8 / 1e9:.2f} GB per node in {sn.switch_s * 1e3:.2f} ms "
              f"({sn.switch_gbps:.0f} GB/s, simulated); DGX A100 token "
              f"{platforms[1].token_s * 1e3:.2f} ms, H100 {platforms[2].token_s * 1e3:.2f} ms; "
              f"DGX HBM holds {platforms[1].hbm_slots}, host memory "
              f"{platforms[1].backing_experts}.",
              "", "One assumption at a time (headline at its low and high end):", "",
              *one_at_a_time(r),
              "", "Assumptions (SN40L and DGX; the seed states none of these):", "",
              assumptions_table(COE_ASSUMPTIONS)]
    text = "\n".join(lines)
    (out / "table3.md").write_text(text + "\n")
    print(text)
    return 0 if all(not math.isnan(r["total_ms"]) or r["oom"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
