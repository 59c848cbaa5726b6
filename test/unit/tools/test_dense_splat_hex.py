"""A hexadecimal number in a float splat is the float's bit pattern, as MLIR reads it (torch-mlir writes
masked_fill's -inf as `dense<0xFF800000> : tensor<f32>`; xDSL 0.74 made it the number 4286578688.0, so
nanoGPT's causal mask added 4.3e9 to the masked scores).  Expected values: IEEE 754 bit patterns."""

from __future__ import annotations

import math

import pytest
from xdsl.context import Context
from xdsl.utils.exceptions import ParseError

from steplus.tools.source import LocatingParser, SourceFile


def _values(text: str):
    return LocatingParser(Context(), SourceFile("t.mlir", text)).parse_attribute().get_values()


@pytest.mark.parametrize(("text", "want"), [
    ("dense<0xFF800000> : tensor<f32>", [-math.inf]), ("dense<0x7F800000> : tensor<2xf32>", [math.inf] * 2),
    ("dense<0x3F800000> : tensor<3xf32>", [1.0] * 3), ("dense<0xBFF0000000000000> : tensor<1xf64>", [-1.0]),
    ("dense<0x3C00> : tensor<2xf16>", [1.0, 1.0]), ("dense<0x10> : tensor<2xi32>", [16, 16])])
def test_hex_splats(text, want):
    assert list(_values(text)) == want


def test_a_hex_splat_wider_than_its_float_is_an_error():
    with pytest.raises(ParseError, match="hexadecimal literal 0x1FF800000 is wider than f32"):
        _values("dense<0x1FF800000> : tensor<f32>")
