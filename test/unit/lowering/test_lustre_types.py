"""Kind 2 data types in the Lustre frontend: algebraic data types
(lowering/lustre/adts.py), machine integers (machine_ints.py), tuple types and
group literals, on the lus and sync interpreters, the modular target and IREE,
against references written here from Kind 2's semantics (numpy)."""

from __future__ import annotations

import shlex

import numpy as np
import pytest
from xdsl.context import Context

from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.iree_run import run_node_iree
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

T = 12
RNG = np.random.default_rng(27)


def _all(src: str, node: str, inputs: dict) -> list[np.ndarray]:
    module = translate(SourceFile("t.lus", src))
    got = run_node(module, node, inputs, T)
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for other in (run_sync_node(lowered, node, inputs, T),
                  run_node_modular(module, node, inputs, T),
                  run_node_iree(module, node, inputs, T)):
        assert [[str(v) for v in c] for c in other] == [[str(v) for v in c] for c in got]
    return [np.asarray(c) for c in got]


SHAPES = """
datatype Shape = Circle (r: real) | Rect (w: real, h: real) | Dot;
datatype Tagged = Named (id: int, s: Shape) | Anon (a: Shape);

function area(s: Shape) returns (a: real);
let
  a = match s with
      | Circle(r) : 3.0 * r * r
      | Rect(w, h) : w * h
      | Dot : 0.0
      end;
tel

node shapes(k: int; x: real; t: Tagged) returns (s: Shape; a: real; circle: bool; w: real;
                                                 same: bool; id: int; changed: bool);
var prev: Shape;
let
  s = if k = 0 then Circle(x) else if k = 1 then Rect(x, 2.0) else Dot;
  a = area(s);
  circle = Circle?(s);
  w = s.w;
  same = s = Rect(x, 2.0);
  id = match t with
       | Named(n, Circle(_)) : n
       | Named(n, _) : -n
       | Anon(Dot) : 100
       | Anon(_) : 200
       end;
  prev = Dot -> pre s;
  changed = prev <> s;
tel
"""


def test_datatype_constructors_match_testers_selectors_and_equality():
    k = np.array([0, 1, 2, 0, 1, 1, 2, 2, 0, 0, 1, 2], np.int32)
    x = np.round(RNG.standard_normal(T), 2).astype(np.float32)
    t = np.array([0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1], np.int32)  # Named, Anon
    t_s = np.array([0, 1, 2, 0, 1, 2, 0, 2, 1, 0, 2, 1], np.int32)  # Circle, Rect, Dot
    t_a = np.array([2, 0, 1, 2, 1, 0, 1, 2, 0, 1, 2, 0], np.int32)
    ids = np.arange(1, T + 1, dtype=np.int32)
    zeros = np.zeros(T, np.float32)
    inputs = {"k": k, "x": x, "t": t, "t.id": ids, "t.s": t_s, "t.s.r": zeros,
              "t.s.w": zeros, "t.s.h": zeros, "t.a": t_a, "t.a.r": zeros,
              "t.a.w": zeros, "t.a.h": zeros}
    s, r, w, h, a, circle, sel_w, same, ident, changed = _all(SHAPES, "shapes", inputs)
    # the value: its tag, then every constructor's fields (0.0 where not built)
    np.testing.assert_array_equal(s, k)
    np.testing.assert_array_equal(r, np.where(k == 0, x, 0))
    np.testing.assert_array_equal(w, np.where(k == 1, x, 0))
    np.testing.assert_array_equal(h, np.where(k == 1, 2, 0))
    f = np.float32
    np.testing.assert_array_equal(a, np.where(k == 0, f(3) * x * x,
                                              np.where(k == 1, x * f(2), 0)))
    np.testing.assert_array_equal(circle, k == 0)
    np.testing.assert_array_equal(sel_w, np.where(k == 1, x, 0))
    np.testing.assert_array_equal(same, k == 1)
    named = t == 0
    want = np.where(named, np.where(t_s == 0, ids, -ids), np.where(t_a == 2, 100, 200))
    np.testing.assert_array_equal(ident, want)
    prev_k = np.concatenate([[2], k[:-1]])
    prev_x = np.concatenate([[0], x[:-1]])
    # two values are equal when their constructors and those constructors' fields are
    differ = (prev_k != k) | ((k != 2) & (prev_x != x))
    np.testing.assert_array_equal(changed, differ)


