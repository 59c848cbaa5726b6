"""Speed of the step passes and of parsing, on MoE graphs of 8 to 512 experts.

    python bench/pass_speed.py [--experts 8,128,256,512] [--passes metrics,...]
                               [--repeat 3] [--skip-parse] [--parse-only]

Pass speed: for each expert count E the weight-stationary MoE layer of
examples/workloads/graphs.py (`moe`, Qwen3-30B-A3B's D/F/K; Mixtral's at E = 8)
is built with static tile_N = 16 and, for the dynamic passes, turned into the
dynamically tiled graph by `step-dynamic-tiling`. A synthetic routing trace
(B = 1024 tokens, K experts each, seeded) binds it. Each pass runs on a fresh
clone of its input graph; the bench prints the CPU seconds of the pass alone
(`time.process_time`: the machine is shared, wall time is noisy) and the
microseconds per operator of the graph, which stays flat when a pass is linear
in the number of operators:

| pass | input |
|---|---|
| `step-infer-shapes` | static graph |
| `step-metrics` | static and dynamic graph (symbolic report, as on the command line) |
| `step-specialize{routing=...}` then `step-metrics` | static graph (the bound numbers) |
| `step-dynamic-tiling` | static graph |
| `step-time-multiplex{regions=E/4}` | static graph (tile_F 48 as in §8.3; 64 for Mixtral) |

Parse speed: the Qwen graph (examples/step/moe_qwen_dyn.mlir) printed in
generic form is parsed, verified and printed (generic) by `step-opt` and by
plain `xdsl-opt` with the steplus dialects registered (xDSL's own driver:
no source locations, no diagnostics conversion, no lus checks); best CPU
seconds of `--repeat` runs each. To compare with an older checkout, run this
script with `PYTHONPATH` pointing at a directory whose `steplus` is that
checkout (`--parse-only`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PASSES = ("infer-shapes", "metrics", "metrics-dyn", "specialize+metrics", "dynamic-tiling",
          "time-multiplex")


def _model(experts: int):
    from steplus.examples.workloads import graphs as workloads

    if experts == 8:
        return workloads.MODELS["mixtral"]
    q = workloads.MODELS["qwen"]
    return workloads.MoEModel(f"qwen{experts}", experts, q.top_k, q.hidden, q.inter)


def _trace(experts: int, top_k: int, batch: int = 1024, seed: int = 14):
    import numpy as np

    from steplus.passes.step.traces import RoutingTrace

    rng = np.random.default_rng(seed)
    data = np.stack([rng.choice(experts, size=top_k, replace=False) for _ in range(batch)])
    return RoutingTrace(data.astype(np.int64), experts)


def _graph_ops(module) -> int:
    from steplus.dialects.step import GraphOp

    return sum(len(list(g.body.block.ops)) for g in module.walk() if isinstance(g, GraphOp))


def _pipeline(spec: str):
    from steplus.tools.step_opt import StepOptMain

    main = StepOptMain(args=["-p", spec])
    return main.ctx, list(main.pipeline.passes)


def _timed(module, spec: str) -> float:
    """CPU seconds of applying the pipeline `spec` to a clone of `module`."""
    ctx, passes = _pipeline(spec)
    m = module.clone()
    start = time.process_time()
    for p in passes:
        p.apply(ctx, m)
    return time.process_time() - start


def pass_bench(experts_list: list[int], which: list[str], out_dir: Path) -> None:
    import numpy as np
    from steplus.examples.workloads import graphs as workloads

    from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass
    from steplus.tools.progress import status
    from xdsl.context import Context

    print(f"{'E':>4} {'ops':>6}  {'pass':<20}{'cpu s':>8}{'us/op':>9}")
    for experts in experts_list:
        model = _model(experts)
        trace = _trace(experts, model.top_k)
        trace_path = out_dir / f"routing_e{experts}.npz"
        np.savez(trace_path, data=trace.data)
        t0 = time.process_time()
        static = workloads.moe(model, 16)
        dynamic = static.clone()
        StepDynamicTilingPass().apply(Context(), dynamic)
        tile_f = 48 if model.inter % 48 == 0 else 64  # §8.3's 48 (Mixtral's F needs 64)
        tm_input = workloads.moe(model, 32, tile_f)
        build = time.process_time() - t0
        n = _graph_ops(static)
        print(f"{experts:>4} {n:>6}  {'(build graphs)':<20}{build:>8.2f}{build / n * 1e6:>9.0f}")
        sink = f'out="{out_dir / "metrics.txt"}"'
        runs = {
            "infer-shapes": (static, "step-infer-shapes"),
            "metrics": (static, f"step-metrics{{{sink}}}"),
            "metrics-dyn": (dynamic, f"step-metrics{{{sink}}}"),
            "specialize+metrics": (static, f'step-specialize{{routing="{trace_path}"}},'
                                           f"step-metrics{{{sink}}}"),
            "dynamic-tiling": (static, "step-dynamic-tiling"),
            "time-multiplex": (tm_input, f"step-time-multiplex{{regions={max(1, experts // 4)}}}"),
        }
        for name in which:
            module, spec = runs[name]
            ops = _graph_ops(module)
            with status("pass_speed", f"{name} at {experts} experts"):  # stderr, a terminal only
                cpu = _timed(module, spec)
            print(f"{experts:>4} {ops:>6}  {name:<20}{cpu:>8.2f}{cpu / ops * 1e6:>9.0f}", flush=True)


def parse_bench(repeat: int, out_dir: Path) -> None:
    from xdsl.xdsl_opt_main import xDSLOptMain

    from steplus.tools.registry import get_all_dialects
    from steplus.tools.step_opt import StepOptMain

    class PlainOpt(xDSLOptMain):
        """xdsl-opt with the steplus dialects registered, nothing else."""

        def register_all_dialects(self):
            for name, factory in get_all_dialects().items():
                self.ctx.register_dialect(name, factory)

    source = REPO / "examples" / "step" / "moe_qwen_dyn.mlir"
    generic = out_dir / "moe_qwen_dyn.generic.mlir"
    StepOptMain(args=[str(source), "--print-op-generic", "-o", str(generic)]).run()
    best: dict[str, float] = {}
    outputs: dict[str, str] = {}
    for _ in range(repeat):
        for name, cls in (("xdsl-opt", PlainOpt), ("step-opt", StepOptMain)):
            out = out_dir / f"{name}.mlir"
            start = time.process_time()
            cls(args=[str(generic), "--print-op-generic", "-o", str(out)]).run()
            best[name] = min(best.get(name, float("inf")), time.process_time() - start)
            outputs[name] = out.read_text().rstrip("\n")  # xdsl-opt ends with an extra newline
    same = outputs["xdsl-opt"] == outputs["step-opt"] == generic.read_text().rstrip("\n")
    print(f"parse+verify+print (generic) of {source.name} "
          f"({generic.stat().st_size // 1024} KiB), best CPU s of {repeat}:")
    print(f"  xdsl-opt (steplus dialects) {best['xdsl-opt']:.2f}")
    print(f"  step-opt                    {best['step-opt']:.2f}  "
          f"({best['step-opt'] / best['xdsl-opt']:.2f}x xdsl-opt; output identical: {same})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experts", default="8,128,256,512")
    ap.add_argument("--passes", default=",".join(PASSES))
    ap.add_argument("--repeat", type=int, default=3, help="parse runs (best is kept)")
    ap.add_argument("--skip-parse", action="store_true")
    ap.add_argument("--parse-only", action="store_true")
    args = ap.parse_args(argv)
    which = [p for p in args.passes.split(",") if p]
    unknown = [p for p in which if p not in PASSES]
    if unknown:
        ap.error(f"unknown pass(es) {', '.join(unknown)}; choose from {', '.join(PASSES)}")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        if not args.skip_parse:
            parse_bench(args.repeat, out_dir)
        if not args.parse_only:
            pass_bench([int(e) for e in args.experts.split(",")], which, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
