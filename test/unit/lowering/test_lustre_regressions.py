"""Issue 27's crash and false-rejection list, one regression test each: the
programs run on every lus backend (lus interpreter, sync interpreter, modular
target, IREE where named) with the values of a closed form."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import import_lustre
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

T = 12
XS = np.array([3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8], np.int32)


def _module(src: str, name: str = "t.lus"):
    return translate(SourceFile(name, src))  # verified + clock/causality/init checks


def _all_backends(src: str, node: str, **inputs) -> list[np.ndarray]:
    """Outputs on the lus interpreter, equal on the sync interpreter and the
    modular target."""
    module = _module(src)
    got = [np.asarray(c) for c in run_node(module, node, inputs, T)]
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for again in (run_sync_node(lowered, node, inputs, T),
                  run_node_modular(module, node, inputs, T)):
        assert [list(map(int, c)) for c in again] == [list(map(int, c)) for c in got]
    return got


def test_alias_chain_of_locals_and_outputs():
    # `z = x; y = z;` was "Operation using value defined out of its
    # IsolatedFromAbove parent" (the yield kept z's erased placeholder).
    src = """node n(x: int) returns (y, w: int);
    var z: int;
    let z = x; y = z; w = y; tel"""
    y, w = _all_backends(src, "n", x=XS)
    np.testing.assert_array_equal(y, XS)
    np.testing.assert_array_equal(w, XS)


def test_instance_of_a_node_without_inputs_runs_on_every_backend():
    # `y = c() + i` failed on sync and modular: "@c is not a lus.node" (the
    # operand-less instance was taken for a constant).
    src = """node c() returns (o: int); let o = 1 -> pre o + 1; tel
    node n(i: int) returns (y: int); let y = c() + i; tel"""
    (y,) = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(y, np.arange(1, T + 1) + XS)


def test_input_free_stream_takes_the_clock_of_its_context():
    # A local counter beside an output was "would be on clock 'ck and on its
    # own sub-clock"; it is on the node's clock.
    src = """node n(i: int) returns (o, w: int);
    var v: int;
    let v = 0 -> pre v + 1; o = i; w = v * 2; tel"""
    o, w = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(o, XS)
    np.testing.assert_array_equal(w, 2 * np.arange(T))
    # an unused one too (nothing but `->` decides its clock)
    src = """node n(i: int) returns (o: int);
    var v: int;
    let v = 0 -> pre v + 1; o = i; tel"""
    (o,) = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(o, XS)


def test_pre_of_an_initialized_constant_stream_is_defined():
    # `1 -> pre (2 -> 3)` was "may be read uninitialized": 1, 2, 3, 3, ...
    src = """node n(i: int) returns (c: int); let c = 1 -> pre (2 -> 3); tel"""
    (c,) = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(c, [1, 2] + [3] * (T - 2))


def test_pre_of_a_constant_follows_the_input_dialect():
    # .lus (as Kind 2 reads it): accepted, the constant in every cycle; .ept
    # (Heptagon): an initialization error at the use.
    src = "node n(i: int) returns (c: int; d: bool);\nlet c = pre (2 * 3); d = pre true; tel\n"
    c, d = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(c, [6] * T)
    np.testing.assert_array_equal(d, [True] * T)
    with pytest.raises(InputError) as info:
        _module(src, "t.ept")
    assert info.value.lines[0].startswith("t.ept:")
    assert "may be read uninitialized in the first cycle" in info.value.lines[0]
    # a pre of a variable: an error in .ept; in .lus Kind 2's undefined first
    # value, an oracle input (test_lustre_undefined_pre.py)
    with pytest.raises(InputError):
        _module("node n(i: int) returns (c: int); let c = pre i; tel", "t.ept")


def test_constant_pre_in_a_reset_node_restarts_to_the_constant():
    src = """node k(x: int) returns (o: int); let o = pre 5 + x; tel
    node n(x: int; r: bool) returns (y: int); let y = (restart k every r)(x); tel"""
    rs = np.array([i % 4 == 0 for i in range(T)])
    (y,) = _all_backends(src, "n", x=XS, r=rs)
    np.testing.assert_array_equal(y, XS + 5)


def test_iree_node_with_many_outputs_falls_back_or_says_why():
    # 32 outputs and 1 input: the batched dispatch needs 33 bindings (> 32):
    # it runs tick by tick instead (was an internal IndexError).
    from steplus.tools.iree_run import IreeError, IreeNode

    outs = 32
    src = (f"node n(i: int) returns ({'; '.join(f'o{k}: int' for k in range(outs))});\nlet\n"
           + "".join(f"  o{k} = i + {k};\n" for k in range(outs)) + "tel\n")
    module = import_lustre(src, "t.lus").module
    node = IreeNode.from_lus(module, "n")
    assert node.too_wide_to_batch
    got = node.run({"i": XS[:3]}, 3)
    assert [list(c) for c in got] == [list(XS[:3] + k) for k in range(outs)]
    # 33 outputs pass the per-tick limit (64 push constants) too: a clear error
    src33 = src.replace("o31: int", "o31: int; o32: int").replace("tel", "  o32 = i;\ntel")
    with pytest.raises(IreeError, match="split the node's outputs or use --backend sync"):
        IreeNode.from_lus(import_lustre(src33, "t.lus").module, "n").run({"i": XS[:3]}, 3)


# -- issue 24's Lustre items ----------------------------------------------------------

ENUMS = """type t = enum {A, B};
type u = enum {C, D};
node n(k: t; h: u; x: int) returns (y: int; z: t);
let
  y = if k = A then x else 0;
  z = if h = C then A else B;
