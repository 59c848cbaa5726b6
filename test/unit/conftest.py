"""Shared pytest helpers for the steplus unit tests."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

def pytest_configure(config):
    """The suite compiles IREE modules through the cache of runtime/iree_cache.py:
    keep it in one fresh directory per run (shared by the run's tests, so a
    module compiles once), never in the user's ~/.cache."""
    import os
    import tempfile

    if "STEPLUS_CACHE_DIR" not in os.environ:
        config._steplus_cache = tempfile.mkdtemp(prefix="steplus-test-cache-")
        os.environ["STEPLUS_CACHE_DIR"] = config._steplus_cache


def pytest_unconfigure(config):
    import os
    import shutil

    cache = getattr(config, "_steplus_cache", None)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
        os.environ.pop("STEPLUS_CACHE_DIR", None)


# The tools raise the recursion limit for deeply nested inputs; do it once here
# so hypothesis does not see it change during a test.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))


@dataclass
class ToolResult:
    code: int
    out: str
    err: str


def run_tool(main, argv: list[str]) -> ToolResult:
    """Run a console-script `main(argv)` in-process, capturing its output."""
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        code = main(argv)
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
    finally:
        sys.stdout, sys.stderr = old_out, old_err
    return ToolResult(code, out, err)


@pytest.fixture
def step_opt():
    """Call step-opt in-process: `step_opt([args...]) -> ToolResult`."""
    from steplus.tools.step_opt import main

    return lambda argv: run_tool(main, argv)
