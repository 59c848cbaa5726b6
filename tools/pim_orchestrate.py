"""pim-orchestrate: Allspark orchestration of a vision transformer on a PIM mesh.

    pim-orchestrate --model swin-b --img 640 --preset allspark-16x16
    pim-orchestrate --model vit-b --baselines --check-noc
    pim-orchestrate --model swin-t --form literal --mesh 4x4 --time-limit 30
    pim-orchestrate --model swin-b --img 640 --schedule '1x1,1x1,4x2;2x1,4x4;8x2,8x2,16x4;4x4'

Prints the schedule (temporal layers and partition schemes per stage, like the
seed's Table V), the latency split, node utilization, memory per node and
average hops on stdout.  User errors are one line ``pim-orchestrate: error:``
with exit code 1; command-line errors exit with code 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

EXIT_USER_ERROR = 1
EXIT_USAGE_ERROR = 2
PROG = "pim-orchestrate"
MAX_MESH = 64


class UsageError(Exception):
    """A bad command line (exit 2)."""


class OutputError(Exception):
    """A file named on the command line cannot be written (exit 1)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


_DECIMAL = re.compile(r"(?:[0-9]{1,12}(?:\.[0-9]{1,12})?|\.[0-9]{1,12})(?:[eE]\+?[0-9]{1,3})?")


def _number(text: str) -> float:
    # decimal ASCII digits only: float() would also take '1_0', '١٠', 'nan' and '1e-300';
    # a non-negative exponent (1e308) is a number, refused by the option's range
    if not _DECIMAL.fullmatch(text.removeprefix("-")):
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'")
    return float(text)


def _positive(text: str) -> float:
    v = _number(text)
    if not 0 < v < 1e6:
        raise argparse.ArgumentTypeError(f"expected a positive number below 1e6, got '{text}'")
    return v


def _at_most(bound: float):
    """An argparse `type`: a number in (0, bound]."""
    def parse(text: str) -> float:
        v = _number(text)
        if not 0 < v <= bound:
            raise argparse.ArgumentTypeError(f"expected a positive number at most {bound:g}, got '{text}'")
        return v
    return parse


def _image(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,5}", text):
        raise argparse.ArgumentTypeError(f"expected an integer image size, got '{text}'")
    return int(text)


def _batch(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,3}", text) or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f"expected an integer batch in [1, 256], got '{text}'")
    return int(text)


