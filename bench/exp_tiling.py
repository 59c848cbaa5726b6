"""Experiment: dynamic vs static tiling of the MoE layer (the STeP paper's Figs. 6-7).

    python bench/exp_tiling.py [--simulate] [--jobs N] [--scheduler tcp://host:8786] [--out DIR]

For Mixtral-8x7B and Qwen3-30B-A3B at batch 64 and 1024, static tile_N in
{16, 32, 64, 128, 256} and dynamic tiling: off-chip traffic, on-chip memory,
FLOPs and padded FLOPs (step-metrics on the reference graphs bound to the
shipped routing traces) and, with --simulate, simulated cycles on the fabric.
Writes DIR/tiling.csv and DIR/tiling.png (each metric normalized to the
dynamic row, as the paper plots them). Configurations run in parallel local
processes, or on a Dask cluster with --scheduler (steplus.tools.sweep).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TILES = (16, 32, 64, 128, 256, None)


def task(config: dict) -> list[dict]:
    """Metrics (and cycles) of one (model, tile_N) graph at both batch sizes."""
    sys.path.insert(0, str(REPO / "bench"))
    from steplus.examples.workloads import graphs as workloads

    from steplus.dialects.step import GraphOp
    from steplus.passes.step.metrics import compute_metrics
    from steplus.passes.step.specialize import routing_bindings, specialize_graph
    from reference_settings import moe_depth, moe_fallback_depth
    from steplus.passes.step.traces import RoutingTrace, shipped_routing_trace

    model, tile_n = workloads.MODELS[config["model"]], config["tile_n"]
    module = workloads.moe(model, tile_n)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    symbolic = compute_metrics(graph)
    rows = []
    for batch in (64, 1024):
        path = shipped_routing_trace(model.name, batch)
        trace = RoutingTrace.load(path, model.experts)
        bound = symbolic.bind(specialize_graph(graph.clone(), routing_bindings(graph, trace)))
        row = {"model": model.name, "batch": batch, "tile_n": tile_n or "dyn",
               "offchip_bytes": int(bound.offchip), "onchip_bytes": int(bound.onchip),
               "flops": int(bound.flops), "padded_flops": int(bound.padded_flops), "cycles": "",
               "note": ""}
        if config.get("simulate"):
            row["cycles"], row["note"] = _simulate(
                module, path, "moe", dynamic=tile_n is None, depth=moe_depth(model.name, batch),
                fallback=moe_fallback_depth(model.name, batch))
        rows.append(row)
    return rows


def _simulate(module, trace_path: Path, experiment: str = "moe",
              dynamic: bool = False, depth: int | None = None,
              fallback: int | None = None) -> tuple[int | str, str]:
    """(cycles, note) of `module` bound to a routing trace, with the reference
    settings of `experiment` (bench/reference_settings.py), `depth` overriding
    the base channel depth; a run that deadlocks there is repeated at depth
    `fallback` if given, noted "depth 1024, not comparable"
    (`reference_settings.simulate_moe`)."""
    from xdsl.context import Context

    from reference_settings import configure, simulate_moe
    from steplus.passes.step.specialize import StepSpecializePass

    m = module.clone()
    try:
        StepSpecializePass(routing=str(trace_path), rewrite=True).apply(Context(), m)
        cfg = configure(experiment, m, dynamic=dynamic, depth=depth)
        res, _, note = simulate_moe(m, cfg, fallback)
        return int(res.cycles), note
    except Exception as e:  # recorded in the CSV, the sweep goes on
        return f"error: {type(e).__name__}: {e}".replace("\n", " ")[:200], ""


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [("offchip_bytes", "off-chip traffic"), ("onchip_bytes", "on-chip memory"),
            ("cycles", "cycles")]
    # Without --simulate there are no cycles: no empty row of panels.
    keys = [(k, label) for k, label in keys if any(isinstance(r.get(k), int) for r in rows)]
    groups = sorted({(r["model"], r["batch"]) for r in rows})
    fig, axes = plt.subplots(len(keys), len(groups), figsize=(3.2 * len(groups), 2.6 * len(keys)),
                             squeeze=False)
    for j, (model, batch) in enumerate(groups):
        sel = [r for r in rows if (r["model"], r["batch"]) == (model, batch)]
        dyn = next(r for r in sel if r["tile_n"] == "dyn")
        for i, (key, label) in enumerate(keys):
            ax = axes[i][j]
            vals = [(str(r["tile_n"]), r[key] / dyn[key]) for r in sel
                    if isinstance(r[key], int) and isinstance(dyn[key], int) and dyn[key]]
            if vals:
                ax.bar([v[0] for v in vals], [v[1] for v in vals],
                       color=["tab:orange" if v[0] == "dyn" else "tab:blue" for v in vals])
            ax.set_title(f"{model} B={batch}", fontsize=8)
            ax.set_ylabel(f"{label} / dyn", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _geomean(xs: list[float]) -> float:
    import math

    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def pareto_distance(p: dict, static: list[dict]) -> float:
    """The paper's Pareto Improvement Distance of design point `p` against the
    static Pareto set (reference spec §9): min over the static points q on the
    (cycles, on-chip) Pareto front of max(cycles(q)/cycles(p), mem(q)/mem(p))."""
    front = [q for q in static if not any(
        o["cycles"] <= q["cycles"] and o["onchip_bytes"] <= q["onchip_bytes"] and o is not q
        and (o["cycles"], o["onchip_bytes"]) != (q["cycles"], q["onchip_bytes"]) for o in static)]
    return min(max(q["cycles"] / p["cycles"], q["onchip_bytes"] / p["onchip_bytes"])
               for q in front)


def summary(rows: list[dict]) -> dict[str, float]:
    """Headline ratios of dynamic tiling over the static tile sizes, geomean over
    every (model, batch) group and static tile: speedup, on-chip and traffic
    reduction; and the geomean Pareto Improvement Distance per group. Rows
    simulated at the fallback depth (noted "depth 1024, not comparable") are
    left out."""
    speed, mem, traffic, pid = [], [], [], []
    for key in sorted({(r["model"], r["batch"]) for r in rows}):
        sel = [r for r in rows if (r["model"], r["batch"]) == key]
        dyn = next((r for r in sel if r["tile_n"] == "dyn"), None)
        # a fallback run at depth 1024 ("not comparable") stays out of the ratios
        static = [r for r in sel if r["tile_n"] != "dyn" and isinstance(r["cycles"], int)
                  and not r.get("note")]
        if dyn is None or not isinstance(dyn["cycles"], int) or dyn.get("note") or not static:
            continue
        speed += [r["cycles"] / dyn["cycles"] for r in static]
        mem += [r["onchip_bytes"] / dyn["onchip_bytes"] for r in static]
        traffic += [r["offchip_bytes"] / dyn["offchip_bytes"] for r in static]
        pid.append(pareto_distance(dyn, static))
    return {"speedup": _geomean(speed), "on-chip reduction": _geomean(mem),
            "traffic reduction": _geomean(traffic), "Pareto improvement distance": _geomean(pid)}


def main(argv: list[str] | None = None) -> int:
    from steplus.tools.sweep import add_jobs_argument, run_sweep, write_csv

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--simulate", action="store_true", help="also simulate (cycles)")
    add_jobs_argument(p)
    p.add_argument("--scheduler", help="a Dask scheduler address (tcp://host:8786)")
    p.add_argument("--models", default="mixtral,qwen")
    p.add_argument("--out", default=str(REPO / "bench" / "results"))
    args = p.parse_args(argv)
    configs = [{"model": m, "tile_n": t, "simulate": args.simulate}
               for m in args.models.split(",") for t in TILES]
    results = run_sweep(task, configs, workers=args.jobs, scheduler=args.scheduler,
                        desc="tiling")
    rows = [r for rs in results for r in rs]
    out = Path(args.out)
    csv_path = write_csv(out / "tiling.csv", rows)
    plot(rows, out / "tiling.png")
    print(",".join(rows[0]))
    for r in rows:
        print(",".join(str(v) for v in r.values()))
    if args.simulate:
        print("dynamic vs static tiling (geomean over models, batches and static tiles): " +
              ", ".join(f"{k} {v:.2f}x" for k, v in summary(rows).items()))
    print(f"wrote {csv_path} and {out / 'tiling.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
