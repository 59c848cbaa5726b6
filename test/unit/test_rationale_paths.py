"""docs/rationale cites files that exist (issue 25 §5).

A rationale page backs each claim with the module that implements it; a path
that no longer exists (a module moved, renamed or deleted) makes the claim
uncheckable. Every file a page names must exist:

- a path with a folder (`passes/step/fabric_placement.py`, `test/filecheck/
  dialects/*/invalid.mlir`) relative to the repository root (a glob must match);
- a bare file name (`engine.py`) somewhere in the repository;
- a Markdown link (`[x](../guide/isel.md)`) relative to the page;
- `seeds/...` and `spec/...`, the project's shared seed papers and specs, which
  live outside the repository (docs/rationale/README.md says so), in the shared
  folder beside it when it is there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted((REPO / "docs" / "rationale").glob("*.md"))
SHARED = REPO.parent / "shared"
_EXT = r"(?:py|md|mlir|lus|ept|json|toml|lark|txt|cfg|csv|npy|npz|sh)"
_TICKED = re.compile(r"`([A-Za-z0-9_.*/-]+\." + _EXT + r")`")
_FOLDER = re.compile(r"`([A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*/)`")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_SKIP_DIRS = {"__pycache__", "node_modules", "build", "Output"}


def _repo_names() -> set[str]:
    names: set[str] = set()
    for _root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        names.update(files)
    return names


def cited(text: str) -> list[tuple[str, str]]:
    """(kind, path) of every file or folder `text` names: 'path', 'name', 'link', 'shared'."""
    out: list[tuple[str, str]] = []
    for m in _TICKED.finditer(text):
        p = m.group(1)
        if p.startswith(("seeds/", "spec/")):
            out.append(("shared", p))
        elif "/" in p:
            out.append(("path", p))
        else:
            out.append(("name", p))
    out += [("path", m.group(1)) for m in _FOLDER.finditer(text)
            if not m.group(1).startswith(("seeds/", "spec/"))]
    out += [("link", m.group(1)) for m in _LINK.finditer(text)
            if not re.match(r"[a-z]+:", m.group(1))]
    return out


def missing(page: Path, names: set[str]) -> list[str]:
    bad = []
    for kind, p in cited(page.read_text(encoding="utf-8")):
        if kind == "path":
            ok = any(REPO.glob(p)) if "*" in p else (REPO / p).exists()
        elif kind == "name":
            ok = p in names
        elif kind == "link":
            ok = (page.parent / p).exists()
        else:  # shared seeds/specs: outside the repository
            ok = not SHARED.is_dir() or (SHARED / p).exists()
        if not ok:
            bad.append(f"{kind} {p}")
    return bad


def test_there_are_rationale_pages():
    assert {p.name for p in PAGES} >= {"README.md", "step.md", "lus.md", "ila.md"}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_cited_file_exists(page):
    assert not missing(page, _repo_names()), f"{page.name} cites what does not exist"


def test_the_check_sees_a_stale_citation(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("See `lowering/fabric_config.py`, `engine.py`, `nowhere.py`, `runtime/nope/`, "
                    "[guide](../guide/none.md) and `passes/step/fabric_placement.py`.\n")
    names = {"engine.py"}
    assert missing(page, names) == ["path lowering/fabric_config.py", "name nowhere.py",
                                    "path runtime/nope/", "link ../guide/none.md"]
