"""Hostile literals in Lustre source: located errors, never a conversion
that runs away (`int()` of thousands of digits) or a silent infinity."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith

from steplus.tools.cli import InputError
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile


def _first_error(src: str) -> str:
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.lus", src))
    return info.value.lines[0]


INT_PREFIX = "node n(x: int) returns (y: int); let y = x + "
REAL_PREFIX = "node n(x: real) returns (y: real); let y = x + "


def test_huge_integer_literal_is_located():
    src = INT_PREFIX + "9" * 5000 + "; tel"
    col = len(INT_PREFIX) + 1  # the literal's first character
    assert _first_error(src) == f"t.lus:1:{col}: error: integer literal of 5000 digits is too large"


def test_integer_literal_out_of_int_range_is_located():
    src = INT_PREFIX + "3000000000; tel"
    assert _first_error(src) == (f"t.lus:1:{len(INT_PREFIX) + 1}: error: integer literal 3000000000 does not fit "
                                 "in int (32-bit)")


@pytest.mark.parametrize("lit", ["1e999", "3.5e38"])
def test_real_literal_beyond_f32_is_located(lit):
    src = REAL_PREFIX + lit + "; tel"
    assert _first_error(src) == (f"t.lus:1:{len(REAL_PREFIX) + 1}: error: real literal {lit} does not fit in real "
                                 "(32-bit float)")


def test_largest_f32_literal_is_accepted():
    module = translate(SourceFile("t.lus", "node n(x: real) returns (y: real); "
                                           "let y = x + 3.4e38; tel"))
    consts = [op.value.value.data for op in module.walk() if isinstance(op, arith.ConstantOp)]
    assert consts == [pytest.approx(3.4e38, rel=1e-7)]
