"""step-run: execute steplus programs.

    step-run prog.mlir --node @integr --ticks 10 --input i=inputs.npy
    step-run prog.mlir --node @integr --ticks 10 --input i=inputs.csv --output out.npy
    step-run graph.mlir [--preset swiglu-hdl] [--json] [--trace out.json]

The entry point is `--graph @g`, `--node @n` or `--func @f`; without one,
step-run runs the only step.graph, lus.node / sync.node or func.func of the
file.  A `step.graph` is simulated on the dataflow fabric and its metrics are
printed (see `steplus.tools.step_run_graph`); `--input X=x.npy` binds the
tensor of its load `%X` and `--output out.npz` writes every store's region
(functional mode, see `steplus.tools.graph_io`).

Backends for lus nodes:

- `reactive` (default): the steplus reactive runtime interprets the lus node
  (a file of `sync.node`s is interpreted as sync);
- `sync`: `convert-lus-to-sync`, then the sync interpreter (instances as
  coroutines);
- `iree`: `lus-inline-instances,convert-lus-to-sync,convert-sync-to-std`, then
  `iree-compile` (llvm-cpu, this machine's CPU) and `iree.runtime`. The inputs
  of files are known ahead, so all ticks run in one `@<node>_run` call (its
  loop one IREE dispatch); `--per-tick` calls `@<node>_step` once per tick
  instead, as `--stream` does. Compiled modules are cached
  (`$STEPLUS_CACHE_DIR`, default `~/.cache/steplus/iree`; `off` disables it).
- `modular`: `convert-lus-to-sync`, `convert-sync-to-std{target=modular}`,
  `iree-compile`; the `@sch_*` runtime calls are served by a Python IREE
  module, each node instance a coroutine (`steplus.tools.iree_modular`).

`--stream` reads the inputs from stdin, one tick per line (values in input
order), and prints each tick's outputs as soon as its line is read (see
`steplus.tools.step_run_stream`); `--ticks` is then optional.

Backend for tensor-level functions (see `step_run_ila`):

- `ila`: `step-run m.mlir --backend ila --func @f (--input x=x.npy | --random 0)`
  compiles with isel + convert-ila-to-commands, runs host ops in numpy and
  accelerator fragments on the ILA simulators, and compares with float32 numpy.

Inputs are `name=file` pairs (`.npy` with one row per tick — tensors too —,
or `.csv` with one value per line), checked against the entry's types and
shapes (see `steplus.tools.inputs`).  `--ticks` is at most `--max-ticks`
(default 10^7), so that a typo cannot run for days. It prints one line per tick with the
node's outputs (`-` where an output is absent; `name=value` for a node lowered
from Lustre, which keeps its output names), or writes them to `--output`:
`.npy` for scalar outputs (one column per output; integers and bools stay
integers unless an output is real or absent somewhere: then float64, absent
values NaN), `.csv` for scalar outputs (a header of the output names, one row
per tick, absent values empty), `.npz` for any outputs (arrays named after the
outputs, or `out0`, `out1`, ... without names, stacked over the ticks).

Errors are reported like step-opt's: `file:line:col: error: ...` for the
program, one line `step-run: error: ...` for the command line (exit 2).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from steplus.dialects import lus
from steplus.dialects.lus.input_ranges import input_problem, input_ranges, output_names
from steplus.tools.lus_check import capacity_watch, check_main
from steplus.utils.source_formats import FORMATS, lustre_dialect_of
from steplus.tools.cli import (
    EXIT_USAGE_ERROR,
    EXIT_USER_ERROR,
    ArgumentParser,
    InputError,
    UsageError,
    decimal_int,
    guarded_deep,
)
from steplus.tools.loading import load_module, read_input
from steplus.tools.lus_translate import kind2_settings
from steplus.tools.step_run_args import add_graph_arguments, add_lower_arguments, hint_lower

if TYPE_CHECKING:
    from steplus.runtime.reactive.interpreter import Outputs

__all__ = ["EXIT_USAGE_ERROR", "EXIT_USER_ERROR", "DEFAULT_MAX_TICKS", "main"]

DEFAULT_MAX_TICKS = 10**7
_ENTRY_FLAGS = "--graph @name, --node @name or --func @name"


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="step-run", description="execute steplus programs")
    p.add_argument("input_file", nargs="?", help="the program (.mlir)")
    p.add_argument("--node", help="the lus or sync node to run, e.g. @integr "
                                  "(default: the only entry point of the file)")
    p.add_argument("--ticks", type=decimal_int, help="number of ticks (lus and sync nodes)")
    p.add_argument("--max-ticks", type=decimal_int, default=DEFAULT_MAX_TICKS, metavar="N",
                   help=f"refuse --ticks above N (default {DEFAULT_MAX_TICKS})")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="an input (.npy or .csv); repeat per input: a node's input stream, "
                        "a function's argument, or the tensor of a graph's off-chip load "
                        "(by SSA name, context name or base_addr)")
    p.add_argument("--output", metavar="OUT.npz",
                   help="write the outputs to this .npz file (by name; .npy for a single "
                        "output): a node's, a function's results, or every store of a graph")
    p.add_argument("--stream", action="store_true",
                   help="read the inputs from stdin, one tick per line, and print each "
                        "tick's outputs at once (see steplus.tools.step_run_stream)")
    p.add_argument("--per-tick", action="store_true",
                   help="iree backend: call @<node>_step once per tick even when all "
                        "inputs are known (default: one batched @<node>_run call)")
    p.add_argument("--backend", choices=["reactive", "sync", "iree", "modular", "ila"],
                   default=None,
                   help="execution path: reactive (default for nodes), sync, iree, "
                        "modular (nodes), ila (functions)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="read the input as MLIR, Lustre as Kind 2 reads it, Lustre V6 (lustre-v6: "
                        "an unguarded pre read in its first cycle is an error) or Heptagon "
                        "(default: by its suffix, .lus Lustre, .ept Heptagon, else MLIR; stdin "
                        "is MLIR)")
    p.add_argument("--allow-unregistered-dialect", action="store_true",
                   help="accept operations of unregistered dialects (as step-opt)")
    p.add_argument("--set-capacity", type=decimal_int, default=None, metavar="K",
                   help="Lustre: slots of a Kind 2 set or map value (1 to 64, default 8)")
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                   help="Lustre: the value of a Kind 2 free constant ('const N: int;'), "
                        "e.g. one that sizes an array; repeat per constant")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no status line (on a terminal, loading, a simulation or an ILA run "
                        "taking more than 2 s shows one on stderr with the seconds elapsed)")
    add_graph_arguments(p)
    add_lower_arguments(p)  # --lower
    p.add_argument("--check", action="store_true",
                   help="Lustre: check the node's properties and contract tick by tick, on "
                        "the --input streams or on seeded random inputs within its "
                        "assumptions (steplus.tools.lus_check); exit 1 on a violation")
    p.add_argument("--runs", type=decimal_int, default=100, metavar="N",
                   help="--check: random runs (default 100), each of --ticks ticks (default 50)")
    p.add_argument("--seed", type=decimal_int, default=0, help="--check: random seed (default 0)")
    p.add_argument("--cex", metavar="DIR",
                   help="--check: write a violating input trace (counterexample) to DIR/<input>.csv")
    p.add_argument("--func", help="ila backend: the tensor function to run, e.g. @maxpool")
    p.add_argument("--pipeline", help="ila backend: step-opt pipeline compiling the function")
    p.add_argument("--random", type=decimal_int, metavar="SEED",
                   help="ila backend: random normal inputs for arguments without --input")
    return p


def _check_flags(args: argparse.Namespace) -> None:
    """Flag values that are wrong whatever the program."""
    if args.max_ticks < 0:
        raise UsageError("--max-ticks must be non-negative")
    if args.ticks is not None:
        if args.ticks < 0:
            raise UsageError("--ticks must be non-negative")
        if args.ticks > args.max_ticks:
            raise UsageError(f"--ticks {args.ticks} is above the limit of {args.max_ticks} "
                             "ticks; raise it with --max-ticks N")
    if args.random is not None and args.random < 0:
        raise UsageError(f"--random expects a non-negative seed, got {args.random}")
    given = [f for f in ("graph", "node", "func") if getattr(args, f)]
    if len(given) > 1:
        raise UsageError(f"give only one of --graph, --node, --func (got --{', --'.join(given)})")


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
    "modular": "convert-lus-to-sync",
}


def _entries(module: ModuleOp) -> list[tuple[str, str, Operation]]:
    """(kind, name, op) of every graph and node, or else of every function."""
    from xdsl.dialects import func

    from steplus.dialects import lus, sync
    from steplus.dialects.step import GraphOp

    kinds = ((GraphOp, "step.graph"), (lus.NodeOp, "lus.node"), (sync.NodeOp, "sync.node"))
    found: list[tuple[str, str, Operation]] = [
        (kind, op.sym_name.data, op) for op in module.walk()
        for cls, kind in kinds if isinstance(op, cls)
        and not op.sym_name.data.endswith("$check")]  # Lustre observers: --check
    if not found:
        found = [("func.func", op.sym_name.data, op) for op in module.walk()
                 if isinstance(op, func.FuncOp) and op.body.blocks]
    return found


def _pick_entry(args: argparse.Namespace, module: ModuleOp) -> tuple[str, str]:
    """The only entry point of the file as (kind, name); a usage error if there
    is none or several."""
    entries = _entries(module)
    if args.backend == "ila":
        entries = [e for e in entries if e[0] == "func.func"]
    if len(entries) == 1:
        return entries[0][0], entries[0][1]
    if not entries:
        raise UsageError(f"{args.input_file} has no step.graph, lus.node, sync.node or "
                         f"func.func to run")
    names = ", ".join(f"{kind} @{name}" for kind, name, _ in entries)
    raise UsageError(f"{args.input_file} has {len(entries)} entry points ({names}); "
                     f"choose one with {_ENTRY_FLAGS}")


def _find_node(args: argparse.Namespace, module: ModuleOp, name: str) -> Operation:
    from steplus.dialects import lus, sync

    nodes = {op.sym_name.data: op for op in module.walk()
             if isinstance(op, (lus.NodeOp, sync.NodeOp))}
    if name not in nodes:
        have = ", ".join(f"@{n}" for n in nodes) or "none"
        raise InputError([f"{args.input_file}: error: no lus.node or sync.node @{name} "
                          f"(nodes: {have})"])
    return nodes[name]


def _execute(args, module: ModuleOp, node: str, inputs: dict) -> Outputs:
    from steplus.dialects import lus, sync
    from steplus.runtime.reactive import run_node
    from steplus.runtime.reactive.sync_interp import run_sync_node

    if args.backend == "iree":
        from steplus.tools.iree_run import IreeNode

        return IreeNode(module, node).run(inputs, args.ticks, per_tick=args.per_tick)
    if args.backend == "modular":
        from steplus.tools.iree_modular import ModularNode

        with ModularNode(module, node) as modular:
            return modular.run(inputs, args.ticks)
    has_lus = any(isinstance(op, lus.NodeOp) for op in module.walk())
    if args.backend == "sync" or (
        not has_lus and any(isinstance(op, sync.NodeOp) for op in module.walk())
    ):
        return run_sync_node(module, node, inputs, args.ticks)
    return run_node(module, node, inputs, args.ticks)


def _save(path: str, outputs: Outputs, names: list[str] | None = None) -> None:
    from steplus.runtime.reactive import ABSENT

    keys = names if names and len(set(names)) == len(outputs) else [
        f"out{k}" for k in range(len(outputs))]
    if path.endswith(".npz"):
        arrays = {}
        for k, col in enumerate(outputs):
            if not isinstance(col, np.ndarray) and any(v is ABSENT for v in col):
                raise InputError([f"{path}: error: output {keys[k]} is absent in some ticks; "
                                  "use a .npy or .csv output (absent values are NaN / empty)"])
            arrays[keys[k]] = (col if isinstance(col, np.ndarray) else
                               np.stack([np.asarray(v) for v in col]) if len(col) else np.zeros(0))
        np.savez(path, **arrays)
        return
    if any(np.asarray(v).ndim for col in outputs for v in col):
        raise UsageError("tensor outputs need an .npz --output file")
    absent = any(v is ABSENT for col in outputs for v in col)
    columns = [np.asarray([np.nan if v is ABSENT else v for v in col]) for col in outputs]
    exact = not absent and all(c.dtype.kind in "biu" for c in columns)
    if path.endswith(".csv"):
        rows = [",".join(keys)]
        for t in range(len(outputs[0]) if outputs else 0):
            rows.append(",".join("" if col[t] is ABSENT else _fmt(col[t]) for col in outputs))
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(rows) + "\n")
        return
    if exact:  # integers and bools stay exact
        dtype = np.result_type(*[c.dtype for c in columns]) if columns else np.int64
        table = np.stack(columns, axis=1).astype(dtype) if columns else np.zeros((0, 0), dtype)
    else:
        table = (np.stack([c.astype(np.float64) for c in columns], axis=1) if columns
                 else np.zeros((0, 0)))
    np.save(path, table)


def _no_function_flags(args: argparse.Namespace) -> None:
    if args.random is not None or args.pipeline:
        raise UsageError("--random and --pipeline apply to functions (--backend ila)")


def _graph_flags_given(args: argparse.Namespace) -> list[str]:
    """The `step graphs` options given away from their defaults, as typed."""
    defaults = argparse.ArgumentParser(add_help=False)
    add_graph_arguments(defaults)
    return ["--" + dest.replace("_", "-")
            for dest, default in vars(defaults.parse_args([])).items()
            if getattr(args, dest, default) != default]


def _no_graph_flags(args: argparse.Namespace, what: str) -> None:
    """Options of step graphs given for a node or function: a usage error, not
    silently ignored."""
    given = _graph_flags_given(args)
    if given:
        raise UsageError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                         f"step graphs, not to {what}")


def _run_node(args: argparse.Namespace, source: ModuleOp, name: str) -> int:
    from steplus.tools.iree_run import IreeError
    from steplus.runtime.reactive import ReactiveError
    from steplus.tools.inputs import load_inputs, node_signature, require_all

    node = _find_node(args, source, name)
    if args.check:
        _no_function_flags(args)
        if not isinstance(node, lus.NodeOp):
            raise UsageError(f"--check checks a Lustre node; @{name} is a {node.name}")
        return check_main(args, source, name, node)
    if args.ticks is None and not args.stream:
        raise UsageError("the following arguments are required: --ticks")
    _no_function_flags(args)
    if args.per_tick and args.backend != "iree":
        raise UsageError("--per-tick applies to --backend iree")
    _no_graph_flags(args, "a lus or sync node")
    lowering = _LOWERINGS.get(args.backend or "reactive")
    module = source if lowering is None else _load(args, lowering)
    sigs = node_signature(node)
    # Kind 2 sets and maps: a plain run stops where one overflows
    watch = capacity_watch(source, name, node, args.input_file) if isinstance(
        node, lus.NodeOp) else None
    if args.stream:
        return _stream(args, module, name, sigs, node, watch)
    ticks: int | None = args.ticks
    if ticks is None:  # refused above unless --stream
        raise UsageError("the following arguments are required: --ticks")
    inputs = load_inputs(args.input, sigs, f"@{name}")
    from steplus.lowering.lustre.undefined import default_undefined  # Kind 2's undefined pre

    default_undefined([s.name for s in sigs], {s.name: s.dtype for s in sigs}, inputs, ticks)
    require_all(sigs, inputs, f"@{name}")
    _check_lustre_inputs(args, node, {k: v[:ticks] for k, v in inputs.items()})
    overflow = None
    try:
        if watch is None:
            outputs = _execute(args, module, name, inputs)
        else:
            try:
                outputs, overflow = watch.split(
                    _execute(args, module, watch.name, watch.inputs(inputs, ticks)))
            except IreeError:  # the check node too wide for one dispatch: the node's
                outputs = _execute(args, module, name, inputs)  # outputs, by their headers
                overflow = watch.headers(node, outputs)
    except (ReactiveError, IreeError) as e:
        print(f"{args.input_file}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    if args.output:
        if overflow is not None:
            print(overflow[1], file=sys.stderr)
            return EXIT_USER_ERROR
        try:
            _save(args.output, _lustre_outputs(node, outputs)[1], output_names(node))
        except OSError as e:
            raise InputError([f"{args.output}: error: cannot write output: {e}"]) from None
        return 0
    names, outputs = _lustre_outputs(node, outputs, shown=True)
    for t in range(ticks if overflow is None else overflow[0]):
        print(f"tick {t}: " + " ".join(f"{n}={_fmt(col[t])}" if n else _fmt(col[t])
                                       for n, col in zip(names, outputs)))
    if overflow is not None:
        sys.stdout.flush()
        print(overflow[1], file=sys.stderr)
        return EXIT_USER_ERROR
    return 0


def _lustre_outputs(node: Operation, outputs, shown: bool = False) -> tuple[list[str], list]:
    """The output names and columns of a node lowered from Lustre as step-run
    gives them: Kind 2's `uintN` unsigned; with `shown`, each set or map output
    one column of its values as text (`{1, 3}`), as printed."""
    from steplus.lowering.lustre import machine_ints, set_values

    columns = machine_ints.as_unsigned(node, outputs)
    names = output_names(node) or [""] * len(columns)
    return set_values.show_collections(node, names, columns, _fmt) if shown else (names,
                                                                                  columns)


def _check_lustre_inputs(args: argparse.Namespace, node: Operation,
                         inputs: dict, tick: int = 0) -> None:
    """Values of Lustre enum inputs must be constructors (InputError)."""
    for name, values in inputs.items():
        problem = input_problem(node, name, values, tick)
        if problem is not None:
            raise InputError([f"{args.input_file}: error: @{node_name(node)}: {problem}"])


def _checked_step(args: argparse.Namespace, node: Operation, sigs, step):
    """`step` with the Lustre enum inputs checked tick by tick (--stream)."""
    ticks = [0]

    def checked(inputs):
        _check_lustre_inputs(args, node, {s.name: [v] for s, v in zip(sigs, inputs)}, ticks[0])
        ticks[0] += 1
        return step(inputs)
    return checked


def _watched_step(watch, names: list[str], step):
    """`step` of the check node `watch.name`, given the node's inputs, returning
    the node's outputs; an InputError at the tick where a set or map overflows."""
    ticks = [0]

    def watched(inputs):
        columns, overflow = watch.split([[v] for v in step(watch.tick_inputs(names, inputs))],
                                        ticks[0])
        if overflow is not None:
            raise InputError([overflow[1]])
        ticks[0] += 1
        return [col[0] for col in columns]
    return watched


