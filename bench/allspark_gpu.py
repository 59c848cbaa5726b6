"""Allspark against a labeled V100 roofline (seed Fig. 16, small-batch speedup and energy).

    python bench/allspark_gpu.py [--out bench/out/allspark] [--models vit-b,swin-t,swin-b]

The GPU side is a roofline, not a measurement (we have no V100): a model takes
``max(FLOPs / peak, bytes / bandwidth)`` and draws its board power for that time.
Every parameter is labeled with its source or marked as an assumption. A roofline is
the fastest the GPU can be, so the speedups here are lower bounds on the seed's
measured ones; the energy ratio uses TDP for the GPU and only dynamic energy
(MACs, DRAM, NoC) for the PIM system, so it favours the PIM side (no static power).
The PIM side is the seed's GPU-comparison system (`allspark-24x24`, 14.7 TMAC/s,
4.5 GiB), eq. 12 and simulated latency for every batch.
Writes ``gpu.csv`` and ``gpu.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

GPU = {  # name: (value, source)
    "peak_flops": (15.7e12, "V100 SXM2 FP32 peak, NVIDIA V100 datasheet (the seed: 15.7 TFLOPS)"),
    "dram_bytes_per_s": (900e9, "HBM2, NVIDIA V100 datasheet (the seed: 900 GB/s)"),
    "power_w": (300.0, "assumption: board TDP (V100 SXM2 datasheet) drawn for the whole run"),
    "bytes_per_elem": (4, "assumption: FP32 PyTorch inference"),
    "efficiency": (1.0, "assumption: roofline, 100 % of peak compute or bandwidth"),
}


def gpu_roofline(model, batch: int) -> tuple[float, float, float]:
    """(seconds, joules, bytes) of the model on the roofline GPU for ``batch`` images.

    Bytes: every weight read once; per image each GEMM's operands read and results
    written once, attention scores materialized (unfused), as eager PyTorch does.
    """
    bpe = GPU["bytes_per_elem"][0]
    acts = 0
    for s in model.stages:
        t = s.branches * s.tokens
        c, w, a = s.channels, s.width, s.mlp_ratio
        for g in s.groups:
            per_block = (t * (c + 3 * w) + 2 * s.branches * s.heads * s.tokens * g.kv_tokens
                         + t * (w + c) + t * (c + a * c) + t * (a * c + c))
            acts += g.blocks * per_block
    nbytes = bpe * (model.weight_params + batch * acts)
    flops = 2 * model.macs() * batch
    eff = GPU["efficiency"][0]
    seconds = max(flops / (GPU["peak_flops"][0] * eff), nbytes / (GPU["dram_bytes_per_s"][0] * eff))
    return seconds, seconds * GPU["power_w"][0], nbytes


def run(models: list[str], img: int = 224, batches: tuple[int, ...] = (1, 2, 4, 8)) -> list[dict]:
    from steplus.passes.allspark.orchestrate import orchestrate
    from steplus.runtime.pim.program import result_module, simulate_model

    rows = []
    for name in models:
        for b in batches:
            res = orchestrate(name, img, "allspark-24x24", bind=b == 1, batch=b)
            gs, gj, _ = gpu_roofline(res.model, b)
            pim_s = res.latency_ms / 1e3
            pim_j = sum(res.energy_pj.values()) * 1e-12
            row = {"model": name, "img": img, "batch": b, "pim_ms": round(res.latency_ms, 4),
                   "gpu_roofline_ms": round(gs * 1e3, 4), "speedup": round(gs / pim_s, 3),
                   "energy_ratio": round(gj / pim_j, 1)}
            _, op = result_module(res, "allspark-24x24")  # every batch, lowered and simulated
            sim = simulate_model(op)
            row["pim_sim_ms"] = round(sim.latency_ms, 4)
            row["speedup_sim"] = round(gs * 1e3 / sim.latency_ms, 3)
            rows.append(row)
    return rows


def gpu_md(rows: list[dict]) -> str:
    lines = ["", "## Against a V100 roofline (seed Fig. 16: mean 2.3x faster, 20-55x energy)", "",
             "| GPU parameter | value | source |", "|---|---|---|"]
    lines += [f"| {k} | {v:g} | {src} |" for k, (v, src) in GPU.items()]
    lines += ["", "| model | batch | PIM eq. 12 ms | PIM simulated ms | GPU roofline ms | "
              "speedup (eq. 12 / simulated) | energy ratio |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        sim = f"{r['pim_sim_ms']}" if "pim_sim_ms" in r else "-"
        sp = f"{r['speedup']}" + (f" / {r['speedup_sim']}" if "speedup_sim" in r else "")
        lines.append(f"| {r['model']} {r['img']} | {r['batch']} | {r['pim_ms']} | {sim} | "
                     f"{r['gpu_roofline_ms']} | {sp} | {r['energy_ratio']} |")
    sp = [r["speedup"] for r in rows]
    ss = [r["speedup_sim"] for r in rows]
    lines += ["", f"Mean speedup over the roofline {sum(sp) / len(sp):.2f}x "
              f"(range {min(sp):.2f}-{max(sp):.2f}x) over {len(rows)} points; simulated "
              f"{sum(ss) / len(ss):.2f}x (range {min(ss):.2f}-{max(ss):.2f}x)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", default="bench/out/allspark")
    ap.add_argument("--models", default="vit-b,swin-t,swin-b")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run(args.models.split(","))
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k)
                  if k in rows[0] else 99)
    with (out / "gpu.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    text = gpu_md(rows)
    (out / "gpu.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
