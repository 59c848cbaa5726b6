"""Kind 2 contract declarations (`contract C(..) returns (..); let .. tel`) and
their imports (`import C(args) returns (ids);`) in node contracts and in other
contract declarations (lowering/lustre/parser.py, `_contract_decls`/`_import`).

The expected observers are counted by reading the programs: each `guarantee`
and each mode is a property, the modes add one exhaustiveness property, each
`assume` an assumption."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.runtime.reactive import run_node
from steplus.tools.cli import InputError
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

# Inc's ghost `d` (int) sits beside N's own ghost `d` (bool): renamed apart.
# The first argument is an expression (0 at tick 0, then 1): a ghost local.
# `::Inc::up` is the imported mode's requirement.
PROGRAM = """
contract Inc(lo: int; x: int) returns (y: int);
let
  var d: int = y - x;
  guarantee "step" d >= lo;
  mode up (require x >= 0;);
  mode down (require x < 0;);
tel

contract Outer(x: int) returns (y: int);
let
  assume "small" x < 1000;
  import Inc(0, x) returns (y);
tel

node N(x: int) returns (y: int);
(*@contract
  var d: bool = true;
  import Inc(0 -> 1, x) returns (y);
  import Outer(x) returns (y);
  guarantee "own" d and ::Inc::up = (x >= 0);
*)
let
  y = BODY;
tel
"""


def _module(body: str):
    return translate(SourceFile("c.lus", PROGRAM.replace("BODY", body)))


def test_imported_contracts_become_the_nodes_observers():
    module = _module("x + 1")
    # Inc twice: step, up, down, exhaustiveness = 4 properties each; Outer's
    # assumption; N's own guarantee
    report = falsify(module, "N", ticks=30, runs=30, seed=2)
    assert (report.properties, report.assumptions) == (9, 1)
    assert report.violation is None and report.ticks == 30 * 30
    x = np.array([3, -4, 0, 7], np.int32)
    assert [list(v) for v in run_node(module, "N", {"x": x}, 4)] == [[4, -3, 1, 8]]


def test_a_broken_import_is_caught_at_its_first_violating_tick():
    # y = x: d = 0 < lo = 1 from tick 1 on (at tick 0 lo = 0 holds)
    report = falsify(_module("x"), "N", ticks=10, runs=5, seed=0)
    assert report.violation is not None
    assert (report.violation.name, report.violation.tick) == ("step", 1)


def test_kind2_int_conversion_without_parentheses():
    src = "node n(r: real) returns (a, b: int);\nlet a = (int r); b = int r + 1; tel"
    module = translate(SourceFile("t.lus", src))
    r = np.array([2.5, -0.5, 7.0], np.float32)
    # steplus converts real to int by truncation toward zero (docs/guide/lustre.md)
    assert [list(v) for v in run_node(module, "n", {"r": r}, 3)] == [[2, 0, 7], [3, 1, 8]]


@pytest.mark.parametrize("src, line, col, message", [
    ("node n(x: int) returns (y: int);\n(*@contract\n  import S(x) returns (y);\n*)\n"
     "let y = x; tel", 3, 10, "unknown contract 'S'"),
    ("contract S(a: int) returns (b: int);\nlet guarantee b > a; tel\n"
     "node n(x: int) returns (y: int);\n(*@contract\n  import S(x, x) returns (y);\n*)\n"
     "let y = x; tel", 5, 3, "contract 'S' has 1 inputs, the import gives 2"),
    ("contract S(a: int) returns (b: int);\nlet import T(a) returns (b); tel\n"
     "contract T(a: int) returns (b: int);\nlet import S(a) returns (b); tel\n"
     "node n(x: int) returns (y: int);\n(*@contract\n  import S(x) returns (y);\n*)\n"
     "let y = x; tel", 4, 5, "contract 'S' imports itself (S -> T -> S)"),  # at T's import
    ("contract S(a: int) returns (b: int);\nlet guarantee b > a; tel\n"
     "contract S(a: int) returns (b: int);\nlet guarantee b > a; tel\n", 3, 10,
     "contract 'S' is declared twice"),
    ("contract C<T>(a: T) returns (b: T);\nlet guarantee b = a; tel\n"
     "node n(x: int) returns (y: int);\n(*@contract\n  import C@<int; bool>(x) returns (y);\n*)\n"
     "let y = x; tel", 5, 3, "contract 'C' takes 1 type argument(s), not 2"),
    ("contract C<T>(a: T) returns (b: T);\nlet guarantee b = a; tel\n"
     "node n(x: int) returns (y: int);\n(*@contract\n  import C(x + 1) returns (y);\n*)\n"
     "let y = x; tel", 5, 3, "cannot infer the type of 'T' in contract 'C': write "
     "import C@<T>(...) with the types"),
    ("contract S(a: int) returns (b: int);\nlet guarantee b > a;\n", 1, 1,
     "syntax error: contract 'S' needs 'let ... tel'"),
    # the first unsupported construct in source order, before and around contracts
    ("type T = package A | B;\ncontract S(a: int) returns (b: int);\nlet guarantee b > a; tel\n"
     "node n() returns (y: int); let y = {}@<int>; tel\n", 1, 10,
     "unsupported construct: Lustre V6 packages ('package')"),
    ("contract S(a: int) returns (b: int);\nlet guarantee b = cond | a > 0 -> 1; tel\n",
     2, 19, "syntax error: Kind 2's 'cond' is a block of equations ('cond | g: x = e; ... "
     "otherwise: x = e; end'), not an expression"),
])
def test_contract_declaration_errors_are_located(src, line, col, message):
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.lus", src))
    assert info.value.lines[0] == f"t.lus:{line}:{col}: error: {message}"


def test_contract_imports_that_double_per_level_are_bounded():
    # C20 would expand to 2^20 instances of C0 (each contract is checked even
    # if never imported): a located error once 1000 imports are expanded
    src = "contract C0(a: int) returns (b: int);\nlet guarantee b > a; tel\n" + "".join(
        f"contract C{k}(a: int) returns (b: int);\n"
        f"let import C{k - 1}(a) returns (b); import C{k - 1}(a) returns (b); tel\n"
        for k in range(1, 21))
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.lus", src))
    first = info.value.lines[0]
    assert first.startswith("t.lus:") and first.endswith(
        ": error: contract imports expand to more than 1000 instances")


# A contract with a type parameter: its ghost variable and the ghost local of
# the expression argument `x + 0` are of the instance's type.
POLY = """
contract Delay<T>(i: T) returns (out: T);
let
  var p: T = i -> pre i;
  guarantee "delayed" out = p;
