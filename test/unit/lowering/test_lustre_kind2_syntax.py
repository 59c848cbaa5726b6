"""Kind 2 syntax the corpus needed (LUSTRE-6): comments nested in a contract
block, `cond` blocks, lemmas, `and then` and `elsif`. Expected values from
the programs' meaning (closed forms, Python written from the semantics), run
on the lus and sync interpreters and the modular target."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import REPO
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

TICKS = 8
CORPUS = REPO / "examples" / "lustre"


def _module(src: str):
    return translate(SourceFile("k.lus", src))


def _error(src: str) -> str:
    with pytest.raises(InputError) as info:
        _module(src)
    return info.value.lines[0]


def _everywhere(module, name: str, inputs: dict, expected: list, modular: bool = True):
    """The node's outputs on the lus and sync interpreters (and the modular
    target), each equal to `expected` (one list per output)."""
    got = run_node(module, name, {k: np.asarray(v) for k, v in inputs.items()}, TICKS)
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    runs = {"lus": got, "sync": run_sync_node(lowered, name, inputs, TICKS)}
    if modular:
        runs["modular"] = run_node_modular(module, name, inputs, TICKS)
    for what, outs in runs.items():
        assert len(outs) == len(expected), what
        for k, (g, e) in enumerate(zip(outs, expected)):
            np.testing.assert_array_equal(np.asarray(g).astype(np.int64),
                                          np.asarray(e).astype(np.int64),
                                          err_msg=f"{what}: output {k}")


# -- comments inside a contract block -------------------------------------------------

NESTED = """\
node N(x: int) returns (y: int);
(*@contract
  (* a note, (* nested *), with 'guarantee y < x;' in it *)
  guarantee y > x; -- a line comment holding *) is a comment too
*)
let
  y = x + 1;
tel
node M(x: int) returns (y: int);
/*@contract
  /* C style, nested: /* guarantee y < x; */ */
  guarantee y = x;
*/
let
  y = x;
tel
"""


def test_comments_nest_inside_a_contract_block():
    module = _module(NESTED)
    for name in ("N", "M"):
        report = falsify(module, name, 10, runs=5, seed=0)
        assert report.violation is None
        assert report.properties == 1  # the guarantee, not the commented-out one
    bad = NESTED.replace("y = x + 1;", "y = x;")
    report = falsify(_module(bad), "N", 10, runs=5, seed=0)
    assert report.violation is not None and report.violation.name == "y > x"
    # positions past the blanked comments are the source's
    assert _error(NESTED.replace("y = x + 1;", "y = z + 1;")) == \
        "k.lus:7:7: error: unknown variable 'z'"


def test_the_corpus_two_phase_commit_reads_past_its_contract_comment():
    """two_phase_commit.lus (48:3: a comment inside `(*@contract`) was a syntax
    error; it is read now, rejected at a construct steplus does not run yet (a
    quantifier over an abstract type, 39:26, as of this writing)."""
    path = CORPUS / "two_phase_commit.lus"  # copied from the shared Kind 2 suite
    with pytest.raises(InputError) as info:
        translate(SourceFile("two_phase_commit.lus", path.read_text()))
    first = info.value.lines[0]
    assert ": error: unsupported construct: " in first and "48:3" not in first, first


# -- `and then`, `elsif` ----------------------------------------------------------------

ELSIF = """\
node S(x: int; b: bool) returns (s: int; p: bool);
let
  if x > 5 then
    s = 1;
  elsif x < -5 then
    s = -1;
  elsif b and then x = 0 then
    s = 2;
  else
    s = 0;
  fi
  p = b and then x > 0;
tel
"""


def test_elsif_and_lazy_and():
    x = [7, -9, 0, 0, 3, -2, 6, 0]
    b = [True, False, True, False, True, True, False, True]
    s = [1 if v > 5 else -1 if v < -5 else 2 if c and v == 0 else 0 for v, c in zip(x, b)]
    p = [c and v > 0 for v, c in zip(x, b)]
    _everywhere(_module(ELSIF), "S", {"x": x, "b": b}, [s, p])


# -- cond ------------------------------------------------------------------------------

def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(max(n, 0)):
        a, b = b, a + b
    return a


def _fib_program():
    return _module((CORPUS / "fibonacci.lus").read_text() + """
node top(x: int) returns (a, b, c, d: int);
let
  a = Fib(8) + x; b = Fib(0); c = Fib(-3); d = Fib(2);