tel
"""


@pytest.mark.parametrize("equation, col, message", [
    ("y = if k = 1 then x else 0;", 10, "operands of different types (t and int)"),
    ("y = k + 1;", 7, "operands of different types (t and int)"),
    ("y = if k = h then x else 0;", 10, "operands of different types (t and u)"),
    ("y = if k < B then 1 else 0;", 10, "'<' cannot be applied to t"),
    ("y = -k;", 7, "'-' cannot be applied to t"),
    ("y = int(k);", 7, "'int' cannot be applied to t"),
])
def test_enums_are_their_own_types(equation, col, message):
    src = ENUMS.replace("y = if k = A then x else 0;", equation)
    with pytest.raises(InputError) as info:
        _module(src)
    assert info.value.lines[0] == f"t.lus:5:{col}: error: {message}"


def test_an_enum_variable_is_not_defined_by_an_int():
    src = ENUMS.replace("z = if h = C then A else B;", "z = 0;")
    with pytest.raises(InputError) as info:
        _module(src)
    assert info.value.lines[0] == "t.lus:6:3: error: 'z' is t but its equation gives int"


def test_enum_inputs_are_checked_by_step_run(tmp_path):
    from conftest import run_tool
    from steplus.tools.step_run import main

    prog = tmp_path / "e.lus"
    prog.write_text(ENUMS)
    (tmp_path / "k.csv").write_text("0\n1\n7\n")
    (tmp_path / "h.csv").write_text("0\n1\n1\n")
    (tmp_path / "x.csv").write_text("5\n6\n7\n")
    argv = [str(prog), "--node", "n", "--input", f"k={tmp_path / 'k.csv'}",
            "--input", f"h={tmp_path / 'h.csv'}", "--input", f"x={tmp_path / 'x.csv'}"]
    bad = run_tool(main, [*argv, "--ticks", "3"])
    assert bad.code == 1 and bad.out == ""
    assert bad.err.strip() == (f"{prog}: error: @n: input 'k' is of type t (values 0..1) but "
                               "holds 7 at tick 2")
    good = run_tool(main, [*argv, "--ticks", "2"])  # tick 2 is not read
    assert good.code == 0 and good.out == "tick 0: y=5 z=0\ntick 1: y=0 z=1\n"


def test_enum_merge_is_linear_in_the_constructors():
    # issue 24: 600 constructors and one merge took 97 s (a cascade of n^2/2
    # lus.when and clock chains n deep). Now: one test, one when and one merge
    # per constructor, clocks one level deep; the values are exact.
    n = 300
    ctors = ", ".join(f"C{k}" for k in range(n))
    cases = " ".join(f"(C{k} -> x + {k} when C{k}(k))" for k in range(n))
    src = (f"type t = enum {{{ctors}}};\n"
           f"node n(k: t; x: int) returns (y: int);\nlet y = merge k {cases}; tel\n")
    module = _module(src)
    ops = sum(1 for _ in module.walk())
    assert ops <= 8 * n + 10
    ks = np.array([0, 299, 150, 7, 1, 298, 0, 42, 100, 200, 250, 3], np.int32)
    (y,) = run_node(module, "n", {"k": ks, "x": XS}, T)
    np.testing.assert_array_equal(np.asarray(y), XS + ks)


def test_instance_lookup_uses_the_cached_symbol_table():
    from steplus.dialects import lus

    n = 50
    src = "node f0(x: int) returns (y: int); let y = x + 1; tel\n" + "".join(
        f"node f{k}(x: int) returns (y: int); let y = f{k - 1}(x); tel\n" for k in range(1, n))
    module = _module(src)
    inst = next(op for op in module.walk() if isinstance(op, lus.InstanceOp)
                and op.callee.root_reference.data == "f10")
    f10 = next(op for op in module.walk() if isinstance(op, lus.NodeOp)
               and op.sym_name.data == "f10")
    assert lus.lookup_node(inst, inst.callee) is f10
    # a stale table is rebuilt: the node erased, then another one under that name
    f10.detach()
    assert lus.lookup_node(inst, inst.callee) is None
    module.body.block.add_op(f10)
    assert lus.lookup_node(inst, inst.callee) is f10
    (y,) = run_node(module, f"f{n - 1}", {"x": XS}, T)
    np.testing.assert_array_equal(np.asarray(y), XS + 1)


# -- small language items (issue 27) ------------------------------------------------

def test_hex_literals_if_as_operand_optional_semicolon_and_fun():
    src = """fun f(x: int) returns (y: int); let y = x + 0x10 tel
    node n(x: int; c: bool) returns (y: int);
    let y = f(x) * 2 + if c then 0xff else 0X0 tel"""
    cs = np.array([k % 3 == 0 for k in range(T)])
    (y,) = _all_backends(src, "n", x=XS, c=cs)
    np.testing.assert_array_equal(y, (XS + 16) * 2 + np.where(cs, 255, 0))


def test_subrange_types_are_ints_checked_at_the_input_and_as_properties(tmp_path):
    from conftest import run_tool
    from steplus.tools.lus_check import falsify
    from steplus.tools.step_run import main

    src = """type Small = subrange [0, 10] of int;