tel

node N(x: int; b: bool) returns (y: int; c: bool)
(*@contract
  import Delay@<int>(x + 0) returns (y);
  import Delay(b) returns (c);
*)
let
  y = x -> pre x;
  c = BODY;
tel
"""


def test_contracts_with_type_parameters_are_instantiated_per_import():
    module = translate(SourceFile("p.lus", POLY.replace("BODY", "b -> pre b")))
    report = falsify(module, "N", ticks=20, runs=20, seed=1)
    assert (report.properties, report.assumptions) == (2, 0)
    assert report.violation is None
    # c = b (not delayed) breaks the bool instance's guarantee where b changes
    b = np.array([True, False, False, True])
    report = falsify(translate(SourceFile("p.lus", POLY.replace("BODY", "b"))), "N",
                     ticks=4, inputs={"x": np.zeros(4, np.int32), "b": b})
    assert report.violation is not None
    assert (report.violation.name, report.violation.tick) == ("delayed", 1)


def test_kind2_con_noc_contracts_are_inline_contracts():
    src = ("node n(x: int) returns (y: int);\ncon\n  assume x > 0;\n"
           "  guarantee \"pos\" y > 0;\nnoc\nlet y = x; tel\n")
    report = falsify(translate(SourceFile("t.lus", src)), "n", ticks=10, runs=10, seed=0)
    assert (report.properties, report.assumptions) == (1, 1)
    assert report.violation is None
    report = falsify(translate(SourceFile("t.lus", src.replace("y = x;", "y = -x;"))), "n",
                     ticks=10, runs=10, seed=0)
    assert report.violation is not None and report.violation.name == "pos"
