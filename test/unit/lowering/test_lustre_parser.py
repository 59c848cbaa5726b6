"""The Lustre frontend: each construct parsed, lowered to lus and run (values
checked against closed forms / numpy), and located errors at exact line:col for
syntax errors, unsupported constructs, type errors, and the lus clock,
causality and initialization errors mapped back to the Lustre source."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from steplus.dialects import lus
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import import_lustre, lustre_main_node
from steplus.tools.iree_run import run_node_iree
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

T = 40


def _module(src: str):
    return translate(SourceFile("t.lus", src))  # verified + clock/causality/init checks


def _run(src: str, node: str, sync: bool = True, **inputs) -> list[np.ndarray]:
    """Outputs on the lus interpreter, checked equal on the sync interpreter."""
    module = _module(src)
    ticks = len(next(iter(inputs.values()))) if inputs else T
    got = run_node(module, node, inputs, ticks)
    if not sync:
        return [np.asarray(c) for c in got]
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    again = run_sync_node(lowered, node, inputs, ticks)
    assert [[str(v) for v in c] for c in again] == [[str(v) for v in c] for c in got]
    return [np.asarray(c) for c in got]


def _error(src: str) -> list[str]:
    with pytest.raises(InputError) as info:
        _module(src)
    return info.value.lines


def _assert_error(src: str, line: int, col: int, message: str) -> None:
    first = _error(src)[0]
    assert first == f"t.lus:{line}:{col}: error: {message}"


RNG = np.random.default_rng(1)
XS = RNG.integers(-50, 50, T).astype(np.int32)
YS = RNG.integers(-7, 8, T).astype(np.int32)
YS[YS == 0] = 3
CS = RNG.random(T) < 0.5
RS = RNG.standard_normal(T).astype(np.float32)


# -- constructs ---------------------------------------------------------------------

def test_integer_arithmetic_truncates_like_c():
    src = """node f(x, y: int) returns (a, b, c, d, e: int);
    let a = x + y * 2 - -x; b = x / y; c = x div y; d = x mod y; e = -(x - y); tel"""
    a, b, c, d, e = _run(src, "f", x=XS, y=YS)
    q = np.trunc(XS / YS).astype(np.int32)
    np.testing.assert_array_equal(a, XS + YS * 2 + XS)
    np.testing.assert_array_equal(b, q)
    np.testing.assert_array_equal(c, q)
    np.testing.assert_array_equal(d, XS - q * YS)
    np.testing.assert_array_equal(e, YS - XS)


def test_reals_casts_and_comparisons():
    src = """node f(r: real; x: int) returns (a: real; b: int; c, d, e: bool);
    let a = r * 2.0 + real(x) / 4.0 - 1.5e0; b = int(r * 10.0);
        c = r >= 0.0; d = x <> 3; e = float(x) < r; tel"""
    a, b, c, d, e = _run(src, "f", r=RS, x=XS)
    np.testing.assert_allclose(a, RS * np.float32(2) + XS.astype(np.float32) / 4 - 1.5,
                               rtol=1e-6)
    np.testing.assert_array_equal(b, np.trunc(RS * np.float32(10)).astype(np.int32))
    np.testing.assert_array_equal(c, RS >= 0)
    np.testing.assert_array_equal(d, XS != 3)
    np.testing.assert_array_equal(e, XS.astype(np.float32) < RS)


def test_heptagon_float_operators_and_ampersand():
    src = """node f(r: float; a, b: bool) returns (s: float; c: bool);
    let s = -. r *. 2.0 +. r /. 4.0 -. 1.0; c = a & b; tel"""
    s, c = _run(src, "f", r=RS, a=CS, b=np.roll(CS, 1))
    np.testing.assert_allclose(s, -RS * np.float32(2) + RS / np.float32(4) - 1, rtol=1e-6)
    np.testing.assert_array_equal(c, CS & np.roll(CS, 1))


def test_boolean_operators_and_if():
    src = """node f(a, b: bool; x: int) returns (o: bool; y: int);
    let o = (a and not b) or (a xor b) => a = b; y = if a then x else if b then 1 else 2; tel"""
    o, y = _run(src, "f", a=CS, b=np.roll(CS, 3), x=XS)
    a, b = CS, np.roll(CS, 3)
    np.testing.assert_array_equal(o, ~((a & ~b) | (a ^ b)) | (a == b))
    np.testing.assert_array_equal(y, np.where(a, XS, np.where(b, 1, 2)))


def test_arrow_pre_and_fby_build_counters_and_delays():
    src = """node f(x: int) returns (n, d, s: int);
    let n = 0 -> pre n + 1; d = 7 fby x; s = x + (0 -> pre s); tel"""
    n, d, s = _run(src, "f", x=XS)
    np.testing.assert_array_equal(n, np.arange(T))
    np.testing.assert_array_equal(d, np.concatenate([[7], XS[:-1]]))
    np.testing.assert_array_equal(s, np.cumsum(XS))


def test_arrow_lowers_to_merge_on_the_initial_word():
    module = import_lustre("node f(x: int) returns (y: int); let y = 0 -> pre x; tel").module
    merges = [op for op in module.walk() if isinstance(op, lus.MergeOp)]
    assert [m.word.data for m in merges] == ["1(0)"]
    assert isinstance(merges[0].on_false.owner, lus.PreOp)


@pytest.mark.parametrize("when_false", ["x when not c", "x whenot c", "x when false(c)",
                                        "x when not (c)"])
def test_when_and_merge_on_a_bool_clock(when_false):
    src = f"""node f(x: int; c: bool) returns (a, b, h: int);
    var s: int when c;
    let s = (x when c) * 2;
        a = merge c (true -> s) (false -> {when_false});
        b = merge (c; x when true(c); 0 when not c);
        h = current s; tel"""
    a, b, h = _run(src, "f", x=XS, c=CS)
    np.testing.assert_array_equal(a, np.where(CS, XS * 2, XS))
    np.testing.assert_array_equal(b, np.where(CS, XS, 0))
    held, last = [], 0
    for x, c in zip(XS, CS):
        last = 2 * x if c else last
        held.append(last)
    np.testing.assert_array_equal(h, held)


@pytest.mark.parametrize("decl", ["type t = enum {A, B, C};", "type t = A | B | C"])
def test_when_and_merge_on_an_enum_clock(decl):
    src = f"""{decl}
    node f(x: int; k: t) returns (y: int; isb: bool);
    let y = merge k (C -> (x when C(k)) * 3) (A -> x when A(k)) (B -> 0 -> pre y when B(k));
        isb = k = B; tel"""
    ks = RNG.integers(0, 3, T).astype(np.int32)
    # Not on the sync interpreter: it evaluates the nested clock `on not e0 on
    # not e1` eagerly and reads the undefined e1 (reported as a defect).
    y, isb = _run(src, "f", sync=False, x=XS, k=ks)
    want = []
    for t, (x, k) in enumerate(zip(XS, ks)):
        want.append(x if k == 0 else 3 * x if k == 2 else (0 if t == 0 else want[-1]))
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(isb, ks == 1)
    iree_y, iree_isb = run_node_iree(_module(src), "f", {"x": XS, "k": ks}, T)
    np.testing.assert_array_equal(np.asarray(iree_y, np.int64), want)
    np.testing.assert_array_equal(np.asarray(iree_isb, bool), ks == 1)


def test_enum_constructors_are_numbered_in_declaration_order():
    src = """type color = enum {Red, Green, Blue};
    node f() returns (r, g, b: color); let r = Red; g = Green; b = Blue; tel"""
    r, g, b = _run(src, "f")
    assert (r[0], g[0], b[0]) == (0, 1, 2)


def test_tuples_multiple_returns_and_instances():
    src = """node swap(a, b: int) returns (c, d: int); let c, d = (b, a); tel
    node f(x, y: int) returns (p, q: int);
    let (p, q) = swap(swap(x, y + 1)); tel"""
    p, q = _run(src, "f", x=XS, y=YS)
    np.testing.assert_array_equal(p, XS)
    np.testing.assert_array_equal(q, YS + 1)


@pytest.mark.parametrize("call", ["(restart count every r)(x)", "count(x) every r"])
def test_reset_restarts_the_instance_state(call):
    src = f"""node count(x: int) returns (n: int); let n = x -> pre n + x; tel
    node inner(x: int) returns (m: int); let m = count(x) + (0 fby 1); tel
    node f(x: int; r: bool) returns (y, z: int);
    let y = {call}; z = (restart inner every r)(x); tel"""
    rs = RNG.random(T) < 0.2
    y, z = _run(src, "f", x=XS, r=rs)
    want_y, want_z = [], []
    for t, (x, r) in enumerate(zip(XS, rs)):
        fresh = t == 0 or r
        want_y.append(x if fresh else want_y[-1] + x)
        want_z.append(want_y[-1] + (0 if fresh else 1))
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_z)


def test_activate_and_condact_hold_the_last_result():
    src = """node sum(x: int) returns (s: int); let s = x + (0 -> pre s); tel
    node ticks() returns (n: int); let n = 1 -> pre n + 1; tel
    node f(x: int; c: bool) returns (a, b, d: int);
    let a = (activate sum every c initial default (-1))(x);
        b = condact(c, ticks(), 0);
        d = merge (c; (activate sum every c)(x); (activate sum every not c)(x)); tel"""
    a, b, d = _run(src, "f", x=XS, c=CS)
    on = np.cumsum(np.where(CS, XS, 0))
    off = np.cumsum(np.where(CS, 0, XS))
    seen = np.cumsum(CS)
    np.testing.assert_array_equal(a, np.where(seen > 0, on, -1))
    np.testing.assert_array_equal(b, seen)
    np.testing.assert_array_equal(d, np.where(CS, on, off))


def test_constants_static_parameters_and_ignored_annotations():
    src = """const K = N * 2;  (* forward reference *)
    const N: int = 3; B: bool = not false;
    /* a block comment */ // and a line comment
    node scale(const k: int; x: int) returns (y: int); let y = k * x; tel
    node f(x: int) returns (y, z: int);
    const L: int = -K;
    let
      y = scale(K, x) + L;   --%PROPERTY y = 6 * x - 6;
      z = if B then N else 0;
      assert x > -1000;
      check "bounded" z = 3;
    tel"""
    y, z = _run(src, "f", x=XS)
    np.testing.assert_array_equal(y, 6 * XS - 6)
    np.testing.assert_array_equal(z, np.full(T, 3))


def test_main_node_is_the_one_marked_main(tmp_path):
    src = "node a() returns (y: int); let y = 1; --%MAIN\ntel\nnode b() returns (y: int); let y = 2; tel"
    assert import_lustre(src).main == "a"
    path = tmp_path / "m.lus"
    path.write_text(src)
    assert lustre_main_node(str(path)) == "a"
    assert import_lustre("node b() returns (y: int); let y = 2; tel").main is None


def test_deep_expressions_do_not_crash():
    src = "node f(x: int) returns (y: int); let y = " + "- " * 2000 + "x; tel"
    (y,) = _run(src, "f", x=XS)
    np.testing.assert_array_equal(y, XS)


# -- located errors -------------------------------------------------------------------

@pytest.mark.parametrize("src,line,col,message", [
    ("node f(x: int) returns (y: int);\nlet y = x +; tel", 2, 12, "syntax error: unexpected ';'"),
    ("node f(x: int) returns (y: int)\nlet y = x $ 1; tel", 2, 11,
     "syntax error: unexpected character '$'"),
    ("node f(x: int) returns (y: int);\nlet y = x\n", 3, 1,
     "syntax error: unexpected end of input"),
    ("node f(x: int) returns (y: int);\nlet\n  automaton A\ntel", 3, 3,
     "unsupported construct: automata (Heptagon, in .ept files) ('automaton')"),
    ("node f(x: int^3) returns (y: int^3);\nlet y[0] = 0; tel", 2, 7,
     "syntax error: unexpected '0'"),
    ("node f(x: int) returns (y: int);\nlet y = (x + 1).a; tel", 2, 9,
     "unsupported construct: field access on an expression (only on variables)"),
    ("node f(x: int^3) returns (y: int);\nlet y = x[3]; tel", 2, 11,
     "index 3 out of the bounds of an array of 3"),
    ("node f(x: int^0) returns (y: int);\nlet y = 0; tel", 1, 15,
     "an array size must be an int constant from 1 to 4096, not 0"),
    ("node f(x: int) returns (y: int);\n(*@ guarantee y > 0; *)\nlet y = x; tel", 2, 1,
     "unsupported construct: Kind 2 contracts and annotations ('(*@', '--@')"),
    ("node f(x: int) returns (y: int);\nlet y = x.f; tel", 2, 9, "no field 'f' in 'x'"),
    ("node f(x: int) returns (y: int);\nlet\n  reset y = x; every x > 0\ntel", 3, 3,
     "unsupported construct: Heptagon 'reset' blocks ('reset')"),
    ("node f(x: int) returns (y: int);\nlet y = g<<3>>(x); tel", 2, 10,
     "unsupported construct: Lustre V6 static arguments ('<<')"),
    ("node f(x: int) returns (y: int);\nlet y = cond | x > 0 -> 1 | true -> 2; tel", 2, 9,
     "syntax error: Kind 2's 'cond' is a block of equations ('cond | g: x = e; ... "
     "otherwise: x = e; end'), not an expression"),
])
def test_syntax_errors_and_unsupported_constructs_are_located(src, line, col, message):
    _assert_error(src, line, col, message)


@pytest.mark.parametrize("body,line,col,message", [
    ("y = x + 1.0;", 3, 5, "operands of different types (int and real)"),
    ("y = x and x;", 3, 5, "'and' cannot be applied to int"),
    ("y = if x then 1 else 2;", 3, 8, "the condition of 'if' must be bool, not int"),
    ("y = z;", 3, 5, "unknown variable 'z'"),
    ("y = g(x);", 3, 5, "unknown node 'g'"),
    ("y = x; y = 2;", 3, 8, "variable 'y' is defined twice"),
    ("x = 1; y = 2;", 3, 1, "cannot define 'x': it is an input"),
    ("y = (x, x);", 3, 1, "1 variable(s) defined by an expression with 2 value(s)"),
    ("y = true;", 3, 1, "'y' is int but its equation gives bool"),
    ("y = merge c (true -> x when c);", 3, 5, "merge on 'c' misses case(s) false"),
    ("y = x when A(c);", 3, 12, "'A' is not a constructor of the type of 'c' (bool)"),
    ("y = 2147483648;", 3, 5, "integer literal 2147483648 does not fit in int (32-bit)"),
    ("y = current x;", 3, 5, "unsupported construct: 'current' of an expression whose clock "
     "is not declared (write 'current (x when c)' or declare 'x: t when c')"),
])
def test_semantic_errors_are_located(body, line, col, message):
    # the body starts at column 1 of line 3
    _assert_error(f"node f(x: int; c: bool) returns (y: int);\nlet\n{body}\ntel", line, col,
                  message)


def test_missing_equation_recursion_and_constant_cycles_are_located():
    _assert_error("node f(x: int) returns (y: int);\nlet tel", 1, 25, "variable 'y' has no equation")
    _assert_error("node f(x: int) returns (y: int);\nlet y = g(x); tel\n"
                  "node g(x: int) returns (y: int);\nlet y = f(x); tel", 4, 9,
                  "recursive instantiation of node 'f' is not supported")
    _assert_error("const A: int = B;\nconst B: int = A;\nnode f() returns (y: int); let y = A; tel",
                  1, 7, "constant 'A' is defined in terms of itself")
    _assert_error("node f(x: int) returns (y: int);\nvar a: int;\nlet a = y; y = a; tel", 3, 12,
                  "'y' is defined as itself (instantaneous dependency cycle)")


def test_clock_error_is_reported_at_the_lustre_expression():
    lines = _error("node f(x: int; c: bool) returns (y: int);\nlet\n  y = x + (x when c);\ntel")
    assert lines[0].startswith("t.lus:3:7: error: ")
    assert "clock" in lines[0]
    assert lines[1:] == ["  y = x + (x when c);", "      ^"]


def test_causality_error_is_reported_at_the_lustre_expression():
    lines = _error("node f(x: int) returns (y: int);\nvar a: int;\nlet\n  a = y * 2;\n"
                   "  y = a + x;\ntel")
    assert lines[0] == ("t.lus:4:7: error: instantaneous dependency cycle: 'a' -> 'y' -> 'a' "
                        "(a cycle must pass through 'pre' or 'fby')")


_INIT = ("may be read uninitialized {} of its clock (it depends on a 'pre' not guarded by "
         "'->' or 'fby' on the clock of the 'pre')")


def _strict_error(src: str) -> list[str]:
    """The errors of `src` read with the strict initialization rule (Heptagon's,
    Lustre V6's; `.lus` reads an unguarded `pre` as Kind 2 does: an oracle)."""
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.ept", src))
    return info.value.lines


def test_initialization_error_is_reported_at_the_pre():
    lines = _strict_error("node f(x: int) returns (y: int);\nlet\n  y = pre x;\ntel")
    assert lines[0] == "t.ept:3:7: error: 'y' " + _INIT.format("in the first cycle")
    assert "t.ept:3:7: note: the uninitialized 'pre' is here" in lines


def test_initialization_errors_are_at_the_guard_that_does_not_cover():
    # issue 24: these were reported at the node header (the lus.yield).
    # pre of pre guarded once: at the `->`
    lines = _strict_error("node n(x: int) returns (y: int);\nvar a: int;\n"
                          "let\n  a = pre (pre x);\n  y = 0 -> a;\ntel")
    assert lines[0] == "t.ept:5:7: error: 'y' " + _INIT.format("in the first 2 cycles")
    assert "t.ept:4:12: note: the uninitialized 'pre' is here" in lines
    # a pre on a sub-clock guarded on the base clock: at the merge reading it
    lines = _error("node n(x: int; c: bool) returns (y: int);\nvar a: int when c;\n"
                   "let\n  a = pre (x when c);\n"
                   "  y = 0 -> merge c (true -> a) (false -> x when not c);\ntel")
    assert lines[0] == ("t.lus:5:12: error: 'y' may be read uninitialized in cycles of its "
                        "clock that no initialization guards (it depends on a 'pre' not "
                        "guarded by '->' or 'fby' on the clock of the 'pre')")
    assert "t.lus:4:7: note: the uninitialized 'pre' is here" in lines


def test_clock_error_on_an_output_is_at_its_expression_and_names_lustre_variables():
    lines = _error("node n(x: int; c: bool) returns (y: int);\nlet y = x when c; tel")
    assert lines[0] == "t.lus:2:9: error: 'y': expected clock base, found base on 'c'"


# -- the tools --------------------------------------------------------------------------

def test_step_opt_reads_lustre_and_reports_errors_at_the_source(step_opt, tmp_path):
    good = tmp_path / "ok.lus"
    good.write_text("node f(x: int) returns (y: int); let y = 0 fby x; tel")
    res = step_opt([str(good)])
    assert res.code == 0
    assert "lus.fby" in res.out and "lus.node @f(%x: i32) -> (i32)" in res.out
    bad = tmp_path / "bad.lus"
    bad.write_text("node f(x: int) returns (y: int^2);\nlet y[1] = x; tel")
    res = step_opt([str(bad)])
    assert res.code == 1 and res.out == ""
    assert res.err.splitlines()[0] == f"{bad}:2:7: error: syntax error: unexpected '1'"


def test_lus_translate_command_line(tmp_path):
    from conftest import run_tool
    from steplus.tools.lus_translate import main

    src = tmp_path / "p.lus"
    src.write_text("node f(c: bool) returns (y: bool); let y = false -> pre c; tel")
    res = run_tool(main, ["--import-lustre", str(src)])
    assert res.code == 0 and "lus.merge \"1(0)\"" in res.out
    out = tmp_path / "p.mlir"
    assert run_tool(main, ["--import-lustre", str(src), "-o", str(out)]).code == 0
    assert out.read_text() == res.out
    res = run_tool(main, [str(src)])
    assert (res.code, res.err) == (2, "lus-translate: error: choose a translation: "
                                      "--import-lustre\n")
    res = run_tool(main, ["--import-lustre", str(tmp_path / "missing.lus")])
    assert res.code == 1 and "cannot read input file" in res.err