tel
""")


def _fib_expected(x):
    return [[_fib(8) + v for v in x], [0] * TICKS, [0] * TICKS, [_fib(2)] * TICKS]


@pytest.mark.slow  # one modular IREE compilation of 69 instances (~5-8 s)
def test_the_corpus_fibonacci_cond_runs_on_the_modular_target():
    from steplus.tools.iree_modular import run_node_modular as modular

    x = list(range(TICKS))
    got = modular(_fib_program(), "top", {"x": x}, TICKS)
    assert [[int(v) for v in c] for c in got] == _fib_expected(x)


def test_the_corpus_fibonacci_cond_unrolls_and_runs():
    """fibonacci.lus's `cond` (first case that holds, `otherwise` else) in a
    `function rec`: Fib(k) unrolled per constant argument equals the Fibonacci
    numbers (0 for k <= 0); its guarantee `f >= 0` holds on Fib$n_8 (the
    modular target: the slow test above)."""
    module = _fib_program()
    x = list(range(TICKS))
    _everywhere(module, "top", {"x": x}, _fib_expected(x), modular=False)
    assert _fib(8) == 21
    report = falsify(module, "Fib$n_8", 5, runs=3, seed=0)
    assert report.violation is None and report.properties == 1


COND = """\
node C(x: int) returns (y, z: int);
let
  frame (y, z)
    y = 0; z = 0;
  let
    cond
    | x > 10: y = 1; z = x;
    | x > 0:  y = 2;
    end
  tel
tel
node D(x: int) returns (y: int; w: bool);
let
  cond
  | x > 0: y = 1; w = true;
  | x < 0: y = -1; w = true;
  otherwise: w = false; y = 0;
  end
tel
"""


def test_cond_takes_the_first_case_that_holds():
    x = [12, 3, -4, 11, 0, 5, 20, -1]
    y, z, yy, zz = [], [], 0, 0
    for v in x:  # frame: a variable a case does not define keeps its last value
        if v > 10:
            yy, zz = 1, v
        elif v > 0:
            yy = 2
        y.append(yy)
        z.append(zz)
    module = _module(COND)
    _everywhere(module, "C", {"x": x}, [y, z])
    _everywhere(module, "D", {"x": x}, [np.sign(x), [v != 0 for v in x]])


def test_cond_errors_are_located():
    src = "node f(x: int) returns (y: int);\nlet\n  cond\n  | x > 0: y = 1;\n  end\ntel\n"
    assert _error(src) == ("k.lus:4:5: error: 'y' is defined in one branch of this 'when' "
                           "block only (outside a frame block every branch must define it)")


# -- lemmas ----------------------------------------------------------------------------

LEMMA = """\
function sq(x: int) returns (y: int);
let y = x * x; tel

lemma SquareNonNegative(a, b: int)
con
  guarantee "square" sq(a) >= 0;
  guarantee "sum of squares" sq(a) + sq(b) >= 2 * a * b;
  decreases a;
noc
let
  when a > 0 then
    SquareNonNegative(a - 1, b);
  else
    auto;
  end
tel
"""


def test_lemma_guarantees_are_checked_its_proof_ignored():
    module = _module(LEMMA)
    report = falsify(module, "SquareNonNegative", 10, runs=20, seed=0)
    assert report.violation is None and report.properties == 2
    # (a - b)^2 >= 0 is the lemma; a false variant is caught
    bad = _module(LEMMA.replace(">= 2 * a * b", ">= 3 * a * b"))
    report = falsify(bad, "SquareNonNegative", 10, runs=20, seed=0)
    assert report.violation is not None and report.violation.name == "sum of squares"
    v = report.violation
    a, b = int(v.trace["a"][-1]), int(v.trace["b"][-1])  # type: ignore[arg-type]
    assert a * a + b * b < 3 * a * b  # the drawn inputs do break it


# -- free constants given values: --const ---------------------------------------------

FREE = """\
type pos = subrange [1, *] of int;
const N: pos;
const K: int;
node Ramp(x: int) returns (A: int^N; s: int);
let
  A[i] = x + i;
  s = x + K;
