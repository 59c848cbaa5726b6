"""Kind 2's undefined `pre`s found in one fixed point (`first_cycle_reads`,
`passes/lus/initialization.py`): in `y = 0 -> pre pre ... pre x` every `pre`
but the guarded outer one has its first cycle read, however deep the chain
(16 re-import rounds found one level each: 18 levels were an error). The
expected values follow from the Lustre semantics: with P_1 the outer `pre` and
P_n = pre x, P_k(t) = P_(k+1)(t - 1), so y(t) = P_(t+1)(0), the oracle of
P_(t+1), for 1 <= t < n, and y(t) = x(t - n) from t = n on."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import run_tool
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_opt import main as step_opt_main
from steplus.tools.step_run import main as step_run_main


def _chain(n: int) -> str:
    return "node N(x: int) returns (y: int);\nlet\n  y = 0 -> " + "pre " * n + "x;\ntel\n"


def _oracle(k: int) -> str:
    """The input of P_k (k >= 2): the `pre` at column 12 + 4 (k - 1) of line 3."""
    return f"pre.3.{12 + 4 * (k - 1)}"


def test_a_chain_of_20_pres_reads_19_oracles_each_at_its_tick():
    n, ticks = 20, 24
    module = translate(SourceFile("t.lus", _chain(n)))  # with the lus checks
    node = next(op for op in module.ops if getattr(op, "sym_name").data == "N")
    names = [a.name_hint for a in node.body.block.args]
    assert names == ["x", *(_oracle(k) for k in range(2, n + 1))]
    xs = np.arange(100, 100 + ticks, dtype=np.int32)
    inputs = {"x": xs, **{_oracle(k): np.full(ticks, 10 * k, np.int32)
                          for k in range(2, n + 1)}}
    want = [0, *(10 * (t + 1) for t in range(1, n)), *(int(xs[t - n]) for t in range(n, ticks))]
    (y,) = run_node(module, "N", inputs, ticks)
    assert [int(v) for v in y] == want
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    (y,) = run_sync_node(lowered, "N", inputs, ticks)
    assert [int(v) for v in y] == want


def test_a_2000_deep_chain_is_accepted_and_strict_lustre_keeps_the_located_error(tmp_path):
    n = 2000
    prog = tmp_path / "chain.lus"
    prog.write_text(_chain(n))
    (tmp_path / "x.csv").write_text("5\n6\n7\n")
    (tmp_path / "o.csv").write_text("9\n1\n1\n")
    res = run_tool(step_run_main, [str(prog), "--node", "N", "--ticks", "3",
                                   "--input", f"x={tmp_path / 'x.csv'}",
                                   "--input", f"{_oracle(2)}={tmp_path / 'o.csv'}"])
    assert res.code == 0, res.err[-500:]
    # y(1) = P_2's oracle at tick 0; y(2) = P_3's, not given: 0
    assert res.out.splitlines() == ["tick 0: y=0", "tick 1: y=9", "tick 2: y=0"]
    assert res.err.count("warning:") == n - 1
    res = run_tool(step_opt_main, [str(prog), "--format", "lustre-v6"])
    assert res.code == 1
    lines = res.err.splitlines()
    assert lines[0] == (
        f"{prog}:3:7: error: 'y' may be read uninitialized in cycles of its clock that no "
        "initialization guards (it depends on a 'pre' not guarded by '->' or 'fby' on the "
        "clock of the 'pre')")
    col = 12 + 4 * (n - 1)  # the innermost pre, where the undefined value starts
    assert f"{prog}:3:{col}: note: the uninitialized 'pre' is here" in lines


def test_a_deep_chain_on_a_sub_clock_stays_an_error():
    src = ("node n(c: bool; x: int) returns (y: int);\nlet\n  y = merge c (true -> "
           + "pre " * 20 + "(x when c)) (false -> 0 when not c);\ntel\n")
    with pytest.raises(InputError, match="may be read uninitialized"):
        translate(SourceFile("t.lus", src))


def test_an_arrow_covers_only_its_first_cycle_and_fby_reads_next_one_cycle_late():
    """`0 -> pre pre x`: the outer pre is guarded, the inner one read at tick 1.
    `(pre x) fby (pre pre x)`: z(0) is the init, `pre x` in its first cycle;
    z(t) = next(t - 1), so z(1) is the outer pre's first cycle and z(2) the
    inner one's: three oracles."""
    src = ("node N(x: int) returns (y, z: int);\nlet\n  y = 0 -> pre pre x;\n"
           "  z = (pre x) fby (pre pre x);\ntel\n")
    module = translate(SourceFile("t.lus", src))
    node = next(op for op in module.ops if getattr(op, "sym_name").data == "N")
    oracles = {"pre.3.16": 70, "pre.4.8": 80, "pre.4.20": 85, "pre.4.24": 90}
    assert sorted(a.name_hint or "" for a in node.body.block.args) == sorted(["x", *oracles])
    ticks = 5
    xs = np.array([3, -1, 4, 1, -5], np.int32)
    inputs = {"x": xs, **{k: np.full(ticks, v, np.int32) for k, v in oracles.items()}}
    y, z = run_node(module, "N", inputs, ticks)
    assert [int(v) for v in y] == [0, 70, 3, -1, 4]
    assert [int(v) for v in z] == [80, 85, 90, 3, -1]
