"""Experiment: parallelization strategies for GQA decode attention (the STeP paper's Fig. 11).

    python bench/exp_attention.py [--jobs N] [--scheduler tcp://host:8786] [--out DIR]
                                  [--batches 16,64,80] [--no-sweep] [--check]

For every reference KV-length trace of the reference spec §6.2 (batch 16, 64
and 80; three traces per stdev class high/medium/low) the three graphs of §8.4
(static coarse, static interleaved, dynamic work-stealing) are built with
`examples/workloads/attention.py` and simulated on the fabric (preset step-eval with
the attention settings of §8.4: compute 2048 FLOPs/cycle, FIFO depth 1). Also
the batch sweep (the batch-64 medium trace 4007_4070 repeated and truncated to
B in {16, 32, 48, 64}; coarse and dynamic).

Every row also checks the simulated off-chip traffic against `step-metrics`
(`traffic_ok`). Writes DIR/attention.csv (the spec §9 columns plus traffic,
on-chip and the check), DIR/attention_sweep.csv, DIR/attention.png (cycles of
each static strategy normalized to dynamic, geomean per stdev class and batch,
as in Fig. 11) and prints the geomean speedups of dynamic parallelization.
`--check` compares every trace's cycles with the pinned ones
(test/unit/runtime/fabric/attention_cycles.json) and exits non-zero on a mismatch.
Configurations run in parallel local processes, or on a Dask cluster with
--scheduler (steplus.tools.sweep).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KV_DIR = REPO / "examples" / "data" / "step-traces" / "azure_kv"
STRATEGIES = ("coarse", "interleaved", "dynamic")
COLUMN = {"coarse": "static_coarse_cycles", "interleaved": "static_interleave_cycles",
          "dynamic": "dynamic_cycles"}
UNIT_FLOPS = 2048  # reference_settings.configure("attention")
MAX_N = {16: 4672, 64: 6464, 80: 6528}  # §6.2; only addresses depend on it
# §6.2 reference selections (start_end per stdev class).
SELECTIONS = {
    16: {"high": ("2805_2820", "0821_0836", "0985_1000"),
         "medium": ("3349_3364", "3275_3290", "3181_3196"),
         "low": ("3799_3814", "2477_2492", "1063_1078")},
    64: {"high": ("0961_1024", "3239_3302", "1727_1790"),
         "medium": ("4007_4070", "3123_3186", "0733_0796"),
         "low": ("2019_2082", "4185_4248", "0271_0334")},
    80: {"high": ("0981_1060", "3227_3306", "0815_0894"),
         "medium": ("4687_4766", "3989_4068", "1891_1970"),
         "low": ("4181_4260", "0135_0214", "2025_2104")},
}
SWEEP_TRACE = ("b64", "4007_4070")
PINS = REPO / "test" / "unit" / "runtime" / "fabric" / "attention_cycles.json"
SWEEP_BATCHES = (16, 32, 48, 64)


def trace_file(batch: int, start_end: str) -> Path:
    """The shipped trace `azure_kv/b<batch>/conv_stdev*_<start_end>.npy`."""
    hits = sorted((KV_DIR / f"b{batch}").glob(f"conv_stdev*_{start_end}.npy"))
    if len(hits) != 1:
        raise FileNotFoundError(f"no unique KV trace b{batch}/*_{start_end}.npy in {KV_DIR}")
    return hits[0]


def simulate(strategy: str, lengths) -> dict:
    """Cycles, simulated traffic/on-chip and the step-metrics traffic of one graph."""
    sys.path.insert(0, str(REPO / "bench"))
    from steplus.examples.workloads import attention
    from reference_settings import configure

    from steplus.dialects.step import GraphOp
    from steplus.runtime.fabric.build import build_program
    from steplus.passes.step.traces import KVTrace

    t = KVTrace(lengths, attention.TILE_N)
    module = attention.attention(strategy, t.batch, t.seq_len, t.offset)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    predicted = _predicted_traffic(graph, sum(t.seq_len))
    cfg = configure("attention", module)
    try:
        res = build_program(module, cfg).run()
    except Exception as e:  # recorded in the CSV, the sweep goes on
        return {"cycles": f"error: {type(e).__name__}: {e}".replace("\n", " ")[:200],
                "traffic": "", "onchip": "", "traffic_ok": ""}
    traffic = int(res.offchip_read + res.offchip_written)
    ok = bool(predicted.is_number) and int(predicted) == traffic
    return {"cycles": int(res.cycles), "traffic": traffic, "onchip": int(res.onchip_peak),
            "traffic_ok": bool(ok)}


def _predicted_traffic(graph, total_tiles: int):
    """step-metrics' off-chip bytes, bound like `step-metrics` binds them (the
    graph's `step.bind`). In the dynamic graph the per-region tile totals
    `sum_L<r>` stay free, but the traffic only depends on their sum, the
    trace's total tile count: eliminate one of them with that equation."""
    import sympy

    from steplus.dialects.step.dims import to_expr
    from steplus.passes.step.bindings import graph_bindings
    from steplus.passes.step.metrics import compute_metrics

    bound = graph_bindings(graph)
    expr = to_expr(compute_metrics(graph).bind(bound).offchip)
    free = sorted((s for s in expr.free_symbols if s.name.startswith("sum_L")), key=str)
    if free:
        expr = sympy.expand(expr.subs(free[0], total_tiles - sum(free[1:])))
    return expr


