"""`lus-normalize`: turn fby/pre into explicit state and order ops for dominance.

Every `%r = lus.fby %init %next : T` becomes a new state argument `%r_state`
of the node, `%r = lus.merge "1(0)" %init %r_state : T`, and `%next` is
appended to `lus.yield state(...)` — the normal form of the seed ("all fby
operations are executed at each cycle ... loop carried dependencies").
`%p = lus.pre %x` becomes a state argument read directly (its first-cycle
value is undefined, which `lus-initialization` already forbids observing), fed
by `%x`. Then the ops of the body are sorted so that every value is defined
before its use (stable: the source order is kept where it is already valid).

A fby or pre on a sub-clock `ck` keeps its state on the base clock too (the
seed's normal form runs every state update each cycle): it is read sampled
down to `ck` with `lus.when` and written back merged up with the held value,
so the state only changes in the ticks of `ck`. Such a fby needs a constant
initial value (it is taken at the first base tick).

Example: the integrator

```mlir
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
```

becomes

```mlir
lus.node @integr state(%s_state: i32) (%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.merge "1(0)" %c0 %s_state : i32
  %incr = arith.addi %s, %i : i32
  lus.yield state(%incr : i32) (%incr : i32)
}
```
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects import lus
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.lus.clocks import Base, On, Var, infer_node, resolve, show


def _deps(op: Operation) -> list[SSAValue]:
    deps = list(op.operands)
    for region in op.regions:
        inner = set(region.walk())
        for nested in inner:
            deps.extend(v for v in nested.operands if v.owner not in inner)
    return deps


def _is_constant(v: SSAValue) -> bool:
    return (isinstance(v.owner, Operation) and not v.owner.operands and not v.owner.regions
            and not isinstance(v.owner, lus.InstanceOp))


def _sample(block, before: Operation, base_value: SSAValue, clock) -> SSAValue:
    """`base_value` (on the base clock) sampled down to `clock` with lus.when."""
    clock = resolve(clock)
    if not isinstance(clock, On):
        return base_value
    parent = _sample(block, before, base_value, clock.parent)
    if isinstance(clock.cond, str):
        when = lus.WhenOp(parent, word=clock.cond, negated=clock.negated)
    else:
        when = lus.WhenOp(parent, clock.cond, negated=clock.negated)
    block.insert_op_before(when, before)
    return when.result


def _upsample(block, before: Operation, value: SSAValue, held: SSAValue, clock) -> SSAValue:
    """`value` (on `clock`) merged up to the base clock, `held` elsewhere."""
    clock = resolve(clock)
    if not isinstance(clock, On):
        return value
    other = _sample(block, before, held, clock.parent)
    cond = clock.cond if isinstance(clock.cond, str) else None
    ssa = None if cond is not None else clock.cond
    rest = lus.WhenOp(other, ssa, word=cond, negated=not clock.negated)
    block.insert_op_before(rest, before)
    on_true, on_false = (rest.result, value) if clock.negated else (value, rest.result)
    merge = lus.MergeOp(on_true, on_false, ssa, word=cond)
    block.insert_op_before(merge, before)
    return _upsample(block, before, merge.result, held, clock.parent)


def normalize_node(node: lus.NodeOp) -> None:
    clocks = infer_node(node)
    block = node.body.block
    delayed = [op for op in block.ops if isinstance(op, lus.FbyOp | lus.PreOp)]
    if not delayed:
        return
    old_yield = block.last_op
    assert isinstance(old_yield, lus.YieldOp)
    new_state: list[SSAValue] = []
    insert_at = node.num_static.value.data + node.num_state.value.data
    for i, op in enumerate(delayed):
        clock = resolve(clocks.of(op.results[0]))
        result = op.results[0]
        arg = block.insert_arg(result.type, insert_at + i)
        arg.name_hint = f"{result.name_hint}_state" if result.name_hint else None
        if isinstance(op, lus.FbyOp):
            if not isinstance(clock, Base | Var) and not _is_constant(op.init):
                raise OpDiagnosticError(
                    op, f"lus-normalize: a lus.fby on a sub-clock ({show(clock)}) needs a "
                    "constant initial value"
                )
            merge = lus.MergeOp(op.init, arg, word="1(0)")
            block.insert_op_before(merge, op)
            held, value = merge.result, op.next
        else:
            held, value = arg, op.input
        # On a sub-clock the state is held on the base clock between the
        # ticks of the clock: read it sampled down to the clock, write the
        # next value merged back up with the held one.
        sampled = _sample(block, op, held, clock)
        sampled.name_hint = result.name_hint
        result.replace_all_uses_with(sampled)
        new_state.append(_upsample(block, op, value, held, clock))
    block.add_op(lus.YieldOp(list(old_yield.outputs), [*old_yield.state, *new_state]))
    old_yield.detach()
    old_yield.erase()
    for op in delayed:
        op.detach()
        op.erase()
    node.num_state = IntegerAttr(node.num_state.value.data + len(delayed), 64)
    _sort_for_dominance(node)


def _sort_for_dominance(node: lus.NodeOp) -> None:
    block = node.body.block
    ops = list(block.ops)
    terminator = ops.pop()
    index = {op: i for i, op in enumerate(ops)}
    waiting: dict[Operation, int] = {}
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        producers = {v.owner for v in _deps(op) if v.owner in index and v.owner is not op}
        waiting[op] = len(producers)
        for p in producers:
            users[p].append(op)
    ready = [(index[op], op) for op in ops if waiting[op] == 0]
    heapq.heapify(ready)
    ordered: list[Operation] = []
    while ready:
        _, op = heapq.heappop(ready)
        ordered.append(op)
        for user in users[op]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (index[user], user))
    if len(ordered) != len(ops):
        stuck = next(op for op in ops if op not in set(ordered))
        raise OpDiagnosticError(stuck, "lus-normalize: instantaneous dependency cycle "
                                       "(run lus-causality for details)")
    for op in ordered:
        op.detach()
    for op in ordered:
        block.insert_op_before(op, terminator)


@dataclass(frozen=True)
class LusNormalizePass(ModulePass):
    """Turn fby/pre into state arguments and order each node's ops for dominance.

    Example: `step-opt -p lus-normalize examples/lus/integrator.mlir` gives
    `lus.node @integr state(%s_state: i32) ...` with `lus.merge "1(0)"`.
    """

    name = "lus-normalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in [n for n in op.walk() if isinstance(n, lus.NodeOp)]:
            normalize_node(node)
