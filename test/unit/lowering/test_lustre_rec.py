"""Kind 2 recursive functions (`function rec`, `lowering/lustre/sized.py`):
unrolled per constant argument; expected values from the closed forms
(sum 0..n = n(n+1)/2, Fibonacci numbers)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import run_tool

from steplus.dialects import lus
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_run import main as step_run

SRC = """function rec sum(n: int) returns (m: int);
(*@contract
  guarantee "non-negative" m >= 0;
  decreases n;
*)
let
  m = when n <= 0 then 0 else n + sum(n - 1);
tel
function rec fib(n: int) returns (f: int);
con
  decreases n;
noc
let
  f = if n <= 1 then n else fib(n - 1) + fib(n - 2);
tel
function rec even(n: int) returns (e: bool);
let e = when n = 0 then true else odd(n - 1); tel
function rec odd(n: int) returns (o: bool);
let o = when n = 0 then false else even(n - 1); tel
const K: int = 7;
node top(x: int) returns (s, f: int; e: bool);
let
  s = x + sum(10);
  f = fib(K + 3);
  e = even(K);
tel
"""
XS = np.array([1, 2, -3], np.int32)


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def test_recursion_with_constant_arguments_is_unrolled_and_runs_everywhere():
    module = translate(SourceFile("r.lus", SRC))
    names = {op.sym_name.data for op in module.ops if isinstance(op, lus.NodeOp)}
    # one node per constant argument: sum 10..0, fib 10..0 (shared), even/odd 7..0;
    # sum's guarantee kept in each instance: sum$n_10$check ... (step-run --check)
    assert {n for n in names if n.startswith("sum$")} == {
        f"sum$n_{k}{check}" for k in range(11) for check in ("", "$check")}
    assert len([n for n in names if n.startswith("fib$")]) == 11
    assert {n for n in names if n.startswith(("even$", "odd$"))} == {
        "even$n_7", "odd$n_6", "even$n_5", "odd$n_4", "even$n_3", "odd$n_2", "even$n_1",
        "odd$n_0"}
    got = [[int(v) for v in c] for c in run_node(module, "top", {"x": XS}, 3)]
    assert got == [(XS + 55).tolist(), [_fib(10)] * 3, [0] * 3]  # 7 is odd
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for other in (run_sync_node(lowered, "top", {"x": XS}, 3),
                  run_node_modular(module, "top", {"x": XS}, 3)):
        assert [[int(v) for v in c] for c in other] == got


@pytest.mark.parametrize("call, line, col, message", [
    # even has no `decreases` measure: nothing bounds its depth
    ("x + (if even(x) then 1 else 0)", 23, 20, "unsupported construct: recursive functions "
     "('rec') called with an argument that is not a compile-time constant ('n' of 'even'): "
     "they are unrolled per constant argument"),
    ("x + fib(x)", 23, 11, "unsupported construct: a recursive function ('rec') making 2 "
     "recursive calls ('fib') called with arguments that are not compile-time constants: "
     "only one recursive call per function is unrolled by depth"),
    ("sum(65)", 7, 35, "the recursive function 'sum' is unrolled past 64 instances (one per "
     "constant argument): its recursion does not stop at a compile-time constant here"),
])
def test_recursion_that_is_not_constant_or_too_deep_is_a_located_error(call, line, col,
                                                                      message):
    src = SRC.replace("x + sum(10)", call)
    with pytest.raises(InputError) as info:
        translate(SourceFile("r.lus", src))
    assert info.value.lines[0] == f"r.lus:{line}:{col}: error: {message}"
    translate(SourceFile("r.lus", SRC.replace("sum(10)", "sum(63)")))  # 64 levels: fine


def test_recursion_without_rec_is_still_rejected():
    src = "node f(n: int) returns (m: int); let m = f(n); tel\n"
    with pytest.raises(InputError, match="recursive instantiation of node 'f'"):
        translate(SourceFile("r.lus", src))


def test_recursion_with_flow_arguments_is_unrolled_by_depth():
    """sum(x) with x a flow: sum$depth_63 ... sum$depth_0, each calling the next
    (lazily: only as deep as x asks), past level 0 sum$depth_end (0); top$check
    assumes sum's `decreases` measure x below 64. Within it sum(x) = x(x+1)/2 for
    x > 0, else 0; at x = 65 (outside) the level past 0 gives 0 for sum(1) = 1."""
    module = translate(SourceFile("r.lus", SRC.replace("x + sum(10)", "sum(x)")))
    names = {op.sym_name.data for op in module.ops if isinstance(op, lus.NodeOp)}
    assert {f"sum$depth_{k}" for k in range(64)} | {"sum$depth_end"} <= names
    top_check = next(op for op in module.ops if op.sym_name.data == "top$check")
    assert [o.data for o in top_check.attributes["lustre.outputs"].data][-1] == (
        "recursion of 'sum' within 64 levels (its decreases measure below 64)")
    xs = np.array([0, 3, 10, -2, 63, 65], np.int32)
    want = [n * (n + 1) // 2 if n > 0 else 0 for n in xs.tolist()]
    want[-1] -= 1  # past the unrolled levels
    got = [int(v) for v in run_node(module, "top", {"x": xs}, len(xs))[0]]
    assert got == want
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    assert [int(v) for v in run_sync_node(lowered, "top", {"x": xs}, len(xs))[0]] == want


@pytest.mark.parametrize("backend", ["reactive", "sync"])
def test_a_plain_run_stops_where_a_recursion_goes_past_its_levels(tmp_path, backend):
    """sum(x) = x(x+1)/2 while x is below the 64 unrolled levels (the call's
    `decreases` measure x < 64); at the first tick where x reaches 64 the plain run
    stops with an error located at the call (line 8, column 7), exit 1, instead of
    printing sum$depth_end's 0 in the sum (sum(65) printed as 2144)."""
    path = tmp_path / "sum.lus"
    path.write_text("function rec sum(n: int) returns (s: int);\n(*@contract\n"
                    "  decreases n;\n*)\nlet\n  s = if n <= 0 then 0 else n + sum(n - 1);\n"
                    "tel\nnode top(x: int) returns (y: int); let y = sum(x); tel\n")
    xs = [3, 0, 63, 65, 70]
    (tmp_path / "x.csv").write_text("".join(f"{x}\n" for x in xs))
    res = run_tool(step_run, [str(path), "--node", "top", "--input", f"x={tmp_path / 'x.csv'}",
                              "--ticks", "5", "--backend", backend])
    assert res.code == 1
    assert res.out.splitlines() == [f"tick {t}: y={x * (x + 1) // 2}"
                                    for t, x in enumerate(xs[:3])]
    assert res.err.splitlines() == [
        f"{path}:8:44: error: the recursion of 'sum' goes deeper than 64 levels at tick 3 "
        "(a 'function rec' called with flows is unrolled 64 levels: its decreases measure "
        "must stay below 64)"]
