"""Map equality (`sets._coll_equal`): two maps are equal when they have the
same keys with equal values, nested maps and tuple values compared as such.
The corpus program `map_value_equality_nested_guards.lus` (its four `check`s
hold by construction: n1 and n2 are built alike, n3 and t3 differ in one
value) is run here at 2 slots, where the corpus test (slow-marked) runs it at
8; mutants break each check on purpose. Expected values come from the
program's properties and Python dicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre.sets import capacity
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

PROG = Path(__file__).parents[3] / "examples/lustre/map_value_equality_nested_guards.lus"
XS = np.array([3, -1, 4, 1, -5, 9], np.int32)


def _module(src: str, slots: int):
    with capacity(slots):
        return translate(SourceFile("t.lus", src))


def test_the_corpus_program_at_2_slots_holds_its_four_checks():
    module = _module(PROG.read_text(), 2)
    (ok,) = run_node(module, "Top", {"x": XS}, len(XS))
    assert [int(v) for v in ok] == [1] * len(XS)
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    (ok,) = run_sync_node(lowered, "Top", {"x": XS}, len(XS))
    assert [int(v) for v in ok] == [1] * len(XS)
    report = falsify(module, "Top", 8, runs=5, seed=0)
    # the 4 checks and one capacity property per map (its nested maps' included)
    assert report.violation is None and report.properties == 4 + 6


@pytest.mark.parametrize("old,new,broken", [
    ("[0 := 1]];\n  n2", "[0 := 7]];\n  n2", "nested map equality"),
    ("[0 := 2]]", "[0 := 1]]", "nested map disequality"),
    ("t2 = (map[]@<int,P>)[x := '(true, 5)]", "t2 = (map[]@<int,P>)[x := '(true, 6)]",
     "tuple value equality"),
    ("'(false, 5)", "'(true, 5)", "tuple value disequality"),
])
def test_a_mutant_breaks_its_check(old: str, new: str, broken: str):
    src = PROG.read_text()
    assert src.count(old) == 1
    report = falsify(_module(src.replace(old, new), 2), "Top", 3, runs=1, seed=0)
    assert report.violation is not None and report.violation.name == broken
    assert report.violation.tick == 0


def test_map_equality_is_keys_and_values_whatever_the_order_of_insertion():
    """m1 = {x -> 1, 2 -> y}, m2 built in the other order, m3 = m2 with
    key 2 -> y + 1, m4 = m1 without one key: equal iff the dicts are."""
    src = ("node N(x, y: int) returns (a, b, c, d: bool);\nvar m1, m2, m3, m4: map<int, int>;\n"
           "let\n  m1 = (map[]@<int, int>)[x := 1][2 := y];\n"
           "  m2 = (map[]@<int, int>)[2 := y][x := 1];\n  m3 = m2[2 := y + 1];\n"
           "  m4 = (map[]@<int, int>)[x := 1];\n"
           "  a = m1 = m2; b = m1 = m3; c = m1 = m4; d = m4 = m1;\ntel\n")
    ys = np.array([1, 0, 2, 5, 1, 1], np.int32)
    a, b, c, d = run_node(_module(src, 4), "N", {"x": XS, "y": ys}, len(XS))
    for t, (x, y) in enumerate(zip(XS.tolist(), ys.tolist())):
        m1 = {x: 1}
        m1[2] = y
        m2 = {2: y}
        m2[x] = 1
        m3 = dict(m2)
        m3[2] = y + 1
        m4 = {x: 1}
        assert (int(a[t]), int(b[t]), int(c[t]), int(d[t])) == (
            int(m1 == m2), int(m1 == m3), int(m1 == m4), int(m4 == m1)), t
