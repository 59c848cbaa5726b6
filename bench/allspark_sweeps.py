"""Allspark sensitivity sweeps: batch size (seed Fig. 14) and mesh / memory (Fig. 15).

Used by ``bench/exp_allspark.py`` (not run on its own).  Each point is a full
orchestration (compact ILP) plus the B / P / AH baselines under the same cost
model, and the schedules lowered and simulated (``simulate_result``: per-image
simulated latency for batches, simulated-over-simulated speedups for the meshes);
a point where no schedule fits is kept with its error.
"""

from __future__ import annotations

from pathlib import Path

from steplus.tools.progress import status

MIB = 1024 * 1024


def batch_sweep(model: str = "swin-b", img: int = 640,
                batches: tuple[int, ...] = (1, 2, 4, 8)) -> list[dict]:
    """Per-image latency split for small batches (weight sharing amortised)."""
    from steplus.passes.allspark.ilp_compact import ScheduleError
    from steplus.passes.allspark.orchestrate import orchestrate

    rows = []
    for bt in batches:
        row: dict = {"model": model, "img": img, "batch": bt}
        try:
            with status("allspark_sweeps", f"scheduling {model} at {img}, batch {bt}"):  # a terminal only
                res = orchestrate(model, img, "allspark-16x16", bind=False, batch=bt)
        except ScheduleError as e:
            row["error"] = str(e)
            rows.append(row)
            continue
        split = res.split_ms()
        row.update({f"{k}_ms_per_image": round(v / bt, 4) for k, v in split.items()})
        row["per_image_ms"] = round(res.per_image_ms, 4)
        from steplus.runtime.pim.program import simulate_result

        row["sim_per_image_ms"] = round(simulate_result(res, "allspark-16x16").latency_ms / bt,
                                        4)
        row["memory_MiB"] = round(res.memory["reuse+sharing"].total / MIB, 2)
        rows.append(row)
    return rows


def mesh_sweep(models: tuple[str, ...] = ("swin-b", "twins-b"), img: int = 640,
               meshes: tuple[int, ...] = (8, 16, 24),
               caps_mib: tuple[float, ...] = (4.0, 8.0, 16.0)) -> list[dict]:
    """Speedup over B / P / AH against the node array side and the memory per node."""
    from steplus.passes.allspark.baselines import BASELINES, BaselineMemoryError, baseline
    from steplus.dialects.target.pim import preset, with_overrides
    from steplus.passes.allspark.ilp_compact import ScheduleError
    from steplus.passes.allspark.orchestrate import orchestrate

    rows = []
    points = [(side, 8.0) for side in meshes] + [(16, cap) for cap in caps_mib if cap != 8.0]
    for name in models:
        for side, cap in points:
            base = preset("allspark-24x24") if side == 24 else preset("allspark-16x16")
            hw = with_overrides(base, rows=side, cols=side, node_cap_bytes=int(cap * MIB))
            row: dict = {"model": name, "img": img, "mesh": f"{side}x{side}", "cap_MiB": cap}
            try:
                with status("allspark_sweeps", f"scheduling {name} on {side}x{side}, {cap} MiB"):
                    res = orchestrate(name, img, hw, bind=False)  # the status line: a terminal only
            except ScheduleError as e:
                row["error"] = str(e)
                rows.append(row)
                continue
            from steplus.runtime.pim.program import simulate_result

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
            rows.append(row)
    return rows


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
