"""Integer division, remainder and `int()` on every Lustre backend (issue 24): the lus interpreter,
the sync interpreter, IREE batched (one @n_run dispatch), IREE tick by tick and the modular
target agree with the closed form (truncating division, remainder with the dividend's sign,
INT_MIN div -1 wrapping to INT_MIN, int(2.9) = 2), and a division by zero is the same located
error at its tick on all five (never a value, never a signal)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO, run_tool
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.mlir_bridge import parse_xdsl, steplus_context
from steplus.runtime.reactive import RuntimeArithmeticError, run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.iree_run import run_node_iree
from steplus.tools.loading import load_module

SOURCE = """node d(a, b: int; r: real) returns (q, m: int; t: int);
let
  q = a div b;
  m = a mod b;
  t = int(r);
tel
"""
INT_MIN = -2**31
A = [7, -7, 7, -7, INT_MIN, INT_MIN, 2**31 - 1, 0, 5]
B = [2, 2, -2, -2, -1, 1, -3, 4, 0]
R = [2.9, -2.9, 0.5, -0.5, 3.0, 1e9, -7.99, 0.0, 1.5]


def _trunc(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return (q + 2**31) % 2**32 - 2**31  # wraps: INT_MIN div -1 = INT_MIN


EXPECTED_Q = [_trunc(a, b) for a, b in zip(A[:-1], B[:-1])]
EXPECTED_M = [a - _trunc(a, b) * b if (a, b) != (INT_MIN, -1) else 0 for a, b in zip(A[:-1], B[:-1])]
EXPECTED_T = [2, -2, 0, 0, 3, 1_000_000_000, -7, 0]


def _sync(module, name, inputs, ticks):
    lowered = module.clone()
    ConvertLusToSyncPass().apply(steplus_context(), lowered)
    return run_sync_node(lowered, name, inputs, ticks)


BACKENDS = {
    "lus": run_node,
    "sync": _sync,
    "iree": run_node_iree,
    "iree-per-tick": lambda m, n, i, t: run_node_iree(m, n, i, t, per_tick=True),
    "modular": run_node_modular,
}


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("div") / "d.lus"
    path.write_text(SOURCE)
    return path, load_module(str(path))


def _inputs(n: int) -> dict[str, np.ndarray]:
    return {"a": np.array(A[:n], np.int32), "b": np.array(B[:n], np.int32), "r": np.array(R[:n], np.float32)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_remainder_and_int_follow_the_rule(program, backend):
    _, module = program
    n = len(A) - 1
    q, m, t = (np.asarray(col).astype(np.int64).tolist() for col in BACKENDS[backend](module, "d", _inputs(n), n))
    assert q == EXPECTED_Q
    assert m == EXPECTED_M
    assert t == EXPECTED_T


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_zero_is_an_error_at_its_tick(program, backend):
    path, module = program
    with pytest.raises(RuntimeArithmeticError) as e:
        BACKENDS[backend](module, "d", _inputs(len(A)), len(A))
    assert str(e.value) == f"tick 8: integer division by zero (arith.divsi at {path}:3:7)"


def test_mod_by_zero_is_reported_at_the_mod(tmp_path):
    path = tmp_path / "m.lus"
    path.write_text("node m(a, b: int) returns (r: int);\nlet\n  r = a mod b;\ntel\n")
    module = load_module(str(path))
    for run in BACKENDS.values():
        with pytest.raises(RuntimeArithmeticError, match=rf"^tick 1: integer division by zero "
                                                          rf"\(arith.remsi at {path}:3:7\)$"):
            run(module, "m", {"a": np.array([3, 3], np.int32), "b": np.array([2, 0], np.int32)}, 2)


I64_NODE = """
lus.node @wide(%a: i64, %b: i64) -> (i64, i64) {
  %q = arith.divsi %a, %b : i64
  %r = arith.remsi %a, %b : i64
  lus.yield (%q : i64, %r : i64)
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_64_bit_division_is_exact(backend):
    module = parse_xdsl(I64_NODE)
    a = np.array([2**53 + 1, -(2**62) - 3, 2**63 - 1], np.int64)
    b = np.array([1, 7, -2], np.int64)
    q, r = (np.asarray(col).astype(np.int64).tolist() for col in BACKENDS[backend](module, "wide", {"a": a, "b": b}, 3))
    assert q == [2**53 + 1, -((2**62 + 3) // 7), -((2**63 - 1) // 2)]
    assert r == [0, -((2**62 + 3) % 7), 1]


@pytest.mark.parametrize("backend", ["reactive", "sync", "iree", "modular"])
def test_step_run_reports_the_tick_and_exits_1(program, tmp_path, backend):
    from steplus.tools.step_run import main

    path, _ = program
    for k, name in enumerate("abr"):
        np.save(tmp_path / f"{name}.npy", list(_inputs(len(A)).values())[k])
    args = [str(path), "--node", "d", "--ticks", str(len(A)), "--backend", backend,
            *(f"--input={n}={tmp_path / n}.npy" for n in "abr")]
    r = run_tool(main, args)
    assert r.code == 1
    assert r.err == f"{path}: error: tick 8: integer division by zero (arith.divsi at {path}:3:7)\n"
    assert r.out == ""


def test_iree_stream_division_by_zero_is_not_a_signal(program):
    path, _ = program
    lines = "".join(f"{a} {b} {r}\n" for a, b, r in zip(A, B, R))
    p = subprocess.run([sys.executable, "-m", "steplus.tools.step_run", str(path), "--node", "d", "--stream",
                        "--backend", "iree"], input=lines, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode == 1, p.stderr  # SIGFPE was -8
    lines = p.stdout.splitlines()
    assert len(lines) == 8  # the ticks before the failing one, printed as they ran

    def values(line):  # "tick 4: -2147483648 0 3" (or with output names, "q=-2147483648 ...")
        return [int(v.split("=")[-1]) for v in line.split()[2:]]

    assert lines[0].startswith("tick 0:") and values(lines[0]) == [3, 1, 2]
    assert lines[4].startswith("tick 4:") and values(lines[4]) == [INT_MIN, 0, 3]
    assert p.stderr == f"{path}: error: tick 8: integer division by zero (arith.divsi at {path}:3:7)\n"


MORE_NODE = """
lus.node @more(%a: i32, %b: i32, %k: i32) -> (i32, i32, i32, i32, i32, i32) {
  %f = arith.floordivsi %a, %b : i32
  %c = arith.ceildivsi %a, %b : i32
  %u = arith.divui %a, %b : i32
  %l = arith.shli %a, %k : i32
  %r = arith.shrsi %a, %k : i32
  %z = arith.shrui %a, %k : i32
  lus.yield (%f : i32, %c : i32, %u : i32, %l : i32, %r : i32, %z : i32)
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_other_integer_ops_agree_with_the_closed_form(backend):
    module = parse_xdsl(MORE_NODE)
    a = [-7, 7, -8, INT_MIN, 2**31 - 1, -1]
    b = [2, -2, 3, -1, 5, 7]
    k = [1, 4, 31, 0, 30, 3]  # in range: MLIR defines them
    cols = BACKENDS[backend](module, "more", {"a": np.array(a, np.int32), "b": np.array(b, np.int32),
                                              "k": np.array(k, np.int32)}, len(a))
    f, c, u, sl, sr, zr = (np.asarray(col).astype(np.int64).tolist() for col in cols)

    def wrap(v):
        return (v + 2**31) % 2**32 - 2**31

    assert f == [wrap(x // y) for x, y in zip(a, b)]  # -7 floordiv 2 = -4
    assert c == [wrap(-((-x) // y)) for x, y in zip(a, b)]
    assert u == [wrap((x % 2**32) // (y % 2**32)) for x, y in zip(a, b)]
    assert sl == [wrap(x << s) for x, s in zip(a, k)]
    assert sr == [x >> s for x, s in zip(a, k)]
    assert zr == [wrap((x % 2**32) >> s) for x, s in zip(a, k)]


def test_an_op_outside_the_registry_is_named():
    from steplus.runtime.reactive import ReactiveError

    module = parse_xdsl("""
lus.node @n(%x: f32) -> (tensor<2xf32>) {
  %r = tensor.splat %x : tensor<2xf32>
  lus.yield (%r : tensor<2xf32>)
}
""")
    with pytest.raises(ReactiveError, match=r"^tensor.splat: not supported by the reactive runtime$"):
        run_node(module, "n", {"x": np.zeros(1, np.float32)}, 1)


def test_host_loop_batch_keeps_outputs_of_one_type_apart(program, monkeypatch):
    # the fallback when IREE cannot make the loop one dispatch: IREE merged the identical output
    # buffers of q, m and t and returned t's values three times (runtime/iree_batch.py)
    import steplus.tools.iree_run as iree_run
    from steplus.lowering.mlir_bridge import generic_text

    real = iree_run.compile_module

    def no_dispatch(module, extra_flags=()):
        if "flow.dispatch.region" in generic_text(module):
            raise iree_run.IreeError("iree-compile failed: (refused by the test)")
        return real(module, extra_flags)

    monkeypatch.setattr(iree_run, "compile_module", no_dispatch)
    _, module = program
    node = iree_run.IreeNode.from_lus(module, "d")
    assert node.batch_mode == "host-loop"
    n = len(A) - 1
    q, m, t = (np.asarray(col).astype(np.int64).tolist() for col in node.run(_inputs(n), n))
    assert (q, m, t) == (EXPECTED_Q, EXPECTED_M, EXPECTED_T)
    node.reset()
    with pytest.raises(RuntimeArithmeticError, match="^tick 8: integer division by zero"):
        node.run(_inputs(len(A)), len(A))


SHIFT_NODE = """
lus.node @sh(%a: i32, %k: i32) -> (i32, i32, i32) {
  %l = arith.shli %a, %k : i32
  %r = arith.shrsi %a, %k : i32
  %z = arith.shrui %a, %k : i32
  lus.yield (%l : i32, %r : i32, %z : i32)
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_shifts_by_the_width_or_more_are_defined_on_every_backend(backend):
    # MLIR: poison; steplus: as shifting one bit at a time (0, or the sign for shrsi)
    a = [-5, 5, -1, INT_MIN, 12345, -7]
    k = [32, 33, -1, 40, 31, 2**31 - 1]  # -1 is 2**32 - 1 as an unsigned amount
    cols = BACKENDS[backend](parse_xdsl(SHIFT_NODE), "sh", {"a": np.array(a, np.int32), "k": np.array(k, np.int32)},
                             len(a))
    sl, sr, zr = (np.asarray(col).astype(np.int64).tolist() for col in cols)
    assert sl == [0, 0, 0, 0, -2**31, 0]  # 12345 << 31 keeps bit 0 in the sign bit
    assert sr == [-1, 0, -1, -1, 0, -1]
    assert zr == [0, 0, 0, 0, 0, 0]
