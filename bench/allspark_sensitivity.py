"""Sensitivity of the Allspark headline numbers to each assumed parameter.

    python bench/allspark_sensitivity.py [--out bench/out/allspark]

For Swin-B at 640^2 and ViT-B at 224^2 on the 16x16 mesh it re-runs the
orchestration (ILP), the paid baselines and the lowered, simulated schedule with
one assumed parameter (``ASSUMED_FIELDS`` of ``dialects/target/pim.py``) changed at
a time, and prints each headline as ``value [min, max] (dominant parameter)``.
Writes ``sensitivity.csv`` and ``sensitivity.md``.
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
    for k in BASELINES:
        try:
            out[f"speedup_{k}"] = baseline(res.model, img, hw, k, bind=False).latency_ms / \
                res.latency_ms
        except BaselineMemoryError:
            pass
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
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run()
    with (out / "sensitivity.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = sensitivity_md(rows)
    (out / "sensitivity.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
