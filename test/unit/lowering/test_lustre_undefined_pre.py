"""Kind 2's reading of `pre` in its first cycle (`lowering/lustre/undefined.py`):
in `.lus` an unguarded `pre` read there is an oracle input `pre.L.C` (free:
two draws give two first values, the same values after); `--format lustre-v6`
and `.ept` keep the initialization error. Expected values follow from the
Lustre semantics: `pre x` at tick t > 0 is x at t - 1."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import run_tool
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import import_lustre
from steplus.lowering.lustre.undefined import is_undefined_input
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_opt import main as step_opt_main
from steplus.tools.step_run import main as step_run_main

T = 6
XS = np.array([3, -1, 4, 1, -5, 9], np.int32)


def _runs(src: str, node: str, **inputs) -> list[list[int]]:
    """Outputs on the lus interpreter, checked equal on the sync interpreter
    and the modular target."""
    module = translate(SourceFile("t.lus", src))  # with the lus checks
    got = [[int(v) for v in c] for c in run_node(module, node, inputs, T)]
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for again in (run_sync_node(lowered, node, inputs, T),
                  run_node_modular(module, node, inputs, T)):
        assert [[int(v) for v in c] for c in again] == got
    return got


def _inputs(src: str, node: str) -> list[str]:
    module = import_lustre(src, "t.lus").module
    n = next(op for op in module.ops if getattr(op, "sym_name").data == node)
    return [a.name_hint or "" for a in n.body.block.args]


SRC = "node n(x: int) returns (y: int);\nlet\n  y = pre x;\ntel\n"


def test_the_first_value_is_a_free_oracle_input():
    assert _inputs(SRC, "n") == ["x", "pre.3.7"]
    for first in (7, -40):
        (y,) = _runs(SRC, "n", x=XS, **{"pre.3.7": np.full(T, first, np.int32)})
        assert y == [first, *XS[:-1].tolist()]  # only tick 0 differs between the draws
    # the oracle is read in the first cycle only: later values of it do not count
    (y,) = _runs(SRC, "n", x=XS, **{"pre.3.7": np.arange(T, dtype=np.int32)})
    assert y == [0, *XS[:-1].tolist()]


def test_nested_pres_are_two_oracles():
    src = "node n(x: int) returns (y: int);\nlet\n  y = pre pre x;\ntel\n"
    assert _inputs(src, "n") == ["x", "pre.3.7", "pre.3.11"]
    (y,) = _runs(src, "n", x=XS, **{"pre.3.7": np.full(T, 5, np.int32),
                                     "pre.3.11": np.full(T, 6, np.int32)})
    assert y == [5, 6, *XS[:-2].tolist()]  # outer pre at tick 0, inner one at tick 1


def test_a_callee_passes_its_oracle_up_and_guarded_pres_get_none():
    src = ("node f(x: int) returns (y: int);\nlet\n  y = pre x;\ntel\n"
           "node g(x: int) returns (z: int);\nlet\n  z = f(x) + (0 -> pre x);\ntel\n")
    assert _inputs(src, "g") == ["x", "f.7.7.pre.3.7"]
    (z,) = _runs(src, "g", x=XS, **{"f.7.7.pre.3.7": np.full(T, 100, np.int32)})
    assert z == [100, *(2 * XS[:-1]).tolist()]
    assert all(is_undefined_input(n) for n in ("pre.3.7", "f.6.7.pre.3.7", "pre.3.7.1"))
    assert not any(is_undefined_input(n) for n in ("x", "any.3.7", "f.6.7.y", "pre"))


def test_a_record_pre_has_one_oracle_per_field_and_bools_are_free_too():
    src = ("type r = struct { a: bool; b: int };\n"
           "node n(x: int) returns (y: r);\nlet\n  y = pre (r { a = x > 0; b = x });\ntel\n")
    assert _inputs(src, "n") == ["x", "pre.4.7.0", "pre.4.7.1"]
    a, b = _runs(src, "n", x=XS, **{"pre.4.7.0": np.ones(T, bool),
                                     "pre.4.7.1": np.full(T, 9, np.int32)})
    assert a == [1, *(XS[:-1] > 0).astype(int).tolist()]
    assert b == [9, *XS[:-1].tolist()]


def test_strict_lustre_v6_and_heptagon_reject_with_the_located_error(tmp_path):
    prog = tmp_path / "p.lus"
    prog.write_text(SRC)
    res = run_tool(step_opt_main, [str(prog), "--format", "lustre-v6"])
    assert res.code == 1
    assert res.err.splitlines()[0] == (
        f"{prog}:3:7: error: 'y' may be read uninitialized in the first cycle of its clock (it "
        "depends on a 'pre' not guarded by '->' or 'fby' on the clock of the 'pre')")
    with pytest.raises(InputError, match="may be read uninitialized in the first cycle"):
        translate(SourceFile("t.ept", SRC))
    # `pre` of a constant: Lustre V6 rejects it as Heptagon does
    prog.write_text("node n(x: int) returns (y: int);\nlet\n  y = pre 3;\ntel\n")
    res = run_tool(step_opt_main, [str(prog), "--format", "lustre-v6"])
    assert res.code == 1 and "may be read uninitialized" in res.err


def test_kind2_reading_warns_at_the_pre_and_step_run_defaults_to_zero(tmp_path):
    prog = tmp_path / "p.lus"
    prog.write_text(SRC)
    res = run_tool(step_opt_main, [str(prog)])
    assert res.code == 0 and "lus.node @n(%x: i32, %pre.3.7: i32) -> (i32)" in res.out
    assert res.err.splitlines()[0] == (
        f"{prog}:3:7: warning: this 'pre' is read in the first cycle of its clock (by 'y'), "
        "where Kind 2 leaves it undefined: it is the oracle input 'pre.3.7' there (0 when "
        "step-run is not given it; --format lustre-v6 rejects the program)")
    (tmp_path / "x.csv").write_text("3\n-1\n4\n")
    (tmp_path / "o.csv").write_text("8\n8\n8\n")
    args = [str(prog), "--node", "n", "--ticks", "3", "--input", f"x={tmp_path / 'x.csv'}"]
    for backend in ("reactive", "sync"):
        res = run_tool(step_run_main, [*args, "--backend", backend])
        assert res.out == "tick 0: y=0\ntick 1: y=3\ntick 2: y=-1\n", res.err
        assert res.err.count("warning:") == 1
        res = run_tool(step_run_main, [*args, "--backend", backend,
                                       "--input", f"pre.3.7={tmp_path / 'o.csv'}"])
        assert res.out == "tick 0: y=8\ntick 1: y=3\ntick 2: y=-1\n", res.err


def test_a_pre_on_a_sub_clock_stays_an_error():
    src = ("node n(c: bool; x: int) returns (y: int);\nlet\n"
           "  y = merge c (true -> pre (x when c)) (false -> 0 when not c);\ntel\n")
    with pytest.raises(InputError, match="may be read uninitialized"):
        translate(SourceFile("t.lus", src))


def test_a_polymorphic_node_reads_its_undefined_pre_at_each_instance_type():
    src = ("node D<T>(x: T) returns (y: T);\nlet y = pre x; tel\n"
           "node M(a: int; b: bool) returns (c: int; d: bool);\nlet c = D(a); d = D(b); tel\n")
    assert _inputs(src, "M") == ["a", "b", "D.4.9.pre.2.9", "D.4.19.pre.2.9"]
    c, d = _runs(src, "M", a=XS, b=XS > 0, **{"D.4.9.pre.2.9": np.full(T, -8, np.int32),
                                             "D.4.19.pre.2.9": np.ones(T, bool)})
    assert c == [-8, *XS[:-1].tolist()]
    assert d == [1, *(XS[:-1] > 0).astype(int).tolist()]