def node_name(node: Operation) -> str:
    attr = node.attributes.get("sym_name") or node.properties.get("sym_name")
    return getattr(attr, "data", "?")


def _stream(args: argparse.Namespace, module: ModuleOp, name: str, sigs,
            node: Operation, watch=None) -> int:
    """--stream: one tick per stdin line, on the chosen backend's per-tick path."""
    from steplus.dialects import lus
    from steplus.tools.iree_run import IreeError
    from steplus.runtime.reactive import ReactiveError
    from steplus.tools.step_run_stream import stream

    if args.input or args.output:
        raise UsageError("--stream reads the inputs from stdin and prints the outputs; "
                         "it takes no --input or --output")
    modular = None
    name = name if watch is None else watch.name
    try:
        if args.backend == "iree":
            from steplus.tools.iree_run import IreeNode

            step = IreeNode(module, name).step
        elif args.backend == "modular":
            from steplus.tools.iree_modular import ModularNode

            modular = ModularNode(module, name)
            step = modular.step
        elif args.backend == "sync" or not any(isinstance(op, lus.NodeOp)
                                               for op in module.walk()):
            from steplus.runtime.reactive.sync_interp import sync_stepper

            step = sync_stepper(module, name)[1]
        else:
            from steplus.runtime.reactive.interpreter import node_stepper

            step = node_stepper(module, name)[1]
        if watch is not None:  # Kind 2 sets: the check node, stopped at an overflow
            step = _watched_step(watch, [s.name for s in sigs], step)
        if input_ranges(node):
            step = _checked_step(args, node, sigs, step)

        def unsigned(inputs, step=step):
            columns = _lustre_outputs(node, [[v] for v in step(inputs)], shown=True)[1]
            return [col[0] for col in columns]
        return stream(sigs, unsigned, _fmt, args.ticks, args.max_ticks)
    except (ReactiveError, IreeError) as e:
        print(f"{args.input_file}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    finally:
        if modular is not None:
            modular.close()


def _run_graph(args: argparse.Namespace, source: ModuleOp | None) -> int:
    from steplus.tools.step_run_graph import run_graph, specialize_pipeline

    if args.ticks is not None:
        raise UsageError("--ticks applies to lus and sync nodes, not to a step.graph")
    if args.backend is not None:
        raise UsageError(f"--backend {args.backend} applies to nodes and functions; a step.graph "
                         "runs on the fabric simulator (--preset, --config)")
    _no_function_flags(args)
    pipeline = specialize_pipeline(args)
    module = source if source is not None and pipeline is None else _load(args, pipeline)
    return run_graph(args, module)


def _run_graph_module(args: argparse.Namespace, module: ModuleOp, data=None) -> int:
    from steplus.tools.step_run_graph import run_graph

    return run_graph(args, module, data)


def _load(args: argparse.Namespace, pipeline: str | None = None) -> ModuleOp:
    if args.input_file == "-" and not hasattr(args, "source"):
        args.source = read_input("-")  # stdin is read once, parsed maybe twice
    from steplus.tools.progress import status

    passes = re.sub(r"\{[^}]*\}", "", pipeline or "").replace(",", ", ")
    what = f"loading {args.input_file}" + (f" and running {passes}" if passes else "")
    with status("step-run", what, quiet=args.quiet):
        return load_module(args.input_file, pipeline, args.allow_unregistered_dialect,
                           getattr(args, "source", None), args.format)


def _run(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    with kind2_settings(args.set_capacity, args.const):  # Kind 2: set slots, --const
        return _run_args(args)


def _run_args(args: argparse.Namespace) -> int:
    if args.input_file is None:  # only `step-run --preset P --explain` needs no program
        if args.explain:
            from steplus.tools.step_run_graph import explain_only

            return explain_only(args)
        raise UsageError("the following arguments are required: input_file")
    _check_flags(args)
    if args.lower is not None:  # a tensor program: convert-linalg-to-step, then the fabric
        from steplus.tools.step_run_linalg import run_lowered

        return run_lowered(args, _load, _run_graph_module)
    if args.func or args.backend == "ila":
        if args.backend not in (None, "ila"):
            raise UsageError("--func runs a function with --backend ila")
        if args.node or args.graph:
            raise UsageError("--backend ila runs a function (--func @name)")
        from steplus.tools import step_run_ila

        _no_graph_flags(args, "a function")
        with step_run_ila.fewer_collections():  # parsing a model allocates a million objects
            source = _load(args)
        name = args.func or _pick_entry(args, source)[1]
        return step_run_ila.run(args, source, name.lstrip("@"))
    if args.graph or args.routing or args.kv or args.bind or args.orchestration:
        return _run_graph(args, None)
    source = _load(args)
    if args.node:
        return _run_node(args, source, args.node.lstrip("@"))
    if lustre_dialect_of(args.input_file or "", args.format):  # Lustre: the --%MAIN node
        from steplus.lowering.lustre import lustre_main_node

        main = lustre_main_node(args.input_file, getattr(args, "source", ("", None))[1])
        if main is not None:
            return _run_node(args, source, main)
    kind, name = _pick_entry(args, source)
    if kind == "step.graph":
        args.graph = name
        return _run_graph(args, source)
    if kind == "func.func":
        from steplus.tools.step_run_ila import run

        hint_lower(args, source)  # a tensor program without --lower/--input/--random

        _no_graph_flags(args, "a function")
        return run(args, source, name)
    return _run_node(args, source, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `step-run` console script."""
    return guarded_deep("step-run", lambda: _run(argv))  # deep nesting: a large stack


if __name__ == "__main__":
    sys.exit(main())