def task(config: dict) -> dict:
    """One trace: the three strategies (or those in config['strategies'])."""
    import numpy as np

    if "path" in config:
        lengths = np.load(config["path"]).astype(np.int64)
    else:
        base = np.load(trace_file(64, SWEEP_TRACE[1])).astype(np.int64)
        lengths = np.concatenate([base] * 3)[: config["batch"]]
    row = {k: config[k] for k in ("batch", "stdev_class", "stdev", "start_idx", "end_idx")}
    row.update(unit_flops=UNIT_FLOPS, max_N=MAX_N.get(config["batch"], 6464), tile_N=32)
    for s in config["strategies"]:
        r = simulate(s, lengths)
        row[COLUMN[s]] = r["cycles"]
        row[f"{s}_traffic_bytes"] = r["traffic"]
        row[f"{s}_onchip_bytes"] = r["onchip"]
        row[f"{s}_traffic_ok"] = r["traffic_ok"]
    return row


def configurations(batches, sweep: bool) -> list[dict]:
    configs = []
    for batch in batches:
        for cls, sels in SELECTIONS[batch].items():
            for se in sels:
                path = trace_file(batch, se)
                start, end = se.split("_")
                configs.append({"batch": batch, "stdev_class": cls,
                                "stdev": int(path.stem.split("_")[1][5:]),
                                "start_idx": int(start), "end_idx": int(end), "path": str(path),
                                "strategies": STRATEGIES})
    if sweep:
        for b in SWEEP_BATCHES:
            configs.append({"batch": b, "stdev_class": "sweep", "stdev": "",
                            "start_idx": 4007, "end_idx": 4070, "strategies": ("coarse", "dynamic")})
    return configs


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def ratios(rows: list[dict], column: str) -> list[float]:
    return [r[column] / r["dynamic_cycles"] for r in rows
            if isinstance(r.get(column), int) and isinstance(r.get("dynamic_cycles"), int)]


