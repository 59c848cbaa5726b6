"""step-run: execute steplus programs.

    step-run prog.mlir --node @integr --ticks 10 --input i=inputs.npy
    step-run prog.mlir --node @integr --ticks 10 --input i=inputs.csv --output out.npy
    step-run graph.mlir [--preset swiglu-hdl] [--json] [--trace out.json]

A file holding a `step.graph` (and no --node) is simulated on the dataflow
fabric and its metrics are printed (see `steplus.tools.step_run_graph`).

Backends for lus nodes:

- `reactive` (default): the steplus reactive runtime interprets the lus node
  (a file of `sync.node`s is interpreted as sync);
- `sync`: `convert-lus-to-sync`, then the sync interpreter (instances as
  coroutines);
- `iree`: `lus-inline-instances,convert-lus-to-sync,convert-sync-to-std`, then
  `iree-compile` (llvm-cpu, generic CPU) and `iree.runtime`, one `@<node>_step`
  call per tick.

Backend for tensor-level functions (see `step_run_ila`):

- `ila`: `step-run m.mlir --backend ila --func @f (--input x=x.npy | --random 0)`
  compiles with isel + convert-ila-to-commands, runs host ops in numpy and
  accelerator fragments on the ILA simulators, and compares with float32 numpy.

Inputs are `name=file` pairs (`.npy` with one row per tick — tensors too —,
or `.csv` with one value per line). It prints one line per tick with the
node's outputs (`-` where an output is absent), or writes them to `--output`:
`.npy` for scalar outputs (one column per output; absent values are NaN),
`.npz` for any outputs (arrays `out0`, `out1`, ... stacked over the ticks).

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
    p.add_argument("--node", help="the lus node to run, e.g. @integr (lus programs)")
    p.add_argument("--ticks", type=int, help="number of ticks (lus programs)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="an input stream (.npy or .csv); repeat per input")
    p.add_argument("--output", help="write the outputs to this .npy or .npz file")
    p.add_argument("--backend", choices=["reactive", "sync", "iree", "ila"], default="reactive",
                   help="execution path (default: reactive)")
    from steplus.tools.step_run_graph import add_arguments

    add_arguments(p)
    p.add_argument("--func", help="ila backend: the tensor function to run, e.g. @maxpool")
    p.add_argument("--pipeline", help="ila backend: step-opt pipeline compiling the function")
    p.add_argument("--random", type=int, metavar="SEED",
                   help="ila backend: random normal inputs for arguments without --input")
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
    if isinstance(v, np.ndarray) and v.ndim:
        return np.array2string(v, separator=", ", max_line_width=10**6).replace("\n", "")
    return np.format_float_positional(v) if isinstance(v, np.floating) else str(v)


_LOWERINGS = {
    "sync": "convert-lus-to-sync",
    "iree": "lus-inline-instances,convert-lus-to-sync,convert-sync-to-std",
}


def _execute(args, node: str, inputs: dict) -> list[list[object]]:
    from steplus.dialects import lus, sync
    from steplus.runtime.reactive import run_node
    from steplus.runtime.reactive.sync_interp import run_sync_node

    module = load_module(args.input_file, _LOWERINGS.get(args.backend))
    if args.backend == "iree":
        from steplus.runtime.iree_exec import IreeNode

        return IreeNode(module, node).run(inputs, args.ticks)
    has_lus = any(isinstance(op, lus.NodeOp) for op in module.walk())
    if args.backend == "sync" or (
        not has_lus and any(isinstance(op, sync.NodeOp) for op in module.walk())
    ):
        return run_sync_node(module, node, inputs, args.ticks)
    return run_node(module, node, inputs, args.ticks)


def _save(path: str, outputs: list[list[object]]) -> None:
    from steplus.runtime.reactive import ABSENT

    if path.endswith(".npz"):
        arrays = {}
        for k, col in enumerate(outputs):
            if any(v is ABSENT for v in col):
                raise InputError([f"{path}: error: output {k} is absent in some ticks; "
                                  "use a .npy output (absent values are NaN)"])
            arrays[f"out{k}"] = np.stack([np.asarray(v) for v in col]) if col else np.zeros(0)
        np.savez(path, **arrays)
        return
    if any(isinstance(v, np.ndarray) and v.ndim for col in outputs for v in col):
        raise UsageError("tensor outputs need an .npz --output file")
    table = np.array([[np.nan if v is ABSENT else float(v) for v in col] for col in outputs]).T
    np.save(path, table)


def _run(argv: Sequence[str] | None) -> int:
    from steplus.runtime.iree_exec import IreeError
    from steplus.runtime.reactive import ReactiveError

    args = _parser().parse_args(argv)
    if args.backend == "ila":
        from steplus.tools.step_run_ila import run

        return run(args)
    if args.node is None:
        if args.ticks is not None:
            raise UsageError("the following arguments are required: --node")
        from steplus.dialects.step import GraphOp
        from steplus.tools.step_run_graph import run_graph, specialize_pipeline

        module = load_module(args.input_file, specialize_pipeline(args))
        if not any(isinstance(op, GraphOp) for op in module.walk()):
            raise UsageError("the following arguments are required: --node, --ticks "
                             "(or give a file with a step.graph)")
        return run_graph(args, module)
    if args.ticks is None:
        raise UsageError("the following arguments are required: --ticks")
    if args.ticks < 0:
        raise UsageError("--ticks must be non-negative")
    node = args.node.lstrip("@")
    inputs = dict(_load_stream(s) for s in args.input)
    try:
        outputs = _execute(args, node, inputs)
    except (ReactiveError, IreeError) as e:
        print(f"{args.input_file}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    if args.output:
        try:
            _save(args.output, outputs)
        except OSError as e:
            raise InputError([f"{args.output}: error: cannot write output: {e}"]) from None
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
