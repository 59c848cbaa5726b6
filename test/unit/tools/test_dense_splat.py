"""Splat `dense<v>` literals (dialects/resources.parse_dense_splat, used by step-opt's parser):
small ones parse exactly as xDSL's own parser parses them, huge ones stay one element, a type
past the resource limit is a located error; and the hook uses xDSL's public parser API only."""

from __future__ import annotations

import ast
import inspect

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from steplus.dialects import resources
from steplus.tools.source import LocatingParser, SourceFile


def _ours(text: str):
    return LocatingParser(Context(), SourceFile("t.mlir", text)).parse_attribute()


@pytest.mark.parametrize("text", [
    "dense<1.5> : tensor<3xf32>", "dense<-2> : tensor<2x2xi8>", "dense<true> : tensor<4xi1>",
    "dense<7> : tensor<3xindex>", 'dense<"0x0000803F"> : tensor<2xf32>', "dense<1> : tensor<2xf64>",
    "dense<2.5e-3> : vector<4xf16>", "dense<[1, 2]> : tensor<2xi32>", "dense<1.0> : tensor<2xbf16>",
    'dense<"0x0000803F00000040"> : tensor<2xf32>'])
def test_small_literals_parse_as_xdsl_parses_them(text):
    assert _ours(text) == Parser(Context(), text).parse_attribute()


def test_a_huge_splat_stays_one_element():
    attr = _ours("dense<2.0> : tensor<1000x1000x100xf32>")  # 400 MB if expanded
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    assert attr.data.data == b"\x00\x00\x00\x40"  # 2.0f, little-endian


def test_a_type_past_the_limit_is_a_located_error():
    with pytest.raises(ParseError, match=r"(?s)t.mlir:1:6\n.*needs 40000000000 bytes, more than the limit of 2147483648"):
        _ours("dense<1.0> : tensor<100000x100000xf32>")


def test_an_integer_type_refuses_a_float_splat():
    with pytest.raises(ParseError, match="expected an integer literal for i32, got 1.5"):
        _ours("dense<1.5> : tensor<4000000xi32>")


def test_only_public_parser_api():
    tree = ast.parse(inspect.getsource(resources.parse_dense_splat))
    private = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr.startswith("_")}
    assert private == set()
