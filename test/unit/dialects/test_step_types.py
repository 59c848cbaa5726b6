"""Stream types: symbolic dimensions, raggedness, textual round trip."""

from __future__ import annotations

import pytest
import sympy
from xdsl.dialects.builtin import bf16, f32, i1, i64
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.types import (
    BufferType,
    RaggedSymbol,
    SelectorType,
    StreamType,
    TileType,
    TupleType,
    dim_to_text,
    is_ragged,
    is_static,
    parse_dim_text,
)
from steplus.lowering.mlir_bridge import parse_xdsl

B = sympy.Symbol("B", integer=True, nonnegative=True)


def test_dimension_kinds():
    assert parse_dim_text("224") == 224 and is_static(parse_dim_text("224"))
    assert parse_dim_text("B") == B and not is_ragged(B)
    c = parse_dim_text("?C")
    assert isinstance(c, RaggedSymbol) and is_ragged(c)
    assert parse_dim_text("ceil(B/16)") == sympy.ceiling(B / 16)


def test_raggedness_absorbs():
    expr = parse_dim_text("?C + 2*B")
    assert is_ragged(expr)
    assert not is_ragged(parse_dim_text("B_0 + B_1"))
    assert dim_to_text(expr) == "?C + 2*B"


@pytest.mark.parametrize("bad", ["2*", "-3", "1.5", "B +* 2"])
def test_bad_dimensions_are_rejected(bad):
    with pytest.raises(VerifyException):
        parse_dim_text(bad)


def test_stream_type_api():
    t = StreamType(["B", "?C", 16], TileType(64, 256, bf16))
    assert t.rank == 3
    assert t.dims[0] == B and is_ragged(t.dims[1]) and t.dims[2] == 16
    assert StreamType(["B"], i1) != StreamType(["B_0"], i1)
    assert StreamType([4], i1) == StreamType([4], i1)
    assert TileType(1, 1, i64).is_address and not TileType(1, 2, i64).is_address
    assert TileType(64, 256, bf16).bytes_per_scalar() == 2


@pytest.mark.parametrize(
    "text",
    [
        '!step.stream<[B, ?C, "ceil(B/16)"], !step.tile<?x64xf32>>',
        "!step.stream<[], !step.selector<8>>",
        "!step.stream<[4], !step.buffer<[2, 8], !step.tile<16x16xbf16>>>",
        "!step.stream<[N], !step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>>",
        '!step.stream<["?C + 1"], i1>',
    ],
)
def test_types_round_trip(text):
    module = parse_xdsl(f"func.func private @f(%x: {text})\n")
    printed = str(module)
    assert text in printed


def test_element_types():
    assert TupleType([TileType(1, 2, f32), SelectorType(3)]).elements.data[1] == SelectorType(3)
    with pytest.raises(VerifyException):
        SelectorType(0)
    with pytest.raises(VerifyException, match="element must be"):
        StreamType([4], f32)
    assert BufferType([2], TileType(4, 4, f32)).rank == 1
