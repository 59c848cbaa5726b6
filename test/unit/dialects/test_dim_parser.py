"""The stream-dimension parser: a whitelist grammar, never Python evaluation.

Hostile texts (code injection, resource exhaustion) are rejected with a
`DimError` (a `VerifyException` and a `ValueError`) through the Python API and
with a located error (exit 1) through step-opt; every valid form and every
text the printer produces parses to the expected sympy expression.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import f32
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.dims import (
    MAX_DIM_LITERAL,
    DimError,
    RaggedSymbol,
    as_dim,
    parse_dim_text,
)
from steplus.dialects.step.builder import FrontendError, Graph
from steplus.dialects.step.types import StreamType, TileType, dim_to_text

A, B, C, N = (sympy.Symbol(n, integer=True, nonnegative=True) for n in "ABCN")
B_0, B_1 = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("B_0", "B_1"))
RC = RaggedSymbol("C", integer=True, nonnegative=True)

VALID = [
    ("224", sympy.Integer(224)),
    ("B", B),
    ("?C", RC),
    ("ceil(B/16)", sympy.ceiling(B / 16)),
    ("ceiling(B_0/16)", sympy.ceiling(B_0 / 16)),
    ("B_0 + B_1", B_0 + B_1),
    ("2*N", 2 * N),
    ("?C + 1", RC + 1),
    ("?C + 2*B", RC + 2 * B),
    ("max(A, B)", sympy.Max(A, B)),
    ("Min(1, B_0)", sympy.Min(1, B_0)),
    ("B // 4", sympy.floor(B / 4)),
    ("floor(B/4)", sympy.floor(B / 4)),
    ("mod(B, 4)", sympy.Mod(B, 4)),
    ("B % 4", sympy.Mod(B, 4)),
    ("-N + 16", 16 - N),
    ("B/16", B / 16),
    ("B**2", B * B),
    ("(B + C)*(B - C)", (B + C) * (B - C)),
    ("+B", B),
    ("  B  ", B),
    ("9223372036854775807", sympy.Integer(2**63 - 1)),
]


@pytest.mark.parametrize("text,expected", VALID, ids=[t for t, _ in VALID])
def test_valid_forms(text, expected):
    assert parse_dim_text(text) == expected


PRINTED = [
    sympy.ceiling(B_0 / 16) + sympy.ceiling(B_1 / 16),
    sympy.Max(A, B, C),
    sympy.Min(1, B_0),
    sympy.Mod(B, 4),
    sympy.floor(B / 4),
    -N + 16 - B,
    3 * B / 4,
    B**2 * C,
    1 / B,
    RC + 2 * B,
    sympy.ceiling(RC / 32),
]


@pytest.mark.parametrize("expr", PRINTED, ids=[sympy.sstr(e) for e in PRINTED])
def test_printed_form_round_trips(expr):
    text = dim_to_text(expr)
    assert parse_dim_text(text) == expr
    assert dim_to_text(parse_dim_text(text)) == text


REJECTED = [
    ("__import__('os').system('touch pwned')", "names starting with '__' are reserved"),
    ("().__class__.__bases__[0].__subclasses__()", "names starting with '__' are reserved"),
    ("(lambda: 3)()", "'lambda' is not allowed"),
    ("9**9**9**9", "the exponent of '**' must be an integer literal of at most 16"),
    ("B**17", "the exponent of '**' must be an integer literal of at most 16"),
    ("(B**2)**2", "nested powers are not allowed"),
    ("B.real", "attribute access ('.') is not allowed"),
    ("x[0]", "subscripting ('[]') is not allowed"),
    ("'a'", "only integer literals are allowed, got 'a'"),
    ("1.5", "only integer literals are allowed, got 1.5"),
    ("True", "only integer literals are allowed, got True"),
    ("B if C else A", "'if'/'else' is not allowed"),
    ("B < C", "a comparison is not allowed"),
    ("B ^ C", "operator '^' is not allowed"),
    ("exp(B)", "unknown function 'exp'; allowed: Max, Min, Mod, ceil, ceiling, floor, max, min, "
     "mod"),
    ("ceil(B, C)", "ceil() takes 1 argument(s), got 2"),
    ("ceil(x=B)", "ceil() takes positional arguments only"),
    ("ceil", "'ceil' is a function, not a symbol"),
    ("ceil(B/0)", "division by zero"),
    ("B // (C - C)", "division by zero"),
    ("mod(B, 0)", "mod by zero"),
    ("B % 0", "mod by zero"),
    ("0**-1", "division by zero"),
    ("B?C", "syntax error (invalid syntax)"),
    ("2*", "syntax error (invalid syntax)"),
    ("B\n+ 1", "only printable ASCII characters are allowed"),
    ("\u00e9", "only printable ASCII characters are allowed"),
    ("__ragged_C", "names starting with '__' are reserved"),
    ("99999999999999999999", "integer literal larger than 2**63 - 1"),
    ("max(" + ", ".join(f"B{i}" for i in range(17)) + ")",
     "max() takes 1 to 16 argument(s), got 17"),
    ("+".join(f"max({', '.join(f'B{i}_{k}' for i in range(16))})" for k in range(3)),
     "too many min/max arguments"),
    ("B + " * 3000 + "B", "longer than 8192 characters"),
    ("x" * 100_000, "longer than 8192 characters"),
    ("+".join(["B"] * 2100), "more than 2048 terms"),
    ("(" * 500 + "B" + ")" * 500, "syntax error (too many nested parentheses)"),
    ("ceil(" * 70 + "B" + ")" * 70, "nested more than 64 levels deep"),
    ("-" * 100 + "B", "nested more than 64 levels deep"),
]


@pytest.mark.parametrize("text,reason", REJECTED, ids=[t[:40] for t, _ in REJECTED])
def test_hostile_text_is_rejected(text, reason):
    with pytest.raises(DimError) as info:
        parse_dim_text(text)
    msg = str(info.value)
    assert msg.startswith("invalid stream dimension '") and msg.endswith(f": {reason}")
    assert isinstance(info.value, VerifyException) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", ["-3", "3/2", "9223372036854775808", "ceil(B) - ceil(B) - 1"])
def test_constant_dimension_must_be_a_non_negative_int64(text):
    with pytest.raises(DimError, match=r"must be a non-negative integer \(at most 2\*\*63 - 1\)"):
        parse_dim_text(text)


def test_as_dim():
    assert as_dim(7) == 7 and isinstance(as_dim(np.int32(7)), sympy.Integer)
    assert as_dim("ceil(B/16)") == sympy.ceiling(B / 16)
    assert as_dim(B + 1) == B + 1
    assert as_dim(MAX_DIM_LITERAL) == 2**63 - 1
    for bad in (True, 1.5, [3], None, object()):
        with pytest.raises(DimError, match="a stream dimension must be an int, a string or a "
                                           "sympy expression"):
            as_dim(bad)
    for bad in (-1, 2**63):
        with pytest.raises(DimError, match="must be a non-negative integer"):
            as_dim(bad)


def test_stream_type_rejects_hostile_dims():
    with pytest.raises(VerifyException, match="'lambda' is not allowed"):
        StreamType(["(lambda: 3)()"], TileType(1, 64, f32))


def test_frontend_rejects_hostile_dims():
    """The builder reports the argument (ValueError for bad text, TypeError
    for a value of the wrong kind) with the parser's reason."""
    g = Graph("g")
    with pytest.raises((ValueError, FrontendError), match="names starting with '__' are reserved"):
        g.load(tile=(16, 64), dtype=f32, out_shape=["__import__('os').getcwd()", 1], name="x")
    with pytest.raises((TypeError, FrontendError), match="a stream dimension must be an int"):
        g.load(tile=(16, 64), dtype=f32, out_shape=[1.5, 1], name="x")


