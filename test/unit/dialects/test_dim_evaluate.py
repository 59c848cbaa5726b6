"""The integer fast paths of the shape code (issue 32 item 2) give what sympy gives.

`dims.evaluate_bound` replaces `expr.xreplace(values)` in `step-specialize` when
every symbol of a dimension is bound; `StreamType(dims, element)` shares the
parameters of an equal type built before instead of verifying them again.
"""

from __future__ import annotations

import random

import pytest
import sympy
from xdsl.dialects.builtin import f32
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.dims import dim_symbol, evaluate_bound, parse_dim_text
from steplus.dialects.step.types import StreamType, TileType

TEXTS = ["B", "ceil(B/16)", "B_0 + B_1", "2*N", "max(B, 4) + min(C, 3)", "mod(B, 4)",
         "B // 3", "(B+1)**2", "ceil(B/16)*16 - B", "max(min(B, C), 2*D)",
         "floor((B*3)/7) + ceil(C/5)", "?C + 1", "max(B_0, B_1, B_2) * 4"]


@pytest.mark.parametrize("text", TEXTS)
def test_evaluate_bound_is_the_substituted_integer(text):
    expr = parse_dim_text(text)
    rng = random.Random(text)
    for _ in range(40):
        values = {s: rng.randint(0, 300) for s in expr.free_symbols}
        expected = expr.xreplace({s: sympy.Integer(v) for s, v in values.items()})
        assert expected.is_Integer
        assert evaluate_bound(expr, values) == int(expected)


def test_evaluate_bound_refuses_what_is_not_a_bound_integer():
    b = dim_symbol("B")
    assert evaluate_bound(parse_dim_text("B + C"), {b: 3}) is None  # C unbound
    assert evaluate_bound(parse_dim_text("B/3"), {b: 4}) is None  # 4/3
    assert evaluate_bound(parse_dim_text("B/3"), {b: 6}) == 2
    assert evaluate_bound(sympy.sin(b), {b: 0}) is None  # not a dimension's node


def test_equal_stream_types_share_their_parameters():
    tile = TileType(16, 64, f32)
    a = StreamType(["B", 4, parse_dim_text("ceil(B/16)")], tile)
    b = StreamType([dim_symbol("B"), "4", "ceiling(B/16)"], tile)
    assert a == b and hash(a) == hash(b)
    assert a.shape is b.shape and a.dims == b.dims
    with pytest.raises(VerifyException):
        StreamType(["B"], f32)  # an invalid element is still refused, every time
    with pytest.raises(VerifyException):
        StreamType(["B"], f32)