tel
"""


def test_const_gives_a_free_constant_its_value(tmp_path):
    from conftest import run_tool
    from steplus.tools.lus_translate import main as lus_translate
    from steplus.tools.step_run import main as step_run

    prog = tmp_path / "free.lus"
    prog.write_text(FREE)
    (tmp_path / "x.csv").write_text("5\n-2\n")
    base = [str(prog), "--node", "Ramp", "--ticks", "2", "--input", f"x={tmp_path / 'x.csv'}"]
    # without N the array has no size: located, naming the option
    res = run_tool(step_run, base)
    assert res.code == 1
    assert res.err.splitlines()[0] == (
        f"{prog}:4:35: error: unsupported construct: arrays sized by a free constant without "
        "a value (step-run --const NAME=VALUE gives one) or by an input ('N')")
    for backend in ("reactive", "sync", "modular"):
        res = run_tool(step_run, [*base, "--const", "N=3", "--const", "K=-4",
                                  "--backend", backend])
        assert res.code == 0, res.err
        # A[i] = x + i over N = 3 elements, s = x + K: K = -4 is no input any more
        assert res.out.splitlines() == ["tick 0: A[0]=5 A[1]=6 A[2]=7 s=1",
                                        "tick 1: A[0]=-2 A[1]=-1 A[2]=0 s=-6"]
    # K left free: an input (a held oracle), as without --const
    res = run_tool(step_run, [*base, "--const", "N=2", "--input", f"K={tmp_path / 'x.csv'}"])
    assert res.code == 0 and res.out.splitlines()[1] == "tick 1: A[0]=-2 A[1]=-1 s=3", res.err
    res = run_tool(lus_translate, ["--import-lustre", str(prog), "--const", "N=2"])
    assert res.code == 0 and "lus.node @Ramp" in res.out
    errors = {
        "N=0": f"{prog}:2:7: error: --const N=0: outside the subrange type of 'N'",
        "N=true": f"{prog}:2:7: error: --const N=true: 'N' is of type int, not bool",
        "Q=1": f"{prog}:1:1: error: --const Q=...: the program declares no free constant "
               "'Q' ('const Q: T;')",
        "N=4096.5": f"{prog}:2:7: error: --const N=4096.5: 'N' is of type int, not real",
        "N=5000": f"{prog}:4:35: error: an array size must be an int constant from 1 to 4096, "
                  "not 5000",
    }
    for given, first in errors.items():
        res = run_tool(step_run, [*base, "--const", given])
        assert res.code == 1 and res.err.splitlines()[0] == first, res.err
    usage = {"N": "'N' is not NAME=VALUE", "N=3x": "N: '3x' is not an integer, true, false or "
             "a decimal real", "N=99999999999": "N: 99999999999 does not fit an int (32 bits)"}
    for given, message in usage.items():
        res = run_tool(step_run, [*base, "--const", given])
        assert res.code == 2 and res.err == f"step-run: error: --const: {message}\n"
    res = run_tool(step_run, [*base, "--const", "N=1", "--const", "N=2"])
    assert res.code == 2 and res.err == "step-run: error: --const: N is given twice\n"


# -- pre, ->, fby inside a when block: on the block's clock ---------------------------

WHEN = """\
node W(b: bool; x: int) returns (n, prev, s: int);
let
  frame (n, prev, s)
    n = 0; prev = 0; s = 0;
  let
    when b then
      n = 0 -> pre n + 1;
      prev = pre x;
      s = x + 1;
    else
      n = 100 -> pre n - 1;
    end
  tel
tel
"""


def _when_reference(b, x, first):
    """Each branch runs on its clock (Kind 2: a node activated on `b`, on `not b`):
    `pre n` is n at the previous tick of the branch's clock, `0 -> ...` 0 at its
    first; `pre x` at the first tick of b is the oracle `first`; a variable a
    branch does not define keeps its last value (the frame)."""
    n, prev, s = [], [], []
    on, off, last_x, p, ss = 0, 0, None, 0, 0
    for t in range(TICKS):
        if b[t]:
            n.append(on)
            on += 1
            p = first if last_x is None else last_x
            last_x, ss = x[t], x[t] + 1
        else:
            n.append(100 - off)
            off += 1
        prev.append(p)
        s.append(ss)
    return [n, prev, s]


def test_pre_and_arrows_in_a_when_block_run_on_its_clock(tmp_path):
    module = _module(WHEN)
    b = [True, False, True, True, False, False, True, False]
    x = [3, 9, -4, 7, 1, 2, 5, 8]
    oracle = "pre.8.14"  # `pre x` at 8:14, undefined at the first tick of b
    assert [a.name_hint for a in next(o for o in module.ops if o.sym_name.data == "W")
            .input_args] == ["b", "x", oracle]
    for first in (0, -6):
        _everywhere(module, "W", {"b": b, "x": x, oracle: [first] * TICKS},
                    _when_reference(b, x, first), modular=first == 0)
    # step-run takes 0 for the oracle when no --input gives it
    from conftest import run_tool
    from steplus.tools.step_run import main as step_run

    prog, bs, xs = (tmp_path / f for f in ("w.lus", "b.csv", "x.csv"))
    prog.write_text(WHEN)
    bs.write_text("".join(f"{int(v)}\n" for v in b))
    xs.write_text("".join(f"{v}\n" for v in x))
    res = run_tool(step_run, [str(prog), "--node", "W", "--ticks", str(TICKS),
                              "--input", f"b={bs}", "--input", f"x={xs}"])
    assert res.code == 0, res.err
    n, prev, s = _when_reference(b, x, 0)
    assert res.out.splitlines() == [f"tick {t}: n={n[t]} prev={prev[t]} s={s[t]}"
                                    for t in range(TICKS)]


TUPLE = """\
node acc(x: int) returns (sum, count: int);
let
  sum = x -> pre sum + x;
  count = 1 -> pre count + 1;
