"""Allspark experiment: schedules, utilization, latency split, memory, hops, speedups.

    python bench/exp_allspark.py [--out bench/out/allspark] [--models swin-b,vit-b]
                                 [--sizes 224,640] [--time-limit 60] [--from-graph]

``--from-graph`` reads every workload of a family written as a PyTorch module
(``examples/allspark``: ViT, Swin, PVT, Twins, CSWin, Focal) from its ``torch.export``
graph (``lowering/torch_to_pim.py``) instead of the name table; ``summary.csv``'s
``workload`` column says which.

For every model and input size it runs the orchestration (compact ILP), the
B / P / AH baselines under the same cost model and the link-level NoC check,
lowers Allspark's and the baselines' schedules to phase programs
(``pim-lower-phases``) and runs them on the NoC/PIM simulator (the headline
speedups are simulated over simulated), and writes into ``--out``:

- ``summary.csv``: latency (compute / transfer / weight sharing), utilization,
  NoC traffic, DRAM accesses, energy, memory per node (with reuse+sharing,
  without reuse, without sharing), speedups over B/P/AH, solver time and gap,
  NoC simulation vs cost model (Algorithm 1's layout, and a zig-zag "snake" one);
- ``schedule.csv``: temporal layers and schemes per stage (the seed's Table V);
- ``stages.csv``: utilization per stage (Fig. 12) and average hops of the greedy,
  the dependency-oblivious raster and random bindings (Table III; DDAM itself is not reproduced);
- ``crosscheck.csv``: literal vs compact vs CP-SAT ILP on small instances, HiGHS
  vs CP-SAT on the real models (224^2, and two at 640^2), greedy vs exact
  (CP-SAT, brute force) binding;
- ``tables.md``: our numbers next to the seed's (speedups, utilization, hops,
  Tables V and VI, traffic ratios, model vs simulation, solver time);
- ``speedup.png``, ``utilization.png``, ``breakdown.png``, ``hops.png``,
  ``solver.png``, ``memory.png`` (Table VI), ``traffic.png`` (Fig. 13b).

``schedule.csv`` also holds the seed's Table V schedule evaluated in our model;
``ablation.csv`` the best schedules without weight reuse / sharing (Table VI);
``batch.csv`` / ``batch.png`` small batches (Fig. 14); ``mesh.csv`` / ``mesh.png``
the speedups on 8x8, 16x16, 24x24 meshes and at 4, 8, 16 MiB per node (Fig. 15).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

MIB = 1024 * 1024


def _hw_for(name: str) -> str:
    return "allspark-8x8" if name.startswith("pvt") else "allspark-16x16"


def _workload(name: str, img: int, from_graph: bool):
    """The model's workload: read from its PyTorch module's torch.export graph (the
    families of examples/allspark) with ``from_graph``, else the name table's."""
    if not from_graph:
        return name, False
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from examples.allspark.zoo import BUILDERS, export
    from steplus.lowering.torch_to_pim import workload_from_graph

    if name not in BUILDERS:
        return name, False
    return workload_from_graph(export(name, img).graph, name, img), True


