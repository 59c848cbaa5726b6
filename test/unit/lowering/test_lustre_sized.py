"""Kind 2 arrays sized by a `const` node parameter (`lowering/lustre/sized.py`):
one instance per constant size, values derived by hand from the equations."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import REPO
from steplus.dialects import lus
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import LustreError, import_lustre
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

SRC = """const N: int = 4;
node shift(const n: int; x: int) returns (w: int^n);
let
  w[i] = if i = 0 then x else (0 -> pre w[i - 1]);
tel
node total(const n: int; a: int^n) returns (s: int);
var acc: int^n;
let
  acc[i] = if i = 0 then a[0] else acc[i - 1] + a[i];
  s = acc[n - 1];
tel
node top(x: int) returns (w: int^3; s3, s2, s4: int);
let
  w = shift(3, x);
  s3 = total(3, w);
  s2 = total(1 + 1, [x, x]);
  s4 = total(N, shift(N, x));
tel
"""
XS = np.array([1, 2, 3, 4, 5], np.int32)
T = len(XS)


def test_each_constant_size_is_one_instance_and_runs_on_every_backend():
    module = translate(SourceFile("t.lus", SRC))
    names = sorted(op.sym_name.data for op in module.ops if isinstance(op, lus.NodeOp))
    assert names == ["shift$n_3", "shift$n_4", "top", "total$n_2", "total$n_3", "total$n_4"]
    got = [[int(v) for v in c] for c in run_node(module, "top", {"x": XS}, T)]
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for other in (run_sync_node(lowered, "top", {"x": XS}, T),
                  run_node_modular(module, "top", {"x": XS}, T)):
        assert [[int(v) for v in c] for c in other] == got
    # w = x delayed by 0, 1, 2 ticks (0 before); s3 their sum; s2 = 2x;
    # s4 = the sum of x delayed by 0..3
    def delayed(k: int) -> list[int]:
        return [0] * k + XS[:T - k].tolist()
    w0, w1, w2 = delayed(0), delayed(1), delayed(2)
    s3 = [a + b + c for a, b, c in zip(w0, w1, w2)]
    s4 = [a + b for a, b in zip(s3, delayed(3))]
    assert got == [w0, w1, w2, s3, (2 * XS).tolist(), s4]


def test_a_size_that_is_no_compile_time_constant_is_a_located_error():
    src = SRC.replace("w = shift(3, x);", "w = shift(x, x);")
    with pytest.raises(LustreError) as info:
        import_lustre(src, "t.lus")
    assert info.value.pos == src.index("shift(x, x)") + len("shift(")
    assert info.value.message == (
        "the size parameter 'n' of node 'shift' must be a compile-time constant here (a "
        "literal or a constant expression): its arrays are sized by it")


def test_sizes_out_of_range_and_free_constants_are_errors():
    src = SRC.replace("w = shift(3, x);", "w = shift(0, x);")
    with pytest.raises(LustreError, match="an array size must be an int constant from 1 "
                                          "to 4096, not 0"):
        import_lustre(src, "t.lus")
    free = "const K: int;\nnode f(x: int) returns (y: int^K);\nlet y = x ^ K; tel\n"
    with pytest.raises(LustreError) as info:
        import_lustre(free, "t.lus")
    assert info.value.pos == free.index("K)")
    assert info.value.message == ("unsupported construct: arrays sized by a free constant "
                                  "without a value (step-run --const NAME=VALUE gives one) "
                                  "or by an input ('K')")


def test_kind2_corpus_sized_nodes_run_when_a_call_gives_the_size():
    """examples/lustre's array_ext_eq.lus and test_quantified_prop.lus declare
    such nodes without calling them (nothing is lowered: the corpus test);
    called with a constant size they run."""
    corpus = REPO / "examples" / "lustre"
    ext = (corpus / "array_ext_eq.lus").read_text() + (
        "\nnode top(a0, a1, b0, b1: int) returns (ok: bool);\n"
        "let ok = main(2, [a0, a1], [b0, b1]); tel\n")
    rng = np.random.default_rng(3)
    ins = {k: rng.integers(-2, 3, 40).astype(np.int32) for k in ("a0", "a1", "b0", "b1")}
    ins["b0"][::3], ins["b1"][::3] = ins["a0"][::3], ins["a1"][::3]  # A = B at times
    (ok,) = run_node(translate(SourceFile("e.lus", ext)), "top", ins, 40)
    same = (ins["a0"] == ins["b0"]) & (ins["a1"] == ins["b1"])
    # S[k] = A[k] - B[k] (0) where A = B, else A[k] + B[k]; ok = S[0] = S[1]
    want = same | (ins["a0"] + ins["b0"] == ins["a1"] + ins["b1"])
    assert [bool(v) for v in ok] == want.tolist()
    prop = (corpus / "test_quantified_prop.lus").read_text() + (
        "\nnode top(s: int) returns (ok: bool^3);\nlet ok = slide(3, s); tel\n")
    module = translate(SourceFile("q.lus", prop))
    got = run_node(module, "top", {"s": XS}, T)
    # A[0] = s, A[i] = -1 -> pre A[i-1]: every ok[i] holds at tick 0 (A[i] = s
    # or -1) and then stays true (`false -> pre ok[i]`)
    assert [[bool(v) for v in c] for c in got] == [[True] * T] * 3


COUNT = """node count(const n: int; x: int) returns (c: int; d: subrange [0, n] of int);
(*@contract
  guarantee "bounded" 0 <= c and c <= n;
*)
var w: bool^n; acc: int^n;
let
  w[i] = if i = 0 then x > 0 else (false -> pre w[i - 1]);
  acc[i] = (if i = 0 then 0 else acc[i - 1]) + (if w[i] then 1 else 0);
  c = acc[n - 1];
  d = c;
