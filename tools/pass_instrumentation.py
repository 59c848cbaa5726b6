"""What step-opt does between passes: verify, dump the IR, time each pass.

The pipeline's callback (`PassPipeline(..., callback)`) runs before the first
pass, between passes and after the last; `PassInstrumentation.callback` verifies
the module after each pass, prints it on stderr as mlir-opt does

    // -----// IR Dump After StepInferShapesPass (step-infer-shapes) //----- //
    builtin.module { ... }

for `--mlir-print-ir-before-all` / `-after-all` / `-after-change`, and charges
the time since the previous call to the pass that just ran. `timing_report`
renders those times as mlir-opt's `--mlir-timing` report.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from steplus.tools.loading import PassTracker, verify_located

__all__ = ["PassInstrumentation", "PrinterOptions", "timing_report"]


@dataclass(frozen=True)
class PrinterOptions:
    """How IR dumps print (step-opt's output flags of the same names)."""

    generic: bool = False
    no_properties: bool = False
    debuginfo: bool = False

    def render(self, module: ModuleOp) -> str:
        out = StringIO()
        Printer(stream=out, print_generic_format=self.generic,
                print_properties_as_attributes=self.no_properties,
                print_debuginfo=self.debuginfo).print_op(module)
        out.write("\n")
        return out.getvalue()


def _title(when: str, p: ModulePass) -> str:
    return f"// -----// IR Dump {when} {type(p).__name__} ({p.name}) //----- //\n"


class PassInstrumentation:
    """The callback of a step-opt pipeline (see the module doc)."""

    def __init__(self, tracker: PassTracker, *, verify: bool = True, before_all: bool = False,
                 after_all: bool = False, after_change: bool = False,
                 printer_options: PrinterOptions = PrinterOptions(),
                 stream: IO[str] | None = None):
        self.tracker = tracker
        self.verify = verify
        self.before_all = before_all
        self.after_all = after_all
        self.after_change = after_change
        self.printer = printer_options
        self.stream = stream
        self._before: str | None = None  # the IR before the running pass (after-change)

    def _write(self, text: str) -> None:
        (self.stream or sys.stderr).write(text)

    def callback(self, previous: ModulePass | None, module: ModuleOp,
                 nxt: ModulePass | None) -> None:
        self.tracker.stop()  # charges the pass that just ran
        if previous is not None:
            if self.verify:
                self.tracker.enter("passes", "verifier (between passes)")
                verify_located(module)
                self.tracker.stop()
            if self.after_all or self.after_change:
                text = self.printer.render(module)
                if self.after_all or text != self._before:
                    self._write(_title("After", previous) + text + "\n")
        self.tracker.current = nxt
        if nxt is not None:
            if self.before_all or self.after_change:
                text = self.printer.render(module)
                self._before = text
                if self.before_all:
                    self._write(_title("Before", nxt) + text + "\n")
            self.tracker.enter("passes", f"{nxt.name}")


_RULE = "===" + "-" * 73 + "===\n"
_LABELS = {"read": "read input", "parse": "parser", "verify": "verifier (input)",
           "checks": "lus checks", "print": "output"}


def timing_report(times: dict[str, float], total: float) -> str:
    """mlir-opt's execution time report: wall time per stage and pass, in the
    order they first ran, then the rest and the total."""
    out = StringIO()
    out.write(_RULE)
    out.write(" " * 25 + "... Execution time report ...\n")
    out.write(_RULE)
    out.write(f"  Total Execution Time: {total:.4f} seconds\n\n")
    out.write("  ----Wall Time----  ----Name----\n")
    total = max(total, sum(times.values()), 1e-9)

    def row(seconds: float, name: str) -> None:
        out.write(f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}\n")

    for name, seconds in times.items():
        row(seconds, _LABELS.get(name, name))
    row(max(0.0, total - sum(times.values())), "rest")
    row(total, "Total")
    return out.getvalue()
