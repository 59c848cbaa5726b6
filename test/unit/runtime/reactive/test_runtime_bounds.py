"""The runtimes stop on programs that would hang or silently misread: a tick
count above the bound, a sync node that never ticks, a reaction whose loop
never reaches its tick, and an undefined value used as a condition."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.runtime.reactive import ReactiveError, run_node
from steplus.runtime.reactive.interpreter import MAX_TICKS
from steplus.runtime.reactive.sync_interp import SyncInstance, run_sync_node, sync_nodes

NO_INPUTS = """
lus.node @k() -> (i32) {
  %c = arith.constant 7 : i32
  lus.yield (%c : i32)
}
"""


def test_a_tick_count_above_the_bound_is_refused_before_running():
    module = parse_xdsl(NO_INPUTS)
    with pytest.raises(ReactiveError, match=r"^1000000000000 ticks requested; the limit is 0 to 10000000$"):
        run_node(module, "k", {}, 10**12)
    assert MAX_TICKS == 10_000_000
    with pytest.raises(ReactiveError, match=r"^4 ticks requested; the limit is 0 to 3$"):
        run_node(module, "k", {}, 4, max_ticks=3)
    assert run_node(module, "k", {}, 3, max_ticks=3) == [[7, 7, 7]]


# The tick is in the branch never taken: every reaction loops without ticking.
NEVER_TICKS = """
sync.node @spin() -> (%o: !sync.sigout<i32>) {
  %c0 = arith.constant 0 : i32
  %false = arith.constant false
  %r = scf.while (%s = %c0) : (i32) -> i32 {
    %true = arith.constant true
    scf.condition(%true) %s : i32
  } do {
  ^bb0(%s_1 : i32):
    %e = sync.output(%o : %s_1) : i32
    scf.if %false {
      %t = sync.tick(%e) : i32
    }
    scf.yield %s_1 : i32
  }
  sync.halt
}
"""


def test_a_reaction_that_never_reaches_its_tick_is_stopped():
    nodes = sync_nodes(parse_xdsl(NEVER_TICKS))
    inst = SyncInstance(nodes, "spin", max_iterations=50)
    with pytest.raises(ReactiveError, match=r"^@spin: scf.while ran 50 iterations without "
                                            r"reaching a sync.tick"):
        inst.react([])
    assert inst.iterations == 51


def test_a_sync_node_without_tick_is_refused():
    no_tick = NEVER_TICKS.replace("%t = sync.tick(%e) : i32", "%u = arith.constant 1 : i32")
    with pytest.raises(ReactiveError, match=r"^sync.node @spin has no sync.tick: it can never "
                                            r"complete a reaction$"):
        run_sync_node(parse_xdsl(no_tick), "spin", {}, 1)


# Without the lus checks (lus-initialization rejects it), the runtime still
# refuses to branch on an undefined condition (it used to read it as true).
UNDEFINED_CONDITION = """
lus.node @n(%x: i32, %y: i32, %c: i1) -> (i32) {
  %pc = lus.pre %c : i1
  %m = lus.merge %pc %x %y : i32
  lus.yield (%m : i32)
}
"""


def test_an_undefined_condition_is_an_error_not_true():
    module = parse_xdsl(UNDEFINED_CONDITION)
    inputs = {"x": np.array([1, 2], np.int32), "y": np.array([3, 4], np.int32),
              "c": np.array([True, False])}
    with pytest.raises(ReactiveError, match=r"^%pc is read by lus.merge but is undefined"):
        run_node(module, "n", inputs, 2)


MUTUALLY_RECURSIVE = """
lus.node @a(%x: i32) -> (i32) {
  %r = lus.instance @b(%x) : (i32) -> i32
  lus.yield (%r : i32)
}
lus.node @b(%x: i32) -> (i32) {
  %r = lus.instance @a(%x) : (i32) -> i32
  lus.yield (%r : i32)
}
"""


@pytest.mark.parametrize("path", ["lus", "sync"])
def test_recursive_instances_are_an_error_not_a_recursion_overflow(path):
    from xdsl.context import Context

    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass

    module = parse_xdsl(MUTUALLY_RECURSIVE)
    inputs = {"x": np.array([1], np.int32)}
    if path == "sync":
        ConvertLusToSyncPass().apply(Context(), module)
    run = run_node if path == "lus" else run_sync_node
    with pytest.raises(ReactiveError, match=r"^recursive instance: @a -> @b -> @a$"):
        run(module, "a", inputs, 1)
