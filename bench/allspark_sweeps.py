"""Allspark sensitivity sweeps: batch size (seed Fig. 14) and mesh / memory (Fig. 15).

    python bench/allspark_sweeps.py [--jobs N] [--out DIR]

Used by ``bench/exp_allspark.py`` (which passes its ``--jobs``); run on its own it
prints both sweeps' rows and writes DIR/batch.csv, DIR/mesh.csv and the two figures.
Each point is a full orchestration (compact ILP) plus the B / P / AH baselines under
the same cost model, and the schedules lowered and simulated (``simulate_result``:
per-image simulated latency for batches, simulated-over-simulated speedups for the
meshes); a point where no schedule fits is kept with its error. The points are
independent: they run in a local process pool (``--jobs``, default one worker per
core, ``--jobs 1`` serially in the process; ``steplus.tools.sweep.run_sweep``, a
progress bar on stderr when it is a terminal), rows in point order, the same rows
as serially (test/unit/passes/allspark/test_pim_sweeps.py).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from steplus.tools.sweep import add_jobs_argument, run_sweep

MIB = 1024 * 1024


def batch_point(config: dict) -> dict:
    """One point of the batch sweep: `{"model", "img", "batch"}` -> its row."""
    from steplus.passes.allspark.ilp_compact import ScheduleError
    from steplus.passes.allspark.orchestrate import orchestrate
    from steplus.runtime.pim.program import simulate_result

    model, img, bt = config["model"], config["img"], config["batch"]
    row: dict = {"model": model, "img": img, "batch": bt}
    try:
        res = orchestrate(model, img, "allspark-16x16", bind=False, batch=bt)
    except ScheduleError as e:
        row["error"] = str(e)
        return row
    split = res.split_ms()
    row.update({f"{k}_ms_per_image": round(v / bt, 4) for k, v in split.items()})
    row["per_image_ms"] = round(res.per_image_ms, 4)
    row["sim_per_image_ms"] = round(simulate_result(res, "allspark-16x16").latency_ms / bt, 4)
    row["memory_MiB"] = round(res.memory["reuse+sharing"].total / MIB, 2)
    return row


def batch_sweep(model: str = "swin-b", img: int = 640,
                batches: tuple[int, ...] = (1, 2, 4, 8), jobs: int | None = None) -> list[dict]:
    """Per-image latency split for small batches (weight sharing amortised); `jobs`
    worker processes (None: one per core, 1: serial)."""
    configs = [{"model": model, "img": img, "batch": bt} for bt in batches]
    return run_sweep(batch_point, configs, workers=jobs, desc="allspark batch sweep")


def mesh_point(config: dict) -> dict:
    """One point of the mesh sweep: `{"model", "img", "side", "cap"}` -> its row."""
    from steplus.dialects.target.pim import preset, with_overrides
    from steplus.passes.allspark.baselines import BASELINES, BaselineMemoryError, baseline
    from steplus.passes.allspark.ilp_compact import ScheduleError
    from steplus.passes.allspark.orchestrate import orchestrate
    from steplus.runtime.pim.program import simulate_result

    name, img, side, cap = config["model"], config["img"], config["side"], config["cap"]
    base = preset("allspark-24x24") if side == 24 else preset("allspark-16x16")
    hw = with_overrides(base, rows=side, cols=side, node_cap_bytes=int(cap * MIB))
    row: dict = {"model": name, "img": img, "mesh": f"{side}x{side}", "cap_MiB": cap}
    try:
        res = orchestrate(name, img, hw, bind=False)
    except ScheduleError as e:
        row["error"] = str(e)
        return row
    row["latency_ms"] = round(res.latency_ms, 4)
    row["utilization"] = round(res.utilization, 4)
    sim = simulate_result(res, base.name, True, cap)
    row["latency_sim_ms"] = round(sim.latency_ms, 4)
    for k in BASELINES:
        try:  # an overflowing baseline streams its weights; "" if it cannot run
            b = baseline(res.model, img, hw, k, bind=False)
            row[f"speedup_{k}_eq12"] = round(b.latency_ms / res.latency_ms, 3)
            row[f"speedup_{k}"] = round(
                simulate_result(b, base.name, True, cap).total / sim.total, 3)
        except BaselineMemoryError:
            row[f"speedup_{k}"] = row[f"speedup_{k}_eq12"] = ""
    return row


def mesh_sweep(models: tuple[str, ...] = ("swin-b", "twins-b"), img: int = 640,
               meshes: tuple[int, ...] = (8, 16, 24),
               caps_mib: tuple[float, ...] = (4.0, 8.0, 16.0),
               jobs: int | None = None) -> list[dict]:
    """Speedup over B / P / AH against the node array side and the memory per node;
    `jobs` worker processes (None: one per core, 1: serial)."""
    points = [(side, 8.0) for side in meshes] + [(16, cap) for cap in caps_mib if cap != 8.0]
    configs = [{"model": name, "img": img, "side": side, "cap": cap}
               for name in models for side, cap in points]
    return run_sweep(mesh_point, configs, workers=jobs, desc="allspark mesh sweep")


def sweep_figures(out: Path, batch_rows: list[dict], mesh_rows: list[dict]) -> None:
    """batch.png (Fig. 14) and mesh.png (Fig. 15)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in batch_rows if "error" not in r]
    if ok:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [str(r["batch"]) for r in ok]
        bottom = [0.0] * len(ok)
        for key, label in (("compute", "compute"), ("transfer", "feature-map transfer"),
                           ("sharing", "weight sharing")):
            vals = [r[f"{key}_ms_per_image"] for r in ok]
            ax.bar(xs, vals, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xlabel("batch size")
        ax.set_ylabel("ms per image")
        ax.set_title(f"{ok[0]['model']} {ok[0]['img']}x{ok[0]['img']}: latency per image")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "batch.png", dpi=120)
        plt.close(fig)
    ok = [r for r in mesh_rows if "error" not in r]
    if ok:
        fig, ax = plt.subplots(figsize=(10, 4))
        labels = [f"{r['model']}\n{r['mesh']}, {r['cap_MiB']:g} MiB" for r in ok]
        for i, k in enumerate(("B", "P", "AH")):
            ax.bar([x + (i - 1) * 0.27 for x in range(len(ok))], [r[f"speedup_{k}"] or 0 for r in ok],
                   0.27, label=f"vs {k}")
        ax.set_xticks(range(len(ok)), labels, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("speedup of Allspark")
        ax.set_title("Speedup against node array and memory per node (both simulated)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "mesh.png", dpi=120)
        plt.close(fig)


def sweep_md(batch_rows: list[dict], mesh_rows: list[dict]) -> str:
    """Markdown sections for tables.md."""
    lines = ["", "## Small-batch inference (seed Fig. 14), ms per image", "",
             "| model | batch | compute | transfer | weight sharing | total (eq. 12) | "
             "simulated | memory MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for r in batch_rows:
        if "error" in r:
            lines.append(f"| {r['model']} {r['img']} | {r['batch']} | {r['error']} ||||")
            continue
        lines.append(f"| {r['model']} {r['img']} | {r['batch']} | {r['compute_ms_per_image']} | "
                     f"{r['transfer_ms_per_image']} | {r['sharing_ms_per_image']} | "
                     f"{r['per_image_ms']} | {r['sim_per_image_ms']} | {r['memory_MiB']} |")
    lines += ["", "## Node array and memory per node (seed Fig. 15); speedups simulated over "
              "simulated (eq. 12 in parentheses)", "",
              "| model | mesh | MiB/node | latency ms | util | x B | x P | x AH |",
              "|---|---|---|---|---|---|---|---|"]
    for r in mesh_rows:
        if "error" in r:
            lines.append(f"| {r['model']} {r['img']} | {r['mesh']} | {r['cap_MiB']:g} | "
                         f"no schedule: {r['error'][:120]} |||||")
            continue
        lines.append(f"| {r['model']} {r['img']} | {r['mesh']} | {r['cap_MiB']:g} | "
                     f"{r['latency_ms']} | {r['utilization']} | "
                     + " | ".join(f"{r[f'speedup_{k}'] or '-'} ({r[f'speedup_{k}_eq12'] or '-'})"
                                  for k in ("B", "P", "AH")) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_jobs_argument(p)
    p.add_argument("--out", default="bench/out/allspark", help="folder of the CSVs and figures")
    args = p.parse_args(argv)
    bs = batch_sweep(jobs=args.jobs)
    ms = mesh_sweep(jobs=args.jobs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("batch.csv", bs), ("mesh.csv", ms)):
        keys: list[str] = []  # an error row has fewer columns: the union, in order
        for r in rows:
            keys += [k for k in r if k not in keys]
        with (out / name).open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    sweep_figures(out, bs, ms)
    print(sweep_md(bs, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
