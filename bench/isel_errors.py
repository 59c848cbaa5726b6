"""Simulation-based validation of the IR-accelerator mappings (D2A Table 2).

    .venv/bin/python bench/isel_errors.py            # 100 random inputs per mapping
    .venv/bin/python bench/isel_errors.py --n 10

Prints, per mapping, the mean and standard deviation of the relative Frobenius
error ||ref - acc||_F / ||ref||_F between the ILA simulator and the IR
reference (float32 numpy; the integer semantics for VTA's int8 GEMM).
"""

from __future__ import annotations

import argparse
import time

from steplus.runtime.ila.validate import MAPPINGS, validate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--n", type=int, default=100, help="random inputs per mapping")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no status line on stderr (it shows on a terminal only)")
    args = p.parse_args()
    from steplus.tools.progress import status

    print(f"{'accelerator':<12} {'operation':<22} {'avg. err.':>10} {'std. dev.':>10} {'time':>7}")
    for acc, op, fn in MAPPINGS:
        t0 = time.perf_counter()
        with status("isel_errors", f"{args.n} inputs through {acc} {op}", quiet=args.quiet):
            mean, std = validate(fn, args.n, args.seed)
        print(f"{acc:<12} {op:<22} {100 * mean:>9.2f}% {100 * std:>9.2f}% {time.perf_counter() - t0:>6.1f}s")


if __name__ == "__main__":
    main()