def run_config(name: str, img: int, time_limit: float,
               from_graph: bool = False) -> tuple[dict, list[dict], list[dict]]:
    from steplus.passes.allspark.baselines import BASELINES, BaselineMemoryError, baseline
    from steplus.passes.allspark.orchestrate import orchestrate
    from steplus.runtime.pim.noc import check_schedule, interaction_check

    hw = _hw_for(name)
    model, graph = _workload(name, img, from_graph)
    res = orchestrate(model, img, hw, time_limit)
    # memory ignored (the old, unenforced numbers) and paid: eq. 13 traffic for the
    # weights a baseline cannot keep; None when its workspace alone overflows
    free = {k: baseline(res.model, img, res.hw, k, bind=False, memory="ignore")
            for k in BASELINES}
    paid = {}
    for k in BASELINES:
        try:
            paid[k] = baseline(res.model, img, res.hw, k, bind=False)
        except BaselineMemoryError:
            paid[k] = None
    base = {k: paid[k] or free[k] for k in BASELINES}
    chk = check_schedule(res)
    split = res.split_ms()
    row = {
        "model": name, "img": img, "preset": hw, "workload": "graph" if graph else "table",
        "status": res.status,
        "gap": round(res.gap, 6), "solver_s": round(res.solver_seconds, 3),
        "latency_ms": round(res.latency_ms, 4),
        "compute_ms": round(split["compute"], 4), "transfer_ms": round(split["transfer"], 4),
        "sharing_ms": round(split["sharing"], 4), "utilization": round(res.utilization, 4),
        "noc_MiB": round(res.noc_bytes / MIB, 1), "dram_MiB": round(res.dram_bytes / MIB, 1),
        "energy_mJ": round(sum(res.energy_pj.values()) / 1e9, 4),
    }
    for case, mem in res.memory.items():
        row[f"weights_MiB_{case}"] = round(mem.weights / MIB, 3)
    row["workspace_MiB"] = round(res.memory["reuse+sharing"].workspace / MIB, 3)
    for k, b in base.items():
        p = paid[k]
        row[f"speedup_{k}"] = round(p.latency_ms / res.latency_ms, 3) if p else ""
        row[f"speedup_{k}_ignored"] = round(free[k].latency_ms / res.latency_ms, 3)
        row[f"spill_MiB_{k}"] = round(p.spilled_bytes / MIB, 3) if p else ""
        row[f"util_{k}"] = round(b.utilization, 4)
        row[f"fits_{k}"] = b.fits
        row[f"noc_ratio_{k}"] = round(b.noc_bytes / res.noc_bytes, 3) if res.noc_bytes else ""
        row[f"dram_ratio_{k}"] = round(b.dram_bytes / res.dram_bytes, 3)
        row[f"energy_ratio_{k}"] = round(sum(b.energy_pj.values()) / sum(res.energy_pj.values()), 3)
    # the schedule through the passes: pim-orchestrate's IR, pim-lower-phases, executed
    # on the NoC simulator incl. the local-global interaction (eq. 12 leaves it out)
    from steplus.runtime.pim.program import result_module, simulate_model, simulate_result

    _, model_op = result_module(res, hw, ir_workload=graph)
    sim = simulate_model(model_op)
    # the baselines' schedules through the same passes and simulator (weight streaming
    # as a mesh ring, their local-global interaction included): simulated over simulated
    for k in BASELINES:
        p = paid[k]
        if p is None:
            row[f"latency_{k}_sim_ms"] = row[f"speedup_{k}_sim"] = ""
            continue
        bsim = simulate_result(p, hw, ir_workload=graph)
        row[f"latency_{k}_sim_ms"] = round(bsim.latency_ms, 4)
        row[f"speedup_{k}_sim"] = round(bsim.total / sim.total, 3)
    row["latency_sim_ms"] = round(sim.latency_ms, 4)
    row["interaction_sim_ms"] = round(sim.interaction * res.hw.cycle_ns / 1e6, 4)
    row["sim_over_model"] = round(sim.total / sim.analytical - 1, 4)
    row["noc_sim_deviation"] = round(chk.deviation, 4)
    # the whole latency: compute + simulated NoC vs compute + analytical NoC (eq. 12)
    row["e2e_sim_deviation"] = round((chk.simulated - chk.analytical) / res.cycles, 4)
    row["noc_sim_stalls"] = chk.wait_cycles
    snake = check_schedule(res, layout="snake")  # same rings on zig-zag runs of nodes
    row["snake_noc_deviation"] = round(snake.deviation, 4)
    row["snake_e2e_deviation"] = round((snake.simulated - snake.analytical) / res.cycles, 4)
    row["snake_stalls"] = snake.wait_cycles
    schedule, stages = [], []
    inter_cycles = inter_free = 0
    for i, (st, rep) in enumerate(zip(res.model.stages, res.stages)):
        schedule.append({"model": name, "img": img, "stage": rep.index,
                         "temporal_layers": len(rep.layers),
                         "schemes": " ".join(f"{lay.scheme.label}x{lay.branches}"
                                             for lay in rep.layers),
                         "weight_reuse": "yes" if rep.reuse else "no"})
        hops_random = _random_hops(res, i)
        inter = interaction_check(res, i)
        inter_cycles += inter.simulated * st.blocks  # at most one exchange per block
        inter_free += inter.contention_free * st.blocks
        stages.append({"model": name, "img": img, "stage": rep.index, "branches": st.branches,
                       "util_allspark": round(rep.utilization, 4),
                       **{f"util_{k}": round(b.stages[i].utilization, 4) for k, b in base.items()},
                       "hops_greedy": round(rep.hops_greedy, 3),
                       "hops_raster": round(rep.hops_raster, 3),
                       "hops_random": round(hops_random, 3),
                       "interaction_burst_cycles": inter.simulated,
                       "interaction_contention_free_cycles": inter.contention_free})
    row["interaction_share_max"] = round(inter_cycles / res.cycles, 4)
    row["interaction_share_free"] = round(inter_free / res.cycles, 4)
    return row, schedule, stages


