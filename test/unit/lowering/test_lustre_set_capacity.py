"""Where the capacity properties of sets and maps go (`set_capacity.py`): on
each output or local the program names that can grow (a literal with
elements, a union, an update, a node call), one per variable however deeply
its sets nest, none on the frontend's frame locals (`m$init`, `m$last`) nor
on copies, delays and differences of values checked already; inputs are
assumed at most K/2 elements, nested sets under their valid slots too. The
expected property lists follow from those rules; the overflow runs from
Kind 2's set semantics (one new element per tick)."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.lowering.lustre import import_lustre
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile


def _observers(src: str, node: str) -> list[str]:
    module = import_lustre(src, "t.lus").module
    check = next((op for op in module.ops if getattr(op, "sym_name").data == f"{node}$check"),
                 None)
    if check is None:
        return []
    return [o.data[1].data for o in check.attributes["lustre.observers"].data]


def test_only_variables_that_can_grow_get_a_capacity_property():
    src = """node N(x: int; i: set<int>) returns (s, t, u, v, w: set<int>);
    let
      s = {x} -> pre s + {x};
      t = if x > 0 then pre s else {}@<int>;
      u = s - {x};
      v = i;
      w = {1, 2};
    tel"""
    assert _observers(src, "N") == ["capacity of input 'i' (at most 4 elements)",
                                    "capacity of set 's' (8 elements)",
                                    "capacity of set 'w' (8 elements)"]


def test_a_frame_is_checked_at_its_variable_not_at_its_own_locals():
    src = """node Top(go: bool; k: int) returns (m: map<int, int>);
    let
      frame (m) m = map[]@<int, int>;
      let
        if go then m = (last m)[k := 1]; fi
      tel
    tel"""
    assert _observers(src, "Top") == ["capacity of map 'm' (8 elements)"]


def test_a_map_of_sets_has_one_property_and_one_assumption():
    src = """node Sub(st: map<int, set<int>>) returns (out: map<int, set<int>>);
    let
      out = st;
    tel
    node Top(k, x: int) returns (m: map<int, set<int>>);
    var p: map<int, set<int>>;
    let
      p = pre m;
      m = (map[]@<int, set<int>>)[k := {x}] -> p[k := p[k] + {x}];
    tel"""
    assert _observers(src, "Sub") == ["capacity of input 'st' (at most 4 elements)"]
    assert _observers(src, "Top") == ["capacity of map 'm' (8 elements)"]


def test_a_nested_set_overflowing_under_a_valid_slot_is_the_maps_violation():
    """m[0] gains x at every tick (x = 0, 1, 2, ... distinct): at tick 8 the set
    m[0] would hold 9 elements, one more than its 8 slots; the map itself has
    one key."""
    src = """node Top(x: int) returns (m: map<int, set<int>>);
    var p: map<int, set<int>>;
    let
      p = pre m;
      m = (map[]@<int, set<int>>)[0 := {x}] -> p[0 := p[0] + {x}];
    tel"""
    module = translate(SourceFile("t.lus", src))
    report = falsify(module, "Top", 12, inputs={"x": np.arange(12, dtype=np.int32)})
    assert report.violation is not None
    assert (report.violation.name, report.violation.tick) == ("capacity of map 'm' (8 elements)",
                                                             8)


@pytest.mark.parametrize("keys", [[0, 1, 0, 1, 0, 1], [5, 5, 5, 5, 5, 5]])
def test_a_map_of_sets_within_its_slots_has_no_violation(keys: list[int]):
    src = """node Top(k, x: int) returns (m: map<int, set<int>>);
    var p: map<int, set<int>>;
    let
      p = pre m;
      m = (map[]@<int, set<int>>)[k := {x}] -> p[k := p[k] + {x}];
    tel"""
    module = translate(SourceFile("t.lus", src))
    xs = np.array([1, 2, 1, 2, 3, 3], np.int32)
    report = falsify(module, "Top", 6, inputs={"k": np.array(keys, np.int32), "x": xs})
    assert report.violation is None and report.ticks == 6
