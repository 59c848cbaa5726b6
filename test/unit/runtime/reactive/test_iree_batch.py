"""Batch-of-ticks execution (`@n_run`) and the compiled-module cache.

Batched runs are compared with the per-tick path of the same compiled module
(exactly on integers and booleans, to float tolerance on floats) and, where
a closed form exists, with it; a batched run continues from the state the
previous run left. The cache is checked through its counters, never timing:
a second compilation of the same IR is a hit, a corrupt entry is recompiled,
a failure is remembered, an unsafe directory is not used."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import REPO
from steplus.lowering.lustre import import_lustre
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.runtime import iree_cache
from steplus.runtime.iree_cache import STATS, CachedCompileError, cached_compile
from steplus.tools.iree_run import IreeNode

TICKS = 300


def _lus(name):
    return parse_xdsl((REPO / "examples" / "lus" / name).read_text())


def _lustre(name):
    return import_lustre((REPO / "examples" / "lustre" / name).read_text(), name).module


def _same(batched, per_tick):
    assert len(batched) == len(per_tick)
    for k, (b, p) in enumerate(zip(batched, per_tick)):
        b, p = np.asarray(b), np.asarray(p)
        assert b.shape == p.shape, k
        if np.issubdtype(p.dtype, np.floating):
            np.testing.assert_allclose(b, p, rtol=1e-5, atol=1e-6, err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(b, p, err_msg=f"output {k}")


rng = np.random.default_rng(19)
CASES = {
    "integrator": (lambda: _lus("integrator.mlir"), "integr",
                   {"i": rng.integers(-(2**31), 2**31 - 1, TICKS).astype(np.int32)}),
    "watchdog": (lambda: _lus("watchdog.mlir"), "watchdog",
                 {"heartbeat": rng.random(TICKS) < 0.2, "armed": rng.random(TICKS) < 0.8}),
    "lstm": (lambda: _lus("lstm.mlir"), "lstm",
             {"x": rng.standard_normal((TICKS, 1, 4)).astype(np.float32),
              "reset": rng.random(TICKS) < 0.05}),
    "restart_every": (lambda: _lustre("test_restart_every.lus"), "test_node",
                      {"reset": rng.random(TICKS) < 0.1}),
    "two_instances": (lambda: _lustre("test-merge.lus"), "two_instances",
                      {"e": rng.integers(-50, 50, TICKS).astype(np.int32),
                       "h": rng.random(TICKS) < 0.4}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_batched_run_equals_per_tick_run(case):
    load, node, inputs = CASES[case]
    iree_node = IreeNode.from_lus(load(), node)
    assert iree_node.batch_mode == "dispatch"
    batched = iree_node.run(inputs, TICKS)
    iree_node.reset()
    per_tick = iree_node.run(inputs, TICKS, per_tick=True)
    _same(batched, per_tick)


def test_batched_integrator_is_the_wrapping_running_sum_and_continues():
    _, node, inputs = CASES["integrator"]
    iree_node = IreeNode.from_lus(_lus("integrator.mlir"), node)
    xs = inputs["i"]
    expected = (np.cumsum(xs.astype(np.int64)) % 2**32).astype(np.uint32).view(np.int32)
    first = iree_node.run_batch([xs[:100]], 100)[0]
    second = iree_node.run_batch([xs[100:]], TICKS - 100)[0]  # from the state left
    np.testing.assert_array_equal(np.concatenate([first, second]), expected)
    assert first.dtype == np.int32


def test_node_without_inputs_takes_the_tick_count():
    source = "node count() returns (n: int); let n = 0 -> pre n + 3; tel"
    iree_node = IreeNode.from_lus(import_lustre(source, "count.lus").module, "count")
    assert iree_node.batch_mode == "dispatch"
    out = iree_node.run([], 7)[0]
    assert [int(v) for v in out] == [0, 3, 6, 9, 12, 15, 18]


def test_boolean_outputs_come_back_as_booleans():
    _, node, inputs = CASES["watchdog"]
    iree_node = IreeNode.from_lus(_lus("watchdog.mlir"), node)
    alarm = iree_node.run_batch([inputs["heartbeat"], inputs["armed"]], TICKS)[0]
    assert alarm.dtype == np.bool_


# --- the cache -------------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("STEPLUS_CACHE_DIR", str(d))
    STATS.reset()
    return d


def test_second_compile_of_the_same_ir_is_a_hit(cache):
    calls = []

    def compile_fn():
        calls.append(1)
        return b"module bytes"

    assert cached_compile("ir text", ["-x"], compile_fn) == b"module bytes"
    assert cached_compile("ir text", ["-x"], compile_fn) == b"module bytes"
    assert len(calls) == 1 and STATS.compiles == 1 and STATS.hits == 1
    cached_compile("other ir", ["-x"], compile_fn)  # another key
    cached_compile("ir text", ["-y"], compile_fn)  # other flags: another key
    assert len(calls) == 3


def test_corrupt_entry_is_recompiled_and_rewritten(cache):
    cached_compile("ir", [], lambda: b"good bytes")
    (entry,) = cache.glob("*.vmfb")
    data = entry.read_bytes()
    entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # one flipped bit
    assert cached_compile("ir", [], lambda: b"fresh bytes") == b"fresh bytes"
    assert STATS.compiles == 2 and STATS.hits == 0
    entry.write_bytes(b"garbage without a header")
    assert cached_compile("ir", [], lambda: b"again") == b"again"
    assert cached_compile("ir", [], lambda: b"unused") == b"again"
    assert STATS.hits == 1


def test_failure_is_remembered(cache):
    def failing():
        raise CachedCompileError("iree-compile failed: nope")

    for _ in range(2):
        with pytest.raises(CachedCompileError, match="nope"):
            cached_compile("bad ir", [], failing)
    assert STATS.compiles == 1 and STATS.failures_remembered == 1


def test_failure_without_a_diagnostic_is_not_remembered(cache):
    def crashing():
        raise CachedCompileError("iree-compile failed: killed", remember=False)

    for _ in range(2):
        with pytest.raises(CachedCompileError):
            cached_compile("ir", [], crashing)
    assert STATS.compiles == 2 and STATS.failures_remembered == 0


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_directory_others_can_write_is_not_used(cache):
    cache.mkdir(mode=0o700)
    os.chmod(cache, 0o777)
    assert iree_cache.cache_dir() is None
    cached_compile("ir", [], lambda: b"x")
    assert list(cache.iterdir()) == []
    os.chmod(cache, 0o700)
    assert iree_cache.cache_dir() == cache


def test_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("STEPLUS_CACHE_DIR", "off")
    assert iree_cache.cache_dir() is None


def test_second_iree_node_of_the_same_program_does_not_recompile(cache):
    module = _lus("integrator.mlir")
    first = IreeNode.from_lus(module, "integr")
    assert STATS.compiles == 1 and STATS.hits == 0
    second = IreeNode.from_lus(module, "integr")
    assert STATS.compiles == 1 and STATS.hits == 1
    assert second.vmfb == first.vmfb
    assert [int(v) for v in second.run({"i": np.array([5, -2], np.int32)}, 2)[0]] == [5, 3]


def test_loop_that_cannot_be_one_dispatch_runs_as_a_host_loop(monkeypatch):
    import steplus.tools.iree_run as iree_exec
    from steplus.lowering.mlir_bridge import generic_text

    real = iree_exec.compile_module

    def no_dispatch(module, extra_flags=()):
        if "flow.dispatch.region" in generic_text(module):
            raise iree_exec.IreeError("iree-compile failed: (refused by the test)")
        return real(module, extra_flags)

    monkeypatch.setattr(iree_exec, "compile_module", no_dispatch)
    _, node, inputs = CASES["integrator"]
    iree_node = IreeNode.from_lus(_lus("integrator.mlir"), node)
    assert iree_node.batch_mode == "host-loop"
    batched = iree_node.run(inputs, TICKS)
    iree_node.reset()
    _same(batched, iree_node.run(inputs, TICKS, per_tick=True))


def test_batch_with_too_few_values_is_an_error_not_a_crash():
    from steplus.runtime.reactive import ReactiveError

    iree_node = IreeNode.from_lus(_lus("integrator.mlir"), "integr")
    with pytest.raises(ReactiveError, match="has 3 values for 5 ticks"):
        iree_node.run_batch([np.zeros(3, np.int32)], 5)
    with pytest.raises(ReactiveError, match="has 3 values for 5 ticks"):
        iree_node.run({"i": np.zeros(3, np.int32)}, 5)