def _random_hops(res, stage: int, samples: int = 10) -> float:
    """Mean average hops of ``samples`` seeded random bindings of a stage's branches."""
    from steplus.passes.allspark.vit import dependency_edges
    from steplus.passes.allspark.layout import average_hops, random_binding, slots_for

    st, rep = res.model.stages[stage], res.stages[stage]
    edges = dependency_edges(st)
    if not edges:
        return 0.0
    slots = slots_for([(lay.scheme.m, lay.scheme.g, lay.branches) for lay in rep.layers],
                      res.hw.rows, res.hw.cols)
    return sum(average_hops(random_binding(st.branches, slots, k), edges, slots)
               for k in range(samples)) / samples


def cpsat_check(configs: list[tuple[str, int]], time_limit: float) -> list[dict]:
    """CP-SAT and HiGHS on the same compact ILP of the real models: same optimum?"""
    from steplus.passes.allspark.vit import build
    from steplus.dialects.target.pim import preset
    from steplus.passes.allspark.ilp_compact import build_problem, solve_compact
    from steplus.passes.allspark.ilp_cpsat import solve_cpsat

    rows = []
    for name, img in configs:
        prob = build_problem(build(name, img), preset(_hw_for(name)))
        hi, cp = solve_compact(prob), solve_cpsat(prob, time_limit)
        rows.append({"kind": "cpsat", "instance": f"{name}@{img}", "compact": round(hi.objective),
                     "literal": round(cp.objective), "compact_s": round(hi.seconds, 3),
                     "literal_s": round(cp.seconds, 3),
                     "note": f"HiGHS vs CP-SAT ({cp.status}, gap {100 * cp.gap:.2f}%)"})
    return rows


