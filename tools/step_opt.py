"""step-opt: the steplus optimizer driver, in the manner of mlir-opt / xdsl-opt.

    step-opt input.mlir -p 'step-infer-shapes,step-metrics{bind="B=64"}'
    step-opt input.mlir --print-op-generic
    step-opt invalid.mlir --split-input-file --verify-diagnostics
    step-opt --list-passes
    step-opt --gen-dialect-doc docs/dialects

It registers the steplus dialects (step, lus, sync, ...) plus the upstream
dialects programs mix in (builtin, func, arith, math, scf, cf, memref, tensor,
linalg, tosa) and every steplus pass.  Every user error is reported as
`file:line:col: error: message` (exit 1) or as a one-line usage error (exit 2);
no Python traceback reaches the user.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from collections.abc import Sequence
from io import StringIO
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Input, Span
from xdsl.xdsl_opt_main import xDSLOptMain

from steplus.dialects.resources import materialize_resources
from steplus.utils.diagnostics import (
    Diagnostic,
    OpDiagnosticError,
    collecting_diagnostics,
)
from steplus.tools import expected_diagnostics
from steplus.tools.cli import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_USAGE_ERROR,
    EXIT_USER_ERROR,
    InputError,
    UsageError,
    guarded,
    one_line,
    parse_pass_pipeline,
    silence_stdout,
)
from steplus.tools.registry import (
    get_all_dialects,
    get_all_passes,
    get_default_checks,
)
from steplus.tools.source import LocatingParser, LocationTable, SourceFile, SourceLoc

__all__ = ["EXIT_USAGE_ERROR", "EXIT_USER_ERROR", "InputError", "UsageError",
           "StepOptMain", "load_module", "main", "verify_located"]

# The output targets steplus supports (xDSL's others are for its own dialects).
TARGETS = ("mlir",)
_SPLIT_MARKER = re.compile(r"^[ \t]*// -----[^\n]*$", re.MULTILINE)


class StepOptMain(xDSLOptMain):
    """xDSL's opt main with steplus's registrations and diagnostics."""

    def __init__(self, args: Sequence[str] | None = None):
        self.last_module: ModuleOp | None = None
        self.current_pass: ModulePass | None = None
        post_init = Attribute.__post_init__
        try:
            super().__init__(description="steplus modular optimizer driver", args=args)
        finally:
            # Upstream's --disable-verify turns attribute verification off for
            # the whole process; step-opt's only skips the verifier between
            # passes (and in-process callers must not inherit it).
            Attribute.__post_init__ = post_init  # type: ignore[method-assign]

    # -- registration -----------------------------------------------------------

    def register_all_dialects(self):
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        from xdsl.targets import get_all_targets

        targets = get_all_targets()
        for name in TARGETS:
            self.available_targets[name] = targets[name]

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        # A bad command line is one `step-opt: error: ...` line (exit 2), also
        # for upstream's own checks (an unknown --target).
        arg_parser.prog = "step-opt"
        arg_parser.error = _usage_error  # type: ignore[method-assign]
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--list-passes",
            action="store_true",
            help="list the available passes with their summaries and options",
        )
        arg_parser.add_argument(
            "--gen-dialect-doc",
            metavar="DIR",
            help="write one markdown page per steplus dialect into DIR",
        )
        arg_parser.add_argument(
            "--no-lus-checks",
            action="store_true",
            help="do not run the lus clock/causality/initialization checks on input",
        )

    def setup_pipeline(self):
        def verify_between(
            previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None
        ) -> None:
            if previous is not None and not self.args.disable_verify:
                self._verify(module)
            self.current_pass = _next

        self.pipeline = parse_pass_pipeline(
            self.available_passes, self.args.passes, verify_between
        )

    # -- running ----------------------------------------------------------------

    def run(self) -> int:  # type: ignore[override]
        if self.args.list_passes:
            sys.stdout.write(list_passes(self.available_passes))
            return 0
        if self.args.gen_dialect_doc:
            return _gen_dialect_doc(self.args.gen_dialect_doc)

        name, text = self._read_input()
        chunks = self._split(name, text)
        out = StringIO()
        failed = False
        verify_failures: list[str] = []
        for i, chunk in enumerate(chunks):
            if i > 0:
                out.write("// -----\n")
            emitted, printed = self._process_chunk(chunk)
            if printed is not None:
                out.write(printed)
            if self.args.verify_diagnostics:
                expected = expected_diagnostics.parse_annotations(
                    chunk.text, chunk.line_offset
                )
                verify_failures += expected_diagnostics.annotation_errors(
                    chunk.text, chunk.line_offset, chunk.name
                )
                verify_failures += expected_diagnostics.check(
                    expected,
                    [
                        expected_diagnostics.Emitted(sev, loc.line, loc.col, msg)
                        for sev, loc, msg in emitted
                    ],
                    chunk.name,
                )
            else:
                for sev, loc, msg in emitted:
                    _print_diag(chunk, sev, loc, msg)
                    failed = failed or sev == "error"
        if verify_failures:
            for line in verify_failures:
                print(line, file=sys.stderr)
            return EXIT_USER_ERROR
        if failed:
            return EXIT_USER_ERROR
        self._write_output(out.getvalue())
        return 0

    def _read_input(self) -> tuple[str, str]:
        path = self.args.input_file
        if path is None or path == "-":
            name, data = "<stdin>", sys.stdin.buffer.read()
        else:
            name = path
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise InputError(
                    [f"{path}: error: cannot read input file: {e.strerror}"]
                ) from None
        try:
            return name, data.decode("utf-8")
        except UnicodeDecodeError as e:
            prefix = data[: e.start].decode("utf-8", errors="replace")
            line = prefix.count("\n") + 1
            col = len(prefix) - (prefix.rfind("\n") + 1) + 1
            raise InputError(
                [
                    f"{name}:{line}:{col}: error: input is not valid UTF-8 "
                    f"(byte 0x{data[e.start]:02x})"
                ]
            ) from None

    def _split(self, name: str, text: str) -> list[SourceFile]:
        if not self.args.split_input_file:
            return [SourceFile(name, text)]
        chunks: list[SourceFile] = []
        start, line_offset = 0, 0
        for m in _SPLIT_MARKER.finditer(text):
            piece = text[start : m.start()]
            chunks.append(SourceFile(name, piece, line_offset))
            line_offset += piece.count("\n") + text[m.start() : m.end()].count("\n")
            start = m.end()
        chunks.append(SourceFile(name, text[start:], line_offset))
        return chunks

    def _process_chunk(
        self, chunk: SourceFile, print_result: bool = True
    ) -> tuple[list[tuple[str, SourceLoc, str]], str | None]:
        """Parse, verify, transform and print one chunk.

        Returns the diagnostics (severity, location, message) and the printed
        program, or None when the chunk failed (or `print_result` is False:
        tools that only want `last_module` skip printing, which takes seconds
        for a graph specialized to a B=1024 routing trace)."""
        table = LocationTable(chunk, {})
        emitted: list[tuple[str, SourceLoc, str]] = []
        self.current_pass = None
        with collecting_diagnostics() as engine:
            try:
                is_lustre = chunk.name.endswith(".lus")
                if not is_lustre:
                    _check_string_literals(chunk)
                parser = LocatingParser(self.ctx, chunk)
                table.op_offsets = parser.op_offsets
                if is_lustre:  # Lustre source: the frontend in lowering/lustre
                    from steplus.lowering.lustre import lustre_to_module

                    module, table.op_offsets = lustre_to_module(chunk.text, chunk.name)
                elif _is_blank(chunk.text):
                    # mlir-opt accepts an empty input (xdsl-opt crashes on it).
                    module = ModuleOp([])
                else:
                    module = parser.parse_module(not self.args.no_implicit_module)
                    materialize_resources(module)  # this file's weights, not a later parse's
                if not self.args.disable_verify:
                    self._verify(module)
                if not self.args.no_lus_checks:
                    self._run_default_checks(module)
                self.pipeline.apply(self.ctx, module)
                self.last_module = module
                printed = self._print(module) if print_result else None
            except ParseError as e:
                emitted.append(("error", chunk.loc_of_offset(e.span.start), e.msg))
                printed = None
            except OpDiagnosticError as e:
                emitted.append(("error", table.loc(e.op), e.message))
                emitted += [("note", table.loc(op), msg) for op, msg in e.notes]
                printed = None
            except _LocatedVerifyError as e:
                emitted.append(("error", table.loc(e.op), e.message))
                emitted += [("note", table.loc(op), msg) for op, msg in e.notes]
                printed = None
            except DiagnosticException as e:
                emitted.append(("error", table.loc(None), one_line(e)))
                printed = None
            except RecursionError:
                emitted.append(
                    ("error", table.loc(None), "input is nested too deeply to process")
                )
                printed = None
            except Exception as e:  # a bug in a pass or dialect: still no traceback
                where = f" in pass '{self.current_pass.name}'" if self.current_pass else ""
                emitted.append(
                    (
                        "error",
                        table.loc(None),
                        f"internal error{where}: {type(e).__name__}: {one_line(e)}",
                    )
                )
                printed = None
            for diag in engine.diagnostics:
                emitted.append(_convert(diag, table))
        return emitted, printed

    def _run_default_checks(self, module: ModuleOp) -> None:
        dialects = {op.dialect_name() for op in module.walk()}
        for dialect, pass_names in get_default_checks().items():
            if dialect not in dialects:
                continue
            for pass_name in pass_names:
                if pass_name in self.available_passes:
                    self.available_passes[pass_name]()().apply(self.ctx, module)

    def _verify(self, module: ModuleOp) -> None:
        verify_located(module)

    def _print(self, module: ModuleOp) -> str:
        if self.args.target != "mlir":
            return self.output_resulting_program(module)
        out = StringIO()
        printer = Printer(
            stream=out,
            print_generic_format=self.args.print_op_generic,
            print_properties_as_attributes=self.args.print_no_properties,
            print_debuginfo=self.args.print_debuginfo,
        )
        printer.print_op(module)
        out.write("\n")
        return out.getvalue()

    def _write_output(self, text: str) -> None:
        if self.args.output_file:
            try:
                with open(self.args.output_file, "w") as f:
                    f.write(text)
            except OSError as e:
                raise InputError(
                    [f"{self.args.output_file}: error: cannot write output: {e.strerror}"]
                ) from None
        else:
            sys.stdout.write(text)


def _usage_error(message: str) -> NoReturn:
    raise UsageError(message)


def read_source(path: str) -> tuple[str, str]:
    """(display name, text) of a file, or of stdin for `-` (InputError if unreadable)."""
    return StepOptMain(args=["--", path])._read_input()


def load_module(
    path: str,
    pipeline: str | None = None,
    allow_unregistered: bool = False,
    source: tuple[str, str] | None = None,
) -> ModuleOp:
    """Parse, verify and check (lus checks included) a file for other tools,
    then run `pipeline` (step-opt `-p` syntax) on it.  `source` is the
    (name, text) already read by `read_source` (stdin can be read only once).

    Raises `InputError` with MLIR-style diagnostic lines on failure, and
    `UsageError` for a malformed pipeline."""
    argv = [] if pipeline is None else [f"--passes={pipeline}"]
    if allow_unregistered:
        argv.append("--allow-unregistered-dialect")
    main = StepOptMain(args=[*argv, "--", path])
    name, text = source if source is not None else main._read_input()
    chunk = SourceFile(name, text)
    emitted, _ = main._process_chunk(chunk, print_result=False)
    errors = [d for d in emitted if d[0] == "error"]
    if errors or main.last_module is None:
        raise InputError([text for sev, loc, msg in emitted
                          for text in _diag_lines(chunk, sev, loc, msg)])
    return main.last_module


class _LocatedVerifyError(Exception):
    def __init__(
        self,
        op: Operation,
        message: str,
        notes: Sequence[tuple[Operation, str]] = (),
    ):
        super().__init__(message)
        self.op = op
        self.message = message
        self.notes = list(notes)


_REDEFINITION = re.compile(r'^Redefinition of symbol "(.*)"$')


def _symbol_definitions(table: Operation, name: str) -> list[Operation]:
    """The ops directly in symbol table `table` that define `@name`."""
    found: list[Operation] = []
    for region in table.regions:
        for block in region.blocks:
            for op in block.ops:
                sym = op.get_attr_or_prop("sym_name")
                if isinstance(sym, StringAttr) and sym.data == name:
                    found.append(op)
    return found


def _verify_error(op: Operation, message: str) -> _LocatedVerifyError:
    """The error for `op` failing with `message`; a redefined symbol is
    reported at its second definition, with a note at the first."""
    m = _REDEFINITION.match(message)
    defs = _symbol_definitions(op, m.group(1)) if m else []
    if len(defs) >= 2:
        return _LocatedVerifyError(
            defs[1], message, [(defs[0], "see existing symbol definition here")]
        )
    return _LocatedVerifyError(op, message)


def verify_located(module: Operation) -> None:
    """Verify `module`, innermost operations first, raising an error that names
    the first operation that fails (so it can be reported at its location)."""

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    visit(child)
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            raise _verify_error(op, one_line(e)) from None
        except (ValueError, TypeError, AssertionError, KeyError, IndexError) as e:
            raise _LocatedVerifyError(
                op, f"'{op.name}' is malformed: {one_line(e)}"
            ) from None

    visit(module)


def _convert(diag: Diagnostic, table: LocationTable) -> tuple[str, SourceLoc, str]:
    return (diag.severity, table.loc(diag.op), diag.message)


try:  # possessive quantifiers (Python >= 3.11): the match never backtracks
    _CLOSED_LINE = re.compile(r'(?:[^"/]++|/(?!/)|"(?:[^"\\]++|\\.)*+")*+(?://.*)?')
except re.error:  # one character per step: still linear
    _CLOSED_LINE = re.compile(r'(?:[^"/]|/(?!/)|"(?:[^"\\]|\\.)*")*(?://.*)?')
"""A line whose string literals are all closed (outside a `//` comment)."""


def _check_string_literals(chunk: SourceFile) -> None:
    """Reject a string literal that is not closed on its line, as MLIR does.

    xDSL's lexer accepts newlines in strings and, on an unterminated literal
    followed by more quotes, backtracks for minutes; checking first keeps
    step-opt fast on such inputs. A regex checks each line holding a quote;
    only a failing line is scanned for where its literal starts."""
    for index, line in enumerate(chunk.text.split("\n")):
        if '"' not in line or _CLOSED_LINE.fullmatch(line):
            continue
        i, start = 0, -1
        while i < len(line):
            ch = line[i]
            if start < 0:
                if line.startswith("//", i):
                    break
                if ch == '"':
                    start = i
            elif ch == "\\":
                i += 1
            elif ch == '"':
                start = -1
            i += 1
        if start >= 0:
            pos = _line_start(chunk.text, index) + start
            raise ParseError(
                Span(pos, pos + 1, Input(chunk.text, chunk.name)),
                "string literal is not closed on its line",
            )


def _line_start(text: str, index: int) -> int:
    pos = 0
    for _ in range(index):
        pos = text.index("\n", pos) + 1
    return pos


def _is_blank(text: str) -> bool:
    """True if the text holds only white space and `//` comments."""
    return all(
        not line.strip() or line.strip().startswith("//") for line in text.split("\n")
    )


def _diag_lines(chunk: SourceFile, severity: str, loc: SourceLoc, msg: str) -> list[str]:
    """`file:line:col: severity: message`, then the source line and a caret."""
    lines = [f"{loc}: {severity}: {msg}"]
    line = chunk.line_text(loc.line) if loc.name == chunk.name else None
    if line is not None and len(line) < 400:
        lines += [line, f"{' ' * (loc.col - 1)}^"]
    return lines


def _print_diag(chunk: SourceFile, severity: str, loc: SourceLoc, msg: str) -> None:
    print("\n".join(_diag_lines(chunk, severity, loc, msg)), file=sys.stderr)


def list_passes(passes: dict) -> str:
    """The `--list-passes` text: name, summary and options of every pass."""
    from xdsl.passes import get_pass_option_infos

    out = StringIO()
    out.write(f"Available passes ({len(passes)}):\n")
    for name in sorted(passes):
        try:
            cls = passes[name]()
        except Exception as e:
            out.write(f"{name}\n    (unavailable: {one_line(e)})\n")
            continue
        doc = (cls.__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else "(no summary)"
        out.write(f"{name}\n    {summary}\n")
        for info in get_pass_option_infos(cls):
            default = f" = {info.default_value}" if info.default_value else ""
            kind = info.expected_type.strip("'\"")
            # What users type: xDSL's pipeline parser maps dashes to underscores.
            out.write(f"    --{info.name.replace('_', '-')}: {kind}{default}\n")
    return out.getvalue()


def _gen_dialect_doc(directory: str) -> int:
    """`--gen-dialect-doc DIR`: write the dialect pages, one usage error on failure."""
    from steplus.tools.dialect_doc import write_dialect_docs

    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"--gen-dialect-doc: '{directory}' is not a directory")
    try:
        paths = write_dialect_docs(directory)
    except OSError as e:
        raise UsageError(
            f"--gen-dialect-doc: cannot write into '{directory}': {e.strerror or e}"
        ) from None
    for path in paths:
        print(f"wrote {path}")
    return 0


def _main(argv: Sequence[str] | None, result: list[int], err: IO[str]) -> None:
    result.append(guarded("step-opt", lambda: StepOptMain(args=argv).run(), err))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `step-opt` console script."""
    # Deeply nested inputs recurse deeply in the parser and printer: run on a
    # thread with a large stack and a high recursion limit, and still catch
    # RecursionError beyond that.  The thread is a daemon so that Ctrl-C,
    # which interrupts the main thread's join, ends the tool at once.
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    threading.stack_size(512 * 1024 * 1024)
    result: list[int] = []
    err = sys.stderr
    worker = threading.Thread(target=_main, args=(argv, result, err), daemon=True)
    try:
        worker.start()
        worker.join()
        sys.stdout.flush()
    except KeyboardInterrupt:
        # The worker may hold a stream lock (e.g. blocked reading stdin): end
        # the process now rather than let interpreter shutdown wait for it.
        print("step-opt: interrupted", file=err)
        err.flush()
        os._exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    return result[0] if result else EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
