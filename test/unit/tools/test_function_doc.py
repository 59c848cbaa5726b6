"""The generated page of the step.apply library is current, and its formulas are
the library's own (issue 28 item 3)."""

from __future__ import annotations

import sympy

from conftest import REPO
from steplus.dialects.step.functions import all_families, all_functions
from steplus.tools.function_doc import render_function_library

PAGE = REPO / "docs" / "dialects" / "step-functions.md"


def test_committed_library_page_is_current():
    assert PAGE.read_text() == render_function_library(), (
        f"{PAGE} is stale; run: step-opt --gen-dialect-doc docs/dialects")


def test_every_function_and_family_has_a_row():
    text = render_function_library()
    for name in all_functions():
        assert f"| `{name}` |" in text
    for name in all_families():
        assert f"| `{name}[" in text


def test_formulas_are_the_library_flops():
    """matmul: 2mkn (reference spec §3.1); exp: 4 per element; a row_topk_softmax[k]
    row: k*cols + 7k; evaluated at numbers, the row's formula gives the library's count."""
    text = render_function_library()
    rows = {line.split("|")[1].strip(" `"): line.split("|")[3].strip()
            for line in text.splitlines() if line.startswith("| `")}
    r0, c0, c1 = sympy.symbols("R0 C0 C1", positive=True, integer=True)
    assert sympy.sympify(rows["matmul"].replace("^", "**"),
                         locals={"R0": r0, "C0": c0, "C1": c1}) == 2 * r0 * c0 * c1
    r, c, k = sympy.symbols("R C k", positive=True, integer=True)
    assert sympy.sympify(rows["exp"], locals={"R": r, "C": c}) == 4 * r * c
    got = sympy.sympify(rows["row_topk_softmax[k]"], locals={"R": r, "C": c, "k": k})
    assert got.subs({r: 16, c: 8, k: 2}) == 16 * (2 * 8 + 7 * 2)
    assert "(1 cycle)" in rows["set_offset"]
