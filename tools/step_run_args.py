"""step-run's options and checks that need none of its runners.

`step-run` builds its whole argument parser, and checks what kind of program it
was given, before it runs anything.  The runners they belong to import much more:
the graph runner (`step_run_graph`) and the linalg lowering (`step_run_linalg`)
import sympy, the step dialect and the fabric simulator (~0.5 CPU s), which a run of
a function on the ILA simulators (`--backend ila`) or of a node never uses.  Their
flags and the tensor-program hint live here, so those runs do not import them.

    p = argparse.ArgumentParser(); add_graph_arguments(p); add_lower_arguments(p)
    p.parse_args(["--preset", "sn40l", "--lower", ""])
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from steplus.tools.cli import UsageError, decimal_int

__all__ = ["LOWER_HINT", "add_graph_arguments", "add_lower_arguments", "hint_lower", "is_tensor_program"]

LOWER_HINT = ("is a tensor program (func.func on tensors), not a step graph: lower it with "
              "--lower 'tile=\"MxN[xK]\" schedule=\"mn_mk\"' (convert-linalg-to-step options; "
              "--lower '' for the defaults)")


def is_tensor_program(module: ModuleOp) -> bool:
    """A module with function bodies on tensors and no step graph (`step.graph`, by name: the step
    dialect is not imported here)."""
    if any(op.name == "step.graph" for op in module.walk()):
        return False
    return any(isinstance(op, func.FuncOp) and op.body.blocks and
               any(isinstance(t, TensorType) for t in op.function_type.inputs)
               for op in module.walk())


def add_lower_arguments(p) -> None:
    """step-run's `--lower` flag (`steplus.tools.step_run_linalg.run_lowered` reads it)."""
    p.add_argument("--lower", metavar="OPTIONS", default=None,
                   help="lower a tensor program (linalg on tensors) with "
                        "convert-linalg-to-step{OPTIONS} first, e.g. --lower "
                        "'tile=\"32x128\" schedule=\"mn_mk\"' ('' for the defaults)")


def hint_lower(args, module: ModuleOp) -> None:
    """A tensor program given to step-run without `--lower`, `--input` or
    `--random`: a usage error that names `--lower` (and the ILA path)."""
    if args.input or args.random is not None or args.backend == "ila" or args.func:
        return
    if is_tensor_program(module):
        raise UsageError(f"{args.input_file} {LOWER_HINT}; or run it on the ILA "
                         "accelerators with --backend ila (--input NAME=FILE or --random SEED)")


def add_graph_arguments(p) -> None:
    """step-run's `step graphs` options (`steplus.tools.step_run_graph` reads them)."""
    g = p.add_argument_group("step graphs")
    g.add_argument("--graph", help="the step.graph to run (default: the first)")
    g.add_argument("--preset", default=None,
                   help="hardware preset: step-eval (default), swiglu-hdl, sn40l")
    g.add_argument("--config", help="hardware config JSON (fields of HardwareConfig; "
                                    "\"preset\" selects the base)")
    g.add_argument("--depth", type=decimal_int, help="override the base FIFO depth")
    g.add_argument("--functional", action="store_true",
                   help="let numpy values flow (random input tensors, seed 0; implied by "
                        "--input/--output, see steplus.tools.graph_io)")
    g.add_argument("--json", action="store_true", help="print the metrics as JSON")
    g.add_argument("--trace", metavar="OUT.json", help="write a Chrome trace")
    g.add_argument("--routing", metavar="TRACE.npz",
                   help="bind an MoE expert-routing trace (step-specialize{routing=...})")
    g.add_argument("--kv", metavar="LENGTHS.npy", help="bind a KV-length trace")
    g.add_argument("--bind", metavar="B=64,...", help="bind symbols by name")
    g.add_argument("--explain", action="store_true",
                   help="print the preset's parameters, each marked seed / assumed / derived "
                        "(sn40l), then run the graph if one is given")
    g.add_argument("--orchestration", choices=["so", "ho"], default=None,
                   help="charge a kernel launch per kernel: so (software-orchestrated) or "
                        "ho (hardware-orchestrated), the preset's launch_*_cycles")
    g.add_argument("--force", action="store_true",
                   help="simulate even past the size limits (10M stream elements, "
                        "2 GiB of --functional input tensors)")
