"""Speed of the fabric simulator: the SwiGLU sweep (§8.1) and the MoE layers (§8.2).

    python bench/sim_speed.py [--preset swiglu-hdl] [--reference] [--only swiglu|moe]
                              [--models mixtral,qwen] [--batches 64,1024] [--tiles 16,64,dyn]
                              [--fabric OTHER_CHECKOUT/runtime/fabric]

SwiGLU: for each (tm, tn) it prints simulated cycles, wall time of building
the graph (xDSL construction + verification), of lowering plus simulation,
element firings and firings/s of the simulation, HBM requests covered and HBM
segments evaluated (the closed-form model's unit of work). `--reference`
also times the request-level HBM controller on the same graphs, to show what
the closed form saves (the cycles must agree).

MoE: each weight-stationary graph (examples/workloads/graphs.py) specialized to
the shipped routing trace, on step-eval (dynamic tiling with the driver's
compute bandwidths: 6400, retile accumulators 1024). Per run: the CPU time
(the process's, steadier than wall time on a shared machine) of building +
specializing the graph with its step-metrics (`build s`), of lowering it
(`lower s`) and of the simulation alone (`sim s`), simulated cycles, off-chip
traffic and on-chip requirement (both checked against step-metrics), firings,
microseconds per firing and firings per second of the simulation, and HBM
segments. Channel depth 2
(§1.3); a run that deadlocks prints a "deadlock" row (with its firings and
speed up to the deadlock) and, for Qwen B=1024, is repeated at depth 1024
(labelled "depth 1024, not comparable"; bench/reference_settings.py).
Each run's previous program is freed and collected before its simulation is
timed (the engine pauses the cyclic collector); later runs in one process can
still be a little slower than alone (docs/fabric.md, SIM-ENGINE-2), so for
one configuration per process, as a user runs it, pass one model, batch and
tile.

`--fabric DIR` times another version of the simulator on the same graphs:
`steplus.runtime.fabric` is loaded from DIR (the `runtime/fabric` folder of
another checkout, e.g. a `git worktree` of an older commit, with its own
`_native` mypyc build), everything else from this tree. Use it with a tree
whose fabric has the public API this bench calls (`build_program`,
`Program.run`, `DeadlockError`, the metrics' fields).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="swiglu-hdl")
    ap.add_argument("--reference", action="store_true",
                    help="also run the request-level HBM controller")
    ap.add_argument("--only", choices=("swiglu", "moe"), help="run one of the two benches")
    ap.add_argument("--models", default="mixtral,qwen", help="MoE models")
    ap.add_argument("--batches", default="64,1024", help="MoE batches (shipped traces)")
    ap.add_argument("--tiles", default="16,64,dyn", help="MoE tile_N values (dyn: dynamic)")
    ap.add_argument("--fabric", metavar="DIR",
                    help="load steplus.runtime.fabric from DIR (another checkout's runtime/fabric)")
    args = ap.parse_args(argv)
    if args.fabric:
        _load_fabric(Path(args.fabric))
    from steplus.runtime.fabric import native
    import steplus.runtime.fabric.build  # noqa: F401 - imports the simulator's modules

    print("fabric modules: " + ("compiled (mypyc): " + ", ".join(native.active())
                                if native.active() else "pure Python")
          + f" [{native.ENV}=0 forces pure; python -m steplus.runtime.fabric.build_native build]")
    if args.only != "moe":
        swiglu_bench(args)
    if args.only != "swiglu":
        moe_bench(args)
    return 0


def _load_fabric(root: Path) -> None:
    """Make `steplus.runtime.fabric` the package in `root` (before anything imports it)."""
    import importlib
    import importlib.util

    importlib.import_module("steplus.runtime")  # the parent package, from this tree
    init = root / "__init__.py"
    if not init.is_file():
        raise SystemExit(f"sim_speed.py: error: --fabric {root}: no __init__.py there")
    spec = importlib.util.spec_from_file_location("steplus.runtime.fabric", init,
                                                  submodule_search_locations=[str(root)])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["steplus.runtime.fabric"] = mod
    spec.loader.exec_module(mod)


def swiglu_bench(args) -> None:
    from steplus.runtime.fabric.build import build_program
    from steplus.dialects.target.fabric import get_preset
    from steplus.runtime.fabric.hbm_reference import ReferenceHBMServer
    from steplus.examples.workloads.graphs import SWEEP_TM, SWEEP_TN, swiglu, swiglu_traffic

    cfg = get_preset(args.preset)
    B, D, F = 64, 256, 512
    print(f"SwiGLU B={B} D={D} F={F} on {cfg.name}")
    print(f"{'tm':>3} {'tn':>4} {'cycles':>8} {'MB':>5} {'build s':>7} {'sim s':>7} {'firings':>8} "
          f"{'firings/s':>10} {'requests':>9} {'segments':>8}"
          + (f" {'ref s':>7} {'same':>5}" if args.reference else ""))
    total = total_sim = 0.0
    for tm in SWEEP_TM:
        for tn in SWEEP_TN:
            t = time.perf_counter()
            graph = swiglu(tm, tn, B, D, F)
            built = time.perf_counter() - t
            t = time.perf_counter()
            m = build_program(graph, cfg).run()
            wall = time.perf_counter() - t
            total += built + wall
            total_sim += wall
            assert m.offchip_traffic == swiglu_traffic(tm, tn, B, D, F)
            line = (f"{tm:>3} {tn:>4} {m.cycles:>8} {m.offchip_traffic / 1e6:>5.2f} "
                    f"{built:>7.3f} {wall:>7.3f} "
                    f"{m.firings:>8} {m.firings / wall:>10.0f} {m.hbm_requests:>9} "
                    f"{m.hbm_segments:>8}")
            if args.reference:
                t = time.perf_counter()
                r = build_program(swiglu(tm, tn, B, D, F), cfg,
                                  hbm_factory=ReferenceHBMServer).run()
                line += f" {time.perf_counter() - t:>7.3f} {str(r.cycles == m.cycles):>5}"
            print(line)
    print(f"whole sweep: {total:.2f} s (lowering + simulation {total_sim:.2f} s)")


def moe_bench(args) -> None:
    from reference_settings import moe_fallback_depth
    from sim_moe import moe_graph
    from steplus.runtime.fabric.build import build_program
    from steplus.runtime.fabric.engine import DeadlockError
    from steplus.tools.progress import status

    print(f"{'model':>7} {'B':>5} {'tile_N':>6} {'depth':>5} {'build s':>7} {'lower s':>7} "
          f"{'sim s':>7} {'cycles':>10} {'traffic B':>12} {'on-chip B':>10} {'=metrics':>8} "
          f"{'firings':>8} {'us/firing':>9} {'firings/s':>9} {'segments':>8}  note")
    for model in args.models.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            for t in args.tiles.split(","):
                tile_n = None if t == "dyn" else int(t)
                t0 = time.process_time()
                module, cfg, metrics = moe_graph(model, batch, tile_n)
                built = time.process_time() - t0
                fallback = moe_fallback_depth(model, batch)
                while True:
                    t0 = time.process_time()
                    prog = build_program(module, cfg)
                    lowered = time.process_time() - t0
                    # The engine runs with the cyclic collector paused (engine.PausedGC), so the
                    # previous run's program (a cyclic graph) is still on the heap here: collect
                    # it outside the timed region, so no run is timed holding or collecting
                    # the earlier runs' garbage.
                    gc.collect()
                    t0 = time.process_time()
                    try:
                        with status("sim_speed", f"simulating {model} B={batch} tile_N={t}"):
                            m = prog.run()  # the status line: stderr, a terminal only
                    except DeadlockError:
                        wall = time.process_time() - t0
                        fired = sum(c.firings for c in prog.contexts)
                        print(f"{model:>7} {batch:>5} {t:>6} {cfg.base_depth:>5} {built:>7.2f} "
                              f"{lowered:>7.2f} {wall:>7.2f} {'deadlock':>10} {'':>12} {'':>10} "
                              f"{'':>8} {fired:>8} {1e6 * wall / max(fired, 1):>9.2f} "
                              f"{fired / wall:>9.0f} {'':>8}", flush=True)
                        del prog
                        if fallback is None or cfg.base_depth == fallback:
                            break
                        cfg = cfg.with_(base_depth=fallback)
                        continue
                    wall = time.process_time() - t0
                    same = (m.offchip_traffic == int(metrics.offchip)
                            and m.onchip_peak == int(metrics.onchip))
                    note = "" if cfg.base_depth == 2 else f"depth {cfg.base_depth}, not comparable"
                    print(f"{model:>7} {batch:>5} {t:>6} {cfg.base_depth:>5} {built:>7.2f} "
                          f"{lowered:>7.2f} {wall:>7.2f} {m.cycles:>10} "
                          f"{m.offchip_traffic:>12} {m.onchip_peak:>10} {str(same):>8} "
                          f"{m.firings:>8} {1e6 * wall / m.firings:>9.2f} "
                          f"{m.firings / wall:>9.0f} {m.hbm_segments:>8}  {note}", flush=True)
                    del prog, m
                    break
                del module, metrics


if __name__ == "__main__":
    sys.exit(main())
