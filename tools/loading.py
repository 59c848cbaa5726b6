"""Reading, parsing, verifying and transforming an input file: the library half of step-opt.

`load_module(path, pipeline)` is what every steplus tool (step-run, lus-translate,
the Python API) uses to get a checked module from a file; `step-opt` itself runs the
same `process_chunk` on each `// -----` chunk of its input and prints the result.
Diagnostics are `(severity, location, message)` triples; `diag_lines` renders one the
way mlir-opt does (`file:line:col: error: ...`, the source line, a caret).

Example::

    from steplus.tools.loading import load_module
    module = load_module("examples/step/swiglu_tm32_tn128.mlir", "step-infer-shapes")
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Input, Span

from steplus.dialects.resources import materialize_resources, reset_resources
from steplus.tools.cli import InputError, one_line, parse_pass_pipeline
from steplus.tools.registry import get_all_dialects, get_all_passes, get_default_checks
from steplus.tools.source import LocatingParser, LocationTable, SourceFile, SourceLoc
from steplus.utils.source_formats import lustre_dialect_of
from steplus.utils.diagnostics import Diagnostic, OpDiagnosticError, collecting_diagnostics
from steplus.utils.safe_files import read_regular

MAX_INPUT_BYTES = 1 << 30
"""The largest program read (a file or stdin): 1 GiB."""

Emitted = tuple[str, SourceLoc, str]
"""One diagnostic: (severity, location, message)."""


def read_input(path: str | None) -> tuple[str, str]:
    """(display name, text) of a file, or of stdin for `-`/None; `InputError` if
    unreadable or not UTF-8 (located at the first bad byte)."""
    if path is None or path == "-":
        name, data = "<stdin>", sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise InputError([f"<stdin>: error: input larger than {MAX_INPUT_BYTES} bytes"])
    else:
        name = path
        try:  # a regular file only: a FIFO would block, /dev/zero never end
            data = read_regular(path, MAX_INPUT_BYTES)
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


@dataclass(frozen=True)
class ChunkOptions:
    """How `process_chunk` treats a chunk (step-opt's flags of the same names)."""

    verify: bool = True
    lus_checks: bool = True
    implicit_module: bool = True
    source_format: str | None = None  # mlir, lustre, heptagon; None: by the file suffix


def new_context(allow_unregistered: bool = False) -> Context:
    """A context with every steplus program dialect registered (lazily)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def run_default_checks(ctx: Context, module: ModuleOp,
                       available: dict[str, Callable[[], type[ModulePass]]]) -> None:
    """The checks a dialect asks for on every input (the lus clock/causality/initialization checks)."""
    dialects = {op.dialect_name() for op in module.walk()}
    for dialect, pass_names in get_default_checks().items():
        if dialect not in dialects:
            continue
        for pass_name in pass_names:
            if pass_name in available:
                available[pass_name]()().apply(ctx, module)


class PassTracker:
    """Which pass is running (for an internal error's message), which stage of
    `process_chunk` ran last (`parse`, `verify`, `checks`, `passes`, `print`),
    and the wall time of each stage and pass (step-opt's `--mlir-timing`)."""

    def __init__(self) -> None:
        self.current: ModulePass | None = None
        self.stage = ""
        self.times: dict[str, float] = {}
        self._label = ""
        self._start = 0.0

    def enter(self, stage: str, label: str | None = None) -> None:
        """Start `stage`, timed under `label` (default: the stage's name)."""
        self.stop()
        self.stage = stage
        self._label = label if label is not None else stage
        self._start = time.perf_counter()

    def stop(self) -> None:
        """Add the time since the last `enter` to its label."""
        if self._label:
            elapsed = time.perf_counter() - self._start
            self.times[self._label] = self.times.get(self._label, 0.0) + elapsed
            self._label = ""


def process_chunk(
    ctx: Context,
    chunk: SourceFile,
    pipeline: PassPipeline,
    options: ChunkOptions,
    available: dict[str, Callable[[], type[ModulePass]]],
    tracker: PassTracker,
    print_module: Callable[[ModuleOp], str] | None = None,
    parsed: ModuleOp | None = None,
) -> tuple[list[Emitted], ModuleOp | None, str | None]:
    """Parse, verify, check, transform (and print with `print_module`) one chunk.

    `parsed`, if given, is the chunk already parsed (a copy the caller may see changed): it
    is transformed in place of parsing the text again, the text locating the diagnostics.

    Returns the diagnostics, the module (None when the chunk failed) and the printed
    program (None when it failed or `print_module` is None: tools that only want the
    module skip printing, which takes seconds for a graph specialized to a B=1024
    routing trace). No exception escapes for any input."""
    table = LocationTable(chunk, {})
    emitted: list[Emitted] = []
    tracker.current = None
    result: ModuleOp | None = None
    printed: str | None = None
    with collecting_diagnostics() as engine:
        try:
            tracker.enter("parse")
            dialect = lustre_dialect_of(chunk.name, options.source_format)
            is_lustre = dialect is not None
            if not is_lustre and parsed is None:
                check_string_literals(chunk)
            if parsed is None:
                reset_resources()  # a chunk sees only its own dialect_resources
            parser = LocatingParser(ctx, chunk)
            table.op_offsets = parser.op_offsets
            if parsed is not None:
                module = parsed
            elif is_lustre:  # Lustre source: the frontend in lowering/lustre
                from steplus.lowering.lustre import lustre_to_module

                module, table.op_offsets = lustre_to_module(chunk.text, chunk.name, dialect)
            elif is_blank(chunk.text):
                # mlir-opt accepts an empty input (xdsl-opt crashes on it).
                module = ModuleOp([])
            else:
                module = parser.parse_module(options.implicit_module)
                materialize_resources(module)  # this file's weights, not a later parse's
            attach_locations(module, table)
            if options.verify:
                tracker.enter("verify")
                verify_located(module)
            if options.lus_checks:
                tracker.enter("checks")
                run_default_checks(ctx, module, available)
            tracker.enter("passes", "")  # each pass is timed by the pipeline's callback
            pipeline.apply(ctx, module)
            result = module
            if print_module is not None:
                tracker.enter("print")
                printed = print_module(module)
            tracker.stop()
        except ParseError as e:
            emitted.append(("error", chunk.loc_of_offset(e.span.start), e.msg))
        except (OpDiagnosticError, LocatedVerifyError) as e:
            emitted.append(("error", table.loc(e.op), e.message))
            emitted += [("note", table.loc(op), msg) for op, msg in e.notes]
        except DiagnosticException as e:
            emitted.append(("error", table.loc(None), one_line(e)))
        except RecursionError:
            emitted.append(("error", table.loc(None), "input is nested too deeply to process"))
        except Exception as e:  # a bug in a pass or dialect: still no traceback
            where = f" in pass '{tracker.current.name}'" if tracker.current else ""
            emitted.append(("error", table.loc(None),
                            f"internal error{where}: {type(e).__name__}: {one_line(e)}"))
        tracker.stop()
        if emitted:
            result = printed = None
        for diag in engine.diagnostics:
            emitted.append(_convert(diag, table))
    return emitted, result, printed


def attach_locations(module: ModuleOp, table: LocationTable) -> None:
    """Give every parsed op without a `loc(...)` its `file:line:col` location (and
    each block argument its op's), so that locations survive passes that move ops
    and `--print-debuginfo` prints them."""
    starts = dict(table.op_offsets)
    starts.setdefault(module, 0)  # an implicit module starts where the chunk does
    for op, offset in starts.items():
        if not isinstance(op.location, UnknownLoc):
            continue
        where = table.source.loc_of_offset(offset)
        op.location = FileLineColLoc(StringAttr(where.name), IntAttr(where.line),
                                     IntAttr(where.col))
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if isinstance(arg.location, UnknownLoc):
                        arg.location = op.location


def load_module(
    path: str,
    pipeline: str | None = None,
    allow_unregistered: bool = False,
    source: tuple[str, str] | None = None,
    source_format: str | None = None,
    parsed: ModuleOp | None = None,
) -> ModuleOp:
    """Parse, verify and check (lus checks included) a file for other tools,
    then run `pipeline` (step-opt `-p` syntax) on it.  `source` is the
    (name, text) already read by `read_input` (stdin can be read only once).
    `parsed`: the file as an earlier `load_module` returned it (or a clone of that,
    which the pipeline changes): not parsed, verified nor checked again (step-run
    --backend ila compiles a clone of the module it runs as the reference).

    Raises `InputError` with MLIR-style diagnostic lines on failure, and
    `UsageError` for a malformed pipeline."""
    available = get_all_passes()
    tracker = PassTracker()

    def between(previous: ModulePass | None, module: ModuleOp, nxt: ModulePass | None) -> None:
        if previous is not None:
            verify_located(module)
        tracker.current = nxt

    passes = parse_pass_pipeline(available, pipeline or "", between)
    name, text = source if source is not None else read_input(path)
    chunk = SourceFile(name, text)
    options = ChunkOptions(source_format=source_format) if parsed is None else \
        ChunkOptions(verify=False, lus_checks=False, source_format=source_format)
    emitted, module, _ = process_chunk(new_context(allow_unregistered), chunk, passes, options,
                                       available, tracker, parsed=parsed)
    errors = [d for d in emitted if d[0] == "error"]
    if errors or module is None:
        raise InputError([line for sev, loc, msg in emitted
                          for line in diag_lines(chunk, sev, loc, msg)])
    for sev, loc, msg in emitted:  # warnings (a Lustre `pre` read undefined) on stderr,
        if sev == "warning" and not pipeline:  # once (step-run loads again to lower)
            print("\n".join(diag_lines(chunk, sev, loc, msg)), file=sys.stderr)
    return module


class LocatedVerifyError(Exception):
    """A verifier failure at a known operation (with notes at others)."""

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


def _verify_error(op: Operation, message: str) -> LocatedVerifyError:
    """The error for `op` failing with `message`; a redefined symbol is
    reported at its second definition, with a note at the first."""
    m = _REDEFINITION.match(message)
    defs = _symbol_definitions(op, m.group(1)) if m else []
    if len(defs) >= 2:
        return LocatedVerifyError(
            defs[1], message, [(defs[0], "see existing symbol definition here")]
        )
    return LocatedVerifyError(op, message)


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
            raise LocatedVerifyError(
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


def check_string_literals(chunk: SourceFile) -> None:
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


def is_blank(text: str) -> bool:
    """True if the text holds only white space and `//` comments."""
    return all(
        not line.strip() or line.strip().startswith("//") for line in text.split("\n")
    )


def diag_lines(chunk: SourceFile, severity: str, loc: SourceLoc, msg: str) -> list[str]:
    """`file:line:col: severity: message`, then the source line and a caret."""
    lines = [f"{loc}: {severity}: {msg}"]
    line = chunk.line_text(loc.line) if loc.name == chunk.name else None
    if line is not None and len(line) < 400:
        lines += [line, f"{' ' * (loc.col - 1)}^"]
    return lines


def print_diag(chunk: SourceFile, severity: str, loc: SourceLoc, msg: str) -> None:
    print("\n".join(diag_lines(chunk, severity, loc, msg)), file=sys.stderr)