const H: int = 5;
node n(a: Small; b: subrange [-3, H] of int) returns (y: subrange [0, 12] of int);
let y = a + (if b > 0 then b else 0); tel
"""
    module = _module(src)
    a = np.array([0, 5, 10, 3, 7, 1, 2, 9, 10, 0, 4, 6], np.int32)
    b = np.array([-3, 5, 0, 2, -1, 5, 4, 3, 5, 1, 0, -2], np.int32)
    (y,) = run_node(module, "n", {"a": a, "b": b}, T)
    np.testing.assert_array_equal(np.asarray(y), a + np.maximum(b, 0))
    # y may reach 15 > 12 within the inputs' ranges: the falsifier finds it
    report = falsify(module, "n", ticks=20, runs=50, seed=0)
    assert report.violation is not None and report.violation.name == "y in subrange [0, 12]"
    trace = report.violation.trace
    assert trace["a"][-1] + max(trace["b"][-1], 0) > 12
    assert all(0 <= v <= 10 for v in trace["a"]) and all(-3 <= v <= 5 for v in trace["b"])
    # an input out of its subrange is rejected at the input
    prog = tmp_path / "s.lus"
    prog.write_text(src)
    (tmp_path / "a.csv").write_text("0\n11\n")
    (tmp_path / "b.csv").write_text("0\n0\n")
    res = run_tool(main, [str(prog), "--node", "n", "--ticks", "2",
                          "--input", f"a={tmp_path / 'a.csv'}", "--input", f"b={tmp_path / 'b.csv'}"])
    assert res.code == 1
    assert res.err.strip() == (f"{prog}: error: @n: input 'a' is of type subrange [0, 10] of "
                               "int (values 0..10) but holds 11 at tick 1")


def test_ept_is_heptagon_and_stdin_takes_an_explicit_format(tmp_path, monkeypatch):
    import io
    import sys

    from conftest import run_tool
    from steplus.tools.step_opt import main as step_opt_main
    from steplus.tools.step_run import main

    src = "node n(r: bool) returns (c: int)\nlet\n  c = if r then 0 else (0 fby c) + 1;\ntel\n"
    prog = tmp_path / "cnt.ept"
    prog.write_text(src)
    (tmp_path / "r.csv").write_text("0\n0\n1\n0\n")
    want = "tick 0: c=1\ntick 1: c=2\ntick 2: c=0\ntick 3: c=1\n"
    args = ["--node", "n", "--ticks", "4", "--input", f"r={tmp_path / 'r.csv'}"]
    assert run_tool(main, [str(prog), *args]).out == want
    for fmt in ("heptagon", "lustre"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(src.encode())))
        res = run_tool(main, ["-", "--format", fmt, *args])
        assert (res.code, res.out) == (0, want), res.err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(src.encode())))
    res = run_tool(step_opt_main, ["--format", "heptagon"])
    assert res.code == 0 and "lus.node @n(%r: i1) -> (i32)" in res.out
    # the Heptagon rule for `pre` of a constant, read from a .ept file
    bad = tmp_path / "bad.ept"
    bad.write_text("node n(i: int) returns (c: int)\nlet\n  c = pre 3;\ntel\n")
    res = run_tool(step_opt_main, [str(bad)])
    assert res.code == 1
    assert res.err.splitlines()[0] == (
        f"{bad}:3:7: error: 'c' may be read uninitialized in the first cycle of its clock (it "
        "depends on a 'pre' not guarded by '->' or 'fby' on the clock of the 'pre')")


def test_lustre_outputs_keep_their_names_and_integers_stay_integers(tmp_path):
    from conftest import run_tool
    from steplus.tools.step_run import main

    prog = tmp_path / "o.lus"
    prog.write_text("node n(x: int; c: bool) returns (total: int; big: bool; half: real);\n"
                    "let total = x + (0 -> pre total); big = total > 4; half = real(x) / 2.0;"
                    " tel\n")
    (tmp_path / "x.csv").write_text("3\n2\n-7\n")
    (tmp_path / "c.csv").write_text("1\n0\n1\n")
    args = [str(prog), "--node", "n", "--ticks", "3", "--input", f"x={tmp_path / 'x.csv'}",
            "--input", f"c={tmp_path / 'c.csv'}"]
    res = run_tool(main, args)
    assert res.out.splitlines() == ["tick 0: total=3 big=False half=1.5",
                                    "tick 1: total=5 big=True half=1.",
                                    "tick 2: total=-2 big=False half=-3.5"]
    for backend in ("reactive", "sync", "iree"):
        out = tmp_path / f"o_{backend}.npz"
        assert run_tool(main, [*args, "--backend", backend, "--output", str(out)]).code == 0
        got = np.load(out)
        assert sorted(got.files) == ["big", "half", "total"]
        assert got["total"].dtype == np.int32 and got["total"].tolist() == [3, 5, -2]
        assert got["big"].tolist() == [False, True, False]
        assert got["half"].tolist() == [1.5, 1.0, -3.5]
    # CSV: a header of the names
    assert run_tool(main, [*args, "--output", str(tmp_path / "o.csv")]).code == 0
    assert (tmp_path / "o.csv").read_text().splitlines() == [
        "total,big,half", "3,False,1.5", "5,True,1.", "-2,False,-3.5"]
    # .npy: integers stay integers when every output is (here without `half`)
    prog.write_text("node n(x: int) returns (total: int; big: bool);\n"
                    "let total = x + (0 -> pre total); big = total > 4; tel\n")
    npy = tmp_path / "o.npy"
    assert run_tool(main, [str(prog), "--node", "n", "--ticks", "3", "--input",
                           f"x={tmp_path / 'x.csv'}", "--output", str(npy)]).code == 0
    arr = np.load(npy)
    assert arr.dtype == np.int32 and arr.tolist() == [[3, 0], [5, 1], [-2, 0]]


def test_inputs_named_with_a_digit_suffix_stay_apart(tmp_path):
    # xDSL drops a `_1` suffix from SSA names: `in_1` and `in_2` were both
    # `in` (one stream fed both). They are `in-1` and `in-2`; outputs keep
    # the user's names.
    from conftest import run_tool
    from steplus.tools.step_run import main

    src = "node n(in_1, in_2: int) returns (out_1, d: int);\nlet out_1 = in_1; d = in_2 - in_1; tel\n"
    assert [a.name_hint for a in _module(src).ops.first.body.block.args] == ["in-1", "in-2"]
    ys = XS[::-1].copy()
    out_1, d = _all_backends(src, "n", **{"in-1": XS, "in-2": ys})
    np.testing.assert_array_equal(out_1, XS)
    np.testing.assert_array_equal(d, ys - XS)
    prog = tmp_path / "p.lus"
    prog.write_text(src)
    (tmp_path / "a.csv").write_text("1\n2\n")
    (tmp_path / "b.csv").write_text("5\n7\n")
    res = run_tool(main, [str(prog), "--node", "n", "--ticks", "2", "--input",
                          f"in-1={tmp_path / 'a.csv'}", "--input", f"in-2={tmp_path / 'b.csv'}",
                          "--output", str(tmp_path / "o.csv")])
    assert res.code == 0, res.err
    assert (tmp_path / "o.csv").read_text() == "out_1,d\n1,4\n2,5\n"


def test_unsigned_machine_integer_outputs_print_unsigned(tmp_path):
    # uint8 255 printed as -1 (the runtimes carry signless bits)
    from conftest import run_tool
    from steplus.tools.step_run import main

    prog = tmp_path / "u.lus"
    prog.write_text("node n(x: int; a: uint<8>) returns (u: uint8; b: uint<8>; s: int8);\n"
                    "let u = (uint8 x); b = a; s = (int8 x); tel\n")
    (tmp_path / "x.csv").write_text("255\n-1\n300\n")
    (tmp_path / "a.csv").write_text("-1\n-128\n5\n")  # uint<8> inputs: signed bits
    # (uint8 300) = 44; uint<8> -1 is 255, -128 is 128; int8: -1, -1, 44
    want = ["tick 0: u=255 b=255 s=-1", "tick 1: u=255 b=128 s=-1", "tick 2: u=44 b=5 s=44"]
    for backend in ("reactive", "sync", "iree"):
        res = run_tool(main, [str(prog), "--node", "n", "--ticks", "3", "--backend", backend,
                              "--input", f"x={tmp_path / 'x.csv'}",
                              "--input", f"a={tmp_path / 'a.csv'}"])
        assert res.out.splitlines() == want, res.err


def test_unsigned_outputs_print_unsigned_in_stream_mode(tmp_path, monkeypatch):
    import io
    import sys

    from conftest import run_tool
    from steplus.tools.step_run import main

    prog = tmp_path / "u.lus"
    prog.write_text("node n(x: int) returns (u: uint8; v: int);\nlet u = (uint8 x); v = x; tel\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"255\n-1\n")))
    res = run_tool(main, [str(prog), "--node", "n", "--stream"])
    assert res.out.splitlines() == ["tick 0: 255 255", "tick 1: 255 -1"], res.err


@pytest.mark.parametrize("depth", [3, 2000])
def test_a_deep_chain_of_pres_imports_in_linear_time(tmp_path, depth: int):
    """`x -> pre (x -> pre (... x))`, `depth` pres: each level's constant-`pre`
    test once (it walked the whole chain below each `pre`: 48 s for 2000), run
    through step-run (deep nesting: its large-stack thread). v_k = x -> pre
    v_(k-1), v_0 = x, so y(t) = x(t - depth) for t >= depth, else x(0)."""
    from conftest import run_tool
    from steplus.tools.step_run import main as step_run

    path = tmp_path / "chain.lus"
    path.write_text("node N(x: int) returns (y: int);\nlet\n  y = "
                    + "x -> pre (" * depth + "x" + ")" * depth + ";\ntel\n")
    xs = tmp_path / "x.csv"
    ticks = 6
    xs.write_text("".join(f"{v}\n" for v in XS[:ticks]))
    res = run_tool(step_run, [str(path), "--node", "N", "--ticks", str(ticks), "--input",
                              f"x={xs}"])
    assert res.code == 0, res.err
    want = [XS[t - depth] if t >= depth else XS[0] for t in range(ticks)]
    assert res.out.splitlines() == [f"tick {t}: y={v}" for t, v in enumerate(want)]


def test_kind2_lazy_implication_is_implication():
    """Kind 2's `==>` (its lexer's LAZY_IMPL) is `=>`, right associative: `a ==> b` is
    false only for a true and b false; `a ==> b ==> a` always holds."""
    src = """node N(a, b: bool) returns (x, y, z: bool);
    let
      x = a ==> b;
      y = a ==> b ==> a;
      z = x = (not a or b);
    tel"""
    a = (XS > 0)
    b = (XS % 2 == 0)
    x, y, z = _all_backends(src, "N", a=a, b=b)
    assert x.tolist() == [bool(not p or q) for p, q in zip(a, b)]
    assert y.all() and z.all()
