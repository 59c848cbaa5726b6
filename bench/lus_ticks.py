"""Ticks per second of lus programs on each execution path.

    python bench/lus_ticks.py [--ticks N] [--batch-ticks M] [--repeat R] [--cpu generic]

Paths: `lus` (the reactive runtime interpreting the lus node), `sync` (after
convert-lus-to-sync, the coroutine interpreter), `iree-tick` (one
`@<node>_step` call per tick from Python through iree.runtime), `iree-batch`
(one `@<node>_run` call for all M ticks, its loop one IREE dispatch). The
interpreters and `iree-tick` run N ticks (default 2000), `iree-batch` M
(default 10^6); `modular` (the modular target on IREE with the Python `sch`
runtime, one coroutine per instance) runs N ticks, continuing from the state
its earlier repeats left. The best of R repeats is reported (the machine is
shared).
Compile time (lowering + iree-compile, bypassing the module cache) is
printed separately. Programs: the integrator (scalar i32) and the LSTM cell
(tensor<1x8xf32> state, eight small matmuls per tick).
Targets (issue 19): LSTM >= 500k ticks/s batched, integrator >= 10M ticks/s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from xdsl.context import Context

REPO = Path(__file__).resolve().parents[1]


def _inputs(name: str, n: int, rng) -> dict[str, np.ndarray]:
    if name == "integrator":
        return {"i": rng.integers(-100, 100, n).astype(np.int32)}
    return {"x": rng.standard_normal((n, 1, 4)).astype(np.float32), "reset": rng.random(n) < 0.05}


def _best(run, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
    from steplus.lowering.mlir_bridge import parse_xdsl
    from steplus.tools.iree_run import IreeNode, lower_to_step_functions, target_cpu
    from steplus.tools.iree_modular import ModularNode
    from steplus.runtime.reactive import run_node
    from steplus.runtime.reactive.sync_interp import run_sync_node

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ticks", type=int, default=2000)
    p.add_argument("--batch-ticks", type=int, default=10**6)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cpu", help="IREE target CPU (default: $STEPLUS_IREE_CPU or host), "
                                 "e.g. generic")
    p.add_argument("--quiet", action="store_true", help="no status line on stderr (it shows on a terminal only)")
    args = p.parse_args(argv)
    from steplus.tools.progress import status

    if args.cpu:
        os.environ["STEPLUS_IREE_CPU"] = args.cpu
    if not (0 < args.ticks <= 10**6 and 0 < args.batch_ticks <= 10**7 and 0 < args.repeat <= 20):
        p.error("--ticks 1..10^6, --batch-ticks 1..10^7, --repeat 1..20")
    rng = np.random.default_rng(0)
    n, m = args.ticks, args.batch_ticks
    print(f"IREE llvm-cpu, target-cpu={target_cpu()}, local-sync driver")
    print(f"{'program':<12}{'path':<12}{'ticks':>9}{'seconds':>10}{'ticks/s':>14}")
    files = {"integrator": ("integrator.mlir", "integr"), "lstm": ("lstm.mlir", "lstm")}
    for name, (filename, node) in files.items():
        module = parse_xdsl((REPO / "examples" / "lus" / filename).read_text())
        synced = module.clone()
        ConvertLusToSyncPass().apply(Context(), synced)
        small, big = _inputs(name, n, rng), _inputs(name, m, rng)
        old = os.environ.get("STEPLUS_CACHE_DIR")
        os.environ["STEPLUS_CACHE_DIR"] = "off"  # time a real compilation
        try:
            t0 = time.perf_counter()
            with status("lus_ticks", f"compiling {name} with iree-compile", quiet=args.quiet):
                iree_node = IreeNode(lower_to_step_functions(module), node)
            compile_s = time.perf_counter() - t0
        finally:
            if old is None:
                del os.environ["STEPLUS_CACHE_DIR"]
            else:
                os.environ["STEPLUS_CACHE_DIR"] = old
        streams = [big[k] for k in iree_node.input_names]

        def batch():
            iree_node.reset()
            iree_node.run_batch(streams, m)

        def per_tick():
            iree_node.reset()
            iree_node.run(small, n, per_tick=True)

        modular = ModularNode.from_lus(module, node)

        def modular_run():
            modular.run(small, n)

        runs = [
            ("lus", n, lambda: run_node(module, node, small, n)),
            ("sync", n, lambda: run_sync_node(synced, node, small, n)),
            ("iree-tick", n, per_tick),
            ("iree-batch", m, batch),
            ("modular", n, modular_run),
        ]
        for path, ticks, run in runs:
            with status("lus_ticks", f"{name} on {path}: {ticks} ticks", quiet=args.quiet):
                dt = _best(run, args.repeat if path.startswith("iree") else 1)
            print(f"{name:<12}{path:<12}{ticks:>9}{dt:>10.4f}{ticks / dt:>14,.0f}")
        modular.close()
        print(f"{name:<12}compile (lowering + iree-compile, batch mode "
              f"{iree_node.batch_mode}): {compile_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
