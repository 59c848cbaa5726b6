# pyright: strict
"""The fused-add rule: which adds of an accumulating region cost no FLOPs.

An accum/scan update region `acc + a @ b` runs on the fabric as a matmul whose
multiply-adds accumulate in place: the `add` that takes the accumulator is fused
into the matmul. The rule, written once here and used by both counts:

- `passes/step/metrics.py` (`fused_adds`): step-metrics' executed FLOPs leave these
  adds out (its paper-formula FLOPs keep them);
- `runtime/fabric/contexts/compute.py` (`Kernel.free_calls`): the simulator does not
  charge them.

A region whose only calls are such adds (`acc + x`, a plain reduction) fuses nothing:
the add is the work. The rule is on names and argument handles, so it applies to an
op's `step.apply`s (SSA values) and to the simulator's compiled calls (slot numbers)
alike.

Example::

    >>> fused_add_calls([("matmul_t", [0, 1]), ("add", [2, 3])], acc=2)
    [1]
    >>> fused_add_calls([("add", [0, 1])], acc=1)
    []
"""

# pyright: strict

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypeVar

__all__ = ["fused_add_calls"]

T = TypeVar("T")


def fused_add_calls(calls: Sequence[tuple[str, Collection[T]]], acc: T | None) -> list[int]:
    """Indices into `calls` (function name, arguments) of the adds fused into a matmul:
    each `add` taking the accumulator `acc`, when the region also calls something else.
    No accumulator (`acc` None): none."""
    if acc is None:
        return []
    fused = [i for i, (name, args) in enumerate(calls) if name == "add" and acc in args]
    return fused if len(calls) > len(fused) else []
