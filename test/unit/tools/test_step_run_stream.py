"""step-run --stream (tools/step_run_stream.py): each value is parsed by its input's declared
type (issue 24: an i64 went through float64 when another column held a float; `1_000` and
non-ASCII digits were accepted), with errors located at the line and column of the value."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from conftest import REPO, run_tool
from steplus.tools.step_run import main

MIXED = str(REPO / "test" / "filecheck" / "tools" / "inputs" / "stream-mixed.mlir")
PREFIX = "input '{}' expects {} values, one per tick (shape [ticks{}]); "


def _stream(stdin_text: str):
    old = sys.stdin
    sys.stdin = io.StringIO(stdin_text)
    try:
        return run_tool(main, [MIXED, "--stream"])
    finally:
        sys.stdin = old


def test_an_i64_beside_a_float_is_exact():
    """2**53 + 1 and INT64_MIN come back exactly although the f32 column holds 1.5 and -inf."""
    r = _stream("9007199254740993 1.5 1 3 -4\n-9223372036854775808 -inf 0 127,-128\n")
    assert r.code == 0, r.err
    assert r.out == ("tick 0: 9007199254740993 1.5 True [ 3, -4]\n"
                     "tick 1: -9223372036854775808 -inf False [ 127, -128]\n")
    assert 9007199254740993 != int(np.float64(9007199254740993))  # what float64 would give


A = PREFIX.format("a", "i64", "")
B = PREFIX.format("b", "f32", "")
C = PREFIX.format("c", "i1", "")
D = PREFIX.format("d", "tensor<2xi8>", ", 2")


@pytest.mark.parametrize("line, error", [
    ("1_000 1 1 1 1", f"<stdin>:1:1: error: {A}'1_000' is not a number"),
    ("1 1_0.5 1 1 1", f"<stdin>:1:3: error: {B}'1_0.5' is not a number"),
    ("\u0661\u0662 1 1 1 1", f"<stdin>:1:1: error: {A}'\u0661\u0662' is not a number"),
    ("1 \uff11 1 1 1", f"<stdin>:1:3: error: {B}'\uff11' is not a number"),  # fullwidth 1
    ("1.0 1 1 1 1", f"<stdin>:1:1: error: {A}'1.0' is not an integer"),
    ("1e3 1 1 1 1", f"<stdin>:1:1: error: {A}'1e3' is not an integer"),
    ("1 0x10 1 1 1", f"<stdin>:1:3: error: {B}'0x10' is not a number"),
    ("1 infinity 1 1 1", f"<stdin>:1:3: error: {B}'infinity' is not a number"),
    ("1 1 2 1 1", f"<stdin>:1:5: error: {C}2 is not 0 or 1"),
    ("1 1 1 1 128", f"<stdin>:1:9: error: {D}128 is out of range for i8"),
    ("1 1e39 1 1 1", f"<stdin>:1:3: error: {B}1e39 is out of range for f32"),
    ("9223372036854775808 1 1 1 1", f"<stdin>:1:1: error: {A}9223372036854775808 is out of range for i64"),
    ("  1,1e-3, 1,1,  zz", f"<stdin>:1:17: error: {D}'zz' is not a number"),
    ("1 2 1 1 1\x001", f"<stdin>:1:9: error: {D}'1\\x001' is not a number"),  # shown escaped
    ("1 2\u00a01 1 1", "<stdin>:1: error: expected 5 value(s), a (1) + b (1) + c (1) + d (2); "
                        "got 4"),  # a no-break space separates nothing
    ("1 " + "9" * 500 + " 1 1 1", f"<stdin>:1:3: error: {B}a value of 500 characters is too long"),
])
def test_a_value_its_type_cannot_read_is_a_located_error(line, error):
    r = _stream("0 0 0 0 0\n" + line + "\n")
    assert r.code == 1
    assert r.out == "tick 0: 0 0. False [0, 0]\n"  # numpy prints a whole f32 as "0."
    assert r.err.strip() == error.replace("<stdin>:1:", "<stdin>:2:")


def test_reals_in_every_notation_are_read():
    r = _stream("1 -2.5e-1 1 1 1\n1 .5 1 1 1\n1 +3. 1 1 1\n1 NaN 1 1 1\n1 -INF 1 1 1\n")
    assert r.code == 0, r.err
    assert [line.split()[3] for line in r.out.splitlines()] == ["-0.25", "0.5", "3.", "nan", "-inf"]


KINDS = str(REPO / "test" / "filecheck" / "tools" / "inputs" / "stream-kinds.mlir")


def _stream_kinds(stdin_text: str):
    old = sys.stdin
    sys.stdin = io.StringIO(stdin_text)
    try:
        return run_tool(main, [KINDS, "--stream"])
    finally:
        sys.stdin = old


@pytest.mark.parametrize("line, error", [
    ("1 1 256", "input 'c' expects ui8 values, one per tick (shape [ticks]); 256 is out of range for ui8"),
    ("1 1 -1", "input 'c' expects ui8 values, one per tick (shape [ticks]); -1 is out of range for ui8"),
    ("70000 1 1", "input 'a' expects f16 values, one per tick (shape [ticks]); 70000 is out of range for f16"),
    # 2**24 + 1 is the first integer a float32 rounds (to 2**24)
    ("1 16777217 1", "input 'b' expects index values, one per tick (shape [ticks]); 16777217 cannot "
                     "be held exactly: index values run as float32 here"),
])
def test_values_are_checked_against_the_declared_type(line, error):
    r = _stream_kinds(line + "\n")
    assert r.code == 1 and r.out == ""
    col = len(line) - len(line.split()[-1]) + 1 if "'c'" in error else (1 if "'a'" in error else 3)
    assert r.err.strip() == f"<stdin>:1:{col}: error: {error}"


def test_the_whole_declared_range_is_accepted():
    """ui8 takes 0..255 (the runtime holds it as the same bits of an int8), index up to 2**24."""
    r = _stream_kinds("1.5 16777216 255\n-0.5 0 0\n")
    assert r.code == 0, r.err
    assert len(r.out.splitlines()) == 2
