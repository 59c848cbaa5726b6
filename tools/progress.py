"""A status line on stderr for what can run long (step-opt passes, step-run backends).

    with status("step-run", "simulating @swiglu on the fabric", quiet=args.quiet) as s:
        metrics = prog.run()
        s.set("writing the trace")

When a stage has run for `delay` seconds, a line `step-run: simulating @swiglu
on the fabric ... 12 s` appears on stderr and is redrawn every second; it is
erased when the stage ends. It shows only when stderr is a terminal and not
with `--quiet` (so pipes, files and tests see nothing). `label` may be a
callable (read at each redraw), e.g. the pass a pipeline is running.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

__all__ = ["Status", "enabled", "status"]


def enabled(quiet: bool = False, stream: IO[str] | None = None) -> bool:
    """A status line is drawn: stderr is a terminal and not `--quiet`."""
    s = stream if stream is not None else sys.stderr
    try:
        return not quiet and s.isatty()
    except (AttributeError, ValueError):
        return False


class Status:
    """The status line of one tool (see the module doc)."""

    def __init__(self, tool: str, label: str | Callable[[], str], stream: IO[str],
                 delay: float = 2.0, period: float = 1.0):
        self.tool = tool
        self.label = label
        self.stream = stream
        self.delay = delay
        self.period = period
        self.start = time.monotonic()
        self._stop = threading.Event()
        self._drawn = False
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def set(self, label: str | Callable[[], str]) -> None:
        """Name the stage now running (its clock restarts)."""
        self.label = label
        self.start = time.monotonic()

    def _text(self) -> str:
        label = self.label() if callable(self.label) else self.label
        return f"{self.tool}: {label} ... {time.monotonic() - self.start:.0f} s"

    def _loop(self) -> None:
        while not self._stop.wait(self.period if self._drawn else self.delay):
            if time.monotonic() - self.start < self.delay:
                continue
            try:
                self.stream.write("\r\033[K" + self._text())
                self.stream.flush()
                self._drawn = True
            except (OSError, ValueError):
                return

    def __enter__(self) -> Status:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._drawn:
            try:
                self.stream.write("\r\033[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


class _Off:
    """What `status` gives when no line is drawn."""

    def set(self, label: str | Callable[[], str]) -> None:
        pass


@contextmanager
def status(tool: str, label: str | Callable[[], str], quiet: bool = False,
           stream: IO[str] | None = None, delay: float = 2.0,
           period: float = 1.0) -> Iterator[Status | _Off]:
    """A `Status` while the block runs, if `enabled(quiet, stream)`."""
    s = stream if stream is not None else sys.stderr
    if not enabled(quiet, s):
        yield _Off()
        return
    with Status(tool, label, s, delay=delay, period=period) as line:
        yield line