tel
node T(c: bool; x: int) returns (s, n: int);
let
  frame (s, n)
    s = -1; n = -1;
  let
    when c then
      s, n = acc(x);
    else
      s, n = acc(-x);
    end
  tel
tel
"""


def test_a_call_with_several_results_in_a_when_block_runs_on_its_clock():
    """`s, n = acc(x)` in each branch: two instances, each run (its state kept)
    only on its branch's ticks: the sum and count of x over the ticks of c, of
    -x over the others."""
    c = [True, True, False, True, False, False, True, False]
    x = [3, 9, -4, 7, 1, 2, 5, 8]
    s, n, acc = [], [], {True: [0, 0], False: [0, 0]}
    for t in range(TICKS):
        a = acc[c[t]]
        a[0] += x[t] if c[t] else -x[t]
        a[1] += 1
        s.append(a[0])
        n.append(a[1])
    _everywhere(_module(TUPLE), "T", {"c": c, "x": x}, [s, n])


def test_the_corpus_array_index_types_refinement_is_named_by_its_predicate():
    """F(x, y) returns (o: pos | o <= N;) with N = 3: o = 1 + y breaks the
    refinement for y >= 3 (random nat inputs draw such a y); the property is
    named by the predicate alone (it was read up to the next '}')."""
    from steplus.lowering.lustre import free_consts

    path = CORPUS / "array_index_types.lus"
    with free_consts.bound(["N=3", "M=2"]):
        module = translate(SourceFile(path.name, path.read_text()))
    report = falsify(module, "F", 10, runs=5, seed=0)
    v = report.violation
    assert v is not None and v.name == "o refined by o <= N"
    assert int(v.trace["y"][-1]) + 1 > 3  # type: ignore[arg-type]


# -- history types --------------------------------------------------------------------

HISTORY = (CORPUS / "test-issue-1271.lus").read_text()


def test_history_quantifier_ranges_over_every_past_value():
    """test-issue-1271.lus assumes `forall (old: history(in_p)) (true -> inp <> old)`
    with in_p = 0 -> pre inp: from the second tick on, inp differs from 0 and from
    every earlier inp. So res = inp differs from its value two ticks before too (a
    history of one step would not give that), and res <> 0 holds but at tick 0."""
    three = HISTORY.replace('check "P1" true -> res <> pre res;', """\
check "P1" true -> res <> pre res;
  check "P2" (0 -> pre (0 -> 1)) = 1 => res <> pre pre res;
  check "P3" true -> res <> 0;""")
    report = falsify(_module(three), "Obs", 8, runs=5, seed=0)
    assert report.violation is None and (report.properties, report.assumptions) == (3, 1)
    assert report.ticks == 40  # every drawn run stays within the assumption
    first = falsify(_module(HISTORY.replace('check "P1" true -> res <> pre res;',
                                            'check "P4" res <> 0;')), "Obs", 2, runs=60,
                    seed=0).violation
    assert first is not None and first.tick == 0 and first.trace["inp"] == [0]


def test_history_of_an_expression_is_located():
    src = HISTORY.replace("history(in_p)", "history(in_p + 1)")
    assert _error(src).startswith("k.lus:5:")


def test_the_corpus_lemma_sum_double_is_checked_through_its_recursion():
    """sum_double.lus: lemma double(n) guarantees n >= 0 => sum(2n) = 2 sum(n) + n^2,
    sum a `function rec` called with the flow n: unrolled by depth (sized.py), the
    lemma's check node assuming sum's `decreases` measure (2n, n) below 64. The
    guarantee holds on random runs; a wrong variant (+ n instead of + n * n) is
    caught at an n where they differ (n^2 != n: n >= 2)."""
    src = (CORPUS / "sum_double.lus").read_text()
    report = falsify(_module(src), "double", 4, runs=4, seed=0)
    assert report.violation is None and (report.properties, report.assumptions) == (1, 2)
    assert report.ticks == 16  # every drawn tick within the assumptions
    bad = falsify(_module(src.replace("2 * sum(n) + n * n", "2 * sum(n) + n")), "double", 4,
                  runs=4, seed=0).violation
    assert bad is not None and bad.name == "sum-double"
    n = int(bad.trace["n"][-1])  # type: ignore[arg-type]
    assert n >= 2 and 2 * n < 64
