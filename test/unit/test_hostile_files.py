"""Hostile program files (HARDEN-4): step-opt, step-run and lus-translate read the
program as a regular file of at most 1 GiB (or stdin, as bounded): a FIFO blocked
and /dev/zero read until the process was killed."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from conftest import run_tool
from steplus.tools import loading
from steplus.tools.lus_translate import main as lus_translate
from steplus.tools.step_opt import main as step_opt
from steplus.tools.step_run import main as step_run

TOOLS = {
    "step-opt": (step_opt, []),
    "step-run": (step_run, []),
    "step-run-lustre": (step_run, ["--format", "lustre"]),
    "lus-translate": (lus_translate, ["--import-lustre"]),
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "folder"])
def test_program_that_is_no_regular_file_is_refused_at_once(tool: str, kind: str,
                                                            tmp_path: Path):
    path = {"/dev/zero": "/dev/zero", "folder": str(tmp_path)}.get(kind)
    if path is None:
        path = str(tmp_path / "prog.lus")
        os.mkfifo(path)
    main, flags = TOOLS[tool]
    r = run_tool(main, [*flags, path])
    assert r.code == 1
    assert r.err.strip() == f"{path}: error: cannot read input file: not a regular file"


def test_stdin_past_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(loading, "MAX_INPUT_BYTES", 16)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b" " * 17)))
    with pytest.raises(loading.InputError) as info:
        loading.read_input("-")
    assert info.value.lines == ["<stdin>: error: input larger than 16 bytes"]


def test_a_regular_program_still_reads(tmp_path: Path):
    prog = tmp_path / "f.lus"
    prog.write_text("node f(x: int) returns (y: int);\nlet y = x; tel\n")
    r = run_tool(lus_translate, ["--import-lustre", str(prog)])
    assert r.code == 0, r.err
    assert "lus.node @f(%x: i32) -> (i32)" in r.out
