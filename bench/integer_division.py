"""What defined integer division costs: a Lustre node dividing every tick, on each path.

    python bench/integer_division.py [--ticks N] [--batch-ticks M] [--repeat R]

The node `s = (0 -> pre s) + a div b + a mod b` runs on the lus and sync interpreters (N ticks,
default 3000) and batched on IREE (M ticks in one `@n_run` dispatch, default 10^6), where
`convert-sync-to-std` guards each division (lowering/arith_guards.py: a cf.assert per division in
`@n_step`, a divisor made 1 at zero and at INT_MIN / -1, and in `@n_run` the first failing tick
carried out of the loop). `iree-batch unguarded` compiles the same node with the guards turned off
(what MLIR would run, with SIGFPE on a zero divisor), to show their cost. Best of R repeats.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

SOURCE = """node e2(a, b: int) returns (s: int);
let
  s = (0 -> pre s) + a div b + a mod b;
tel
"""


def _best(f, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ticks", type=int, default=3000)
    p.add_argument("--batch-ticks", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quiet", action="store_true", help="no status line on stderr (it shows on a terminal only)")
    args = p.parse_args()

    import steplus.lowering.sync_to_std as sync_to_std
    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
    from steplus.lowering.mlir_bridge import steplus_context
    from steplus.runtime.reactive import run_node
    from steplus.runtime.reactive.sync_interp import run_sync_node
    from steplus.tools.iree_run import IreeNode, lower_to_step_functions
    from steplus.tools.loading import load_module
    from steplus.tools.progress import status

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "e2.lus"
        path.write_text(SOURCE)
        module = load_module(str(path))
    rng = np.random.default_rng(0)
    n, m = args.ticks, args.batch_ticks
    a = rng.integers(-1000, 1000, max(n, m)).astype(np.int32)
    b = rng.integers(1, 50, max(n, m)).astype(np.int32) * rng.choice(np.array([-1, 1], np.int32), max(n, m))
    small = {"a": a[:n], "b": b[:n]}
    print(f"{'path':<22} {'ticks/s':>14}")
    with status("integer_division", f"{n} ticks on the lus interpreter", quiet=args.quiet):
        rate = n / _best(lambda: run_node(module, 'e2', small, n), args.repeat)
    print(f"{'lus':<22} {rate:>14,.0f}")
    lowered = module.clone()
    ConvertLusToSyncPass().apply(steplus_context(), lowered)
    with status("integer_division", f"{n} ticks on the sync interpreter", quiet=args.quiet):
        rate = n / _best(lambda: run_sync_node(lowered, 'e2', small, n), args.repeat)
    print(f"{'sync':<22} {rate:>14,.0f}")
    guard = sync_to_std.guard_integer_arithmetic
    for label, g in (("iree-batch guarded", guard), ("iree-batch unguarded", lambda region: None)):
        sync_to_std.guard_integer_arithmetic = g
        with status("integer_division", f"{label}: compiling, then {m} ticks", quiet=args.quiet):
            try:
                node = IreeNode(lower_to_step_functions(module), "e2")
            finally:
                sync_to_std.guard_integer_arithmetic = guard
            node.run_batch([a[:1000], b[:1000]], 1000)  # warm up

            def run(node=node):
                node.reset()
                node.run_batch([a[:m], b[:m]], m)

            rate = m / _best(run, args.repeat)
        print(f"{label:<22} {rate:>14,.0f}   ({node.batch_mode})")


if __name__ == "__main__":
    main()
