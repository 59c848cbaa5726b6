"""The reactive runtime against plain-Python reference models (200+ ticks of
random inputs), and the lus transformations preserve behaviour tick for tick."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from conftest import REPO
from lus_references import SUBCLOCKED_INSTANCES
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.passes.lus.inline import LusInlineInstancesPass
from steplus.passes.lus.normalize import LusNormalizePass
from steplus.runtime.reactive import ReactiveError, run_node

TICKS = 250
rng = np.random.default_rng(0)


def load(name: str):
    return parse_xdsl((REPO / "examples" / "lus" / name).read_text())


def integrator_ref(xs: np.ndarray) -> list[int]:
    acc, out = np.int32(0), []
    with np.errstate(over="ignore"):
        for x in xs:
            acc = np.int32(acc + x)
            out.append(int(acc))
    return out


def two_cycle_ref(xs: np.ndarray) -> list[float]:
    c, y, out = 0, np.float32(0.0), []
    for x in xs:
        ck = c != 0
        m = x if ck else y
        out.append(float(y))
        y, c = np.float32(m), (c + 1) % 2
    return out


def _normalized(module):
    LusNormalizePass().apply(Context(), module)
    module.verify()
    return module


INT_INPUTS = rng.integers(-(2**31), 2**31 - 1, size=TICKS, dtype=np.int64).astype(np.int32)
FLOAT_INPUTS = rng.standard_normal(TICKS).astype(np.float32)


@pytest.mark.parametrize("transform", [lambda m: m, _normalized], ids=["source", "normalized"])
def test_integrator_matches_reference(transform):
    out = run_node(transform(load("integrator.mlir")), "integr", {"i": INT_INPUTS}, TICKS)[0]
    assert [int(v) for v in out] == integrator_ref(INT_INPUTS)  # wraps like int32


@pytest.mark.parametrize("transform", [lambda m: m, _normalized], ids=["source", "normalized"])
def test_two_cycle_matches_reference(transform):
    out = run_node(transform(load("two_cycle.mlir")), "two_cycle", {"x": FLOAT_INPUTS}, TICKS)[0]
    np.testing.assert_allclose([float(v) for v in out], two_cycle_ref(FLOAT_INPUTS), rtol=1e-5)




def test_instances_and_their_inlining_agree():
    xs = rng.integers(-100, 100, size=TICKS).astype(np.int32)
    cs = rng.integers(0, 2, size=TICKS).astype(np.bool_)
    ref_a = np.cumsum(xs).astype(np.int32)
    ref_b = np.cumsum(ref_a).astype(np.int32)
    ref_s = np.where(cs, np.cumsum(np.where(cs, xs, 0)), xs).astype(np.int32)
    module = parse_xdsl(SUBCLOCKED_INSTANCES)
    b, m = run_node(module, "twice", {"x": xs, "c": cs}, TICKS)
    assert [int(v) for v in b] == ref_b.tolist()
    assert [int(v) for v in m] == ref_s.tolist()  # the sub-clocked instance only reacts when c
    LusInlineInstancesPass().apply(Context(), module)
    assert "lus.instance" not in str(module)
    b2, m2 = run_node(module, "twice", {"x": xs, "c": cs}, TICKS)
    assert [int(v) for v in b2] == ref_b.tolist()
    assert [int(v) for v in m2] == ref_s.tolist()


def test_ill_clocked_program_is_refused_before_running():
    module = parse_xdsl("""
lus.node @bad(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %s = arith.addi %w, %x : i32
  lus.yield (%x : i32)
}""")
    # The clock calculus rejects it before any absent value could be read.
    with pytest.raises(ReactiveError, match="expected clock base on %c, found base"):
        run_node(module, "bad", {"x": np.ones(3, np.int32), "c": np.zeros(3, np.bool_)}, 3)


def test_sub_clocked_output_is_absent():
    module = parse_xdsl("""
lus.node @sub(%x: i32) -> (i32) {
  %w = lus.when "(01)" %x : i32
  %z = arith.constant 0 : i32
  %m = lus.merge "(01)" %w %z : i32
  lus.yield (%m : i32)
}""")
    out = run_node(module, "sub", {"x": np.arange(4, dtype=np.int32) + 5}, 4)[0]
    # %w is absent at ticks 0 and 2 (clock (01)): the merge takes the constant there
    assert [int(v) for v in out] == [0, 6, 0, 8]


def test_missing_input_is_an_error():
    with pytest.raises(ReactiveError, match="missing input"):
        run_node(load("integrator.mlir"), "integr", {}, 3)
