"""Kind 2's nondeterministic values run as oracles (lowering/lustre/oracles.py):
`any`, free constants and imported nodes, written as Kind 2 users write them.

Each program's outputs are derived by hand from the oracle inputs (named
`any.L.C`, the free constant's name, `f.L.C.y` for an imported node's output)
and checked on the lus interpreter, the sync interpreter and IREE (batched and
per tick); the falsifier draws the oracles within their types and constraints."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import run_tool
from steplus.dialects import lus
from steplus.dialects.lus.input_ranges import input_ranges, observers
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_run import iree_nodes
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_run import main as step_run

TICKS = 12


def _module(src: str):
    return translate(SourceFile("t.lus", src))


def _node(module, name: str) -> lus.NodeOp:
    return next(op for op in module.ops if isinstance(op, lus.NodeOp)
                and op.sym_name.data == name)


def _inputs(module, name: str) -> list[str]:
    return [a.name_hint or "" for a in _node(module, name).input_args]


def _on_every_backend(module, name: str, inputs: dict, expected: list) -> None:
    """The node's outputs on the lus and sync interpreters and IREE batched and
    per tick, each equal to `expected` (one list per output)."""
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    got = run_node(module, name, arrays, TICKS)
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    runs = {"lus": got, "sync": run_sync_node(lowered, name, inputs, TICKS)}
    node = iree_nodes(module)[name]
    node.reset()
    runs["iree batched"] = node.run(arrays, TICKS)
    node.reset()
    runs["iree per tick"] = node.run(arrays, TICKS, per_tick=True)
    for what, outs in runs.items():
        assert len(outs) == len(expected), what
        for k, (g, e) in enumerate(zip(outs, expected)):
            np.testing.assert_array_equal(np.asarray(g).astype(np.int64),
                                          np.asarray(e).astype(np.int64),
                                          err_msg=f"{what}: output {k}")


ANY = """\
node noisy(x: int) returns (y: int; small: int);
var n: int;
let
  n = any { v: int | v >= 0 };
  y = x + n;
  small = any subrange [0, 3] of int;
  check "never below x" y >= x;
tel
"""


def test_any_is_an_oracle_input_per_tick():
    module = _module(ANY)
    assert _inputs(module, "noisy") == ["x", "any.4.7", "any.6.11"]
    # the subrange is the oracle's range: step-run and the falsifier keep it
    assert input_ranges(_node(module, "noisy"))["any.6.11"][1:] == (0, 3)
    # the refinement is an assumption on it
    assert observers(_node(module, "noisy$check")) == [
        ("property", "never below x", ANY.index('check "never')),
        ("assume", "any.4.7 refined by v >= 0", ANY.index("v >= 0")),
    ]
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 50, TICKS)
    n = rng.integers(0, 9, TICKS)
    s = rng.integers(0, 4, TICKS)
    _on_every_backend(module, "noisy", {"x": x, "any.4.7": n, "any.6.11": s}, [x + n, s])
    report = falsify(module, "noisy", ticks=30, runs=50, seed=0)
    assert report.violation is None and (report.properties, report.assumptions) == (1, 1)


def test_any_mutant_is_caught_and_its_trace_holds_the_oracle():
    module = _module(ANY.replace("y >= x", "y > x"))  # false when the oracle is 0
    v = falsify(module, "noisy", ticks=30, runs=100, seed=0).violation
    assert v is not None and v.name == "never below x"
    assert v.trace["any.4.7"][v.tick] == 0  # the counterexample: n = 0


CHOOSE = """\
node pick(c: int) returns (r, s: int);
let
  r = choose { x: int | x > c };
  s = choose { x: int | x > 0 };
  check "r above c" r > c;
tel
"""


def test_choose_is_an_oracle_held_while_its_arguments_are():
    module = _module(CHOOSE)
    assert _inputs(module, "pick") == ["c", "choose.3.7", "choose.4.7"]
    names = [(k, n) for k, n, _ in observers(_node(module, "pick$check"))]
    assert names == [("property", "r above c"), ("assume", "choose.3.7 is a function of c"),
                     ("assume", "choose.3.7 refined by x > c"),
                     ("assume", "choose.4.7 refined by x > 0")]
    rng = np.random.default_rng(8)
    c, r, s = (rng.integers(-9, 9, TICKS) for _ in range(3))
    # s reads no variable: a constant, its first value
    _on_every_backend(module, "pick", {"c": c, "choose.3.7": r, "choose.4.7": s},
                      [r, np.full(TICKS, s[0])])
    report = falsify(module, "pick", ticks=30, runs=30, seed=0)
    assert report.violation is None and (report.cut, report.ticks) == (0, 30 * 30)


FREE = """\
const K: subrange [1, 10] of int;
node scale(x: int) returns (y: int);
let y = K * x; tel
node pick() returns (y: int);
const c: int;
let y = c; tel
node top(x: int) returns (a, b, p, q: int);
let
  a = scale(x);
  b = scale(x + 1);
  p = pick();
  q = pick();
