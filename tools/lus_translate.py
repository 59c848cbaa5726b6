"""lus-translate: translate other languages to the lus dialect (like mlir-translate).

    lus-translate --import-lustre prog.lus            # lus dialect on stdout
    lus-translate --import-lustre prog.lus -o prog.mlir
    lus-translate --import-lustre - < prog.lus        # from stdin

The Lustre source is parsed, lowered to `lus.node`s, verified and checked
(lus clock analysis, causality, initialization; `--no-lus-checks` skips the
checks). Every error is reported at the Lustre source, as
`prog.lus:line:col: error: message` followed by the line and a caret (exit 1);
a bad command line is one line `lus-translate: error: ...` (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError

from steplus.utils.diagnostics import OpDiagnosticError
from steplus.tools.cli import ArgumentParser, InputError, UsageError, decimal_int, guarded_deep
from steplus.tools.source import LocationTable, SourceFile, SourceLoc
from steplus.tools.loading import MAX_INPUT_BYTES, LocatedVerifyError, verify_located
from steplus.utils.safe_files import read_regular

_TOOL = "lus-translate"


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog=_TOOL, description="translate programs to the lus dialect")
    p.add_argument("input_file", nargs="?", default="-", help="the source file ('-': stdin)")
    p.add_argument("--import-lustre", action="store_true",
                   help="import Lustre (V6 / Heptagon / Kind 2 core) source")
    p.add_argument("-o", "--output", help="write the lus program to this file")
    p.add_argument("--no-lus-checks", action="store_true",
                   help="do not run the lus clock/causality/initialization checks")
    p.add_argument("--print-op-generic", action="store_true",
                   help="print the operations in their generic form")
    add_kind2_arguments(p)
    return p


def add_kind2_arguments(p: argparse.ArgumentParser | argparse._ArgumentGroup,
                        prefix: str = "") -> None:
    """`--set-capacity K` and `--const NAME=VALUE` (lus-translate, step-opt; their
    values are checked by `kind2_settings`). `prefix` starts the help texts."""
    p.add_argument("--set-capacity", type=decimal_int, default=None, metavar="K",
                   help=f"{prefix}slots of a Kind 2 set or map value (1 to 64, default 8)")
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                   help=f"{prefix}the value of a Kind 2 free constant ('const N: int;'), "
                        "e.g. one that sizes an array; repeat per constant")


def kind2_settings(set_capacity: int | None,
                   consts: Sequence[str] | None) -> AbstractContextManager[None]:
    """The Lustre importer's Kind 2 settings of `--set-capacity K` and `--const
    NAME=VALUE`: `with kind2_settings(8, ["N=4"]): ...`. A bad value is a
    `UsageError` naming the flag, raised here (before the `with`)."""
    from steplus.lowering.lustre import free_consts, sets

    try:
        slots = sets.capacity(set_capacity)
    except ValueError as e:
        raise UsageError(f"--set-capacity: {e}") from None
    try:
        values = free_consts.bound(consts)
    except ValueError as e:
        raise UsageError(f"--const: {e}") from None
    return _both(slots, values)


@contextmanager
def _both(slots: AbstractContextManager[None],
          values: AbstractContextManager[None]) -> Iterator[None]:
    with slots, values:
        yield


def _read(path: str) -> SourceFile:
    name = "<stdin>" if path == "-" else path
    try:  # as step-opt reads it: a regular file or stdin, at most MAX_INPUT_BYTES
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1) if path == "-" else \
            read_regular(path, MAX_INPUT_BYTES)
    except OSError as e:
        raise InputError([f"{path}: error: cannot read input file: {e.strerror}"]) from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError([f"{name}: error: input larger than {MAX_INPUT_BYTES} bytes"])
    try:
        return SourceFile(name, data.decode("utf-8"))
    except UnicodeDecodeError as e:
        loc = SourceFile(name, data[: e.start].decode("utf-8", "replace")).loc_of_offset(e.start)
        raise InputError([f"{loc}: error: input is not valid UTF-8"]) from None


def _diag(source: SourceFile, severity: str, loc: SourceLoc, msg: str) -> list[str]:
    lines = [f"{loc}: {severity}: {msg}"]
    text = source.line_text(loc.line)
    if text is not None and len(text) < 400:
        lines += [text, " " * (loc.col - 1) + "^"]
    return lines


def run_checks(module: ModuleOp) -> None:
    """Verify a lus module and run the default lus checks (raise on error)."""
    from steplus.tools.registry import get_all_passes, get_default_checks

    verify_located(module)
    passes = get_all_passes()
    for name in get_default_checks().get("lus", ()):
        passes[name]()().apply(Context(), module)


def translate(source: SourceFile, checks: bool = True) -> ModuleOp:
    """Import Lustre source; raise `InputError` with located diagnostics."""
    from steplus.lowering.lustre import lustre_to_module

    try:
        module, offsets = lustre_to_module(source.text, source.name)
    except ParseError as e:
        loc = source.loc_of_offset(e.span.start)
        raise InputError(_diag(source, "error", loc, e.msg)) from None
    table = LocationTable(source, offsets)
    try:
        if checks:
            run_checks(module)
    except OpDiagnosticError as e:
        lines = _diag(source, "error", table.loc(e.op), e.message)
        for op, note in e.notes:
            lines += _diag(source, "note", table.loc(op), note)
        raise InputError(lines) from None
    except LocatedVerifyError as e:
        raise InputError(_diag(source, "error", table.loc(e.op), e.message)) from None
    return module


def _run(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if not args.import_lustre:
        raise UsageError("choose a translation: --import-lustre")
    with kind2_settings(args.set_capacity, args.const):
        module = translate(_read(args.input_file), not args.no_lus_checks)
    out = StringIO()
    Printer(stream=out, print_generic_format=args.print_op_generic).print_op(module)
    text = out.getvalue() + "\n"
    if args.output:
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as e:
            raise InputError([f"{args.output}: error: cannot write output: {e.strerror}"]) from None
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `lus-translate` console script."""
    return guarded_deep(_TOOL, lambda: _run(argv))  # deep nesting: a large stack


if __name__ == "__main__":
    sys.exit(main())
