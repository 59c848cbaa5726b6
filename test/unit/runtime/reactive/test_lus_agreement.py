"""Every example under examples/lus/ on 240 ticks of random inputs: the lus
interpreter, the sync interpreter (after convert-lus-to-sync, instances as
coroutines), real IREE (step functions compiled for the CPU; batched — one
@n_run call — and tick by tick) and a plain-Python reference agree — exactly on integers and booleans, within 1e-5
relative on floats."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

import lus_references as ref
from conftest import REPO
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.tools.iree_run import run_node_iree
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node

TICKS = 240


def _ints(rng, lo=-1000, hi=1000):
    return rng.integers(lo, hi, size=TICKS).astype(np.int32)


def _bools(rng, p=0.5):
    return rng.random(TICKS) < p


def _floats(rng):
    return rng.standard_normal(TICKS).astype(np.float32)


def _vectors(rng):
    return rng.standard_normal((TICKS, 1, 4)).astype(np.float32)


# file, node, {input: generator}, reference
EXAMPLES = {
    "integrator": ("integrator.mlir", "integr",
                   {"i": lambda r: r.integers(-(2**31), 2**31 - 1, TICKS).astype(np.int32)},
                   ref.integrator),
    "two_cycle": ("two_cycle.mlir", "two_cycle", {"x": _floats}, ref.two_cycle),
    "counter": ("counter.mlir", "counter", {"reset": lambda r: _bools(r, 0.1)}, ref.counter),
    "watchdog": ("watchdog.mlir", "watchdog",
                 {"heartbeat": lambda r: _bools(r, 0.2), "armed": lambda r: _bools(r, 0.8)},
                 ref.watchdog),
    "window_avg": ("window_avg.mlir", "window_avg", {"x": _floats}, ref.window_avg),
    "two_rate": ("two_rate.mlir", "two_rate", {"x": _ints}, ref.two_rate),
    "lstm": ("lstm.mlir", "lstm", {"x": _vectors, "reset": lambda r: _bools(r, 0.05)}, ref.lstm),
    "subsampled": ("subsampled.mlir", "subsampled",
                   {"x": _vectors, "reset": lambda r: _bools(r, 0.02)}, ref.subsampled),
}


def _lus(module, node, inputs):
    return run_node(module, node, inputs, TICKS)


def _sync(module, node, inputs):
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    lowered.verify()
    return run_sync_node(lowered, node, inputs, TICKS)


def _iree(module, node, inputs):  # batched: one @node_run call, one dispatch
    return run_node_iree(module, node, inputs, TICKS)


def _iree_tick(module, node, inputs):  # one @node_step call per tick
    return run_node_iree(module, node, inputs, TICKS, per_tick=True)


def _assert_same(got, expected, path):
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert len(g) == len(e) == TICKS
        g, e = np.asarray(g), np.asarray(e)
        if np.issubdtype(e.dtype, np.floating):
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{path}: output {k}")
        else:
            np.testing.assert_array_equal(g.astype(np.int64), e.astype(np.int64),
                                          err_msg=f"{path}: output {k}")


@pytest.mark.parametrize("path", ["lus", "sync", "iree", "iree_tick"])
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_agrees_with_reference(example, path):
    filename, node, gens, reference = EXAMPLES[example]
    rng = np.random.default_rng(sorted(EXAMPLES).index(example))
    inputs = {name: gen(rng) for name, gen in gens.items()}
    module = parse_xdsl((REPO / "examples" / "lus" / filename).read_text())
    run = {"lus": _lus, "sync": _sync, "iree": _iree, "iree_tick": _iree_tick}[path]
    _assert_same(run(module, node, inputs), reference(*inputs.values()), path)


def test_generated_lstm_examples_are_current():
    import gen_lstm

    lus_dir = REPO / "examples" / "lus"
    assert (lus_dir / "lstm.mlir").read_text() == gen_lstm.lstm_text()
    assert (lus_dir / "subsampled.mlir").read_text() == gen_lstm.subsampled_text()




@pytest.mark.parametrize("path", ["lus", "sync", "iree", "iree_tick"])
def test_sub_clocked_instance_keeps_its_state_between_its_ticks(path):
    # The instance on `c` only reacts (and only advances its fby) when c holds;
    # lowered to IREE this is a fby on a sub-clock whose state is held on the
    # base clock in between.
    rng = np.random.default_rng(7)
    xs = rng.integers(-100, 100, size=TICKS).astype(np.int32)
    cs = rng.random(TICKS) < 0.4
    ref_b = np.cumsum(np.cumsum(xs)).astype(np.int32)
    ref_m = np.where(cs, np.cumsum(np.where(cs, xs, 0)), xs).astype(np.int32)
    module = parse_xdsl(ref.SUBCLOCKED_INSTANCES)
    run = {"lus": _lus, "sync": _sync, "iree": _iree, "iree_tick": _iree_tick}[path]
    _assert_same(run(module, "twice", {"x": xs, "c": cs}), [ref_b, ref_m], path)


# m = x -> max(x, pre m) in the normal form: the pre reads %m, defined after it.
RUNNING_MAX = """
lus.node @running_max(%x: i32) -> (i32) {
  %pm = lus.pre %m : i32
  %mx = arith.maxsi %x, %pm : i32
  %m = lus.merge "1(0)" %x %mx : i32
  lus.yield (%m : i32)
}
"""

# A pre on the sub-clock `on %c`, initialized on that sub-clock, written before
# the value it delays: present exactly in the ticks where %c holds.
HELD = """
lus.node @held(%x: i32, %c: i1) -> (i32) {
  %c0 = arith.constant 0 : i32
  %ps = lus.pre %xs : i32
  %g = lus.merge "1(0)" %c0 %ps : i32
  %xs = lus.when %c %x : i32
  %xn = lus.when not %c %x : i32
  %m = lus.merge %c %g %xn : i32
  lus.yield (%m : i32)
}
"""


@pytest.mark.parametrize("path", ["lus", "sync", "iree", "iree_tick"])
def test_running_max_reads_a_pre_defined_later(path):
    rng = np.random.default_rng(11)
    xs = rng.integers(-1000, 1000, size=TICKS).astype(np.int32)
    expected = np.maximum.accumulate(xs)
    run = {"lus": _lus, "sync": _sync, "iree": _iree, "iree_tick": _iree_tick}[path]
    _assert_same(run(parse_xdsl(RUNNING_MAX), "running_max", {"x": xs}), [expected], path)


def _held_reference(xs, cs):
    out, last = [], 0  # the sampled x of the previous tick where c held
    for x, c in zip(xs, cs):
        if c:
            out.append(last)
            last = x
        else:
            out.append(x)
    return np.array(out, dtype=np.int32)


@pytest.mark.parametrize("path", ["lus", "sync", "iree", "iree_tick"])
def test_pre_on_a_sub_clock_is_present_on_that_clock(path):
    rng = np.random.default_rng(12)
    xs = rng.integers(-1000, 1000, size=TICKS).astype(np.int32)
    cs = rng.random(TICKS) < 0.4
    run = {"lus": _lus, "sync": _sync, "iree": _iree, "iree_tick": _iree_tick}[path]
    got = run(parse_xdsl(HELD), "held", {"x": xs, "c": cs})
    _assert_same(got, [_held_reference(xs, cs)], path)
