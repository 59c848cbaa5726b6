"""Ticks per second of lus programs on each execution path.

    python bench/lus_ticks.py [--ticks N]

Paths: `lus` (the reactive runtime interpreting the lus node), `sync` (after
convert-lus-to-sync, the coroutine interpreter), `iree` (step functions
compiled by iree-compile for a generic CPU, one `@<node>_step` call per tick
from Python through iree.runtime; compile time reported separately).
Programs: the integrator (scalar i32) and the LSTM cell (tensor<1x8xf32>
state, eight 1xN matmuls per tick).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from xdsl.context import Context

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
    from steplus.lowering.mlir_interop import parse_xdsl
    from steplus.runtime.iree_exec import IreeNode, compile_module, lower_to_step_functions
    from steplus.runtime.reactive import run_node
    from steplus.runtime.reactive.sync_interp import run_sync_node

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ticks", type=int, default=2000)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    n = args.ticks
    programs = {
        "integrator": ("integrator.mlir", "integr",
                       {"i": rng.integers(-100, 100, n).astype(np.int32)}),
        "lstm": ("lstm.mlir", "lstm",
                 {"x": rng.standard_normal((n, 1, 4)).astype(np.float32),
                  "reset": rng.random(n) < 0.05}),
    }
    print(f"{'program':<12}{'path':<6}{'ticks':>7}{'seconds':>10}{'ticks/s':>12}")
    for name, (filename, node, inputs) in programs.items():
        module = parse_xdsl((REPO / "examples" / "lus" / filename).read_text())
        synced = module.clone()
        ConvertLusToSyncPass().apply(Context(), synced)
        t0 = time.perf_counter()
        lowered = lower_to_step_functions(module)
        vmfb = compile_module(lowered)
        compile_s = time.perf_counter() - t0
        iree_node = IreeNode(lowered, node, vmfb)
        runs = {
            "lus": lambda: run_node(module, node, inputs, n),
            "sync": lambda: run_sync_node(synced, node, inputs, n),
            "iree": lambda: iree_node.run(inputs, n),
        }
        for path, run in runs.items():
            t0 = time.perf_counter()
            run()
            dt = time.perf_counter() - t0
            print(f"{name:<12}{path:<6}{n:>7}{dt:>10.3f}{n / dt:>12,.0f}")
        print(f"{name:<12}iree compile (lowering + iree-compile): {compile_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
