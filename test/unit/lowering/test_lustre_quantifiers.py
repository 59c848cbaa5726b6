"""Kind 2 quantifiers (lowering/lustre/quantifiers.py), written as Kind 2 users
write them: expanded over finite domains (bool, enumerations, subranges,
records of those), checked at a random witness where the quantifier is an
unbounded `forall` of a property (or an `exists` it negates), a located error
elsewhere. Outputs derived by hand, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.lus.input_ranges import observers
from steplus.tools.cli import InputError
from steplus.tools.lus_check import falsify

from test_lustre_oracles import TICKS, _inputs, _module, _node, _on_every_backend

FINITE = """\
type Dir = enum { Up, Down };
type R = struct { d: Dir; on: bool };
node q(a: int^3) returns (allpos, somezero: bool);
let
  allpos = forall (i: subrange [0, 2] of int) a[i] > 0;
  somezero = exists (i: subrange [0, 2] of int) a[i] = 0;
  check forall (k: Dir) k = Up or k = Down;
  check forall (r: R) r.on or not r.on or r.d = Up;
  check "refined" forall (i: subtype { v: subrange [0, 9] of int | v < 3 }) a[i] = a[i];
tel
"""


def test_finite_quantifiers_expand_on_every_backend():
    module = _module(FINITE)
    rng = np.random.default_rng(4)
    a = [rng.integers(-2, 3, TICKS) for _ in range(3)]
    inputs = {f"a.{k}": a[k] for k in range(3)}
    _on_every_backend(module, "q", inputs, [
        (a[0] > 0) & (a[1] > 0) & (a[2] > 0), (a[0] == 0) | (a[1] == 0) | (a[2] == 0)])
    report = falsify(module, "q", ticks=20, runs=10, seed=0)
    assert report.violation is None and report.properties == 3


def test_a_false_finite_quantifier_is_caught():
    module = _module(FINITE.replace("k = Up or k = Down", "k = Up"))
    v = falsify(module, "q", ticks=5, runs=1, seed=0).violation
    assert v is not None and v.tick == 0 and v.name == "forall (k: Dir) k = Up"


WITNESS = """\
node w(x: int) returns (y: int);
let
  y = x;
  check "no square root" forall (k: int) (exists (j: int) j * j = k) => k >= 0;
  check "above" forall (n: subrange [0, *] of int) n + y >= y - 1000000;
tel
"""


def test_unbounded_quantifiers_get_witness_inputs_of_the_check_node_only():
    module = _module(WITNESS)
    assert _inputs(module, "w") == ["x"]
    # inner quantifiers first
    assert _inputs(module, "w$check") == ["x", "exists.4.43.j", "forall.4.26.k",
                                          "forall.5.17.n"]
    assert [n for _, n, _ in observers(_node(module, "w$check"))] == [
        "no square root", "above"]
    report = falsify(module, "w", ticks=30, runs=30, seed=0)
    assert report.violation is None and report.properties == 2


def test_a_false_forall_is_falsified_at_its_witness():
    module = _module(WITNESS.replace("n + y >= y - 1000000", "n <> y + 3"))
    v = falsify(module, "w", ticks=50, runs=100, seed=0).violation
    assert v is not None and v.name == "above"
    # the counterexample: the witness n is y + 3 (y = x)
    assert v.trace["forall.5.17.n"][v.tick] == v.trace["x"][v.tick] + 3


@pytest.mark.parametrize("src,line,col,what", [
    # an unbounded exists in a property: no witness can falsify it
    ("node n(x: int) returns (); let check exists (k: int) k = x; tel\n", 1, 46,
     "'exists' over 'k'"),
    # in an equation: neither checked nor expandable
    ("node n(x: int) returns (b: bool); let b = forall (k: int) k <> x; tel\n", 1, 51,
     "'forall' over 'k'"),
    # under `=`: no polarity
    ("node n(x: int) returns (); let check (forall (k: int) k > x) = false; tel\n", 1, 47,
     "'forall' over 'k'"),
])
def test_unbounded_quantifiers_elsewhere_are_located_errors(src, line, col, what):
    with pytest.raises(InputError) as info:
        _module(src)
    first = info.value.lines[0]
    assert first == (f"t.lus:{line}:{col}: error: unsupported construct: Kind 2 quantifiers "
                     f"over an unbounded type where no witness falsifies them ({what})")


def test_a_large_finite_domain_is_not_expanded():
    src = ("node n(x: int) returns ();\n"
           "let check forall (i, j: subrange [0, 99] of int) i + j <> x - 1000; tel\n")
    module = _module(src)  # 10^4 combinations: checked at a witness instead
    assert _inputs(module, "n$check") == ["x", "forall.2.11.i", "forall.2.11.j"]
