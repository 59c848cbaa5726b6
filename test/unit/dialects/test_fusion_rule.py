"""The fused-add rule (dialects/semantics/fusion.py), the one home both FLOP counts use:
step-metrics' executed FLOPs (passes/step/metrics.fused_adds) and the simulator's
Kernel.free_calls (runtime/fabric/contexts/compute.py)."""

from __future__ import annotations

from steplus.dialects.semantics.fusion import fused_add_calls
from steplus.runtime.fabric.contexts.compute import Kernel


def test_the_accumulator_add_next_to_a_matmul_is_fused():
    # acc + a @ b: slots 0 = a, 1 = b, 2 = acc, 3 = the matmul
    assert fused_add_calls([("matmul_t", [0, 1]), ("add", [2, 3])], acc=2) == [1]


def test_an_add_alone_or_without_the_accumulator_is_work():
    assert fused_add_calls([("add", [0, 1])], acc=1) == []  # a plain reduction: the add is the work
    assert fused_add_calls([("matmul_t", [0, 1]), ("add", [0, 3])], acc=2) == []  # not the accumulator
    assert fused_add_calls([("matmul_t", [0, 1]), ("add", [2, 3])], acc=None) == []  # no accumulator


def test_every_accumulator_add_is_fused_when_something_else_runs():
    calls = [("mul", [0, 1]), ("add", [2, 3]), ("add", [4, 2])]
    assert fused_add_calls(calls, acc=2) == [1, 2]


def test_the_simulator_uses_the_rule():
    # an accum region: args (a, b, acc); the matmul's FLOPs only, 2 * 4 * 8 * 16
    k = Kernel(3, [("matmul", [0, 1]), ("add", [2, 3])], acc_slot=2)
    assert k.free_calls == {1}
    flops, _, out = k.cost(((4, 8), (8, 16), (4, 16)))
    assert out == (4, 16) and flops == 2 * 4 * 8 * 16
    assert Kernel(2, [("add", [0, 1])], acc_slot=1).free_calls == set()
