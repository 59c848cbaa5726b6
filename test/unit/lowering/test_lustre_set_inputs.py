"""A set or map input is its valid slots restricted to its type
(`sets.canonicalize_inputs`): an element, key or value out of its refinement
type (`map<Nat, Pos>` with `Nat = subtype {x: int | x >= 0}`) is not in it,
as a subrange's out-of-range elements are not, since Kind 2's input is of
that type. The corpus program `map_ref_bugs.lus` then holds its three checks
(its README row said the falsifier drew a key -1); expected memberships are
Python dicts of the entries that are of the types."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from steplus.lowering.lustre.sets import CAPACITY
from steplus.runtime.reactive import run_node
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

PROG = Path(__file__).parents[3] / "examples/lustre/map_ref_bugs.lus"


def _slots(entries: list[list[tuple[int, int]]], name: str = "m") -> dict[str, np.ndarray]:
    """Inputs of a map<int, int> `name`: per tick, its entries in the first
    slots (valid), the other slots not valid."""
    ticks = len(entries)
    out = {name: np.zeros(ticks, np.int32)}
    for i in range(CAPACITY):
        out[f"{name}.has{i}"] = np.array([i < len(e) for e in entries])
        out[f"{name}.key{i}"] = np.array([e[i][0] if i < len(e) else 0 for e in entries],
                                         np.int32)
        out[f"{name}.val{i}"] = np.array([e[i][1] if i < len(e) else 0 for e in entries],
                                         np.int32)
    return out


def test_map_ref_bugs_holds_its_checks_on_inputs_with_keys_and_values_out_of_type():
    """Entries (-1, 3) and (4, -2) are no entries of a map<Nat, Pos>: `not (-1 in m)`
    and `m[i] > 0` hold; `0 in m` (R's refinement) is assumed and given."""
    module = translate(SourceFile("map_ref_bugs.lus", PROG.read_text()))
    entries = [[(0, 5), (-1, 3), (4, -2)], [(-1, 1), (0, 1)], [(2, 0), (0, 7), (-5, -5)]]
    # the witness of `forall (i: int) i in m => m[i] > 0` (its input forall.L.C.i)
    witness = {"forall.9.9.i": np.array([0, -1, 2], np.int32)}
    report = falsify(module, "N", len(entries), inputs={**_slots(entries), **witness})
    assert report.violation is None and report.properties == 3 and report.ticks == 3


def test_entries_out_of_the_key_or_value_type_are_not_in_the_input():
    src = """type Nat = subtype {x: int | x >= 0};
    type Pos = subtype {x: int | x > 0};
    node N(m: map<Nat, Pos>; s: set<Nat>) returns (a, b, c, d, e: bool; v: int);
    let
      a = 0 in m; b = -1 in m; c = 2 in m; d = -3 in s; e = 4 in s; v = m[2];
    tel"""
    module = translate(SourceFile("t.lus", src))
    # three ticks of (key, value) entries in slots 0..2, the others not valid
    entries = [[(0, 5), (-1, 7), (2, 0)], [(0, -2), (2, 3), (-1, 1)], [(3, 1), (2, 9), (0, 1)]]
    elems = [[-3, 4, 1], [4, 4, -3], [0, 1, 2]]
    ticks = len(entries)
    inputs = _slots(entries)
    inputs["s"] = np.zeros(ticks, np.int32)
    for i in range(CAPACITY):
        inputs[f"s.has{i}"] = np.array([i < 3] * ticks)
        inputs[f"s.key{i}"] = np.array([e[i] if i < 3 else 0 for e in elems], np.int32)
    outs = run_node(module, "N", inputs, ticks)
    for t in range(ticks):
        m = {k: v for k, v in entries[t] if k >= 0 and v > 0}
        s = {x for x in elems[t] if x >= 0}
        want = [0 in m, -1 in m, 2 in m, -3 in s, 4 in s, m.get(2, 0)]
        assert [int(o[t]) for o in outs] == [int(w) for w in want], t