tel
node top(x: int) returns (c, d: int);
let
  c, d = count(3, x);
tel
"""


def _count_reference(xs: list[int], n: int) -> list[int]:
    """c(t): how many of x(t), ..., x(t - n + 1) are positive (before tick 0: none)."""
    return [sum(1 for k in range(n) if t - k >= 0 and xs[t - k] > 0) for t in range(len(xs))]


@pytest.mark.parametrize("mutant,broken", [
    (None, None),
    (("c = acc[n - 1];", "c = acc[n - 1] - 1;"), "bounded"),  # -1: none of the last 3 > 0
    (("d = c;", "d = c + 1;"), "d in subrange [0, 3]"),  # 4 after 3 positives in a row
])
def test_a_sized_instance_keeps_its_contract_and_subranges(tmp_path, mutant, broken):
    from conftest import run_tool
    from steplus.tools.step_run import main as step_run

    src = COUNT if mutant is None else COUNT.replace(*mutant)
    assert mutant is None or mutant[1] in src
    path = tmp_path / "count.lus"
    path.write_text(src)
    module = translate(SourceFile(str(path), src))
    names = {op.sym_name.data for op in module.ops if isinstance(op, lus.NodeOp)}
    assert names == {"top", "count$n_3", "count$n_3$check"}
    if not mutant:
        xs = [3, -1, 4, 1, 5, -9, 2, 6, 5, 3]
        got = [int(v) for v in run_node(module, "top", {"x": np.array(xs, np.int32)}, 10)[0]]
        assert got == _count_reference(xs, 3)
    res = run_tool(step_run, [str(path), "--node", "count$n_3", "--check", "--runs", "50"])
    if broken is None:
        assert res.code == 0 and res.out.startswith(
            "@count$n_3: 2 properties, 0 assumption(s): no violation"), res.out
    else:
        assert res.code == 1
        assert f"error: property '{broken}' of @count$n_3 is violated" in res.out.splitlines()[0]