tel
"""


def test_free_constants_are_held_oracles_global_shared_local_per_instance():
    module = _module(FREE)
    # the global K is one input, passed to both instances; the local c one
    # input per instance of pick
    assert _inputs(module, "scale") == ["x", "K"]
    assert _inputs(module, "pick") == ["c"]
    assert _inputs(module, "top") == ["x", "K", "pick.11.7.c", "pick.12.7.c"]
    rng = np.random.default_rng(2)
    x = rng.integers(-20, 20, TICKS)
    k = rng.integers(1, 11, TICKS)
    c1, c2 = rng.integers(-9, 9, TICKS), rng.integers(-9, 9, TICKS)
    # held: only the first value of each counts
    _on_every_backend(module, "top", {"x": x, "K": k, "pick.11.7.c": c1, "pick.12.7.c": c2},
                      [k[0] * x, k[0] * (x + 1), np.full(TICKS, c1[0]), np.full(TICKS, c2[0])])


def test_free_constant_is_held_again_after_a_reset():
    src = FREE + """node r(x: int; rst: bool) returns (y: int);
let y = (restart scale every rst)(x); tel
"""
    module = _module(src)
    k = np.arange(1, TICKS + 1) % 10 + 1  # 2, 3, ... : every tick a new value
    rst = np.zeros(TICKS, bool)
    rst[5] = True
    x = np.ones(TICKS, np.int32)
    # r holds K at tick 0 and passes that to scale: the reset does not change it
    _on_every_backend(module, "r", {"x": x, "rst": rst, "K": k}, [np.full(TICKS, k[0])])


DERIVED = """\
type T;
const K: int;
const K2: int = K * 2 + 1;
node f(x: T) returns (y: int; same: bool);
let y = K2; same = x = x; tel
"""


def test_constant_computed_from_a_free_constant_and_abstract_type():
    module = _module(DERIVED)
    assert _inputs(module, "f") == ["x", "K"]  # T is run as int; K2 reads the input K
    k = np.arange(3, 3 + TICKS)
    _on_every_backend(module, "f", {"x": np.arange(TICKS), "K": k},
                      [np.full(TICKS, 2 * 3 + 1), np.ones(TICKS, bool)])


def test_an_instance_in_a_refinement_passes_its_oracles():
    src = ("node f(y: int) returns (z: int); let z = y + any subrange [0, 0] of int; tel\n"
           "node g(y: int; x: subtype { v: int | v > f(y) }) returns (o: int);\n"
           "let o = x; tel\n")
    module = _module(src)
    assert _inputs(module, "g") == ["y", "x", "f.2.42.any.1.46"]
    x = np.arange(TICKS)
    _on_every_backend(module, "g", {"y": x, "x": x + 1, "f.2.42.any.1.46": x * 0}, [x + 1])
    report = falsify(module, "g", ticks=20, runs=10, seed=0)
    assert report.violation is None and report.assumptions == 1


IMPORTED = """\
node imported sensor(lo: int) returns (v: int);
(*@contract
  assume lo >= 0;
  guarantee "above" v >= lo;
*)

node monitor(x: int) returns (m: int);
(*@contract
  guarantee m >= 0;
*)
var lo: int;
let
  lo = if x < 0 then 0 else x;
  m = sensor(lo) + 1;
