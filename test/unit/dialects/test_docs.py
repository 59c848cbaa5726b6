"""Every op documents itself, and the committed dialect pages are up to date."""

from __future__ import annotations

import pytest

from conftest import REPO
from steplus.dialects import get_all_dialects
from steplus.tools.dialect_doc import render_dialect

DIALECTS = {name: factory() for name, factory in sorted(get_all_dialects().items())}
OPS = [(d.name, op) for d in DIALECTS.values() for op in d.operations]


@pytest.mark.parametrize("dialect,op", OPS, ids=[op.name for _, op in OPS])
def test_op_has_summary_description_and_example(dialect, op):
    doc = (op.__doc__ or "").strip()
    assert doc, f"{op.name} has no docstring"
    summary = doc.splitlines()[0]
    assert summary.endswith("."), f"{op.name}: summary line should be a sentence"
    assert "```mlir" in doc or "Example: as" in doc, f"{op.name} has no MLIR example"
    assert op.name.startswith(dialect + ".")


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_committed_dialect_doc_is_current(name):
    page = REPO / "docs" / "dialects" / f"{name}.md"
    assert page.exists(), f"run: step-opt --gen-dialect-doc docs/dialects"
    assert page.read_text() == render_dialect(DIALECTS[name]), (
        f"{page} is stale; run: step-opt --gen-dialect-doc docs/dialects"
    )


def test_op_counts():
    counts = {name: len(list(d.operations)) for name, d in DIALECTS.items()}
    assert counts["lus"] == 8
    assert counts["sync"] == 9
    assert counts["step"] == 33  # + all_reduce, all_gather, regroup (issue 31)
    assert counts["ila"] == 12
