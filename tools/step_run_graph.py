"""step-run for step graphs: simulate a `step.graph` on the fabric and print metrics.

    step-run graph.mlir                       # metrics table, default preset step-eval
    step-run graph.mlir --preset swiglu-hdl --json
    step-run graph.mlir --config hw.json --depth 2 --trace out.json --functional
    step-run examples/step/moe_mixtral_dyn.mlir --routing examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz

A symbolic graph is first specialized (`--routing`, `--kv`, `--bind`: the
`step-specialize` pass with the types rewritten). The graph is lowered with
`convert-step-to-runtime` (one context per op,
channels of the base depth, Broadcasts for fan-out) and run by the event-driven
simulator. `--json` prints the metrics as JSON; `--trace` writes a Chrome trace
(chrome://tracing, Perfetto). A deadlock is reported with the blocked contexts
and channels (exit 1), never a hang.

SN40L (docs/guide/sn40l.md):

    step-run --preset sn40l --explain        # which parameters are from the seed, which assumed
    step-opt g.mlir -p 'step-kernelize{mode=unfused}' | step-run - --preset sn40l --orchestration so

A module whose graphs are the kernels of one source (`step-kernelize`, or the
sections of `step-allocate-units`) runs them one after the other
(`runtime/fabric/kernel_run.py`); `--orchestration so|ho` adds the preset's
per-kernel launch cost (software- or hardware-orchestrated; a graph that was
not cut is one kernel). Loads and stores that `step-allocate-memory` placed in
DDR use the DDR channels.
"""

from __future__ import annotations

import json
import sys

import sympy

from steplus.dialects.sn40l_attrs import KERNEL, SOURCE
from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import BufferType, StreamType
from steplus.passes.step.bindings import BIND_ATTR, graph_bindings
from steplus.passes.step.fabric_placement import find_graph
from steplus.passes.step.metrics import compute_metrics
from steplus.passes.step.specialize import specialize_graph
from steplus.passes.step.reports import fused_adds_note
from steplus.tools.progress import status
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.utils.safe_files import read_regular

MAX_CONFIG_BYTES = 1 << 20
"""The largest --config JSON read (a hardware config is a few hundred bytes)."""


def specialize_pipeline(args) -> str | None:
    """The `step-specialize` step-run applies before simulating (types rewritten)."""
    flags = (("routing", args.routing), ("kv", args.kv), ("bind", args.bind))
    opts = [f'{k}="{v}"' for k, v in flags if v]
    if not opts:
        return None
    for k, v in flags:
        if v and ('"' in v or "\\" in v):
            from steplus.tools.cli import UsageError

            raise UsageError(f"--{k} value cannot contain '\"' or '\\': {v}")
    return "step-specialize{" + " ".join([*opts, "rewrite=true"]) + "}"


def _explain(cfg, module=None) -> str:
    from steplus.dialects.target.attrs import explain_sn40l

    if cfg.name == "sn40l":  # the table of the module's #target.sn40l, which the preset is built from
        return f"hardware preset sn40l (one socket; node: 8 sockets)\n{explain_sn40l(module)}"
    return (f"hardware preset {cfg.name}: no seed/assumed table (its values are in "
            f"dialects/target/fabric.py)")


def explain_only(args) -> int:
    """`step-run --preset P --explain` without a program."""
    print(_explain(_config(args)))
    return 0


def _config(args, module=None):
    """--config, else --preset, else the module's #target.fabric, else step-eval."""
    from steplus.dialects.target.attrs import fabric_preset_of, fabric_target_of
    from steplus.dialects.target.fabric import HardwareConfig
    from steplus.tools.cli import InputError, UsageError

    try:
        if args.config:
            try:
                # a regular file of at most 1 MiB (not /dev/zero, a FIFO or a folder)
                text = read_regular(args.config, MAX_CONFIG_BYTES).decode("utf-8")
                cfg = HardwareConfig.from_json(text)
            except OSError as e:
                raise InputError([f"{args.config}: error: cannot read config: {e.strerror or e}"]) from None
            except (ValueError, TypeError) as e:
                raise InputError([f"{args.config}: error: invalid hardware config: {e}"]) from None
            if args.preset:
                raise UsageError("--preset and --config are exclusive (put \"preset\" in the JSON)")
        elif args.preset or module is None:  # the sn40l preset: the module's #target.sn40l
            cfg = fabric_preset_of(args.preset or "step-eval", module)
        else:
            cfg = fabric_target_of(module) or fabric_preset_of("step-eval", module)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return cfg