HOSTILE_FILE = """step.graph @g {{
^bb0(%x: !step.stream<[{dim}], !step.tile<1x64xf32>>):
  step.consume %x : !step.stream<[{dim}], !step.tile<1x64xf32>>
}}
"""


@pytest.mark.parametrize("dim,reason", [
    ('"__import__(\'os\').system(\'touch {marker}\')"', "names starting with '__' are reserved"),
    ('"9**9**9**9"', "the exponent of '**' must be an integer literal of at most 16"),
    ('"' + "B+" * 50_000 + 'B"', "longer than 8192 characters"),
    ('"' + "(" * 500 + "B" + ")" * 500 + '"', "syntax error (too many nested parentheses)"),
])
def test_step_opt_reports_hostile_dims_located(tmp_path, dim, reason):
    """In a subprocess (a hang or a crash fails it): located error on the
    type's line, exit 1, no side effect."""
    marker = tmp_path / "pwned"
    src = tmp_path / "hostile.mlir"
    src.write_text(HOSTILE_FILE.format(dim=dim.replace("{marker}", str(marker))))
    run = subprocess.run([sys.executable, "-m", "steplus.tools.step_opt", str(src)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith(f"{src}:2:10: error: invalid stream dimension '")
    assert first.endswith(f": {reason}")
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert not marker.exists()


def test_to_expr_takes_numbers_and_expressions_never_text():
    """The passes convert computed quantities with `to_expr`, not `sympy.sympify`:
    text (which sympify would evaluate as Python) is a TypeError."""
    from fractions import Fraction

    import numpy as np
    import sympy

    from steplus.dialects.step.dims import to_expr

    b = sympy.Symbol("B")
    assert to_expr(b / 16) == b / 16
    assert to_expr(7) == sympy.Integer(7) and to_expr(np.int64(7)) == sympy.Integer(7)
    assert to_expr(Fraction(1, 3)) == sympy.Rational(1, 3)
    assert to_expr(0.5) == sympy.Float(0.5)
    for text in ("B", "__import__('os').system('true')", b"1", True):
        with pytest.raises(TypeError):
            to_expr(text)