def _mesh(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"([0-9]{1,3})x([0-9]{1,3})", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected ROWSxCOLS, got '{text}'")
    r, c = int(m.group(1)), int(m.group(2))
    if not (1 <= r <= MAX_MESH and 1 <= c <= MAX_MESH):
        raise argparse.ArgumentTypeError(f"mesh sides must be in [1, {MAX_MESH}], got '{text}'")
    return r, c


def _parser(max_time_limit: float, forms: Sequence[str]) -> argparse.ArgumentParser:
    from steplus.passes.allspark.vit import MODELS
    from steplus.dialects.target.pim import PRESETS

    p = _Parser(
        prog=PROG,
        description="Partition, schedule (ILP), lay out and bind a vision transformer "
        "on a processing-in-memory mesh (Allspark).",
        epilog=f"models: {', '.join(MODELS)}\npresets: {', '.join(PRESETS)}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", help="model name, e.g. swin-b (see below); required unless --run")
    p.add_argument("--run", metavar="FILE",
                   help="simulate the lowered pim IR in FILE (step-opt -p "
                   "'pim-orchestrate,pim-lower-phases' output) instead of scheduling a model")
    p.add_argument("--img", type=_image, default=224, help="input image side (default 224)")
    p.add_argument("--preset", default="allspark-16x16", help="hardware preset (see below)")
    p.add_argument("--mesh", type=_mesh, help="override the node array, ROWSxCOLS")
    p.add_argument("--node-cap-mib", type=_positive, help="override the memory per node (MiB)")
    p.add_argument("--time-limit", type=_at_most(max_time_limit), default=60.0,
                   help=f"ILP solver time limit in seconds (default 60, at most "
                   f"{max_time_limit:g})")
    p.add_argument("--form", choices=forms, default="compact",
                   help="ILP formulation (literal: the seed's eqs. 1-12, small instances; "
                   "cpsat: the compact form solved by OR-Tools CP-SAT instead of HiGHS)")
    p.add_argument("--schedule", metavar="TEXT",
                   help="evaluate this schedule instead of solving: GxM[:branches] per "
                   "temporal layer, ',' between layers, ';' between stages (the seed's "
                   "Table V: '1x1,1x1,4x2;2x1,4x4;8x2,8x2,16x4;4x4')")
    p.add_argument("--ignore-memory", action="store_true",
                   help="with --schedule: evaluate even if it breaks constraint 5 (memory)")
    p.add_argument("--batch", type=_batch, default=1,
                   help="inputs per inference, eq. 12's N_bt (default 1, at most 256)")
    p.add_argument("--no-reuse", action="store_true",
                   help="schedule without weight reuse across temporal layers (Table VI)")
    p.add_argument("--no-sharing", action="store_true",
                   help="schedule without weight sharing inside a sub-array (Table VI)")
    p.add_argument("--baselines", action="store_true",
                   help="also evaluate the B, P and AH partitionings and print speedups")
    p.add_argument("--simulate", action="store_true",
                   help="lower the schedule to per-node phase programs (pim-lower-phases) and "
                   "run them on the NoC simulator, incl. the local-global interaction; with "
                   "--baselines the baselines' schedules are simulated too")
    p.add_argument("--emit-mlir", metavar="FILE",
                   help="write the schedule as pim IR (lowered with --simulate) to FILE")
    p.add_argument("--check-noc", action="store_true",
                   help="replay the schedule's NoC traffic on the link-level mesh simulator")
    return p


def _hardware(args: argparse.Namespace):
    from steplus.dialects.target.pim import MIB, preset, with_overrides

    hw = preset(args.preset)
    changes: dict[str, object] = {}
    if args.mesh:
        changes["rows"], changes["cols"] = args.mesh
    if args.node_cap_mib:
        changes["node_cap_bytes"] = int(args.node_cap_mib * MIB)
    return with_overrides(hw, **changes) if changes else hw


def _report(res, out) -> None:
    from steplus.dialects.target.pim import MIB

    hw = res.hw
    print(f"model {res.model.name} img {res.model.img}x{res.model.img} on "
          f"{hw.name} ({hw.rows}x{hw.cols} nodes, {hw.node_cap_bytes / MIB:g} MiB/node)", file=out)
    if res.status == "given":
        print("schedule: given on the command line (not solved)", file=out)
    else:
        print(f"solver: {res.status}, gap {100 * res.gap:.2f}%, {res.solver_seconds:.3f} s",
              file=out)
    print("stage  branches  blocks  layers  schemes [g,m]:branches      reuse  util   hops"
          "  hops-raster", file=out)
    for s in res.stages:
        schemes = ", ".join(f"{lay.scheme.label}:{lay.branches}" for lay in s.layers)
        print(f"{s.index:>5}  {s.branches:>8}  {s.blocks:>6}  {len(s.layers):>6}  {schemes:<28}"
              f"  {'yes' if s.reuse else 'no':<5}  {s.utilization:5.3f}  {s.hops_greedy:5.2f}"
              f"  {s.hops_raster:5.2f}", file=out)
    split = res.split_ms()
    if res.batch > 1:
        print(f"batch of {res.batch}: {res.per_image_ms:.4f} ms per image", file=out)
    print(f"latency {res.latency_ms:.4f} ms = compute {split['compute']:.4f} + transfer "
          f"{split['transfer']:.4f} + weight sharing {split['sharing']:.4f}", file=out)
    print(f"utilization {res.utilization:.3f}", file=out)
    for case, mem in res.memory.items():
        ok = "fits" if mem.total <= hw.node_cap_bytes else "exceeds"
        print(f"memory/node {case}: weights {mem.weights / MIB:.2f} MiB + workspace "
              f"{mem.workspace / MIB:.2f} MiB = {mem.total / MIB:.2f} MiB ({ok})", file=out)
    e = sum(res.energy_pj.values()) / 1e9
    print(f"noc {res.noc_bytes / MIB:.1f} MiB, dram {res.dram_bytes / MIB:.1f} MiB, "
          f"energy {e:.3f} mJ", file=out)


def _as_ir(res, args: argparse.Namespace, out) -> None:
    """The schedule as a pim.model (pim-orchestrate's IR), lowered and simulated on request;
    with ``--run`` (``res`` None) the lowered IR of a file, simulated."""
    from steplus.runtime.pim.program import module_text, run_file, simulation_lines

    if res is None:
        for line in run_file(args.run):
            print(line, file=out)
        return

    module, lines = simulation_lines(res, args.preset, bool(args.mesh), args.node_cap_mib,
                                     args.baselines, args.simulate)
    for line in lines:
        print(line, file=out)
    if args.emit_mlir:
        try:
            with open(args.emit_mlir, "w") as f:
                f.write(module_text(module))
        except OSError as e:
            raise OutputError(f"--emit-mlir {args.emit_mlir}: {e.strerror or e}") from None


def _run(argv: Sequence[str] | None) -> int:
    from steplus.passes.allspark.orchestrate import (
        ILP_FORMS,
        MAX_TIME_LIMIT,
        given_schedule,
        orchestrate,
    )

    args = _parser(MAX_TIME_LIMIT, ILP_FORMS).parse_args(argv)
    if args.run is not None:
        _as_ir(None, args, sys.stdout)
        return 0
    if args.model is None:
        raise UsageError("the following arguments are required: --model (or --run FILE)")
    hw = _hardware(args)
    if args.schedule is not None:
        res = given_schedule(args.model, args.img, hw, args.schedule,
                             check_memory=not args.ignore_memory, batch=args.batch)
    else:
        res = orchestrate(args.model, args.img, hw, args.time_limit, args.form,
                          reuse=not args.no_reuse, sharing=not args.no_sharing,
                          batch=args.batch)
    out = sys.stdout
    _report(res, out)
    if args.schedule is None and (args.no_reuse or args.no_sharing):
        off = " and ".join(x for x, on in (("weight reuse", args.no_reuse),
                                           ("weight sharing", args.no_sharing)) if on)
        print(f"note: scheduled without {off}; the latency above is for that schedule",
              file=out)
    if res.status == "time-limit":
        print(f"note: the solver stopped at the time limit; best schedule shown, "
              f"gap {100 * res.gap:.2f}%", file=out)
    if args.baselines:
        from steplus.passes.allspark.baselines import baseline_lines

        for line in baseline_lines(res, hw, args.batch):
            print(line, file=out)
    if args.simulate or args.emit_mlir:
        _as_ir(res, args, out)
    if args.check_noc:
        from steplus.runtime.pim.noc import check_schedule

        c = check_schedule(res)
        print(f"noc simulation: {c.simulated} cycles vs analytical {c.analytical} "
              f"({100 * c.deviation:+.2f}%), contention stalls {c.wait_cycles}, "
              f"max messages per link {c.max_link_messages}", file=out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pim-orchestrate`` console script."""
    try:
        from steplus.passes.allspark.vit import WorkloadError
        from steplus.dialects.target.pim import PimConfigError
        from steplus.passes.allspark.ilp_compact import ScheduleError

        try:
            return _run(argv)
        except (WorkloadError, PimConfigError, ScheduleError, OutputError) as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return EXIT_USER_ERROR
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE_ERROR
    except SystemExit as e:  # --help
        return int(e.code or 0) if isinstance(e.code, int) else 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`)
        from steplus.tools.cli import EXIT_BROKEN_PIPE, silence_stdout

        silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as e:  # no traceback reaches the user
        print(f"{PROG}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
