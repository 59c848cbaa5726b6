"""step-run --backend ila: run a tensor-level function with accelerators on ILA simulators.

    step-run examples/isel/maxpool128.mlir --backend ila --func @maxpool --random 0
    step-run m.mlir --backend ila --func @f --input x=x.npy --pipeline 'isel{targets=vta}' --output y.npz

`--random SEED` draws the first argument from N(0, 1) and the others
(parameters) from N(0, 1/fan_in).  The program is compiled with `--pipeline` (default: flexible isel onto all
three accelerators, store/load cancellation, convert-ila-to-commands; for a function that already
holds `ila.*` ops, e.g. `step-opt -p 'isel{...},...'`'s output, the passes after isel only: a
program compiled once runs many times without being selected again), run with
host ops in numpy and accelerator fragments on the FlexASR / VTA / HLSCNN ILA
simulators, and compared with a float32 numpy run of the uncompiled program (of a precompiled
one: its `ila.*` ops as their float32 numpy references).
It prints the invocations per accelerator, the MMIO counts, and per output the
shape and the relative Frobenius error `||ref - acc|| / ||ref||`. `--output
y.npz` writes the accelerated run's results as `out0`, `out1`, ... (the
function's results in order, in their element types); `--output y.npy` the
only result of a one-result function (a usage error otherwise).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from steplus.passes.isel import saturation_progress
from steplus.tools.progress import status

DEFAULT_PIPELINE = "isel{targets=flexasr,hlscnn,vta mode=flexible},ila-cancel-store-load,convert-ila-to-commands"
# a program already selected (`step-opt -p` with isel, then step-run: compile once, run many) is not
# selected again: only the passes after isel run, which change nothing on a fully compiled module
SELECTED_PIPELINE = "ila-cancel-store-load,convert-ila-to-commands"


def default_pipeline(fn) -> str:
    """The pipeline step-run compiles `fn` with when no --pipeline is given: DEFAULT_PIPELINE, or
    SELECTED_PIPELINE when `fn` already holds accelerator ops (`ila.*`: isel ran on it before)."""
    selected = any(op.name.startswith("ila.") for op in fn.walk())
    return SELECTED_PIPELINE if selected else DEFAULT_PIPELINE


# --random draws at most this many elements per argument (a bound on memory).
MAX_RANDOM_ELEMENTS = 1 << 26


def _inputs(fn, specs, seed) -> list[np.ndarray]:
    from steplus.tools.inputs import func_signature, load_inputs
    from steplus.tools.cli import UsageError

    sigs = func_signature(fn)
    given = load_inputs(specs, sigs, f"@{fn.sym_name.data}")
    rng = np.random.default_rng(seed)
    out = []
    for k, sig in enumerate(sigs):
        if sig.name in given:
            out.append(given[sig.name])
        elif seed is None:
            raise UsageError(f"missing --input for argument '{sig.name}' (or pass --random SEED)")
        elif None in sig.dims:
            raise UsageError(f"argument '{sig.name}' has a dynamic shape; pass it with --input")
        elif math.prod(sig.dims) > MAX_RANDOM_ELEMENTS:  # type: ignore[arg-type]
            raise UsageError(f"argument '{sig.name}' ({sig.type_text}) is too large for "
                             f"--random (over {MAX_RANDOM_ELEMENTS} elements); pass it with --input")
        else:
            from steplus.runtime.ila.host import random_argument

            out.append(random_argument(rng, tuple(sig.dims), k))  # type: ignore[arg-type]
    return out


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Python's cyclic collector tuned for a compile, restored after: the objects already made
    (the parsed program, imported modules) frozen out of its scans, and a young-generation
    threshold of 50,000 allocations instead of 700.  Parsing, isel's e-graph terms and its
    rebuild allocate millions of objects; with the defaults, collections (nine of them full scans
    of the parsed module) took ~1.8 of LSTM-WLM's ~8.8 CPU seconds.  Memory stays as it was
    (~250 MB peak there); results do not depend on when cycles are freed."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _contains(module, op) -> bool:
    return any(o is op for o in module.walk())


def _location(args, module, op) -> str:
    """`file:line:col` of `op`, an operation of `module` (loaded from `args.input_file`):
    the file is parsed again with source positions and the op found by walk order."""
    from steplus.tools.source import LocatingParser, LocationTable, SourceFile
    from steplus.tools.step_opt import StepOptMain

    path = args.input_file
    index = next(i for i, o in enumerate(module.walk()) if o is op)
    with open(path, encoding="utf-8") as f:
        source = SourceFile(path, f.read())
    flags = ["--allow-unregistered-dialect"] if getattr(args, "allow_unregistered_dialect", False) else []
    parser = LocatingParser(StepOptMain(args=[path, *flags]).ctx, source)
    again = list(parser.parse_module().walk())
    return str(LocationTable(source, parser.op_offsets).loc(again[index]))


def run(args, source, name: str) -> int:
    """Run `func.func @name` of the already loaded `source` module (see module doc)."""
    from xdsl.dialects import func

    from steplus.runtime.ila.core import IlaError
    from steplus.runtime.ila.host import run_function
    from steplus.tools.cli import InputError, UsageError
    from steplus.tools.loading import load_module

    if args.output and not args.output.endswith((".npy", ".npz")):
        raise UsageError(f"--output {args.output}: expected an .npz (or, for one output, "
                         ".npy) file")
    fns = [f for f in source.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == name]
    if not fns:
        raise UsageError(f"no func.func @{name} in {args.input_file}")
    inputs = _inputs(fns[0], args.input, args.random)
    quiet = getattr(args, "quiet", False)
    isel = [""]  # what isel says of its saturation, on the status line

    def compiling() -> str:
        return f"compiling @{name} for the accelerators" + (f" (isel {isel[0]})" if isel[0] else "")

    def saturating(text: str) -> None:
        isel[0] = text

    with status("step-run", compiling, quiet=quiet), saturation_progress(saturating), fewer_collections():
        # a clone of the parsed program (parsing LSTM-WLM's 1.1 MB again took ~1.2 s)
        compiled = load_module(args.input_file, args.pipeline or default_pipeline(fns[0]),
                               args.allow_unregistered_dialect, getattr(args, "source", None),
                               parsed=source.clone())
    try:  # the uncompiled program first: an op it cannot run is located in the source
        with status("step-run", f"running @{name} in numpy (the reference)", quiet=quiet) as line:
            refs, _ = run_function(source, name, inputs, backend="reference")
            line.set(f"running @{name} on the ILA simulators")
            outs, stats = run_function(compiled, name, inputs, backend="ila")
    except IlaError as e:
        at = e.op if e.op is not None and _contains(source, e.op) else fns[0]
        raise InputError([f"{_location(args, source, at)}: error: {e}"]) from None
    inv = ", ".join(f"{k}={v}" for k, v in sorted(stats.invocations.items())) or "none"
    print(f"invocations: {inv}")
    if stats.mmio:
        print("commands: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.mmio.items())))
    for k, (o, r) in enumerate(zip(outs, refs)):
        with np.errstate(invalid="ignore", over="ignore"):  # inf/NaN inputs: the error is nan
            den = float(np.linalg.norm(r))
            diff = float(np.linalg.norm(np.asarray(r, np.float64) - o))
        err = diff / den if den else float(np.linalg.norm(o))
        print(f"output {k}: shape {list(np.shape(o))}, relative error vs float32 numpy {err:.6f}")
    if args.output:
        from steplus.tools.outputs import save_outputs

        from steplus.dialects.semantics.domain import numpy_dtype

        types = list(fns[0].function_type.outputs.data)
        save_outputs(args.output, {f"out{k}": np.asarray(o).astype(numpy_dtype(t))
                                   for k, (o, t) in enumerate(zip(outs, types))})
    return 0