def summary(rows: list[dict]) -> dict[str, float]:
    """Geomean speedups of dynamic over coarse, interleaved, both (every ratio),
    the better and the worse static design of each trace."""
    best = [min(a, b) for a, b in zip(ratios(rows, COLUMN["coarse"]),
                                      ratios(rows, COLUMN["interleaved"]))]
    worst = [max(a, b) for a, b in zip(ratios(rows, COLUMN["coarse"]),
                                       ratios(rows, COLUMN["interleaved"]))]
    return {"vs coarse": geomean(ratios(rows, COLUMN["coarse"])),
            "vs interleaved": geomean(ratios(rows, COLUMN["interleaved"])),
            "vs either static (all ratios)": geomean(ratios(rows, COLUMN["coarse"]) +
                                                     ratios(rows, COLUMN["interleaved"])),
            "vs best static": geomean(best), "vs worse static (spec §9)": geomean(worst)}


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    batches = sorted({r["batch"] for r in rows})
    fig, axes = plt.subplots(1, len(batches), figsize=(3.4 * len(batches), 2.8), squeeze=False)
    for ax, batch in zip(axes[0], batches):
        labels, xs = [], 0
        for cls in ("low", "medium", "high"):
            sel = [r for r in rows if r["batch"] == batch and r["stdev_class"] == cls]
            for k, (s, color) in enumerate((("coarse", "tab:blue"), ("interleaved", "tab:green"),
                                            ("dynamic", "tab:orange"))):
                val = geomean(ratios(sel, COLUMN[s])) if s != "dynamic" else 1.0
                if not math.isnan(val):
                    ax.bar(xs + k * 0.27, 1 / val, width=0.27, color=color,
                           label=s if cls == "low" else None)
            labels.append(cls)
            xs += 1
        ax.set_xticks([i + 0.27 for i in range(len(labels))], labels, fontsize=8)
        ax.set_title(f"B={batch}", fontsize=9)
        ax.set_ylabel("performance / dynamic", fontsize=8)
        ax.tick_params(labelsize=7)
    # One legend above the panels (inside the first one it covered a bar).
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=len(names), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    from steplus.tools.sweep import add_jobs_argument, run_sweep, write_csv

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_jobs_argument(p)
    p.add_argument("--scheduler", help="a Dask scheduler address (tcp://host:8786)")
    p.add_argument("--batches", default="16,64,80")
    p.add_argument("--no-sweep", action="store_true", help="skip the batch sweep")
    p.add_argument("--out", default=str(REPO / "bench" / "results"))
    p.add_argument("--check", action="store_true",
                   help="compare the cycles with the pinned ones (attention_cycles.json)")
    args = p.parse_args(argv)
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        p.error(f"--batches: expected integers like 16,64,80, got {args.batches!r}")
    if unknown := [b for b in batches if b not in SELECTIONS]:
        p.error(f"--batches: no reference traces for {unknown} (have {sorted(SELECTIONS)})")
    configs = configurations(batches, not args.no_sweep)
    rows = run_sweep(task, configs, workers=args.jobs, scheduler=args.scheduler,
                     desc="attention")
    main_rows = [r for r in rows if r["stdev_class"] != "sweep"]
    sweep_rows = [r for r in rows if r["stdev_class"] == "sweep"]
    out = Path(args.out)
    csv_path = write_csv(out / "attention.csv", main_rows)
    if sweep_rows:
        write_csv(out / "attention_sweep.csv", sweep_rows)
    plot(main_rows, out / "attention.png")
    cols = ["batch", "stdev_class", "start_idx", "end_idx", *COLUMN.values(),
            "coarse_traffic_bytes", "coarse_onchip_bytes", "interleaved_onchip_bytes",
            "dynamic_onchip_bytes"]
    print(",".join(cols))
    for r in rows:
        print(",".join(str(r.get(c, "")) for c in cols))
    bad = [r for r in rows for s in STRATEGIES if r.get(f"{s}_traffic_ok") is False]
    print(f"traffic == step-metrics: {'all rows' if not bad else f'{len(bad)} mismatches'}")
    for batch in batches:
        sel = [r for r in main_rows if r["batch"] == batch]
        print(f"B={batch}: " + ", ".join(f"{k} {v:.2f}x" for k, v in summary(sel).items()))
    print("all: " + ", ".join(f"{k} {v:.2f}x" for k, v in summary(main_rows).items()))
    print(f"wrote {csv_path} and {out / 'attention.png'}", file=sys.stderr)
    return check(main_rows) if args.check else 0


def check(rows: list[dict]) -> int:
    """Compare each row's cycles with the pins; 0 if all agree."""
    import json

    pins = json.loads(PINS.read_text())["cycles"]
    bad = 0
    for r in rows:
        key = f"{r['batch']}/{r['start_idx']:04d}_{r['end_idx']:04d}"
        got = [r[COLUMN[s]] for s in STRATEGIES]
        if pins.get(key) != got:
            bad += 1
            print(f"MISMATCH {key}: pinned {pins.get(key)}, simulated {got}")
    print(f"pinned cycles: {len(rows) - bad}/{len(rows)} traces agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
