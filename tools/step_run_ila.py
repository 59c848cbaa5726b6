"""step-run --backend ila: run a tensor-level function with accelerators on ILA simulators.

    step-run examples/isel/maxpool128.mlir --backend ila --func @maxpool --random 0
    step-run m.mlir --backend ila --func @f --input x=x.npy --pipeline 'isel{targets=vta}' --output y.npz

`--random SEED` draws the first argument from N(0, 1) and the others
(parameters) from N(0, 1/fan_in).  The program is compiled with `--pipeline` (default: flexible isel onto all
three accelerators, store/load cancellation, convert-ila-to-commands), run with
host ops in numpy and accelerator fragments on the FlexASR / VTA / HLSCNN ILA
simulators, and compared with a float32 numpy run of the uncompiled program.
It prints the invocations per accelerator, the MMIO counts, and per output the
shape and the relative Frobenius error `||ref - acc|| / ||ref||`.
"""

from __future__ import annotations

import numpy as np

DEFAULT_PIPELINE = "isel{targets=flexasr,hlscnn,vta mode=flexible},ila-cancel-store-load,convert-ila-to-commands"


def _inputs(fn, specs, seed):
    from steplus.tools.step_opt import InputError, UsageError

    args = fn.body.blocks[0].args
    names = [a.name_hint or f"arg{a.index}" for a in args]
    given = {}
    for spec in specs:
        if "=" not in spec:
            raise UsageError(f"--input expects NAME=FILE, got '{spec}'")
        k, path = spec.split("=", 1)
        if k not in names:
            raise UsageError(f"--input: @{fn.sym_name.data} has no argument '{k}' (has {', '.join(names)})")
        try:
            given[k] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise InputError([f"{path}: error: cannot read input: {e}"]) from None
    rng = np.random.default_rng(seed)
    out = []
    for k, (a, n) in enumerate(zip(args, names)):
        shape = tuple(a.type.get_shape())
        if n in given:
            out.append(given[n])
        elif seed is not None and any(d < 0 for d in shape):
            raise UsageError(f"argument '{n}' has a dynamic shape; pass it with --input")
        elif seed is not None:
            from steplus.runtime.ila.host import random_argument

            out.append(random_argument(rng, shape, k))
        else:
            raise UsageError(f"missing --input for argument '{n}' (or pass --random SEED)")
    return out


def run(args) -> int:
    from xdsl.dialects import func

    from steplus.runtime.ila.core import IlaError
    from steplus.runtime.ila.host import run_function
    from steplus.tools.step_opt import InputError, UsageError, load_module

    if not args.func:
        raise UsageError("--backend ila needs --func @name")
    name = args.func.lstrip("@")
    source = load_module(args.input_file)
    fns = [f for f in source.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == name]
    if not fns:
        raise UsageError(f"no func.func @{name} in {args.input_file}")
    inputs = _inputs(fns[0], args.input, args.random)
    compiled = load_module(args.input_file, args.pipeline or DEFAULT_PIPELINE)
    try:
        outs, stats = run_function(compiled, name, inputs, backend="ila")
        refs, _ = run_function(source, name, inputs, backend="reference")
    except IlaError as e:
        raise InputError([f"{args.input_file}: error: {e}"]) from None
    inv = ", ".join(f"{k}={v}" for k, v in sorted(stats.invocations.items())) or "none"
    print(f"invocations: {inv}")
    if stats.mmio:
        print("commands: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.mmio.items())))
    for k, (o, r) in enumerate(zip(outs, refs)):
        den = float(np.linalg.norm(r))
        err = float(np.linalg.norm(np.asarray(r, np.float64) - o)) / den if den else float(np.linalg.norm(o))
        print(f"output {k}: shape {list(np.shape(o))}, relative error vs float32 numpy {err:.6f}")
    if args.output:
        try:
            np.savez(args.output, **{f"out{k}": o for k, o in enumerate(outs)})
        except OSError as e:
            raise InputError([f"{args.output}: error: cannot write output: {e}"]) from None
    return 0
