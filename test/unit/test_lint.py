"""ruff and basedpyright (basic) are clean on the installed package folders.

Configuration lives in ruff.toml and pyrightconfig.json at the repository root,
so `ruff check <folders>` and `basedpyright` run by hand see the same thing.
Each check is skipped (with the reason) only when its tool is not installed:
both are pinned in the `test` extra.

basedpyright resolves `steplus.*` through the link tree `.pyright/steplus/`
(one symlink per top-level folder): the editable install maps `steplus.X` to the
folder `X` with an import hook, which a static checker cannot follow.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TARGETS = ["dialects", "passes", "lowering", "runtime", "tools", "utils", "examples/workloads"]


def _tool(name: str) -> str:
    """The venv's console script `name`, else one on PATH; skip if none."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_ruff_clean():
    ruff = _tool("ruff")
    proc = subprocess.run(
        [ruff, "check", "--no-cache", "--output-format", "concise", *TARGETS],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pyright_link_tree_covers_every_package():
    """`.pyright/steplus/<top>` points at `<top>/` for every top-level folder
    the package maps; a new one needs its symlink too, or pyright reports
    every import of it as missing."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir = pyproject["tool"]["setuptools"]["package-dir"]
    for package, folder in package_dir.items():
        linked = REPO / ".pyright" / Path(*package.split("."))
        assert linked.resolve() == (REPO / folder).resolve(), (package, folder)


def test_basedpyright_clean():
    pyright = _tool("basedpyright")
    proc = subprocess.run(
        [pyright, "--outputjson", "--pythonpath", sys.executable],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"basedpyright gave no report (exit {proc.returncode}):\n"
                    f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    summary = report["summary"]
    # It checked the package, not an empty include list.
    assert summary["filesAnalyzed"] >= 150, summary
    problems = [
        f"{d['file'].removeprefix(str(REPO) + '/')}:{d['range']['start']['line'] + 1}: "
        f"{d['severity']}: {d['message'].splitlines()[0]} ({d.get('rule', '')})"
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert not problems, f"{len(problems)} basedpyright problems:\n" + "\n".join(problems)
    assert proc.returncode == 0, proc.stderr
