"""step-opt: the steplus optimizer driver, in the manner of mlir-opt / xdsl-opt.

    step-opt input.mlir -p 'step-infer-shapes,step-metrics{bind="B=64"}'
    step-opt input.mlir --print-op-generic
    step-opt invalid.mlir --split-input-file --verify-diagnostics
    step-opt --list-passes
    step-opt --gen-dialect-doc docs/dialects
    step-opt prog.lus --const N=4 --set-capacity 16   # Kind 2: free constants, set slots

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
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from io import StringIO
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.printer import Printer
from xdsl.xdsl_opt_main import xDSLOptMain

from steplus.passes.isel import saturation_progress
from steplus.tools import expected_diagnostics
from steplus.tools.cli import (
    EXIT_USAGE_ERROR,
    EXIT_USER_ERROR,
    InputError,
    UsageError,
    guarded_deep,
    parse_pass_pipeline,
)
from steplus.tools.registry import (
    get_all_dialects,
    get_all_passes,
)
from steplus.tools.loading import (
    ChunkOptions,
    Emitted,
    PassTracker,
    diag_lines,
    print_diag,
    process_chunk,
    read_input,
)
from steplus.tools.lus_translate import kind2_settings
from steplus.tools.opt_flags import add_arguments
from steplus.tools.pass_instrumentation import PassInstrumentation, PrinterOptions, timing_report
from steplus.tools.pass_options import list_passes
from steplus.tools.progress import status
from steplus.tools.source import SourceFile
from steplus.utils.source_formats import lustre_dialect_of

__all__ = ["EXIT_USAGE_ERROR", "EXIT_USER_ERROR", "InputError", "UsageError",
           "StepOptMain", "main"]

# The output targets steplus supports (xDSL's others are for its own dialects).
TARGETS = ("mlir",)
_SPLIT_MARKER = re.compile(r"^[ \t]*// -----[^\n]*$", re.MULTILINE)


class StepOptMain(xDSLOptMain):
    """xDSL's opt main with steplus's registrations and diagnostics."""

    def __init__(self, args: Sequence[str] | None = None):
        self.last_module: ModuleOp | None = None
        self._tracker = PassTracker()
        self._detail: tuple[object, str] | None = None  # (pass, what it says of itself)
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
        # step-opt's own flag list (not xDSL's): each flag does what its help
        # says. A bad command line is one `step-opt: error: ...` line (exit 2),
        # also for upstream's own checks (an unknown --target).
        arg_parser.prog = "step-opt"
        arg_parser.error = _usage_error  # type: ignore[method-assign]
        # Read by xDSL's __init__; step-opt has no such flags.
        arg_parser.set_defaults(syntax_highlight=False, shrink=False, frontend=None)
        add_arguments(arg_parser)

    def setup_pipeline(self):
        if self.args.pass_pipeline is not None and self.args.passes:
            raise UsageError("give the pipeline once: -p or --pass-pipeline, not both")
        spec = self.args.pass_pipeline if self.args.pass_pipeline is not None else self.args.passes
        self._instrument = PassInstrumentation(
            self._tracker,
            verify=not self.args.disable_verify,
            before_all=self.args.mlir_print_ir_before_all,
            after_all=self.args.mlir_print_ir_after_all or self.args.print_between_passes,
            after_change=self.args.mlir_print_ir_after_change,
            printer_options=PrinterOptions(self.args.print_op_generic,
                                           self.args.print_no_properties,
                                           self.args.print_debuginfo),
        )
        self.pipeline = parse_pass_pipeline(self.available_passes, spec,
                                            self._instrument.callback)

    # -- running ----------------------------------------------------------------

    def run(self) -> int:  # type: ignore[override]
        if self.args.list_passes:
            sys.stdout.write(list_passes(self.available_passes))
            return 0
        if self.args.gen_dialect_doc:
            return _gen_dialect_doc(self.args.gen_dialect_doc)
        started = time.perf_counter()
        try:
            with self._kind2_settings(), status("step-opt", self._stage, quiet=self.args.quiet), \
                    saturation_progress(self._pass_detail):
                return self._run_chunks()
        finally:
            if self.args.mlir_timing or self.args.time_passes:
                sys.stderr.write(timing_report(self._tracker.times,
                                               time.perf_counter() - started))

    def _kind2_settings(self) -> AbstractContextManager[None]:
        """`--const NAME=VALUE` and `--set-capacity K` for the Lustre importer,
        checked as step-run and lus-translate check them; a usage error on MLIR input."""
        args = self.args
        if args.const or args.set_capacity is not None:
            if lustre_dialect_of(args.input_file or "", args.format) is None:
                flag = "--const" if args.const else "--set-capacity"
                raise UsageError(f"{flag}: only for Lustre input (a .lus or .ept file, or "
                                 "--format lustre, lustre-v6 or heptagon)")
        return kind2_settings(args.set_capacity, args.const)

    def _pass_detail(self, text: str) -> None:
        """What the running pass says of itself (isel: its saturation iteration)."""
        self._detail = (self._tracker.current, text)

    def _stage(self) -> str:
        """What the status line says: the pass running (with what it says of
        itself, e.g. isel's saturation iteration), else the stage."""
        current = self._tracker.current
        if current is not None:
            detail = self._detail
            if detail is not None and detail[0] is current:
                return f"running {current.name}: {detail[1]}"
            return f"running {current.name}"
        return {"parse": "parsing", "verify": "verifying", "checks": "running the lus checks",
                "print": "printing"}.get(self._tracker.stage, "working")

    def _run_chunks(self) -> int:
        """Process every chunk; like mlir-opt, the chunks that succeed are
        printed even when others fail (exit 1 then)."""
        self._tracker.enter("read")
        name, text = self._read_input()
        chunks = self._split(name, text)
        self._tracker.stop()
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
            elif self.args.parsing_diagnostics and printed is None and \
                    self._tracker.stage == "parse":
                # xdsl-opt's --parsing-diagnostics: the parse error is the output.
                for sev, loc, msg in emitted:
                    out.write("\n".join(diag_lines(chunk, sev, loc, msg)) + "\n")
            else:
                for sev, loc, msg in emitted:
                    print_diag(chunk, sev, loc, msg)
                    failed = failed or sev == "error"
        for line in verify_failures:
            print(line, file=sys.stderr)
        if not verify_failures and (not failed or len(chunks) > 1):
            self._write_output(out.getvalue())
        return EXIT_USER_ERROR if failed or verify_failures else 0

    def _read_input(self) -> tuple[str, str]:
        return read_input(self.args.input_file)

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
    ) -> tuple[list[Emitted], str | None]:
        """Parse, verify, transform and print one chunk (`loading.process_chunk`)."""
        options = ChunkOptions(
            verify=not self.args.disable_verify,
            lus_checks=not self.args.no_lus_checks,
            implicit_module=not self.args.no_implicit_module,
            source_format=self.args.format,
        )
        emitted, module, printed = process_chunk(
            self.ctx, chunk, self.pipeline, options, self.available_passes, self._tracker,
            self._print if print_result else None,
        )
        if module is not None:
            self.last_module = module
        return emitted, printed


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `step-opt` console script: deeply nested inputs recurse
    deeply in the parser and printer, so it runs on `guarded_deep`'s large-stack
    thread (a RecursionError beyond that is still a located error)."""
    return guarded_deep("step-opt", lambda: StepOptMain(args=argv).run())


if __name__ == "__main__":
    sys.exit(main())
