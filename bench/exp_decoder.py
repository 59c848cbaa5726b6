"""Experiment: a whole MoE decoder layer from PyTorch to cycles, static vs dynamic (issue 18 item 3).

    python bench/exp_decoder.py [--models qwen,mixtral] [--jobs N] [--out DIR]

For Qwen3-30B-A3B and Mixtral-8x7B (examples/workloads/decoder_torch.py, one
decode step of B = 64 sequences), the PyTorch `DecoderLayer` is exported
(`torch.export`, meta tensors: shapes only) and lowered by
`steplus.lowering.linalg_to_step.aten.lower_exported`: the GQA attention to
the §8.4 graph, the MoE FFN to the §8.2 graph, and the rest through
`convert-linalg-to-step` (bf16 arguments, f32 results, tile 64x256x256,
schedule mnk): the two RMSNorms, the q/k/v projections (the 1/sqrt(d) scale
of q fused) and the output projection (the first residual add fused), the
router (logits + top-k weights and indices; a tile spans the E columns) and
the last residual add — the "dense" phases. Only views and reshapes are not
lowered (a remark says so).

It is specialized to the shipped traces: the MoE to the routing trace
`expert_routing/<model>_b64/` (its first file), the attention to the KV
lengths of `azure_kv/b64/` trace 4007_4070 (§6.2's medium trace), every
KV head of a sequence sharing its length (B x Hkv requests).

Designs:

- static: MoE static tiling `tile_N` in {16, 32, 64, 128, 256} and the better
  (fewer cycles) of the coarse and interleaved static attentions;
- dynamic: `step-dynamic-tiling` applied to the lowered static MoE graph and
  `step-dynamic-parallelize{factor=4}` to the lowered interleaved attention.

Each phase runs with its experiment's reference settings
(bench/reference_settings.py: `moe`, `attention`; the dense phases on
step-eval with 4096 FLOPs/cycle, as the static MoE). Phases are dependent, so
the layer's cycles are their sum; the layer is configured at once, so its
on-chip memory is the sum of the phases' simulated on-chip peaks.
memory-matched static = the static design whose on-chip memory is closest to
the dynamic one's (log ratio); performance-matched static = the static design
with the least on-chip memory among those at most as slow as the dynamic one
(if none, the fastest, marked). Prints the table and the ratios; writes
DIR/decoder.csv and DIR/decoder.png (cycles vs on-chip memory per model).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

from steplus.tools.progress import status
from steplus.tools.sweep import add_jobs_argument

REPO = Path(__file__).resolve().parents[1]
TILES = (16, 32, 64, 128, 256)
BATCH = 64
KV_TRACE = "4007_4070"
DENSE = "tile=64x256x256 schedule=mnk"
DENSE_FLOPS = 4096
_JOBS: list[dict] = []  # filled before the worker pool forks


def lower(model: str) -> dict:
    """Export and lower one model's decoder layer; the graphs of every design."""
    import numpy as np
    import torch
    from xdsl.context import Context

    from steplus.examples.workloads.decoder_torch import CONFIGS, DecoderLayer, decoder_inputs
    from steplus.lowering.linalg_to_step.aten import lower_exported
    from steplus.lowering.linalg_to_step.attention_graph import attention_graph
    from steplus.lowering.linalg_to_step.moe_graph import moe_graph
    from steplus.passes.step.dynamic_parallelize import StepDynamicParallelizePass
    from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass
    from steplus.passes.step.traces import shipped_routing_trace

    cfg = CONFIGS[model]
    kv = sorted((REPO / "examples/data/step-traces/azure_kv/b64").glob(f"*_{KV_TRACE}.npy"))[0]
    lengths = np.repeat(np.load(kv).astype(np.int64), cfg.kv_heads).tolist()
    t0 = time.time()
    ep = torch.export.export(DecoderLayer(cfg), decoder_inputs(cfg, BATCH, 64, device="meta",
                                                                  dtype=torch.bfloat16))
    t1 = time.time()
    low = lower_exported(ep, tile_n=TILES[0], kv_lengths=lengths, dense=DENSE, name=model)
    t2 = time.time()
    parts = {p.kind if p.kind != "dense" else f"dense{i}-{p.role}": p
             for i, p in enumerate(low.graphs)}
    moe, attn = parts.pop("moe"), parts.pop("attention")
    jobs = [{"model": model, "phase": k, "design": "both", "module": p.module}
            for k, p in sorted(parts.items())]

    # the other designs are built in the workers (fork: these closures need no pickling)
    def static_moe(tn):
        return lambda: moe_graph(moe.shape, tn, name=f"{model}_moe_tn{tn}")

    def dynamic_moe():
        m = moe.module.clone()
        StepDynamicTilingPass().apply(Context(), m)
        return m

    def coarse():
        return attention_graph(attn.shape, "coarse", attn.seq_len, attn.offset,
                               name=f"{model}_attention_coarse")

    def dynamic_attention():
        m = attn.module.clone()
        StepDynamicParallelizePass(factor=4).apply(Context(), m)
        return m

    for tn in TILES:
        job = {"model": model, "phase": "moe", "design": f"tn{tn}"}
        if tn == TILES[0]:
            job["module"] = moe.module
        else:
            job["build"] = static_moe(tn)
        jobs.append(job)
    jobs += [{"model": model, "phase": "moe", "design": "dynamic", "build": dynamic_moe},
             {"model": model, "phase": "attention", "design": "interleaved",
              "module": attn.module},
             {"model": model, "phase": "attention", "design": "coarse", "build": coarse},
             {"model": model, "phase": "attention", "design": "dynamic",
              "build": dynamic_attention}]
    routing = shipped_routing_trace(model, BATCH)
    for j in jobs:
        j["routing"] = str(routing)
    print(f"{model}: exported in {t1 - t0:.1f} s, lowered in {t2 - t1:.1f} s: "
          f"{len(low.graphs)} graphs; {len(low.remarks)} remarks", file=sys.stderr)
    for r in low.remarks:
        print(f"  {r}"[:240], file=sys.stderr)
    return {"jobs": jobs, "requests": len(lengths), "tiles": sum(attn.seq_len)}


