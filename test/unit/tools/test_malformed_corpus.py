"""A corpus of broken inputs: each must give a located diagnostic and exit 1.

No input may produce a Python traceback, an internal error, or a hang.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

DIAG = re.compile(r"^(?P<file>[^\n]+):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")

VALID = """func.func @f(%a: i32, %t: tensor<4xf32>) -> i32 {
  %c1 = arith.constant 1 : i32
  %b = arith.addi %a, %c1 : i32
  %r = scf.if %true -> (i32) {
    scf.yield %b : i32
  } else {
    scf.yield %a : i32
  }
  func.return %r : i32
}
"""

CASES: dict[str, bytes] = {
    "unknown-op": b"func.func @f() {\n  foo.bar\n  func.return\n}\n",
    "unknown-dialect-generic": b'"nope.op"() : () -> ()\n',
    "unregistered-type": b"func.func @f(%a: !nope.t) {\n  func.return\n}\n",
    "wrong-result-type": b"func.func @f(%a: i32) -> i64 {\n  func.return %a : i32\n}\n",
    "wrong-operand-type": b"func.func @f(%a: i32) {\n  %b = arith.addi %a, %a : i64\n  func.return\n}\n",
    "undefined-value": b"func.func @f() -> i32 {\n  func.return %x : i32\n}\n",
    "redefined-value": b"func.func @f(%a: i32) {\n  %a = arith.constant 1 : i32\n  func.return\n}\n",
    "missing-terminator": b"func.func @f() -> i32 {\n  %c = arith.constant 1 : i32\n}\n",
    "bad-attribute": b"func.func @f() {\n  %c = arith.constant #nope<1> : i32\n  func.return\n}\n",
    "bad-attribute-dict": b'"func.return"() {x = } : () -> ()\n',
    "bad-type-syntax": b"func.func @f(%a: tensor<4x?xf32) {\n  func.return\n}\n",
    "mismatched-brace": b"func.func @f() {\n  func.return\n",
    "extra-brace": b"func.func @f() {\n  func.return\n}\n}\n",
    "stray-token": b"func.func @f() {\n  func.return\n}\n)\n",
    "bad-ssa-name": b"func.func @f() {\n  % = arith.constant 1 : i32\n  func.return\n}\n",
    "bad-symbol": b"func.func @ () {\n  func.return\n}\n",
    "result-count-mismatch": b"func.func @f() {\n  %a, %b = arith.constant 1 : i32\n  func.return\n}\n",
    "huge-integer-constant": b"func.func @f() {\n  %c = arith.constant 999999999999999999999999999999 : i8\n  func.return\n}\n",
    "huge-integer-i64": b"func.func @f() {\n  %c = arith.constant 123456789012345678901234567890 : i64\n  func.return\n}\n",
    "huge-negative-integer": b"func.func @f() {\n  %c = arith.constant -99999999999999999999999 : i32\n  func.return\n}\n",
    "negative-tensor-dim": b"func.func @f(%a: tensor<-3xf32>) {\n  func.return\n}\n",
    "bad-float": b"func.func @f() {\n  %c = arith.constant 1.0.0 : f32\n  func.return\n}\n",
    "int-as-float": b"func.func @f() {\n  %c = arith.constant 1.5 : i32\n  func.return\n}\n",
    "non-utf8": b"func.func @f() {\n  \xff\xfe\n  func.return\n}\n",
    "non-utf8-in-string": b'func.func @f() attributes {s = "\xc3\x28"} {\n  func.return\n}\n',
    # xDSL's lexer backtracks for minutes on this one unless we catch it first.
    "unterminated-string-before-quotes": b'func.func @f() {\n  "%n2 = x(%t)\n  %a = "test.op"() : () -> i32\n  %b = "test.op"() {s = "q"} : () -> i32\n'
    + b'  // "x" "y"\n' * 20 + b'  func.return\n}\n',
    "nul-byte": b"func.func @f() {\n  \x00\n  func.return\n}\n",
    "unterminated-string": b'func.func @f() attributes {s = "abc} {\n  func.return\n}\n',
    "unterminated-comment-only-op": b"func.func @f() { // func.return }\n",
    "scf-if-non-bool": b"func.func @f(%a: i32) {\n  scf.if %a {\n  }\n  func.return\n}\n",
    "yield-outside": b"scf.yield\n",
    "return-outside": b"func.return\n",
    "call-unknown": b"func.func @f() {\n  func.call @nope() : () -> ()\n  func.return\n}\n",
    "duplicate-symbol": b"func.func @f() {\n  func.return\n}\nfunc.func @f() {\n  func.return\n}\n",
    "branch-unknown-block": b"func.func @f() {\n  cf.br ^nope\n}\n",
    "generic-wrong-arity": b'"arith.addi"() : () -> i32\n',
    "generic-missing-colon": b'"func.return"()\n',
    "properties-wrong-type": b'"func.func"() <{sym_name = 3 : i32, function_type = () -> ()}> ({\n}) : () -> ()\n',
    "only-garbage": b"@@@@ !!!! ####\n",
    "alias-undefined": b"func.func @f(%a: !alias) {\n  func.return\n}\n",
    "alias-bad": b"!a = \nfunc.func @f() {\n  func.return\n}\n",
    "cmp-bad-predicate": b"func.func @f(%a: i32) {\n  %b = arith.cmpi nope, %a, %a : i32\n  func.return\n}\n",
    "deeply-nested-regions": (
        b"func.func @f(%c: i1) {\n"
        + b"scf.if %c {\n" * 3000
        + b"}\n" * 3000
        + b"func.return\n}\n"
    ),
    "deeply-nested-types": b"func.func @f(%a: " + b"tensor<" * 3000 + b"f32" + b">" * 3000 + b") {\n  func.return\n}\n",
    "deeply-nested-unclosed": b"func.func @f(%c: i1) {\n" + b"scf.if %c {\n" * 5000,
}

# Truncations of a valid file at many points are malformed too.
for cut in (10, 25, 45, 60, 75, 120, 180, 230, 260):
    CASES[f"truncated-at-{cut}"] = VALID.encode()[:cut]


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input_is_a_located_error(name: str, tmp_path: Path, step_opt):
    path = tmp_path / f"{name}.mlir"
    path.write_bytes(CASES[name])
    result = step_opt([str(path)])
    assert result.code == 1, (result.out, result.err)
    first = result.err.splitlines()[0]
    m = DIAG.match(first)
    assert m, f"not a located diagnostic: {first!r}"
    assert m["file"] == str(path)
    assert int(m["line"]) >= 1 and int(m["col"]) >= 1
    assert "Traceback (most recent call last)" not in result.err
    assert "internal error" not in result.err
    assert result.out == ""


def test_corpus_is_large_enough():
    assert len(CASES) >= 40


def test_valid_base_file_is_accepted(tmp_path: Path, step_opt):
    path = tmp_path / "valid.mlir"
    path.write_text(VALID.replace("%true", "%cond").replace("(%a: i32,", "(%cond: i1, %a: i32,"))
    result = step_opt([str(path)])
    assert result.code == 0, result.err
