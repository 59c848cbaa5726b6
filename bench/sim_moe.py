"""Simulate the MoE reference configurations on the fabric: cycles, traffic, on-chip, wall time.

    python bench/sim_moe.py [--models mixtral,qwen] [--batches 64,1024] [--tiles 16,64,dyn]
                            [--jobs N]

Each graph (examples/workloads/graphs.py, reference spec §8.2) is specialized to
the shipped routing trace and simulated in timing mode with the step-eval
preset (HBM 32 channels, PMU 64 B/cycle, base depth 2; compute bandwidth 4096
for static tiling, 6400 with the retile accumulators at 1024 for dynamic
tiling, as the spec's drivers set them, §8.2). Every run uses the §1.3 base
depth 2; Qwen at B=1024 with tile_N <= 64 deadlocks there (in-order
reassembly waits on an expert that flushes only at the end of the stream
while busy experts back-pressure the token partition) and only those runs are
repeated at depth 1024, labelled "depth 1024, not comparable"
(`reference_settings.simulate_moe`). `--depth N` overrides the depth of every
run (no fallback); a run that deadlocks prints "deadlock".
Prints, per run: simulated cycles, off-chip bytes read and written (the
simulator writes the bf16 width, 2 bytes per element, as the spec's simulator
does; step-metrics counts stores at the declared f32 width, §5.1), the
step-metrics traffic for comparison, on-chip requirement, element firings and
wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from reference_settings import moe_depth, moe_fallback_depth, simulate_moe  # noqa: E402

from steplus.tools.sweep import SweepError, add_jobs_argument, run_sweep  # noqa: E402


def moe_graph(model: str, batch: int, tile_n: int | None, depth: int | None = None):
    """The §8.2 graph specialized to the shipped trace, with the experiment's
    settings (`reference_settings.configure("moe")`, depth `moe_depth` unless
    given); returns (module, config, step-metrics)."""
    from steplus.examples.workloads import graphs as workloads
    from xdsl.context import Context

    from reference_settings import configure
    from steplus.dialects.step import GraphOp
    from steplus.passes.step.metrics import compute_metrics
    from steplus.passes.step.specialize import StepSpecializePass, parse_bind_attr
    from steplus.passes.step.traces import shipped_routing_trace

    module = workloads.moe(workloads.MODELS[model], tile_n)
    StepSpecializePass(routing=str(shipped_routing_trace(model, batch)), rewrite=True).apply(
        Context(), module)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    metrics = compute_metrics(graph).bind(parse_bind_attr(graph.attributes["step.bind"]))
    cfg = configure("moe", module, dynamic=tile_n is None,
                    depth=depth or moe_depth(model, batch))
    return module, cfg, metrics


def simulate(model: str, batch: int, tile_n: int | None, depth: int | None = None) -> dict:
    from steplus.runtime.fabric.engine import DeadlockError

    module, cfg, metrics = moe_graph(model, batch, tile_n, depth)
    row = {"model": model, "batch": batch, "tile_n": tile_n or "dyn", "depth": cfg.base_depth,
           "cycles": "deadlock", "read": "", "written": "",
           "metrics_offchip": int(metrics.offchip), "onchip": int(metrics.onchip), "firings": "",
           "note": ""}
    t0 = time.perf_counter()
    try:
        m, d, note = simulate_moe(module, cfg,
                                  None if depth else moe_fallback_depth(model, batch))
        r = m.to_dict()
        row.update(cycles=r["cycles"], read=r.get("offchip_read_bytes"),
                   written=r.get("offchip_written_bytes"), firings=r.get("firings", ""),
                   depth=d, note=note)
    except DeadlockError:
        pass  # reported as "deadlock"
    row["wall_s"] = round(time.perf_counter() - t0, 2)
    return row


def _task(config: dict) -> dict:
    """One run of the sweep (a worker process runs it; `run_sweep` keeps the order)."""
    return simulate(config["model"], config["batch"], config["tile_n"], config["depth"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="mixtral,qwen")
    p.add_argument("--batches", default="64,1024")
    p.add_argument("--tiles", default="16,64,dyn")
    p.add_argument("--depth", type=int, help="base channel depth of every run")
    add_jobs_argument(p)
    args = p.parse_args(argv)
    from steplus.examples.workloads.graphs import MODELS

    models = args.models.split(",")
    if unknown := [m for m in models if m not in MODELS]:
        p.error(f"--models: unknown {unknown} (have {', '.join(sorted(MODELS))})")
    if not all(b.isdigit() and 0 < int(b) <= 1 << 20 for b in args.batches.split(",")):
        p.error(f"--batches: expected positive integers like 64,1024, got {args.batches!r}")
    from steplus.passes.step.traces import ROUTING_TRACES

    if missing := [f"{m} B={b}" for m in models for b in map(int, args.batches.split(","))
                   if (m, b) not in ROUTING_TRACES]:
        p.error(f"--batches: no shipped routing trace for {', '.join(missing)} "
                f"(have {', '.join(f'{m} B={b}' for m, b in sorted(ROUTING_TRACES))})")
    tiles = args.tiles.split(",")
    if not all(t == "dyn" or (t.isdigit() and 0 < int(t) <= 1 << 20) for t in tiles):
        p.error(f"--tiles: expected positive integers or dyn, got {args.tiles!r}")
    if args.depth is not None and not 1 <= args.depth <= 1 << 20:
        p.error(f"--depth: expected an integer in [1, {1 << 20}], got {args.depth}")
    cols = ("model", "batch", "tile_n", "depth", "cycles", "read", "written", "metrics_offchip",
            "onchip", "firings", "wall_s", "note")
    configs = [{"model": model, "batch": batch, "tile_n": None if t == "dyn" else int(t),
                "depth": args.depth}
               for model in models for batch in map(int, args.batches.split(","))
               for t in tiles]
    # independent runs: a local process pool (--jobs, default one per core), a
    # progress bar on stderr (a terminal only); rows in configuration order
    try:
        rows = run_sweep(_task, configs, workers=args.jobs, desc="sim_moe")
    except SweepError as e:  # e.g. a batch without a shipped trace
        print(f"sim_moe.py: error: {e}", file=sys.stderr)
        return 1
    print(" ".join(f"{c:>15}" for c in cols))
    for row in rows:
        print(" ".join(f"{row[c]!s:>15}" for c in cols), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