def simulate(index: int) -> dict:
    """Cycles and simulated on-chip peak / traffic of one phase graph."""
    sys.path.insert(0, str(REPO / "bench"))
    from xdsl.context import Context

    from reference_settings import configure, simulate_moe
    from steplus.runtime.fabric.build import build_program
    from steplus.passes.step.specialize import StepSpecializePass
    from steplus.dialects.target.fabric import get_preset

    job = _JOBS[index]
    t0 = time.time()
    module = job["module"].clone() if "module" in job else job["build"]()
    if job["phase"] == "moe":
        StepSpecializePass(routing=job["routing"], rewrite=True).apply(Context(), module)
        cfg = configure("moe", module, dynamic=job["design"] == "dynamic", depth=2)
        res, _, note = simulate_moe(module, cfg, None)
    elif job["phase"] == "attention":
        res, note = build_program(module, configure("attention", module)).run(), ""
    else:
        cfg = get_preset("step-eval").with_(compute_bw=DENSE_FLOPS)
        res, note = build_program(module, cfg).run(), ""
    return {"model": job["model"], "phase": job["phase"], "design": job["design"],
            "cycles": int(res.cycles), "onchip_bytes": int(res.onchip_peak),
            "offchip_bytes": int(res.offchip_read + res.offchip_written), "note": note,
            "sim_s": round(time.time() - t0, 1)}


def run_model(model: str) -> list[dict]:
    """Lower one model's layer and simulate every phase graph (rows of `simulate`)."""
    start = len(_JOBS)
    _JOBS.extend(lower(model)["jobs"])
    return [simulate(i) for i in range(start, len(_JOBS))]


def designs(rows: list[dict], model: str) -> list[dict]:
    """Whole-layer designs: dense phases + MoE design + attention (best static / dynamic)."""
    sel = [r for r in rows if r["model"] == model]
    dense = [r for r in sel if r["phase"].startswith("dense")]
    attn = {r["design"]: r for r in sel if r["phase"] == "attention"}
    static_attn = min((attn["coarse"], attn["interleaved"]), key=lambda r: r["cycles"])
    out = []
    for r in sel:
        if r["phase"] != "moe":
            continue
        a = attn["dynamic"] if r["design"] == "dynamic" else static_attn
        parts = [*dense, a, r]
        out.append({"model": model, "design": r["design"], "attention": a["design"],
                    "cycles": sum(p["cycles"] for p in parts),
                    "onchip_bytes": sum(p["onchip_bytes"] for p in parts),
                    "moe_cycles": r["cycles"], "attention_cycles": a["cycles"],
                    "dense_cycles": sum(p["cycles"] for p in dense),
                    "moe_onchip": r["onchip_bytes"], "attention_onchip": a["onchip_bytes"]})
    return out


def matched(layer: list[dict]) -> dict:
    dyn = next(d for d in layer if d["design"] == "dynamic")
    static = [d for d in layer if d["design"] != "dynamic"]
    mem = min(static, key=lambda d: abs(math.log(d["onchip_bytes"] / dyn["onchip_bytes"])))
    fast = [d for d in static if d["cycles"] <= dyn["cycles"]]
    perf = min(fast, key=lambda d: d["onchip_bytes"]) if fast else min(static,
                                                                         key=lambda d: d["cycles"])
    return {"dynamic": dyn, "memory_matched": mem, "performance_matched": perf,
            "perf_reached": bool(fast)}