def test_datatype_input_fields_of_other_constructors_do_not_matter():
    """Inputs are canonicalized: the fields of a constructor the value is not
    built with are ignored by `=`, and read as 0 by a selector."""
    src = """datatype D = A (x: int) | B (y: int);
node n(d, e: D) returns (eq: bool; dx: int);
let
  eq = d = e;
  dx = d.x;
tel
"""
    tag = np.array([0, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0], np.int32)
    etag = np.array([0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0], np.int32)
    dx = RNG.integers(-3, 3, T).astype(np.int32)
    dy = RNG.integers(-3, 3, T).astype(np.int32)
    ex = RNG.integers(-3, 3, T).astype(np.int32)
    ey = RNG.integers(-3, 3, T).astype(np.int32)
    eq, x = _all(src, "n", {"d": tag, "d.x": dx, "d.y": dy, "e": etag, "e.x": ex, "e.y": ey})
    want = (tag == etag) & np.where(tag == 0, dx == ex, dy == ey)
    np.testing.assert_array_equal(eq, want)
    np.testing.assert_array_equal(x, np.where(tag == 0, dx, 0))


def test_polymorphic_datatypes_are_instantiated_per_use():
    src = """datatype Opt<T> = None | Some (v: T);
node n(i: int; b: bool) returns (o: Opt<int>; oo: Opt<Opt<int>>; get: int; ob: Opt<bool>);
let
  o = if i > 0 then Some(i) else None@<int>;
  oo = if b then Some(o) else None@<Opt<int>>;
  get = match oo with
        | Some(Some(v)) : v
        | Some(None) : -1
        | None : -2
        end;
  ob = Some(b);
tel
"""
    i = RNG.integers(-5, 6, T).astype(np.int32)
    b = RNG.random(T) < 0.5
    o, ov, oo, oo_o, oo_ov, get, ob, obv = _all(src, "n", {"i": i, "b": b})
    np.testing.assert_array_equal(o, (i > 0).astype(int))
    np.testing.assert_array_equal(ov, np.where(i > 0, i, 0))
    np.testing.assert_array_equal(oo, b.astype(int))
    np.testing.assert_array_equal(oo_o, np.where(b, o, 0))
    np.testing.assert_array_equal(oo_ov, np.where(b, ov, 0))
    np.testing.assert_array_equal(get, np.where(b, np.where(i > 0, i, -1), -2))
    np.testing.assert_array_equal(ob, np.ones(T, int))
    np.testing.assert_array_equal(obv, b)


@pytest.mark.parametrize("src,line,col,message", [
    ("datatype L = Nil | Cons (h: int, t: L);\n", 1, 34,
     "unsupported construct: recursive algebraic data types ('L' through "
     "'Cons.t'"),
    ("datatype D = A | B (x: int);\nnode n(d: D) returns (y: int);\n"
     "let y = match d with | A : 0 end; tel\n", 3, 9,
     "'match' is not exhaustive: no case for B(...)"),
    ("datatype D = A | B (x: int);\nnode n(d: D) returns (y: int);\n"
     "let y = match d with | A : 0 | C(z) : z end; tel\n", 3, 32,
     "'C' is not a constructor of 'D'"),
    ("datatype D = A | B (x: int);\nnode n(d: D) returns (y: int);\n"
     "let y = match d with | A : 0 | B(z, w) : z end; tel\n", 3, 32,
     "constructor 'B' has 1 field(s), the pattern gives 2"),
    ("datatype D = A | B (x: int);\nnode n(r: real) returns (d: D);\nlet d = B(r); tel\n",
     3, 11, "field 'x' of 'B' must be int, not real"),
    ("datatype O<T> = N | S (v: T);\nnode n() returns (ok: bool);\nlet ok = N = N; tel\n",
     3, 10, "cannot infer the type of 'T' in 'N': write N@<T> with the types"),
])
def test_datatype_errors_are_located_in_lustre_terms(src, line, col, message):
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.lus", src))
    assert info.value.lines[0].startswith(f"t.lus:{line}:{col}: error: {message}")


