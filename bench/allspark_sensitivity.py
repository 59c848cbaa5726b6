"""Sensitivity of the Allspark headline numbers to each assumed parameter.

    python bench/allspark_sensitivity.py [--out bench/out/allspark] [--no-means]

For Swin-B at 640^2 and ViT-B at 224^2 on the 16x16 mesh it re-runs the
orchestration (ILP), the paid baselines and the lowered, simulated schedule with
one assumed parameter (``ASSUMED_FIELDS`` of ``dialects/target/pim.py``) changed at
a time, and prints each headline as ``value [min, max] (dominant parameter)``.
Then the same for the mean speedups (simulated over simulated, both schedules
lowered and run on the NoC/PIM simulator) over a reduced set of runs per model
group (``MEAN_SETS``: 4 ViT/PVT and 8 LVT runs, not all 47; a few minutes).
Writes ``sensitivity.csv``, ``sensitivity_means.csv`` and ``sensitivity.md``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

RANGES = {  # assumed field -> values tried (the default is in the middle)
    "bytes_per_elem": (1, 2),
    "p_min": (4, 8, 16),
    "router_delay_cycles": (1, 2, 4),
    "dram_row_bytes": (1024, 2048, 4096),
    "acu_elems_per_cycle": (8, 16, 32),
}
POINTS = (("swin-b", 640), ("vit-b", 224))
MEAN_SETS = {  # group -> runs whose mean speedups are re-computed per parameter value
    "ViT+PVT": (("vit-b", 224), ("vit-b", 640), ("pvt-s", 224), ("pvt-s", 640)),
    "LVT": (("swin-t", 224), ("swin-t", 640), ("swin-b", 224), ("swin-b", 640),
            ("twins-b", 224), ("twins-b", 640), ("cswin-b", 640), ("focal-b", 640)),
}


def headline(name: str, img: int, hw) -> dict:
    from steplus.passes.allspark.baselines import BASELINES, BaselineMemoryError, baseline
    from steplus.passes.allspark.ilp_compact import ScheduleError
    from steplus.passes.allspark.orchestrate import orchestrate
    from steplus.runtime.pim.program import result_module, simulate_model

    try:
        res = orchestrate(name, img, hw, bind=True)
    except ScheduleError:
        return {}
    _, op = result_module(res, "allspark-16x16")
    sim = simulate_model(op, hw)
    out = {"latency_ms": res.latency_ms, "simulated_ms": sim.latency_ms,
           "utilization": res.utilization}
    from steplus.runtime.pim.program import simulate_result

    for k in BASELINES:
        try:
            b = baseline(res.model, img, hw, k, bind=False)
        except BaselineMemoryError:
            continue
        out[f"speedup_{k}"] = b.latency_ms / res.latency_ms
        out[f"speedup_{k}_sim"] = simulate_result(b, "allspark-16x16").total / sim.total
    return out


def run() -> list[dict]:
    from steplus.dialects.target.pim import preset, with_overrides

    base = preset("allspark-16x16")
    rows = []
    for name, img in POINTS:
        ref = headline(name, img, base)
        for key, value in ref.items():
            rows.append({"model": name, "img": img, "metric": key, "param": "default",
                         "value": round(value, 4)})
        for field, values in RANGES.items():
            for v in values:
                if getattr(base, field) == v:
                    continue
                got = headline(name, img, with_overrides(base, **{field: v}))
                for key in ref:
                    rows.append({"model": name, "img": img, "metric": key,
                                 "param": f"{field}={v}",
                                 "value": round(got[key], 4) if key in got else ""})
    return rows


def simulated_speedups(name: str, img: int, hw, preset_name: str) -> dict[str, float]:
    """Baseline over Allspark, both lowered and simulated; a baseline that cannot run (or
    a model with no schedule) is missing."""
    from steplus.passes.allspark.baselines import BASELINES, BaselineMemoryError, baseline
    from steplus.passes.allspark.ilp_compact import ScheduleError
    from steplus.passes.allspark.orchestrate import orchestrate
    from steplus.runtime.pim.program import simulate_result

    try:
        res = orchestrate(name, img, hw, bind=False)
    except ScheduleError:
        return {}
    sim = simulate_result(res, preset_name)
    out = {}
    for k in BASELINES:
        try:
            b = baseline(res.model, img, hw, k, bind=False)
        except BaselineMemoryError:
            continue
        out[k] = simulate_result(b, preset_name).total / sim.total
    return out


def mean_rows() -> list[dict]:
    """Mean simulated speedups per group, at the defaults and one parameter changed."""
    from steplus.dialects.target.pim import preset, with_overrides
    from steplus.tools.progress import status

    points = [("default", None)] + [(f"{f}={v}", (f, v)) for f, vs in RANGES.items()
                                    for v in vs if getattr(preset("allspark-16x16"), f) != v]
    rows = []
    for label, change in points:
        for group, runs in MEAN_SETS.items():
            got: dict[str, list[float]] = {"B": [], "P": [], "AH": []}
            for name, img in runs:
                pname = "allspark-8x8" if name.startswith("pvt") else "allspark-16x16"
                hw = preset(pname)
                if change is not None:
                    hw = with_overrides(hw, **{change[0]: change[1]})
                with status("allspark_sensitivity", f"{label}: {name} at {img}"):
                    for k, x in simulated_speedups(name, img, hw, pname).items():
                        got[k].append(x)
            for k, xs in got.items():
                rows.append({"group": group, "param": label, "baseline": k, "runs": len(xs),
                             "mean": round(sum(xs) / len(xs), 3) if xs else ""})
    return rows


def means_md(rows: list[dict]) -> str:
    lines = ["", "## Mean speedups (simulated over simulated) under each assumption", "",
             "Runs: " + "; ".join(f"{g}: " + ", ".join(f"{m} {i}" for m, i in runs)
                                  for g, runs in MEAN_SETS.items()) +
             ". A baseline that cannot run at a value is left out of that mean (n).", "",
             "| group | baseline | default mean (n) | range | dominant parameter |",
             "|---|---|---|---|---|"]
    for group in MEAN_SETS:
        for k in ("B", "P", "AH"):
            mine = [r for r in rows if r["group"] == group and r["baseline"] == k
                    and r["mean"] != ""]
            ref = next((r for r in mine if r["param"] == "default"), None)
            if ref is None:
                continue
            lo, hi = min(r["mean"] for r in mine), max(r["mean"] for r in mine)
            dom = max(mine, key=lambda r: abs(r["mean"] - ref["mean"]))
            lines.append(f"| {group} | {k} | {ref['mean']:g} ({ref['runs']}) | [{lo:g}, {hi:g}]"
                         f" | {dom['param'] if dom['mean'] != ref['mean'] else '-'} "
                         f"({dom['runs']} runs) |")
    return "\n".join(lines) + "\n"


def sensitivity_md(rows: list[dict]) -> str:
    lines = ["", "## Sensitivity to the assumed parameters (one at a time)", "",
             "Ranges: " + "; ".join(f"`{k}` {list(v)}" for k, v in RANGES.items()) +
             ". Blank: no schedule (or the baseline cannot run) at that value.", "",
             "| model | metric | default | range | dominant parameter |", "|---|---|---|---|---|"]
    keys = []
    for r in rows:
        if (r["model"], r["img"], r["metric"]) not in keys:
            keys.append((r["model"], r["img"], r["metric"]))
    for model, img, metric in keys:
        mine = [r for r in rows if (r["model"], r["img"], r["metric"]) == (model, img, metric)]
        ref = next(r["value"] for r in mine if r["param"] == "default")
        vals = [r for r in mine if r["value"] != ""]
        lo, hi = min(r["value"] for r in vals), max(r["value"] for r in vals)
        dom = max(vals, key=lambda r: abs(r["value"] - ref))
        lines.append(f"| {model} {img} | {metric} | {ref:g} | [{lo:g}, {hi:g}] | "
                     f"{dom['param'] if dom['value'] != ref else '-'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", default="bench/out/allspark")
    ap.add_argument("--no-means", action="store_true",
                    help="skip the mean speedups over MEAN_SETS (the slow part)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run()
    with (out / "sensitivity.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = sensitivity_md(rows)
    if not args.no_means:
        means = mean_rows()
        with (out / "sensitivity_means.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(means[0]))
            w.writeheader()
            w.writerows(means)
        text += means_md(means)
    (out / "sensitivity.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
