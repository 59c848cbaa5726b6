"""step-run: execute steplus programs.

    step-run prog.mlir --node @integr --ticks 10 --input i=inputs.npy
    step-run prog.mlir --node @integr --ticks 10 --input i=inputs.csv --output out.npy

For now it runs lus nodes on the reactive runtime (`--backend reactive`, the
default); inputs are `name=file` pairs (`.npy`, or `.csv` with one value per
line). It prints one line per tick with the node's outputs (`-` where an
output is absent), or writes them to `--output` (`.npy`, one column per
output; absent values become NaN).

Errors are reported like step-opt's: `file:line:col: error: ...` for the
program, one line `step-run: error: ...` for the command line (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

import numpy as np

from steplus.tools.step_opt import (
    EXIT_USAGE_ERROR,
    EXIT_USER_ERROR,
    InputError,
    UsageError,
    load_module,
)


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="step-run", description="execute steplus programs")
    p.add_argument("input_file", help="the program (.mlir)")
    p.add_argument("--node", required=True, help="the lus node to run, e.g. @integr")
    p.add_argument("--ticks", type=int, required=True, help="number of ticks")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="an input stream (.npy or .csv); repeat per input")
    p.add_argument("--output", help="write the outputs to this .npy file")
    p.add_argument("--backend", choices=["reactive"], default="reactive")
    return p


def _load_stream(spec: str) -> tuple[str, np.ndarray]:
    if "=" not in spec:
        raise UsageError(f"--input expects NAME=FILE, got '{spec}'")
    name, path = spec.split("=", 1)
    try:
        if path.endswith(".npy"):
            data = np.load(path, allow_pickle=False)
        else:
            data = np.loadtxt(path, delimiter=",", ndmin=1)
    except (OSError, ValueError) as e:
        raise InputError([f"{path}: error: cannot read input stream: {e}"]) from None
    return name, np.asarray(data)


def _fmt(v: object) -> str:
    from steplus.runtime.reactive import ABSENT

    if v is ABSENT:
        return "-"
    return np.format_float_positional(v) if isinstance(v, np.floating) else str(v)


def _run(argv: Sequence[str] | None) -> int:
    from steplus.runtime.reactive import ABSENT, ReactiveError, run_node

    args = _parser().parse_args(argv)
    if args.ticks < 0:
        raise UsageError("--ticks must be non-negative")
    module = load_module(args.input_file)
    node = args.node.lstrip("@")
    inputs = dict(_load_stream(s) for s in args.input)
    try:
        outputs = run_node(module, node, inputs, args.ticks)
    except ReactiveError as e:
        print(f"{args.input_file}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    if args.output:
        table = np.array(
            [[np.nan if v is ABSENT else float(v) for v in col] for col in outputs]
        ).T
        np.save(args.output, table)
        return 0
    for t in range(args.ticks):
        print(f"tick {t}: " + " ".join(_fmt(col[t]) for col in outputs))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `step-run` console script."""
    try:
        return _run(argv)
    except UsageError as e:
        print(f"step-run: error: {e}", file=sys.stderr)
        return EXIT_USAGE_ERROR
    except InputError as e:
        for line in e.lines:
            print(line, file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as e:  # no traceback reaches the user
        print(f"step-run: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
