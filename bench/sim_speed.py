"""Speed of the fabric simulator on the SwiGLU sweep of reference spec §8.1.

    python bench/sim_speed.py [--preset swiglu-hdl] [--reference]

For each (tm, tn) it prints simulated cycles, wall time of building the graph
(xDSL construction + verification), of lowering plus simulation, element
firings and firings/s of the simulation, HBM requests covered and HBM
segments evaluated (the closed-form model's unit of work). `--reference`
also times the request-level HBM controller on the same graphs, to show what
the closed form saves (the cycles must agree).
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from steplus.lowering.step_to_runtime import build_program
    from steplus.runtime.fabric.config import get_preset
    from steplus.runtime.fabric.hbm_reference import ReferenceHBMServer
    from steplus.runtime.fabric.swiglu import SWEEP_TM, SWEEP_TN, swiglu_graph, swiglu_traffic

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="swiglu-hdl")
    ap.add_argument("--reference", action="store_true",
                    help="also run the request-level HBM controller")
    args = ap.parse_args(argv)
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
            graph = swiglu_graph(B, D, F, tm, tn)
            built = time.perf_counter() - t
            t = time.perf_counter()
            m = build_program(graph, cfg).run()
            wall = time.perf_counter() - t
            total += built + wall
            total_sim += wall
            assert m.offchip_traffic == swiglu_traffic(B, D, F, tm, tn)
            line = (f"{tm:>3} {tn:>4} {m.cycles:>8} {m.offchip_traffic / 1e6:>5.2f} "
                    f"{built:>7.3f} {wall:>7.3f} "
                    f"{m.firings:>8} {m.firings / wall:>10.0f} {m.hbm_requests:>9} "
                    f"{m.hbm_segments:>8}")
            if args.reference:
                t = time.perf_counter()
                r = build_program(swiglu_graph(B, D, F, tm, tn), cfg,
                                  hbm_factory=ReferenceHBMServer).run()
                line += f" {time.perf_counter() - t:>7.3f} {str(r.cycles == m.cycles):>5}"
            print(line)
    print(f"whole sweep: {total:.2f} s (lowering + simulation {total_sim:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