def test_machine_integers_wrap_and_convert():
    src = """node m(x: int; a, b: uint8; c, d: int8) returns (s: uint8; p: int8; q: uint8;
    lt: bool; slt: bool; band: uint8; bor: int8; bnot: int8; back: int; wide: int16; ci: int8);
let
  s = a + b;
  p = c * d;
  q = a div (uint8 3);
  lt = a < b;
  slt = c < d;
  band = a && b;
  bor = c || d;
  bnot = !c;
  back = int a + int c;
  wide = (int16 a) - (int16 c);
  ci = (int8 x);
tel
"""
    x = RNG.integers(-1000, 1000, T).astype(np.int32)
    a_u = RNG.integers(0, 256, T)
    b_u = RNG.integers(0, 256, T)
    a = a_u.astype(np.uint8).view(np.int8)  # uint8 inputs: the same 8 bits, signed
    b = b_u.astype(np.uint8).view(np.int8)
    c = RNG.integers(-128, 128, T).astype(np.int8)
    d = RNG.integers(-128, 128, T).astype(np.int8)
    out = _all(src, "m", {"x": x, "a": a, "b": b, "c": c, "d": d})
    s, p, q, lt, slt, band, bor, bnot, back, wide, ci = out

    def as_u8(v):
        return np.asarray(v).astype(np.int64) % 256

    def as_i(v, bits):
        v = np.asarray(v, np.int64) % (1 << bits)
        return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)

    np.testing.assert_array_equal(as_u8(s), (a_u + b_u) % 256)
    np.testing.assert_array_equal(p, as_i(c.astype(np.int64) * d, 8))
    np.testing.assert_array_equal(as_u8(q), a_u // 3)
    np.testing.assert_array_equal(lt, a_u < b_u)  # unsigned comparison
    np.testing.assert_array_equal(slt, c < d)
    np.testing.assert_array_equal(as_u8(band), a_u & b_u)
    np.testing.assert_array_equal(bor, c | d)
    np.testing.assert_array_equal(bnot, ~c)
    np.testing.assert_array_equal(back, a_u + c)  # uint8 zero-extends, int8 sign-extends
    np.testing.assert_array_equal(wide, a_u - c.astype(np.int64))
    np.testing.assert_array_equal(ci, as_i(x, 8))


@pytest.mark.parametrize("src,message", [
    ("node m(a: uint8; c: int8) returns (s: uint8);\nlet s = a + c; tel\n",
     "t.lus:2:9: error: operands of different types (uint8 and int8)"),
    # a machine integer is no enumeration: no clock constructor, no merge on it
    ("node m(k: int8; x: int) returns (y: int);\nlet y = current (x when A(k)); tel\n",
     "t.lus:2:25: error: 'A' is not a constructor of the type of 'k' (int8)"),
    ("node m(k: uint8; x: int) returns (y: int);\nlet y = merge k (A -> x) (B -> x); tel\n",
     "t.lus:2:15: error: cannot merge on 'k' of type uint8"),
])
def test_machine_integer_type_errors_are_located(src, message):
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.lus", src))
    assert info.value.lines[0] == message


def test_tuple_types_and_group_literals():
    src = """type pair = [int, bool];
node g(i: int; t: pair) returns (u: [int, bool, real]; first: int; same: bool);
let
  u = '(i + 1, not t[1], 2.5);
  first = t[0];
  same = t = '(i, true);
tel
"""
    i = RNG.integers(-3, 3, T).astype(np.int32)
    t0 = RNG.integers(-3, 3, T).astype(np.int32)
    t1 = RNG.random(T) < 0.5
    u0, u1, u2, first, same = _all(src, "g", {"i": i, "t.0": t0, "t.1": t1})
    np.testing.assert_array_equal(u0, i + 1)
    np.testing.assert_array_equal(u1, ~t1)
    np.testing.assert_array_equal(u2, np.full(T, 2.5, np.float32))
    np.testing.assert_array_equal(first, t0)
    np.testing.assert_array_equal(same, (t0 == i) & t1)


def test_polymorphic_nodes_are_monomorphized_per_use():
    src = """datatype Opt<T> = None | Some (v: T);
node Delay<T>(init, x: T) returns (y: T) let y = init -> pre x; tel
node Swap<A; B>(a: A; b: B) returns (b2: B; a2: A) let b2 = b; a2 = a; tel
type Box<T> = struct { f: T };
node n(i: int; c: bool) returns (di: int; dc: bool; do: Opt<int>; s1: bool; s2: int;
                                  bx: Box<int>);
let
  di = Delay@<int>(0, i);
  dc = Delay(true, c);
  do = Delay(None@<int>, Some(i));
  s1, s2 = Swap(i, c);
  bx = Box@<int> { f = (i : int) };
tel
"""
    module = translate(SourceFile("t.lus", src))
    names = sorted(op.sym_name.data for op in module.ops)
    assert names == ["Delay$Opt_int_", "Delay$bool", "Delay$int", "Swap$int$bool", "n"]
    i = RNG.integers(-5, 6, T).astype(np.int32)
    c = RNG.random(T) < 0.5
    di, dc, do, dov, s1, s2, bx = _all(src, "n", {"i": i, "c": c})
    np.testing.assert_array_equal(di, np.concatenate([[0], i[:-1]]))
    np.testing.assert_array_equal(dc, np.concatenate([[True], c[:-1]]))
    np.testing.assert_array_equal(do, np.concatenate([[0], np.ones(T - 1, int)]))
    np.testing.assert_array_equal(dov, np.concatenate([[0], i[:-1]]))
    np.testing.assert_array_equal(s1, c)
    np.testing.assert_array_equal(s2, i)
    np.testing.assert_array_equal(bx, i)


def test_constants_of_composite_types_and_element_updates():
    src = """datatype Opt<T> = None | Some (v: T);
const table: int^3 = [1, 5, 9];
const pair: [int, bool] = '(7, true);
const nothing: Opt<int> = None@<int>;
node n(k: int) returns (v: int; p: [int, bool]; o: Opt<int>; a: int^3);
let
  v = table[k];
  p = pair[0 := k];
  o = if k > 0 then Some(k) else nothing;
  a = table[1 := k];
tel
"""
    k = np.array([0, 1, 2, 3, -1, 2, 0, 1, 5, 2, 1, 0], np.int32)
    v, p0, p1, o, ov, a0, a1, a2 = _all(src, "n", {"k": k})
    np.testing.assert_array_equal(v, np.array([1, 5, 9])[np.where((k >= 0) & (k < 3), k, 2)])
    np.testing.assert_array_equal(p0, k)
    np.testing.assert_array_equal(p1, np.ones(T, bool))
    np.testing.assert_array_equal(o, (k > 0).astype(int))
    np.testing.assert_array_equal(ov, np.where(k > 0, k, 0))
    np.testing.assert_array_equal(np.stack([a0, a1, a2]), np.stack([np.ones(T), k, np.full(T, 9)]))


def test_the_guide_example_runs_as_written(tmp_path):
    """docs/guide/lustre.md's data type example, on the lus interpreter and IREE:
    k = 0, 1, 0, 1 and x = 1, 3, 2, 6 give a Circle of radius 1 (area 3), a
    3x2 Rect (6), a Circle of radius 2 (12 > 10: Some(12)), a 6x2 Rect (12);
    n counts 250, 253, 256 = 0, 3 in uint8, printed unsigned; saved unsigned too."""
    from conftest import REPO, run_tool
    from steplus.tools.step_run import main

    folder = REPO / "examples" / "lustre" / "types"
    want = ["tick 0: s=0 s.r=1. s.w=0. s.h=0. a=3. big=0 big.v=0. round=True n=250",
            "tick 1: s=1 s.r=0. s.w=3. s.h=2. a=6. big=0 big.v=0. round=False n=253",
            "tick 2: s=0 s.r=2. s.w=0. s.h=0. a=12. big=1 big.v=12. round=True n=0",
            "tick 3: s=1 s.r=0. s.w=6. s.h=2. a=12. big=1 big.v=12. round=False n=3"]
    guide = (REPO / "docs" / "guide" / "lustre.md").read_text()
    line = next(ln.strip() for ln in guide.splitlines()
                if ln.strip().startswith("step-run examples/lustre/types/shapes.lus"))
    argv = [a.replace("examples/lustre/types/", f"{folder}/") for a in shlex.split(line)[1:]]
    for backend in ("reactive", "iree"):
        res = run_tool(main, [*argv, "--backend", backend])
        assert res.code == 0, res.err
        assert res.out.splitlines() == want
    out = tmp_path / "o.npz"
    assert run_tool(main, [*argv, "--output", str(out)]).code == 0
    n = np.load(out)["n"]
    assert n.dtype == np.uint8 and n.tolist() == [250, 253, 0, 3]


def test_bit_vectors_of_any_width_wrap_concatenate_and_extract():
    """Kind 2's uint<n> / int<n>, held in the smallest iW (here i8): values
    reduced to n bits at the input and after every operation."""
    src = """node b(a: uint<4>; c: int<5>; x: uint<3>) returns (s: uint<4>; d: int<5>;
    cat: uint<7>; hi: uint<2>; lo: uint<3>);
let
  s = a + a;
  d = c + c;
  cat = a ++ x;
  hi = cat[6:5];
  lo = cat[2:0];
tel
"""
    a = np.array([0, 1, 7, 8, 15, 20, 3, 9, 12, 14, 5, 31], np.int8)
    c = np.array([0, 1, -1, 7, 8, 15, -16, 16, -9, 5, 12, -3], np.int8)
    x = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 3], np.int8)

    def wrap(v, n, signed):
        v = np.asarray(v, np.int64) % (1 << n)
        return np.where(v >= 1 << (n - 1), v - (1 << n), v) if signed else v

    s, d, cat, hi, lo = _all(src, "b", {"a": a, "c": c, "x": x})
    a4, c5, x3 = wrap(a, 4, False), wrap(c, 5, True), wrap(x, 3, False)
    np.testing.assert_array_equal(s, wrap(2 * a4, 4, False))
    np.testing.assert_array_equal(d, wrap(2 * c5, 5, True))
    np.testing.assert_array_equal(cat, a4 * 8 + x3)
    np.testing.assert_array_equal(hi, (a4 * 8 + x3) >> 5)
    np.testing.assert_array_equal(lo, x3)


def test_real_literals_without_leading_digit_and_in_hexadecimal():
    """Kind 2's `.45e1` and C99's hexadecimal floats `0x3.1f4p-5` (= 0x31f4 / 2^12 / 2^5)."""
    src = "node n() returns (a, b, c: real; d: int);\nlet a = .45e1; b = 0x3.1f4p-5; " \
          "c = 0x1p4; d = 0x1F; tel\n"
    a, b, c, d = _all(src, "n", {})
    np.testing.assert_array_equal(a, np.full(T, 4.5, np.float32))
    np.testing.assert_array_equal(b, np.full(T, 0x31F4 / 2**12 / 2**5, np.float32))
    np.testing.assert_array_equal(c, np.full(T, 16.0, np.float32))
    np.testing.assert_array_equal(d, np.full(T, 31))
