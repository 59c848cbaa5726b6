"""Experiment: configuration time-multiplexing of the Qwen MoE layer (the STeP paper's Figs. 8-9).

    python bench/exp_timemux.py [--simulate] [--jobs N] [--scheduler tcp://host:8786] [--out DIR]

Qwen3-30B-A3B, batch 64 (shipped trace), tile_F = 48: the weight-stationary
layer (R = 128 regions, one per expert) and `step-time-multiplex{regions=R}`
applied to it for R in {64, 32, 16, 8, 4, 2}, static tile_N = 32 and dynamic
tiling (the dynamic graph comes from `step-dynamic-tiling`). Reports
off-chip traffic, on-chip memory, FLOPs (the artifact's formula, reference
spec §5.4) and allocated FLOPs per cycle `5*1024*R + 1024*E + 1024` (without
the final `+ 1024` on the dynamic R = 128 baseline row, as §5.4 says); with
--simulate, cycles and compute utilization = flops / cycles / allocated.
Writes DIR/timemux.csv and DIR/timemux.png.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO / "examples/data/step-traces/expert_routing/qwen_b64/032_012.npz"
REGIONS = (128, 64, 32, 16, 8, 4, 2)
UNIT = 1024


def allocated_flops(regions: int, experts: int, dynamic: bool) -> int:
    """FLOPs/cycle allocated (reference spec §5.4): `5 U R + W E + A`, five
    expert compute operators per region, one weight-scale Mul per expert and
    the final Accum, each `UNIT`. The dynamic R = E baseline comes from the
    plain weight-stationary dynamic driver, which omits the final Accum's `A`."""
    final = 0 if dynamic and regions == experts else UNIT
    return 5 * UNIT * regions + UNIT * experts + final


def task(config: dict) -> dict:
    sys.path.insert(0, str(REPO / "bench"))
    from steplus.examples.workloads import graphs as workloads
    from xdsl.context import Context

    from steplus.dialects.step import GraphOp
    from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass
    from steplus.passes.step.metrics import compute_metrics
    from steplus.passes.step.specialize import routing_bindings, specialize_graph
    from steplus.passes.step.time_multiplex import StepTimeMultiplexPass
    from steplus.passes.step.traces import RoutingTrace

    model, regions, tile_n = workloads.MODELS["qwen"], config["regions"], config["tile_n"]
    module = workloads.moe(model, 32, 48)
    if tile_n is None:
        StepDynamicTilingPass().apply(Context(), module)
    if regions < model.experts:
        StepTimeMultiplexPass(regions=regions).apply(Context(), module)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    trace = RoutingTrace.load(TRACE, model.experts)
    bound = compute_metrics(graph).bind(specialize_graph(graph.clone(), routing_bindings(graph, trace)))
    t = tile_n or 1
    flops = sum(-(-c // t) * t * model.inter * (14 * model.hidden + 1) for c in trace.counts)
    allocated = allocated_flops(regions, model.experts, dynamic=tile_n is None)
    row = {"regions": regions, "experts_per_region": model.experts // regions,
           "tile_n": tile_n or "dyn", "offchip_bytes": int(bound.offchip),
           "onchip_bytes": int(bound.onchip), "flops": flops, "allocated_flops": allocated,
           "cycles": "", "utilization_pct": ""}
    if config.get("simulate"):
        from exp_tiling import _simulate

        cycles, _ = _simulate(module, TRACE, "timemux", dynamic=tile_n is None)
        row["cycles"] = cycles
        if isinstance(cycles, int) and cycles:
            row["utilization_pct"] = round(flops / cycles / allocated * 100, 2)
    return row


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3))
    for tile, style in (("32", "o-"), ("dyn", "s--")):
        sel = [r for r in rows if str(r["tile_n"]) == tile]
        xs = [r["regions"] for r in sel]
        axes[0].plot(xs, [r["onchip_bytes"] / 2**20 for r in sel], style, label=f"tile_N={tile}")
        for ax, key in ((axes[1], "cycles"), (axes[2], "utilization_pct")):
            pts = [(r["regions"], r[key]) for r in sel if isinstance(r[key], (int, float))]
            if pts:
                ax.plot(*zip(*pts), style, label=f"tile_N={tile}")
    for ax, title in zip(axes, ("on-chip memory (MiB)", "cycles", "compute utilization (%)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("regions R")
        ax.set_title(title, fontsize=9)
        if ax.get_lines():
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def summary(rows: list[dict], overheads=(0.01, 0.05)) -> list[str]:
    """Per tiling: the largest compute-utilization gain over the weight-stationary
    layer (R = 128) among the degrees whose cycles stay within each overhead."""
    lines = []
    for tile in sorted({str(r["tile_n"]) for r in rows}):
        sel = [r for r in rows if str(r["tile_n"]) == tile and isinstance(r["cycles"], int)]
        base = next((r for r in sel if r["regions"] == max(REGIONS)), None)
        if base is None:
            continue
        for ov in overheads:
            ok = [r for r in sel if r["cycles"] <= base["cycles"] * (1 + ov)]
            best = max(ok, key=lambda r: r["utilization_pct"])
            lines.append(f"tile_N={tile}: within {ov:.0%} of R={base['regions']}'s cycles the best "
                         f"is R={best['regions']}: utilization {best['utilization_pct']}% vs "
                         f"{base['utilization_pct']}% ({best['utilization_pct'] / base['utilization_pct']:.2f}x), "
                         f"cycles {best['cycles'] / base['cycles'] - 1:+.2%}")
    return lines


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from steplus.tools.sweep import add_jobs_argument, run_sweep, write_csv

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--simulate", action="store_true")
    add_jobs_argument(p)
    p.add_argument("--scheduler")
    p.add_argument("--regions", default=",".join(map(str, REGIONS)))
    p.add_argument("--out", default=str(REPO / "bench" / "results"))
    args = p.parse_args(argv)
    configs = [{"regions": int(r), "tile_n": t, "simulate": args.simulate}
               for t in (32, None) for r in args.regions.split(",")]
    rows = run_sweep(task, configs, workers=args.jobs, scheduler=args.scheduler,
                     desc="time-multiplexing")
    out = Path(args.out)
    csv_path = write_csv(out / "timemux.csv", rows)
    plot(rows, out / "timemux.png")
    print(",".join(rows[0]))
    for r in rows:
        print(",".join(str(v) for v in r.values()))
    for line in summary(rows):
        print(line)
    print(f"wrote {csv_path} and {out / 'timemux.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
