"""The MoE reference configurations' metrics, bound to the shipped routing traces.

    python bench/moe_metrics.py [--quiet]

For Mixtral-8x7B and Qwen3-30B-A3B, batch 64 and 1024, static tile_N 16 and 64
and dynamic tiling: off-chip traffic, on-chip requirement, FLOPs and padded
FLOPs as `step-metrics` computes them on the graphs of examples/step/ (the
same numbers `step-opt examples/step/moe_<model>_<tile>.mlir -p
'step-specialize{routing="<trace>"},step-metrics'` prints), plus the
artifact's FLOP formula of the reference spec §5.4 (`b*F*(14*D + 1)` per
expert on its padded rows): `flops_artifact` as step-metrics reports it,
checked against the closed form computed here from the trace's counts, and
the padding part of that formula (`art_padded`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]



def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quiet", action="store_true",
                   help="no per-configuration timing lines on stderr")
    args = p.parse_args(argv)
    from steplus.examples.workloads import graphs as workloads

    from steplus.dialects.step import GraphOp
    from steplus.passes.step.metrics import compute_metrics
    from steplus.passes.step.specialize import routing_bindings, specialize_graph
    from steplus.passes.step.traces import RoutingTrace, shipped_routing_trace
    from steplus.tools.progress import status

    print(f"{'model':<8}{'B':>5} {'tile_N':<7}{'offchip_bytes':>15}{'onchip_bytes':>14}"
          f"{'flops':>16}{'padded_flops':>16}{'flops_artifact':>17}{'art_padded':>16}")
    for model in ("mixtral", "qwen"):
        m = workloads.MODELS[model]
        for tile_n in (16, 64, None):
            t0 = time.perf_counter()
            with status("moe_metrics", f"building and analysing {model} tile_N={tile_n or 'dyn'}",
                        quiet=args.quiet):  # stderr, a terminal only
                module = workloads.moe(m, tile_n)
                graph = next(o for o in module.walk() if isinstance(o, GraphOp))
                symbolic = compute_metrics(graph)
            for batch in (64, 1024):
                trace = RoutingTrace.load(shipped_routing_trace(model, batch), m.experts)
                bound = symbolic.bind(specialize_graph(graph.clone(), routing_bindings(graph, trace)))
                t = tile_n or 1
                rows = [-(-c // t) * t for c in trace.counts]
                art = sum(r * m.inter * (14 * m.hidden + 1) for r in rows)
                art_pad = sum((r - c) * m.inter * (14 * m.hidden + 1)
                              for r, c in zip(rows, trace.counts))
                reported = int(bound.flops_artifact)
                if reported != art:
                    raise SystemExit(f"{model} B={batch} tile_N={tile_n}: step-metrics' "
                                     f"flops_artifact {reported} != closed form {art}")
                print(f"{model:<8}{batch:>5} {tile_n or 'dyn'!s:<7}{int(bound.offchip):>15}"
                      f"{int(bound.onchip):>14}{int(bound.flops):>16}{int(bound.padded_flops):>16}"
                      f"{reported:>17}{art_pad:>16}")
            if not args.quiet:
                print(f"  ({model} tile_N={tile_n or 'dyn'}: built and analysed in "
                      f"{time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
