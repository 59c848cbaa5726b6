"""`lus-causality`: every dependency cycle of a node must pass through fby or pre.

Within one cycle (tick) a value depends instantaneously on the operands of the
op defining it, except that `lus.fby %init %next` depends only on `%init` and
`lus.pre %x` on nothing (both read `%next` / `%x` of the previous cycle). A
cycle of instantaneous dependencies has no evaluation order and is rejected,
naming the values on the cycle, at the op of the cycle that comes first in the
source:

```mlir
lus.node @bad(%x: i32) -> (i32) {
  %a = arith.addi %b, %x : i32   // error: instantaneous dependency cycle: %a -> %b -> %a
  %b = arith.muli %a, %x : i32
  lus.yield (%b : i32)
}
```
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects import lus
from steplus.utils.diagnostics import OpDiagnosticError


def instantaneous_deps(op: Operation) -> list[SSAValue]:
    """The values an op reads in the current cycle (nested regions included)."""
    if isinstance(op, lus.FbyOp):
        return [op.init]
    if isinstance(op, lus.PreOp):
        return []
    deps = list(op.operands)
    for region in op.regions:
        for nested in region.walk():
            deps.extend(nested.operands)
    return deps


_LUSTRE_NODES: weakref.WeakSet[Operation] = weakref.WeakSet()
"""The lus.nodes the Lustre frontend built: diagnostics on them speak Lustre."""


def mark_lustre(node: Operation) -> None:
    """Say that `node` was lowered from Lustre source: the lus checks then
    name its values as Lustre variables (`'y'`, not `%y`) and its operators
    as Lustre writes them (`pre`, `->`, not `lus.pre`, `lus.merge "1(0)"`)."""
    _LUSTRE_NODES.add(node)


def in_lustre(x: SSAValue | Operation) -> bool:
    """Is `x` (a value or an op) inside a node lowered from Lustre?"""
    op = x.owner if isinstance(x, SSAValue) else x
    if isinstance(op, Block):
        op = op.parent_op()
    while op is not None and not isinstance(op, lus.NodeOp):
        op = op.parent_op()
    return op is not None and op in _LUSTRE_NODES


def value_name(value: SSAValue) -> str:
    owner = value.owner
    if in_lustre(value):
        if value.name_hint and not value.name_hint.isdigit():
            # an array element `a[2]` is named `a.2` in the IR
            return "'" + re.sub(r"\.([0-9]+)", r"[\1]", value.name_hint) + "'"
        return "this expression"
    if value.name_hint:
        return f"%{value.name_hint}"
    name = owner.name if isinstance(owner, Operation) else "block argument"
    return f"<result of {name}>"


def find_cycle(node: lus.NodeOp) -> list[Operation] | None:
    """An instantaneous cycle of `node` as a list of ops (first in source order first)."""
    ops = list(node.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    succs: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        for dep in instantaneous_deps(op):
            owner = dep.owner
            if isinstance(owner, Operation) and owner in index:
                succs[op].append(owner)  # op needs owner first
    # Iterative DFS with colours; a back edge closes a cycle.
    colour: dict[Operation, int] = {op: 0 for op in ops}
    for root in ops:
        if colour[root]:
            continue
        stack: list[tuple[Operation, int]] = [(root, 0)]
        path: list[Operation] = []
        while stack:
            op, i = stack.pop()
            if i == 0:
                colour[op] = 1
                path.append(op)
            if i < len(succs[op]):
                stack.append((op, i + 1))
                nxt = succs[op][i]
                if colour[nxt] == 1:
                    cycle = path[path.index(nxt):]
                    first = min(range(len(cycle)), key=lambda k: index[cycle[k]])
                    cycle = cycle[first:] + cycle[:first]
                    # path order is "needs"; report in dataflow order.
                    return [cycle[0], *reversed(cycle[1:])]
                if colour[nxt] == 0:
                    stack.append((nxt, 0))
            else:
                colour[op] = 2
                path.pop()
    return None


@dataclass(frozen=True)
class LusCausalityPass(ModulePass):
    """Reject instantaneous dependency cycles (cycles not through fby/pre).

    Example: `step-opt -p lus-causality prog.mlir`; the error names the values
    on the cycle, e.g. `instantaneous dependency cycle: %a -> %b -> %a`.
    """

    name = "lus-causality"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in op.walk():
            if not isinstance(node, lus.NodeOp):
                continue
            cycle = find_cycle(node)
            if cycle is None:
                continue
            names = [value_name(o.results[0]) if o.results else o.name for o in cycle]
            names.append(names[0])
            raise OpDiagnosticError(
                cycle[0],
                "instantaneous dependency cycle: " + " -> ".join(names)
                + (" (a cycle must pass through 'pre' or 'fby')" if in_lustre(node) else
                   " (a cycle must pass through lus.fby or lus.pre)"),
                notes=[(o, f"{value_name(o.results[0]) if o.results else o.name} is on the cycle")
                       for o in cycle[1:]],
            )
