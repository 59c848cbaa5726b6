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
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects import lus
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.lus.clocks import Base, NodeClocks, On, Var, infer_node, resolve, show


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


def _sample(rewriter: PatternRewriter, before: Operation, base_value: SSAValue, clock) -> SSAValue:
    """`base_value` (on the base clock) sampled down to `clock` with lus.when."""
    clock = resolve(clock)
    if not isinstance(clock, On):
        return base_value
    parent = _sample(rewriter, before, base_value, clock.parent)
    if isinstance(clock.cond, str):
        when = lus.WhenOp(parent, word=clock.cond, negated=clock.negated)
    else:
        when = lus.WhenOp(parent, clock.cond, negated=clock.negated)
    rewriter.insert(when, InsertPoint.before(before))
    return when.result


def _upsample(rewriter: PatternRewriter, before: Operation, value: SSAValue, held: SSAValue, clock) -> SSAValue:
    """`value` (on `clock`) merged up to the base clock, `held` elsewhere."""
    clock = resolve(clock)
    if not isinstance(clock, On):
        return value
    other = _sample(rewriter, before, held, clock.parent)
    cond = clock.cond if isinstance(clock.cond, str) else None
    ssa = None if cond is not None else clock.cond
    rest = lus.WhenOp(other, ssa, word=cond, negated=not clock.negated)
    rewriter.insert(rest, InsertPoint.before(before))
    on_true, on_false = (rest.result, value) if clock.negated else (value, rest.result)
    merge = lus.MergeOp(on_true, on_false, ssa, word=cond)
    rewriter.insert(merge, InsertPoint.before(before))
    return _upsample(rewriter, before, merge.result, held, clock.parent)


@dataclass
class DelayToState(RewritePattern):
    """One `lus.fby`/`lus.pre` of `node`'s body made a state argument of the node.

    Applied once over the body in program order after the node's clock
    inference (`clocks`): the i-th delay gets the state argument after the
    node's own and the i-1 before it; its result's uses read the state (merged
    with the initial value for a fby, sampled down to its clock), and the next
    state value (merged back up to the base clock) is appended to `new_state`,
    which the caller puts in the node's yield. The delay itself is left for
    the caller to erase once every delay is rewritten (a delay may feed
    another's next value: `replaced` maps each delay's result to what
    replaced it, for the next values taken before).
    """

    node: lus.NodeOp
    clocks: NodeClocks
    new_state: list[SSAValue] = field(default_factory=list[SSAValue])
    replaced: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lus.FbyOp | lus.PreOp, rewriter: PatternRewriter) -> None:
        block = self.node.body.block
        if op.parent is not block:
            return
        clock = resolve(self.clocks.of(op.results[0]))
        result = op.results[0]
        index = self.node.num_static.value.data + self.node.num_state.value.data + len(self.new_state)
        arg = rewriter.insert_block_argument(block, index, result.type)
        arg.name_hint = f"{result.name_hint}_state" if result.name_hint else None
        if isinstance(op, lus.FbyOp):
            if not isinstance(clock, Base | Var) and not _is_constant(op.init):
                raise OpDiagnosticError(
                    op, f"lus-normalize: a lus.fby on a sub-clock ({show(clock)}) needs a "
                    "constant initial value"
                )
            merge = lus.MergeOp(op.init, arg, word="1(0)")
            rewriter.insert(merge, InsertPoint.before(op))
            held, value = merge.result, op.next
        else:
            held, value = arg, op.input
        # On a sub-clock the state is held on the base clock between the
        # ticks of the clock: read it sampled down to the clock, write the
        # next value merged back up with the held one.
        sampled = _sample(rewriter, op, held, clock)
        sampled.name_hint = result.name_hint
        rewriter.replace_all_uses_with(result, sampled)
        self.replaced[result] = sampled
        self.new_state.append(_upsample(rewriter, op, value, held, clock))


def normalize_node(node: lus.NodeOp) -> None:
    clocks = infer_node(node)
    block = node.body.block
    delayed = [op for op in block.ops if isinstance(op, lus.FbyOp | lus.PreOp)]
    if not delayed:
        return
    old_yield = block.last_op
    assert isinstance(old_yield, lus.YieldOp)
    pattern = DelayToState(node, clocks)
    PatternRewriteWalker(pattern, apply_recursively=False).rewrite_region(node.body)
    # a next value that is a later delay's result (`%a = lus.fby %c0 %b`, `%b = lus.fby ...`)
    # was taken before that result was replaced: it is what replaced it
    new_state = [pattern.replaced.get(v, v) for v in pattern.new_state]
    Rewriter.replace_op(old_yield, lus.YieldOp(list(old_yield.outputs), [*old_yield.state, *new_state]))
    for op in delayed:
        Rewriter.erase_op(op)
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
