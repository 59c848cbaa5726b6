"""How the Lustre frontend and the lus checks scale with program size.

    python bench/lus_scaling.py [--sizes 150,300,600] [--chain 750,1500,3000,6000]

Generated programs (issue 24): an enumeration of n constructors with one
`merge` over all of them (`merge k (C0 -> x when C0(k)) ...`), and n nodes each
instantiating the previous one (`f_k(x) = f_(k-1)(x)`). For each size it
prints the seconds to import the Lustre source (parse + lower to lus) and to
verify and run the lus clock, causality and initialization checks (what
`lus-translate --import-lustre` does), and the growth factor against the
previous size: near 2 when the size doubles is linear, 4 quadratic.
"""

from __future__ import annotations

import argparse
import time

from steplus.lowering.lustre import import_lustre
from steplus.tools.loading import new_context, run_default_checks, verify_located
from steplus.tools.progress import status
from steplus.tools.registry import get_all_passes


def enum_program(n: int) -> str:
    ctors = ", ".join(f"C{k}" for k in range(n))
    cases = " ".join(f"(C{k} -> x + {k} when C{k}(k))" for k in range(n))
    return (f"type t = enum {{{ctors}}};\n"
            f"node n(k: t; x: int) returns (y: int);\nlet y = merge k {cases}; tel\n")


def chain_program(n: int) -> str:
    lines = ["node f0(x: int) returns (y: int); let y = x + 1; tel"]
    lines += [f"node f{k}(x: int) returns (y: int); let y = f{k - 1}(x); tel"
              for k in range(1, n)]
    return "\n".join(lines) + "\n"


def measure(src: str) -> tuple[float, float]:
    t0 = time.perf_counter()
    module = import_lustre(src, "gen.lus").module
    t1 = time.perf_counter()
    verify_located(module)
    run_default_checks(new_context(), module, get_all_passes())
    return t1 - t0, time.perf_counter() - t1


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def main() -> None:
    p = argparse.ArgumentParser(description="How the Lustre frontend and lus checks scale")
    p.add_argument("--sizes", default="150,300,600", help="enum constructor counts")
    p.add_argument("--chain", default="750,1500,3000,6000", help="chained node counts")
    args = p.parse_args()
    for what, make, sizes in (("enum merge", enum_program, _sizes(args.sizes)),
                              ("node chain", chain_program, _sizes(args.chain))):
        print(f"{what}:")
        print(f"  {'n':>6} {'import s':>9} {'checks s':>9} {'total s':>8} {'growth':>7}")
        previous = None
        for n in sizes:
            with status("lus_scaling", f"{what} of {n}"):  # stderr, a terminal only
                imp, chk = measure(make(n))
            total = imp + chk
            growth = f"{total / previous:6.2f}x" if previous else ""
            print(f"  {n:>6} {imp:9.2f} {chk:9.2f} {total:8.2f} {growth:>7}")
            previous = total


if __name__ == "__main__":
    main()