tel
"""


def test_imported_node_outputs_are_oracles_under_its_guarantees():
    module = _module(IMPORTED)
    assert _inputs(module, "monitor") == ["x", "sensor.14.7.v"]
    assert _inputs(module, "sensor") == ["lo", "v.oracle"]
    # in the caller: the guarantee is assumed, the assumption is checked
    kinds = [(k, n) for k, n, _ in observers(_node(module, "monitor$check"))]
    assert kinds == [("property", "m >= 0"), ("property", "sensor at 14:7: lo >= 0"),
                     ("assume", "sensor at 14:7: above")]
    # on its own: its guarantees are assumptions on its oracle outputs
    assert [k for k, _, _ in observers(_node(module, "sensor$check"))] == ["assume", "assume"]
    rng = np.random.default_rng(3)
    x = rng.integers(-20, 20, TICKS)
    v = rng.integers(-20, 20, TICKS)
    _on_every_backend(module, "monitor", {"x": x, "sensor.14.7.v": v}, [v + 1])
    _on_every_backend(module, "sensor", {"lo": x, "v.oracle": v}, [v])
    report = falsify(module, "monitor", ticks=30, runs=50, seed=0)
    assert report.violation is None and (report.properties, report.assumptions) == (2, 1)
    # oracles that break the guarantee are drawn again: every run goes its 30 ticks
    assert (report.cut, report.ticks) == (0, 50 * 30)


def test_imported_node_call_breaking_its_assumption_is_caught():
    module = _module(IMPORTED.replace("if x < 0 then 0 else x", "x"))
    v = falsify(module, "monitor", ticks=30, runs=50, seed=0).violation
    assert v is not None and v.name == "sensor at 14:7: lo >= 0"
    assert v.trace["x"][v.tick] < 0


def test_step_run_feeds_oracles_by_name(tmp_path):
    (tmp_path / "p.lus").write_text(FREE)
    (tmp_path / "x.csv").write_text("1\n2\n3\n")
    (tmp_path / "k.csv").write_text("4\n9\n9\n")
    res = run_tool(step_run, [str(tmp_path / "p.lus"), "--node", "scale", "--ticks", "3",
                              "--input", f"x={tmp_path / 'x.csv'}",
                              "--input", f"K={tmp_path / 'k.csv'}"])
    assert res.code == 0, res.err
    assert res.out.splitlines() == ["tick 0: y=4", "tick 1: y=8", "tick 2: y=12"]
    (tmp_path / "k.csv").write_text("0\n1\n1\n")
    res = run_tool(step_run, [str(tmp_path / "p.lus"), "--node", "scale", "--ticks", "3",
                              "--input", f"x={tmp_path / 'x.csv'}",
                              "--input", f"K={tmp_path / 'k.csv'}"])
    assert res.code != 0 and "input 'K'" in res.err and "holds 0 at tick 0" in res.err


@pytest.mark.parametrize("src,line,col,message", [
    ("node imported f(x: int) returns (y: int);\n"
     "node g(x: int; r: bool) returns (y: int); let y = (restart f every r)(x); tel\n",
     2, 51, "unsupported construct: restart or activate of the imported node 'f'"),
    ("node g() returns (y: int); let y = any@<int, bool>; tel\n",
     1, 36, "'any@<...>' takes one type"),
    # a polymorphic node's oracles take their type from the call: given, or
    # inferred from the variables passed
    ("node g<T>(x: T) returns (y: T); let y = any@<T>; tel\n"
     "node h(x: int) returns (y: int); let y = g(x + 1); tel\n", 2, 42,
     "cannot infer the type of 'T' in node 'g': write g@<T>(...) with the types"),
    ("node g(x: int) returns ();\nlet check forall (o: history(x); p: int) o <= p; tel\n",
     2, 34, "unsupported construct: a Kind 2 history quantifier over several variables"),
])
def test_oracle_errors_are_located(src, line, col, message):
    with pytest.raises(InputError) as info:
        _module(src)
    assert info.value.lines[0].startswith(f"t.lus:{line}:{col}: error: {message}")


def test_oracles_of_a_polymorphic_node_are_typed_per_call():
    src = ("node g<T>(x: T) returns (y: T); let y = any@<T>; tel\n"
           "node h(a: int; b: bool) returns (c: int; d: bool; e: int);\n"
           "let c = g(a); d = g(b); e = g@<int>(a + 1); tel\n")
    module = _module(src)
    h = next(op for op in module.ops if op.sym_name.data == "h")
    assert [(a.name_hint, str(a.type)) for a in h.input_args] == [
        ("a", "i32"), ("b", "i1"), ("g.3.9.any.1.41", "i32"), ("g.3.19.any.1.41", "i1"),
        ("g.3.29.any.1.41", "i32")]
    ins = {"a": np.arange(4, dtype=np.int32), "b": np.zeros(4, bool),
           "g.3.9.any.1.41": np.array([5, 6, 7, 8], np.int32),
           "g.3.19.any.1.41": np.array([True, False, True, True]),
           "g.3.29.any.1.41": np.array([-1, -2, -3, -4], np.int32)}
    c, d, e = run_node(module, "h", ins, 4)
    assert list(c) == [5, 6, 7, 8] and [bool(v) for v in d] == [True, False, True, True]
    assert list(e) == [-1, -2, -3, -4]  # each call's oracle, whatever g's argument