def crosscheck() -> list[dict]:
    """Literal vs compact vs CP-SAT ILP, and greedy vs exact binding, on small instances."""
    from steplus.passes.allspark.vit import build, dependency_edges
    from steplus.dialects.target.pim import preset, with_overrides
    from steplus.passes.allspark.ilp import solve_literal
    from steplus.passes.allspark.ilp_compact import build_problem, solve_compact
    from steplus.passes.allspark.layout import exact_binding, greedy_binding, hop_cost, slots_for

    from steplus.passes.allspark.ilp_cpsat import solve_cpsat
    from steplus.passes.allspark.layout import brute_force_binding

    rows = []
    for name, img, side in (("swin-t", 64, 3), ("twins-s", 64, 3), ("cswin-t", 64, 4),
                            ("swin-t", 96, 4)):
        hw = with_overrides(preset("allspark-8x8"), rows=side, cols=side)
        prob = build_problem(build(name, img), hw)
        a, b, c = solve_compact(prob), solve_literal(prob, time_limit=120), solve_cpsat(prob)
        rows.append({"kind": "ilp", "instance": f"{name}@{img} on {side}x{side}",
                     "compact": a.objective, "literal": b.objective,
                     "compact_s": round(a.seconds, 3), "literal_s": round(b.seconds, 3),
                     "note": f"compact (HiGHS) vs literal (HiGHS); CP-SAT {c.objective:.0f}"})
    # greedy vs exact binding: CP-SAT, and brute force where it can enumerate
    for name, img, stage, lay, side in (
            ("swin-t", 64, 0, [(1, 1, 9)], (3, 3)),
            ("focal-t", 64, 0, [(1, 1, 9)], (3, 3)),
            ("swin-t", 64, 0, [(2, 1, 6), (1, 1, 3)], (3, 4)),
            ("swin-t", 64, 0, [(1, 1, 4), (1, 1, 4), (1, 1, 1)], (2, 2)),
            ("swin-t", 96, 0, [(1, 1, 16)], (4, 4)),
            ("swin-t", 224, 1, [(1, 1, 16)], (4, 4))):
        st = build(name, img).stages[stage]
        edges = dependency_edges(st)
        n = st.branches
        slots = slots_for(lay, *side)
        g = hop_cost(greedy_binding(n, edges, slots), edges, slots)
        t0 = time.perf_counter()
        e = exact_binding(n, edges, slots, time_limit=20)
        secs = time.perf_counter() - t0
        brute = brute_force_binding(n, edges, slots)[1] if n <= 9 else ""
        note = "greedy vs CP-SAT" + (" optimal" if e.optimal else
                                     f" (time limit, bound {e.bound:.0f})")
        rows.append({"kind": "binding", "instance": f"{name}@{img} stage {stage + 1}, "
                     f"{n} branches, layers {lay} on {side[0]}x{side[1]}",
                     "compact": g, "literal": e.cost, "compact_s": "",
                     "literal_s": round(secs, 3), "note": f"{note}; brute force {brute}"})
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def _figures(out: Path, summary: list[dict], stages: list[dict], img: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in summary if r["img"] == img]
    if not rows:
        return
    names = [r["model"] for r in rows]
    fig, ax = plt.subplots(figsize=(12, 4))
    width = 0.27
    for i, k in enumerate(("B", "P", "AH")):
        ax.bar([x + (i - 1) * width for x in range(len(rows))],
               [r[f"speedup_{k}_sim"] or 0 for r in rows], width, label=f"vs {k}")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), names, rotation=60)
    ax.set_ylabel("speedup of Allspark (simulated)")
    ax.set_title(f"Allspark speedup over baselines, {img}x{img}, both simulated (overflowing "
                 "baselines stream weights; no bar: workspace overflows)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "speedup.png", dpi=120)
    plt.close(fig)

    sel = [m for m in ("swin-b", "twins-b") if m in names]
    fig, axes = plt.subplots(1, max(1, len(sel)), figsize=(6 * max(1, len(sel)), 3.5))
    axes = axes if len(sel) > 1 else [axes]
    for ax, m in zip(axes, sel):
        st = [s for s in stages if s["model"] == m and s["img"] == img]
        for i, k in enumerate(("allspark", "B", "P", "AH")):
            ax.bar([s["stage"] + (i - 1.5) * 0.2 for s in st], [s[f"util_{k}"] for s in st], 0.2,
                   label=k)
        ax.set_title(f"{m} {img}x{img}: node utilization per stage")
        ax.set_xlabel("stage")
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "utilization.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    ax.bar(names, [r["compute_ms"] for r in rows], label="compute")
    ax.bar(names, [r["transfer_ms"] for r in rows], bottom=[r["compute_ms"] for r in rows],
           label="feature-map transfer")
    ax.bar(names, [r["sharing_ms"] for r in rows],
           bottom=[r["compute_ms"] + r["transfer_ms"] for r in rows], label="weight sharing")
    ax.set_yscale("log")
    ax.set_ylabel("ms")
    ax.tick_params(axis="x", rotation=60)
    ax.set_title(f"Allspark latency breakdown, {img}x{img}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "breakdown.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(12, 4))
    sizes = sorted({r["img"] for r in summary})
    models = list(dict.fromkeys(r["model"] for r in summary))
    for i, size in enumerate(sizes):
        by = {r["model"]: r["solver_s"] for r in summary if r["img"] == size}
        xs = [x + (i - (len(sizes) - 1) / 2) * 0.27 for x in range(len(models))]
        ax.bar(xs, [by.get(m, 0) for m in models], 0.27, label=f"{size}x{size}")
    ax.set_xticks(range(len(models)), models, rotation=60)
    ax.set_ylabel("seconds (compact ILP, HiGHS)")
    ax.set_title("Solver time")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "solver.png", dpi=120)
    plt.close(fig)

    st = [s for s in stages if s["img"] == img and s["hops_raster"]]
    if st:
        fig, ax = plt.subplots(figsize=(12, 4))
        labels = [f"{s['model']}/{s['stage']}" for s in st]
        ax.bar([x - 0.27 for x in range(len(st))], [s["hops_random"] for s in st], 0.27,
               label="random")
        ax.bar(list(range(len(st))), [s["hops_raster"] for s in st], 0.27,
               label="raster (dependency-oblivious)")
        ax.bar([x + 0.27 for x in range(len(st))], [s["hops_greedy"] for s in st], 0.27,
               label="Allspark greedy")
        ax.set_xticks(range(len(st)), labels, rotation=90, fontsize=7)
        ax.set_ylabel("average hops per dependency")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "hops.png", dpi=120)
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    from steplus.passes.allspark.vit import MODELS
    from steplus.tools.progress import status
    from steplus.tools.sweep import add_jobs_argument

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/out/allspark")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--sizes", default="224,640")
    ap.add_argument("--extra", default="swin-t:960,swin-b:960",
                    help="extra model:size pairs (default: Swin at 960^2)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--no-crosscheck", action="store_true")
    ap.add_argument("--no-sweeps", action="store_true",
                    help="skip the batch and mesh/memory sweeps (Swin-B, Twins-B at 640^2)")
    ap.add_argument("--from-graph", action="store_true",
                    help="read each model's workload from its PyTorch module's torch.export "
                    "graph (ViT, Swin, PVT, Twins, CSWin, Focal)")
    ap.add_argument("--cpsat-limit", type=float, default=20.0,
                    help="CP-SAT time limit per model in the solver cross-check (s)")
    add_jobs_argument(ap)  # the sweeps' worker processes (allspark_sweeps.py)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    configs = [(m, int(s)) for m in args.models.split(",") for s in args.sizes.split(",")]
    configs += [(p.split(":")[0], int(p.split(":")[1])) for p in args.extra.split(",") if p]
    summary, schedule, stages = [], [], []
    t0 = time.perf_counter()
    for name, img in configs:
        try:
            with status("exp_allspark", f"scheduling {name} at {img}"):  # stderr, a terminal only
                row, sch, sts = run_config(name, img, args.time_limit, args.from_graph)
        except ValueError as e:  # WorkloadError, ScheduleError, PimConfigError
            print(f"{name:>8} {img:>4}: error: {e}", flush=True)
            continue
        summary.append(row)
        schedule += sch
        stages += sts
        print(f"{name:>8} {img:>4}: {row['latency_ms']:9.3f} ms  util {row['utilization']:.3f}  "
              + "  ".join(f"x{row[f'speedup_{k}_sim'] or '-'} {k}" for k in ("B", "P", "AH"))
              + " simulated (eq. 12: "
              + " ".join(f"x{row[f'speedup_{k}'] or '-'}" for k in ("B", "P", "AH")) + ")"
              + f" (memory ignored x{row['speedup_B_ignored']} B) "
              f"simulated {row['latency_sim_ms']:.3f} ms ({100 * row['sim_over_model']:+.1f}%) "
              f"solver {row['solver_s']:.2f} s  noc-sim {100 * row['noc_sim_deviation']:+.1f}% "
              f"(whole latency {100 * row['e2e_sim_deviation']:+.2f}%)", flush=True)
    from allspark_seed import ablations, seed_figures, table_v_rows, tables_md

    seed_rows, seed_res = table_v_rows()
    _write(out / "summary.csv", summary)
    _write(out / "schedule.csv", schedule + seed_rows)
    _write(out / "stages.csv", stages)
    cc: list[dict] = []
    if not args.no_crosscheck:
        small = [(m, 224) for m in args.models.split(",")]
        small += [(m, 640) for m in ("swin-t", "twins-b") if m in args.models.split(",")]
        cc = crosscheck() + cpsat_check(small, args.cpsat_limit)
        _write(out / "crosscheck.csv", cc)
        for r in cc:
            print(f"crosscheck {r['kind']:>7} {r['instance']}: {r['compact']} vs "
                  f"{r['literal']}  {r.get('note', '')}")
    if summary:
        _figures(out, summary, stages,
                 640 if any(r["img"] == 640 for r in summary) else summary[0]["img"])
        seed_figures(out, summary, seed_res)
        abl = ablations()
        _write(out / "ablation.csv", abl)
        tables_md(out, summary, stages, schedule, seed_res, cc, abl)
    if not args.no_sweeps:
        from allspark_sweeps import batch_sweep, mesh_sweep, sweep_figures, sweep_md

        bs, ms = batch_sweep(jobs=args.jobs), mesh_sweep(jobs=args.jobs)
        _write(out / "batch.csv", bs)
        _write(out / "mesh.csv", ms)
        sweep_figures(out, bs, ms)
        with (out / "tables.md").open("a") as f:
            f.write(sweep_md(bs, ms))
        for r in bs:
            print(f"batch {r['batch']}: {r.get('per_image_ms', r.get('error'))} ms per image")
        for r in ms:
            print(f"{r['model']} {r['mesh']} {r['cap_MiB']:g} MiB: "
                  + (f"x{r['speedup_B']} B x{r['speedup_P']} P x{r['speedup_AH']} AH"
                     if "error" not in r else f"error: {r['error']}"))
    print(f"wrote {out} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
