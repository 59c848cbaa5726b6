"""Kind 2 sets and maps (`lowering/lustre/sets.py`): K slots with valid bits.

Every expected value is derived by hand from Kind 2's set semantics (a set is
its elements, whatever slots hold them): membership, union, difference,
update, lookup, equality as sets, `pre` of a set, and the capacity (K = 8
slots by default) exceeded, reported at the variable's declaration."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import run_tool
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import LustreError, import_lustre
from steplus.lowering.lustre.sets import CAPACITY
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_run import main as step_run

T = 6
XS = np.array([3, -1, 4, 1, -5, 9], np.int32)


def _ints(columns) -> list[list[int]]:
    return [np.asarray(c, np.int64).tolist() for c in columns]


def _runs(src: str, node: str, inputs: dict[str, np.ndarray], ticks: int = T
          ) -> list[list[int]]:
    """Outputs on the lus interpreter, equal on the sync interpreter and the
    modular target."""
    module = translate(SourceFile("t.lus", src))
    got = _ints(run_node(module, node, inputs, ticks))
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for again in (run_sync_node(lowered, node, inputs, ticks),
                  run_node_modular(module, node, inputs, ticks)):
        assert _ints(again) == got
    return got


def test_literals_and_membership():
    src = """node L(x: int) returns (a, b, c, d, e: bool);
    var s: set<int>;
    let
      s = {3, 4, x};
      a = 3 in s; b = 5 in s; c = x in s; d = not (x + 1000 in s); e = 4 in {}@<int>;
    tel"""
    a, b, c, d, e = _runs(src, "L", {"x": XS})
    assert a == [1] * T and c == [1] * T and d == [1] * T and e == [0] * T
    assert b == [0] * T  # 5 is no x of XS


def test_difference_and_union():
    src = """node D(x: int) returns (one, two, xin, u1, ux: bool);
    var s, u: set<int>;
    let
      s = {1, 2, 3} - {x};
      u = {1} + {x, 1};
      one = 1 in s; two = 2 in s; xin = x in s; u1 = 1 in u; ux = x in u;
    tel"""
    one, two, xin, u1, ux = _runs(src, "D", {"x": XS})
    assert one == [int(x != 1) for x in XS]  # XS[3] = 1 is taken out
    assert two == [1] * T and xin == [0] * T and u1 == [1] * T and ux == [1] * T


def test_map_update_and_lookup():
    src = """node M(x: int) returns (m1, m2, mx, m99: int; has: bool);
    var m: map<int, int>;
    let
      m = map[1 := 10; 2 := 20][x := 7];
      m1 = m[1]; m2 = m[2]; mx = m[x]; m99 = m[99]; has = x in m;
    tel"""
    m1, m2, mx, m99, has = _runs(src, "M", {"x": XS})
    assert m1 == [7 if x == 1 else 10 for x in XS]  # the update of key 1 replaces 10
    assert m2 == [20] * T and mx == [7] * T and has == [1] * T
    assert m99 == [0] * T  # not a key: 0 (Kind 2 leaves it unconstrained)


def test_equality_is_set_equality():
    src = """node E(x: int) returns (a, b, c, d, e: bool);
    let
      a = {1, 2} = {2, 1, 2};
      b = {1, 2} <> {1};
      c = map[1 := 2; 3 := 4] = map[3 := 4; 1 := 2];
      d = map[1 := 2] = map[1 := 3];
      e = ({x} - {x}) = {}@<int>;
    tel"""
    a, b, c, d, e = _runs(src, "E", {"x": XS})
    assert a == [1] * T and b == [1] * T and c == [1] * T and d == [0] * T and e == [1] * T


def test_pre_of_a_set_accumulates():
    src = """node P(x: int) returns (three, one, nine: bool);
    var s: set<int>;
    let
      s = {x} -> pre s + {x};
      three = 3 in s; one = 1 in s; nine = 9 in s;
    tel"""
    three, one, nine = _runs(src, "P", {"x": XS})
    # s at tick t is {XS[0..t]}
    assert three == [1] * T
    assert one == [0, 0, 0, 1, 1, 1] and nine == [0, 0, 0, 0, 0, 1]


def test_an_input_set_is_its_valid_slots():
    src = "node I(s: set<int>; x: int) returns (b: bool); let b = x in s; tel"
    inputs: dict[str, np.ndarray] = {"x": XS, "s": np.full(T, 5, np.int32)}
    for i in range(CAPACITY):
        inputs[f"s.has{i}"] = np.zeros(T, np.bool_)
        inputs[f"s.key{i}"] = np.zeros(T, np.int32)
    inputs["s.has0"] = np.array([1, 1, 1, 0, 0, 0], np.bool_)
    inputs["s.key0"] = XS  # x, valid in the first 3 ticks
    inputs["s.key1"] = XS  # x, in a slot that is not valid
    (b,) = _runs(src, "I", inputs)
    assert b == [1, 1, 1, 0, 0, 0]


def test_exceeding_the_capacity_is_reported_at_the_variable(tmp_path):
    # n counts 0, 1, 2, ...: s holds n + 1 elements at tick n, K + 1 at tick K
    path = tmp_path / "cap.lus"
    path.write_text("node C() returns (s: set<int>);\nvar n: int;\nlet\n"
                    "  n = 0 -> pre n + 1;\n  s = {n} -> pre s + {n};\ntel\n")
    res = run_tool(step_run, [str(path), "--node", "C", "--check", "--ticks", "20"])
    assert res.code == 1
    assert res.out.splitlines()[0] == (
        f"{path}:1:19: error: property 'capacity of set 's' ({CAPACITY} elements)' of @C is "
        f"violated at tick {CAPACITY} (run 1 of 100, seed 0)")


def test_type_errors_are_located():
    with pytest.raises(LustreError) as info:
        import_lustre("node N(x: int) returns (b: bool); let b = x in 3; tel", "t.lus")
    assert info.value.message == "'in' tests membership in a set or a map"
    with pytest.raises(LustreError) as info:
        import_lustre("node N(x: int) returns (b: bool); let b = true in {x}; tel", "t.lus")
    assert info.value.message == "'in' tests an element of another type than set<int>'s"


CAP_SRC = ("node C() returns (s: set<int>);\nvar n: int;\nlet\n"
           "  n = 0 -> pre n + 1;\n  s = {n} -> pre s + {n};\ntel\n")


@pytest.mark.parametrize("backend", ["reactive", "sync", "modular"])
def test_a_plain_run_stops_where_a_set_overflows(tmp_path, backend):
    # s = {0, ..., t} at tick t: printed as a set; K + 1 elements at tick K, where the
    # run stops with an error at the declaration of s (line 1, column 19), exit 1
    path = tmp_path / "cap.lus"
    path.write_text(CAP_SRC)
    res = run_tool(step_run, [str(path), "--node", "C", "--ticks", "20", "--backend", backend])
    assert res.code == 1
    assert res.out.splitlines() == [
        f"tick {t}: s={{{', '.join(str(k) for k in range(t + 1))}}}" for t in range(CAPACITY)]
    assert res.err.splitlines() == [
        f"{path}:1:19: error: set capacity {CAPACITY} exceeded at tick {CAPACITY} "
        f"('s' would hold more than {CAPACITY} elements)"]
    out = tmp_path / "out.csv"  # no file for a run that overflowed
    res = run_tool(step_run, [str(path), "--node", "C", "--ticks", "20", "--output", str(out)])
    assert res.code == 1 and not out.exists() and "exceeded at tick 8" in res.err


def test_a_local_set_that_overflows_stops_a_plain_run_and_a_stream(tmp_path, monkeypatch):
    # the local s gathers x: x = 10, 20, ... is new each tick, so s overflows at tick K
    # (its 9th element) though no output is a set
    path = tmp_path / "loc.lus"
    path.write_text("node L(x: int) returns (b: bool);\nvar s: set<int>;\nlet\n"
                    "  s = {x} -> pre s + {x};\n  b = 20 in s;\ntel\n")
    error = (f"{path}:2:5: error: set capacity {CAPACITY} exceeded at tick {CAPACITY} "
             f"('s' would hold more than {CAPACITY} elements)")
    xs = tmp_path / "x.csv"
    xs.write_text("".join(f"{10 * (t + 1)}\n" for t in range(12)))
    res = run_tool(step_run, [str(path), "--node", "L", "--ticks", "12", "--input",
                              f"x={xs}", "--backend", "sync"])
    assert res.code == 1 and res.err.splitlines() == [error]
    assert res.out.splitlines() == [f"tick {t}: b={t >= 1}" for t in range(CAPACITY)]
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(xs.read_text()))
    res = run_tool(step_run, [str(path), "--node", "L", "--stream"])
    assert res.code == 1 and res.err.splitlines() == [error]
    assert res.out.splitlines() == [f"tick {t}: {t >= 1}" for t in range(CAPACITY)]


def test_set_and_map_outputs_print_as_sets_and_maps(tmp_path):
    # x = 3, -1, 4: s = {x, 3} then s + {x}; m = {1 -> x(0)} then m with x -> 2x;
    # pairs (x, x > 0) then (x, true); a set of sets {{x}, {}}. Elements in ascending order.
    path = tmp_path / "m.lus"
    path.write_text("""node M(x: int) returns (s: set<int>; m: map<int, int>; b: bool;
                   p: set<[int, bool]>; n: set<set<int>>);