def plot(layers: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    fig, axes = plt.subplots(1, len(layers), figsize=(4.2 * len(layers), 3.4), squeeze=False)
    for ax, (model, layer) in zip(axes[0], layers.items()):
        for d in layer:
            dyn = d["design"] == "dynamic"
            ax.scatter(d["onchip_bytes"] / 2**20, d["cycles"] / 1e3,
                       color="tab:orange" if dyn else "tab:blue", marker="*" if dyn else "o")
            ax.annotate(d["design"], (d["onchip_bytes"] / 2**20, d["cycles"] / 1e3), fontsize=7)
        ax.set_xscale("log")
        # Ticks at 1, 2, 5 x 10^k as plain numbers, no minor labels: matplotlib's
        # minor log-tick labels (2x10^1, 3x10^1, ...) overlapped each other.
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("on-chip memory (MiB)")
        ax.set_ylabel("cycles (x1000)")
        ax.set_title(f"{model} decoder layer, B={BATCH}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="qwen,mixtral")
    add_jobs_argument(p)
    p.add_argument("--out", default=str(REPO / "bench" / "out"))
    args = p.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in ("qwen", "mixtral"):
            p.error(f"unknown model {m!r} (qwen, mixtral)")
    jobs = args.jobs or os.cpu_count() or 1
    t0 = time.time()
    models.sort(key=lambda m: m != "mixtral")  # the quick export first
    if jobs > 1:
        # simulate each model's graphs in forked workers while the next model is
        # exported and lowered in this process (the workers see the jobs of their fork)
        import multiprocessing as mp

        pending, pools = [], []
        finished = [0]  # simulations done (the pools' result callbacks count them)
        for i, m in enumerate(models):
            start = len(_JOBS)
            with status("exp_decoder", f"exporting and lowering {m}"):  # stderr, a terminal only
                _JOBS.extend(lower(m)["jobs"])
            pool = mp.get_context("fork").Pool(1 if i + 1 < len(models) else jobs)
            pools.append(pool)
            pending += [pool.apply_async(simulate, (k,),
                                         callback=lambda _r: finished.__setitem__(0, finished[0] + 1))
                        for k in range(start, len(_JOBS))]
        with status("exp_decoder", lambda: f"simulated {finished[0]}/{len(pending)} phase graphs"):
            rows = [r.get() for r in pending]
        for pool in pools:
            pool.close()
            pool.join()
    else:
        rows = []
        for m in models:
            with status("exp_decoder", f"exporting, lowering and simulating {m}"):
                rows += run_model(m)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"\n{'model':8} {'phase':18} {'design':12} {'cycles':>10} {'on-chip B':>12} "
          f"{'off-chip B':>14} {'sim s':>6}")
    for r in rows:
        print(f"{r['model']:8} {r['phase']:18} {r['design']:12} {r['cycles']:>10} "
              f"{r['onchip_bytes']:>12} {r['offchip_bytes']:>14} {r['sim_s']:>6} {r['note']}")
    layers = {m: designs(rows, m) for m in models}
    print(f"\n{'model':8} {'design':8} {'attention':12} {'cycles':>10} {'on-chip MiB':>12}")
    for m, layer in layers.items():
        for d in layer:
            print(f"{m:8} {d['design']:8} {d['attention']:12} {d['cycles']:>10} "
                  f"{d['onchip_bytes'] / 2**20:>12.2f}")
    print()
    for m, layer in layers.items():
        r = matched(layer)
        dyn, mem, perf = r["dynamic"], r["memory_matched"], r["performance_matched"]
        print(f"{m}: dynamic {dyn['cycles']} cycles, {dyn['onchip_bytes'] / 2**20:.2f} MiB; "
              f"vs memory-matched static {mem['design']} ({mem['onchip_bytes'] / 2**20:.2f} MiB): "
              f"speedup {mem['cycles'] / dyn['cycles']:.2f}x; vs performance-matched static "
              f"{perf['design']}{'' if r['perf_reached'] else ' (none as fast; the fastest)'}: "
              f"speedup {perf['cycles'] / dyn['cycles']:.2f}x, on-chip "
              f"{perf['onchip_bytes'] / dyn['onchip_bytes']:.2f}x the dynamic design's")
        part = [{**d, "cycles": d["moe_cycles"] + d["attention_cycles"],
                 "onchip_bytes": d["moe_onchip"] + d["attention_onchip"]} for d in layer]
        r = matched(part)
        dyn, mem, perf = r["dynamic"], r["memory_matched"], r["performance_matched"]
        print(f"{m} (MoE + attention only): vs memory-matched {mem['design']} speedup "
              f"{mem['cycles'] / dyn['cycles']:.2f}x; vs performance-matched {perf['design']}"
              f"{'' if r['perf_reached'] else ' (none as fast; the fastest)'} speedup "
              f"{perf['cycles'] / dyn['cycles']:.2f}x, on-chip "
              f"{perf['onchip_bytes'] / dyn['onchip_bytes']:.2f}x")
    from steplus.tools.sweep import write_csv

    write_csv(out / "decoder_phases.csv", rows)
    write_csv(out / "decoder.csv", [d for layer in layers.values() for d in layer])
    plot(layers, out / "decoder.png")
    print(f"\nwrote {out / 'decoder.csv'}, {out / 'decoder_phases.csv'}, {out / 'decoder.png'} "
          f"in {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
