"""The command line of step-opt: every flag, with help that says what it does.

step-opt follows mlir-opt's spellings (`--pass-pipeline`, `--mlir-print-ir-*`,
`--mlir-timing`) and keeps xDSL's where xdsl-opt users type them (`-p`,
`--print-between-passes`, `--time-passes`):

    step-opt g.mlir --pass-pipeline='builtin.module(step-infer-shapes,step-metrics)'
    step-opt g.mlir -p step-infer-shapes --mlir-print-ir-after-change --mlir-timing
    step-opt --version
    step-opt prog.lus --const N=4 --set-capacity 16

IR goes to stdout (or `-o`); IR dumps, timing reports and diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from steplus.tools.lus_translate import add_kind2_arguments
from steplus.utils.source_formats import FORMATS

__all__ = ["add_arguments", "version_text"]


def version_text() -> str:
    """`step-opt (steplus 0.1.0) on xDSL 0.74.0`."""

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "unknown version"

    return f"step-opt (steplus {of('steplus')}) on xDSL {of('xdsl')}"


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Register step-opt's flags on `p` (dests as xDSL's opt main reads them)."""
    p.add_argument("input_file", nargs="?",
                   help="the input (.mlir, or .lus Lustre / .ept Heptagon source); stdin if "
                        "absent or '-'")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="read the input as MLIR, Lustre as Kind 2 reads it, Lustre V6 "
                        "(lustre-v6: an unguarded pre read in its first cycle is an error) or "
                        "Heptagon (default: by its suffix; stdin is MLIR)")
    p.add_argument("-o", "--output-file", metavar="FILE",
                   help="write the output IR to FILE instead of stdout")
    p.add_argument("-t", "--target", default="mlir",
                   help="output format. Available targets are: mlir")
    p.add_argument("-v", "--version", action=_VersionAction,
                   help="print the steplus and xDSL versions and exit")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no status line (on a terminal, a stage or pass running for more "
                        "than 2 s shows one on stderr: its name and the seconds elapsed)")

    g = p.add_argument_group("pass pipeline")
    g.add_argument("-p", "--passes", default="", metavar="PIPELINE",
                   help="the passes to run, 'a,b{opt=1}' or 'builtin.module(a,b{opt=1})' "
                        "(--list-passes shows them and their options)")
    g.add_argument("--pass-pipeline", default=None, metavar="PIPELINE",
                   help="mlir-opt's spelling: 'builtin.module(a,b{opt=1})' (a plain "
                        "'a,b' list is accepted too)")
    g.add_argument("--list-passes", action="store_true",
                   help="list the passes with their summaries and options (type, default, "
                        "allowed values, meaning) and exit")
    g.add_argument("--mlir-print-ir-before-all", action="store_true",
                   help="print the IR before each pass (on stderr)")
    g.add_argument("--mlir-print-ir-after-all", action="store_true",
                   help="print the IR after each pass (on stderr)")
    g.add_argument("--mlir-print-ir-after-change", action="store_true",
                   help="print the IR after each pass that changed it (on stderr)")
    g.add_argument("--print-between-passes", action="store_true",
                   help="xdsl-opt's spelling of --mlir-print-ir-after-all")
    g.add_argument("--mlir-timing", action="store_true",
                   help="print the wall time of parsing, verification, each pass and "
                        "printing (on stderr)")
    g.add_argument("--time-passes", action="store_true",
                   help="xdsl-opt's spelling of --mlir-timing")
    g.add_argument("--disable-verify", action="store_true",
                   help="do not run the verifier on the input and between passes")

    g = p.add_argument_group("input")
    g.add_argument("--split-input-file", action="store_true",
                   help="process each chunk between '// -----' lines on its own; print the "
                        "chunks that succeed and report the others (exit 1 if any fails)")
    g.add_argument("--verify-diagnostics", action="store_true",
                   help="check the diagnostics against the input's '// expected-error "
                        "{{...}}' (-warning, -remark, -note) annotations instead of printing "
                        "them; exit 0 if every one is matched and nothing else is reported")
    g.add_argument("--parsing-diagnostics", action="store_true",
                   help="as xdsl-opt: a chunk that does not parse prints its parse error on "
                        "stdout in place of its IR, and does not fail the run (exit 0)")
    g.add_argument("--allow-unregistered-dialect", action="store_true",
                   help="accept operations of dialects step-opt does not know")
    g.add_argument("--no-implicit-module", action="store_true",
                   help="require the input to be one builtin.module (no implicit "
                        "top-level module)")
    g.add_argument("--no-lus-checks", action="store_true",
                   help="do not run the lus clock/causality/initialization checks on input")

    g = p.add_argument_group("Lustre input (Kind 2; a usage error on MLIR input)")
    add_kind2_arguments(g)

    g = p.add_argument_group("output")
    g.add_argument("--print-op-generic", action="store_true",
                   help="print operations in the generic form (parses in real MLIR)")
    g.add_argument("--print-no-properties", action="store_true",
                   help="print properties as attributes (the form of older MLIR)")
    g.add_argument("--print-debuginfo", action="store_true",
                   help="print each operation's source location, loc(\"file\":line:col)")
    g.add_argument("--gen-dialect-doc", metavar="DIR",
                   help="write one markdown page per steplus dialect, and the step.apply "
                        "function library page, into DIR and exit")