let
  s = {x, 3} -> pre s + {x};
  m = map[1 := x] -> (pre m)[x := 2 * x];
  b = 4 in s;
  p = {'(x, x > 0)} -> pre p + {'(x, true)};
  n = {{x}, {}@<int>};
tel
""")
    xs = tmp_path / "x.csv"
    xs.write_text("3\n-1\n4\n")
    res = run_tool(step_run, [str(path), "--node", "M", "--ticks", "3", "--input", f"x={xs}"])
    assert res.code == 0, res.err
    assert res.out.splitlines() == [
        "tick 0: s={3} m={1 -> 3} b=False p={(3, True)} n={{3}, {}}",
        "tick 1: s={-1, 3} m={-1 -> -2, 1 -> 3} b=False p={(-1, True), (3, True)} n={{-1}, {}}",
        "tick 2: s={-1, 3, 4} m={-1 -> -2, 1 -> 3, 4 -> 8} b=True "
        "p={(-1, True), (3, True), (4, True)} n={{4}, {}}"]
    out = tmp_path / "o.csv"  # files keep the slots: header, then valid bit and element
    assert run_tool(step_run, [str(path), "--node", "M", "--ticks", "3", "--input",
                               f"x={xs}", "--output", str(out)]).code == 0
    header, first = out.read_text().splitlines()[:2]
    assert header.split(",")[:5] == ["s", "s.has0", "s.key0", "s.has1", "s.key1"]
    assert first.split(",")[:5] == ["0", "True", "3", "False", "0"]  # {3}: x and 3 once


@pytest.mark.parametrize("slots", [1, 3, 12])
def test_the_set_capacity_is_a_tool_option(tmp_path, slots):
    # --set-capacity K: s = {0, ..., t} overflows at tick K, the check's property and a
    # plain run say K; lus-translate gives s 1 + 2K scalars
    path = tmp_path / "cap.lus"
    path.write_text(CAP_SRC)
    flag = ["--set-capacity", str(slots)]
    res = run_tool(step_run, [str(path), "--node", "C", "--ticks", "20", *flag])
    assert res.code == 1 and len(res.out.splitlines()) == slots
    assert res.err.splitlines() == [f"{path}:1:19: error: set capacity {slots} exceeded at "
                                    f"tick {slots} ('s' would hold more than {slots} elements)"]
    res = run_tool(step_run, [str(path), "--node", "C", "--ticks", "20", "--check", *flag])
    assert res.code == 1 and res.out.splitlines()[0] == (
        f"{path}:1:19: error: property 'capacity of set 's' ({slots} elements)' of @C is "
        f"violated at tick {slots} (run 1 of 100, seed 0)")
    from steplus.tools.lus_translate import main as lus_translate

    res = run_tool(lus_translate, ["--import-lustre", str(path), *flag])
    assert res.code == 0
    node = next(line for line in res.out.splitlines() if "lus.node @C(" in line)
    assert node.count("i1") == slots and node.count("i32") == 1 + slots


@pytest.mark.parametrize("slots", ["0", "65", "-1"])
def test_a_set_capacity_out_of_range_is_a_usage_error(tmp_path, slots):
    path = tmp_path / "cap.lus"
    path.write_text(CAP_SRC)
    res = run_tool(step_run, [str(path), "--node", "C", "--ticks", "2", "--set-capacity", slots])
    assert res.code == 2
    assert res.err == f"step-run: error: --set-capacity: the set capacity must be 1 to 64, not {slots}\n"