def run_graph(args, module, data=None) -> int:
    """Simulate the graph of `module` and print its metrics. `data` binds
    tensors and collects outputs (`graph_io.GraphData`); by default step-run's
    `--input`/`--output` on the graph's loads and stores (`graph_io`)."""
    from steplus.runtime.fabric.build import LoweringError, build_program
    from steplus.runtime.fabric.engine import SimulationError
    from steplus.tools.cli import EXIT_USER_ERROR, InputError, UsageError

    cfg = _config(args, module)
    if args.explain:
        print(_explain(cfg, module))
    if args.depth is not None:
        if args.depth < 1:
            raise UsageError("--depth must be positive")
        try:
            cfg = cfg.with_(base_depth=args.depth)
        except ValueError as e:
            raise UsageError(f"--depth: {e}") from None
    if (err := apply_recorded_bindings(module)) is not None:
        print(f"{args.input_file}: error: {err}", file=sys.stderr)
        return EXIT_USER_ERROR
    kernels = _kernels(module, args.graph)
    data_io = bool(getattr(args, "input", None) or getattr(args, "output", None))
    if kernels is not None or args.orchestration:
        if data_io:
            raise UsageError("--input/--output apply to one graph; not with kernels or "
                             "--orchestration")
        return _run_kernels(args, module, cfg, kernels)
    if args.output and not args.output.endswith((".npy", ".npz")):
        raise UsageError(f"--output {args.output}: expected an .npz (or, for one output, "
                         ".npy) file")
    try:
        if data_io and data is None:
            from steplus.tools.graph_io import graph_data

            data = graph_data(args.input, module, args.graph, cfg)
        with status("step-run", f"simulating {args.graph or 'the graph'} on the fabric",
                    quiet=getattr(args, "quiet", False)):
            prog = build_program(module, cfg, functional=args.functional or data is not None,
                                 tensors=data.tensors if data is not None else None,
                                 trace=bool(args.trace), graph_name=args.graph,
                                 limits=not args.force)
            metrics = prog.run()
        if args.output and data is not None:
            from steplus.tools.graph_io import save_outputs

            save_outputs(args.output, data.collect(prog))
    except LoweringError as e:
        where = f" ('{e.op.name}')" if e.op is not None else ""
        print(f"{args.input_file}: error: {e}{where}", file=sys.stderr)
        return EXIT_USER_ERROR
    except SimulationError as e:
        print(f"{args.input_file}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    if args.trace:
        try:
            prog.write_trace(args.trace)
        except OSError as e:
            raise InputError([f"{args.trace}: error: cannot write trace: {e}"]) from None
    counted = _step_metrics_flops(module, args.graph)
    if args.json:
        d = metrics.to_dict()
        d["preset"] = cfg.name
        d["flops_step_metrics"] = counted
        print(json.dumps(d, indent=2))
    else:
        print(f"hardware               {cfg.name}")
        print(_name_flops(metrics.table(), metrics.flops, counted))
    return 0


def _step_metrics_flops(module, name: str | None) -> int | None:
    """The graph's FLOPs as `step-metrics` counts them (every `step.apply` of
    every region), or None when they are not a number (symbols left)."""
    try:
        total = compute_metrics(find_graph(module, name)).flops
    except (OpDiagnosticError, ValueError, TypeError, KeyError):
        return None
    return int(total) if getattr(total, "is_Integer", False) else None


def _name_flops(table: str, executed: int, counted: int | None) -> str:
    """The metrics table with its FLOPs line named for what the fabric counts,
    next to step-metrics' count of the same graph: the simulated PCUs fuse an
    accumulation `add(acc, matmul(a, b))` into the matmul's multiply-adds, so
    those adds cost no FLOPs there, while step-metrics counts every apply."""
    line = f"FLOPs                  {executed}"
    if counted is None or line not in table:
        return table
    named = f"FLOPs executed         {executed}"
    if counted != executed:
        named += f"   {fused_adds_note('step-metrics', counted, counted - executed)}"
    return table.replace(line, named, 1)


def _kernels(module, name: str | None):
    """The kernel graphs of the chosen source (None if it was not cut)."""
    from steplus.passes.sn40l.kernels import kernel_groups

    for group in kernel_groups(module):
        names = {g.sym_name.data for g in group} | {
            s for g in group if (s := SOURCE.get(g)) is not None}
        if name is None or name.lstrip("@") in names:
            return group if KERNEL.present(group[0]) else None
    return None


def _run_kernels(args, module, cfg, kernels) -> int:
    from steplus.passes.step.fabric_placement import LoweringError
    from steplus.runtime.fabric.engine import SimulationError
    from steplus.runtime.fabric.kernel_run import run_kernels
    from steplus.tools.cli import EXIT_USER_ERROR, UsageError

    if args.trace:
        raise UsageError("--trace applies to one graph; not with kernels or --orchestration")
    try:
        graphs = kernels if kernels is not None else [find_graph(module, args.graph)]
        res = run_kernels(graphs, cfg, args.orchestration or "none",
                          functional=args.functional, limits=not args.force)
    except (LoweringError, SimulationError, ValueError) as e:
        op = getattr(e, "op", None)
        where = f" ('{op.name}')" if op is not None else ""
        print(f"{args.input_file}: error: {e}{where}", file=sys.stderr)
        return EXIT_USER_ERROR
    if args.json:
        d = res.to_dict()
        d["preset"] = cfg.name
        d["orchestration"] = args.orchestration or "none"
        print(json.dumps(d, indent=2))
        return 0
    print(f"hardware               {cfg.name}")
    print(f"orchestration          {args.orchestration or 'none'}")
    print(f"kernels                {len(res.kernels)}")
    print(f"cycles                 {res.cycles}")
    print(f"kernel cycles          {res.kernel_cycles}")
    print(f"launch cycles          {res.launch_cycles} ({res.launch_each} per kernel)")
    print(f"off-chip traffic (B)   {res.offchip}")
    print(f"{'kernel':<24} {'cycles':>12} {'off-chip (B)':>14}")
    for k in res.kernels:
        print(f"{k.name[:24]:<24} {k.metrics.cycles:>12} {k.metrics.offchip_traffic:>14}")
    return 0


def apply_recorded_bindings(module) -> str | None:
    """Write each graph's recorded bindings (`step.bind`, e.g. from
    `step-specialize` without `rewrite`) into its stream types, as
    `step-specialize{rewrite=true}` does: the simulator needs numbers, and a
    graph whose types still name a bound symbol would run as if it were unbound.
    Returns the message of a malformed `step.bind` (None if all is well)."""
    for graph in [g for g in module.walk() if isinstance(g, GraphOp)]:
        if BIND_ATTR not in graph.attributes:
            continue
        try:
            bound = graph_bindings(graph)
            block = graph.body.block
            types = [v.type for v in block.args] + [r.type for op in block.ops for r in op.results]
            named: set[str] = set()
            for t in types:
                while isinstance(t, StreamType | BufferType):
                    named |= {s.name for d in t.dims for s in d.free_symbols
                              if isinstance(s, sympy.Symbol)}
                    t = t.element
            if named & bound.keys():
                specialize_graph(graph, {}, rewrite=True)
        except OpDiagnosticError as e:
            return f"@{graph.sym_name.data}: {e.message}"
    return None
