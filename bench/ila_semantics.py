"""Time step-run's numpy evaluation of D2A's six applications through the op-semantics table.

For each committed model under examples/isel/models/, `run_function(..., backend="reference")`
(every op through `dialects/semantics`, accelerator functions as their float32 references)
on one random input, best of `--repeat` runs; prints seconds per model.  The figures compare
implementations on the same machine only (run it against an older checkout with PYTHONPATH).

    python bench/ila_semantics.py --repeat 3
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from steplus.runtime.ila.host import random_arguments, run_function
from steplus.tools.loading import load_module

MODELS = Path(__file__).resolve().parents[1] / "examples" / "isel" / "models"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("models", nargs="*", default=["resnet20", "mobilenetv2", "efficientnet_b0", "resmlp",
                                                   "lstm_wlm", "transformer"])
    ap.add_argument("--quiet", action="store_true", help="no status line on stderr (it shows on a terminal only)")
    args = ap.parse_args()
    from steplus.tools.progress import status

    for name in args.models:
        with status("ila_semantics", f"timing {name}", quiet=args.quiet):
            m = load_module(str(MODELS / f"{name}.mlir"))
            fn = next(op for op in m.walk() if op.name == "func.func")
            fname = fn.sym_name.data
            xs = random_arguments(m, fname, seed=0)
            best = np.inf
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                run_function(m, fname, xs, backend="reference")
                best = min(best, time.perf_counter() - t0)
            ops = sum(1 for _ in fn.walk()) - 1
        print(f"{name:16s} {ops:6d} ops  {best:7.3f} s")  # after the status line is erased


if __name__ == "__main__":
    main()
