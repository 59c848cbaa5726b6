"""The modular target (issue 19 item 4): `convert-sync-to-std{target=modular}`
compiled by IREE, its `@sch_*` calls served by the Python runtime module, each
node instance a coroutine. It agrees with the step-function target (IREE,
instances inlined) on lus examples (tensor state and sub-clocked instances
included) and Lustre corpus programs with node instances, resets and
activations, and with closed forms where they exist."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO, run_tool
from steplus.lowering.lustre import import_lustre
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.tools.iree_run import run_node_iree
from steplus.tools.iree_modular import ModularNode, modular_module, run_node_modular

TICKS = 60
rng = np.random.default_rng(23)


def _lus(name):
    return parse_xdsl((REPO / "examples" / "lus" / name).read_text())


def _lustre(name):
    return import_lustre((REPO / "examples" / "lustre" / name).read_text(), name).module


CASES = {
    "counter": (lambda: _lus("counter.mlir"), "counter", {"reset": rng.random(TICKS) < 0.1}),
    "two_rate": (lambda: _lus("two_rate.mlir"), "two_rate",
                 {"x": rng.integers(-1000, 1000, TICKS).astype(np.int32)}),
    "window_avg": (lambda: _lus("window_avg.mlir"), "window_avg",
                   {"x": rng.standard_normal(TICKS).astype(np.float32)}),
    "lstm": (lambda: _lus("lstm.mlir"), "lstm",
             {"x": rng.standard_normal((TICKS, 1, 4)).astype(np.float32),
              "reset": rng.random(TICKS) < 0.1}),
    "subsampled": (lambda: _lus("subsampled.mlir"), "subsampled",
                   {"x": rng.standard_normal((TICKS, 1, 4)).astype(np.float32),
                    "reset": rng.random(TICKS) < 0.05}),
    "two_instances": (lambda: _lustre("test-merge.lus"), "two_instances",
                      {"e": rng.integers(-50, 50, TICKS).astype(np.int32),
                       "h": rng.random(TICKS) < 0.4}),
    "restart_every": (lambda: _lustre("test_restart_every.lus"), "mod3_counter",
                      {"reset": rng.random(TICKS) < 0.15}),
    "activate_every": (lambda: _lustre("test_activate_every.lus"), "merge_when_activate",
                       {"i": rng.integers(-5, 10, TICKS).astype(np.int32)}),
    "nested_pre": (lambda: _lustre("test_node_dep_with_pre_and_nested_call.lus"), "test",
                   {"X": rng.random(TICKS) < 0.5}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_modular_agrees_with_step_functions(case):
    load, node, inputs = CASES[case]
    module = load()
    got = run_node_modular(module, node, inputs, TICKS)
    want = run_node_iree(module, node, inputs, TICKS)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, w)


def test_modular_integrator_is_the_wrapping_running_sum():
    xs = rng.integers(-(2**31), 2**31 - 1, TICKS).astype(np.int32)
    with ModularNode.from_lus(_lus("integrator.mlir"), "integr") as node:
        first = node.run({"i": xs[:20]}, 20)[0]
        rest = node.run({"i": xs[20:]}, TICKS - 20)[0]  # the instance keeps its state
    expected = (np.cumsum(xs.astype(np.int64)) % 2**32).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(np.array(first + rest, np.int32), expected)


def test_each_instance_has_its_own_state():
    # two instances of the same counter, one reset every tick: the runtime
    # must keep one state per instance (per parent and instance number)
    source = """
    node cnt(r: bool) returns (n: int); let n = if r then 0 else (0 -> pre n + 1); tel
    node two(r: bool) returns (a, b: int); let a = cnt(r); b = cnt(true); tel
    """
    with ModularNode.from_lus(import_lustre(source, "two.lus").module, "two") as node:
        a, b = node.run({"r": [False] * 5}, 5)
    assert [int(v) for v in a] == [0, 1, 2, 3, 4]
    assert [int(v) for v in b] == [0, 0, 0, 0, 0]


def test_runtime_calls_are_iree_imports_of_module_sch():
    from xdsl.context import Context

    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass

    synced = _lustre("test-merge.lus")
    ConvertLusToSyncPass().apply(Context(), synced)
    lowered, table = modular_module(synced)
    text = str(lowered)
    assert "@sch.set_instance" in text and "@sch.inst(" in text and "@sch.tick()" in text
    assert "@sch_" not in text
    assert [name for name, _, _ in table][:3] == ["integr", "id", "two_instances"]


def test_step_run_modular_backend(tmp_path):
    from steplus.tools.step_run import main

    np.savetxt(tmp_path / "r.csv", [1, 0, 0, 0, 1, 0, 0], fmt="%d")
    r = run_tool(main, [str(REPO / "examples" / "lustre" / "test_restart_every.lus"),
                        "--node", "mod3_counter", "--ticks", "7",
                        "--input", f"reset={tmp_path / 'r.csv'}", "--backend", "modular"])
    assert r.code == 0, r.err
    # bounded_counter(3) restarted at ticks 0 and 4: 0 1 2 3 | 0 1 2
    # a node from Lustre prints its outputs by name: `tick 0: c=0`
    assert r.out.splitlines()[0].startswith("tick 0: ") and "=" in r.out.splitlines()[0]
    assert [int(ln.split("=")[-1]) for ln in r.out.splitlines()] == [0, 1, 2, 3, 0, 1, 2]
