"""`step_dims.rename_symbols`: a renaming of dimension symbols, without re-evaluation."""

from __future__ import annotations

import sympy

from steplus.dialects.step.dims import parse_dim_text, rename_symbols


def test_renaming_gives_the_expression_written_with_the_new_names():
    b0, b1 = parse_dim_text("B_0"), parse_dim_text("B_1")
    for text in ("Min(1, B_0)", "ceil(B_0/16)", "3145728*Min(1, B_0) + 4096*B_0",
                 "-768*B_0 + 12288*ceil(B_0/16)", "max(B_0, 7) * floor(B_0/4)"):
        renamed = rename_symbols(parse_dim_text(text), {b0: b1})
        expected = parse_dim_text(text.replace("B_0", "B_1"))
        assert renamed == expected and sympy.sstr(renamed) == sympy.sstr(expected)


def test_nothing_to_rename_returns_the_expression_itself():
    e = parse_dim_text("ceil(B/16) + C")
    assert rename_symbols(e, {parse_dim_text("D"): parse_dim_text("E")}) is e


def test_ragged_symbols_rename_to_ragged_symbols():
    c, d = parse_dim_text("?C"), parse_dim_text("?D")
    assert rename_symbols(parse_dim_text("?C + 1"), {c: d}) == parse_dim_text("?D + 1")
