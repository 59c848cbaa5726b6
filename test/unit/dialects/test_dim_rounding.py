"""`ceil`/`floor`/`//` of a rational times one symbol: the parser evaluates it once per
(rational, kind of symbol) and renames the result; it must equal sympy's own evaluation
of the same expression written with that symbol, whatever the name."""

from __future__ import annotations

import pytest
import sympy

from steplus.dialects.step.dims import DimError, RaggedSymbol, parse_dim_text

# (text with {s} for the symbol, sympy's expression of the symbol)
CASES = [
    ("ceil({s}/16)", lambda s: sympy.ceiling(s / 16)),
    ("ceiling({s}/64)", lambda s: sympy.ceiling(s / 64)),
    ("floor({s}/4)", lambda s: sympy.floor(s / 4)),
    ("{s}//8", lambda s: sympy.floor(s / 8)),
    ("ceil(3*{s}/4)", lambda s: sympy.ceiling(3 * s / 4)),
    ("ceil(-{s}/2)", lambda s: sympy.ceiling(-s / 2)),
    ("floor(-5*{s}/3)", lambda s: sympy.floor(-5 * s / 3)),
    ("ceil(2*{s})", lambda s: 2 * s),  # an integer: no ceiling left
    ("floor(-{s})", lambda s: -s),
    ("ceil({s}/16) + {s}", lambda s: sympy.ceiling(s / 16) + s),
    ("7*floor({s}/16) - ceil({s}/16)", lambda s: 7 * sympy.floor(s / 16) - sympy.ceiling(s / 16)),
]


def test_rounding_equals_sympys_evaluation_for_each_name_and_kind():
    for name in ("B", "B_0", "Zed", "a1"):  # later names reuse the first one's evaluation
        for ragged in (False, True):
            cls = RaggedSymbol if ragged else sympy.Symbol
            sym = cls(name, integer=True, nonnegative=True)
            for text, build in CASES:
                got = parse_dim_text(text.format(s=("?" if ragged else "") + name))
                want = build(sym)
                assert got == want, (text, name, ragged)
                assert sympy.sstr(got) == sympy.sstr(want)
                assert got.free_symbols == {sym}


def test_the_stand_in_symbol_is_not_a_name_a_user_can_write():
    with pytest.raises(DimError, match="reserved"):
        parse_dim_text("ceil(__dim/16)")


def test_ragged_stays_ragged_after_rounding():
    d = parse_dim_text("ceil(?C/16)")
    assert any(isinstance(s, RaggedSymbol) for s in d.free_symbols)
    d = parse_dim_text("ceil(C/16)")
    assert not any(isinstance(s, RaggedSymbol) for s in d.free_symbols)
