"""`lus-inline-instances`: replace every `lus.instance` by the callee's body.

Nodes are inlined bottom-up (callees first), so one pass leaves no instance.
The callee's static parameters and inputs become the instance's operands, its
outputs replace the instance's results, and its state arguments become new
state arguments of the caller (appended after the caller's own), fed by the
callee's `yield state(...)` values. Recursive instances are rejected, naming
the cycle of nodes:

```mlir
lus.node @a(%x: i32) -> (i32) {
  %r = lus.instance @b(%x) : (i32) -> (i32)
  lus.yield (%r : i32)
}
lus.node @b(%x: i32) -> (i32) {
  %r = lus.instance @a(%x) : (i32) -> (i32)   // error: recursive instance: @a -> @b -> @a
  lus.yield (%r : i32)
}
```

Example: `step-opt -p lus-inline-instances prog.mlir`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from steplus.dialects import lus
from steplus.dialects.lus.instances import unrolled_sizes
from steplus.utils.diagnostics import OpDiagnosticError

MAX_INLINED_OPS = 1 << 20
"""Ops the module's nodes may hold once every instance is inlined (`fib(n - 1) +
fib(n - 2)` unrolled doubles per level): counted before anything is copied."""


def _instances(node: lus.NodeOp) -> list[lus.InstanceOp]:
    return [op for op in node.body.block.ops if isinstance(op, lus.InstanceOp)]


def _callee_name(inst: lus.InstanceOp) -> str:
    return inst.callee.root_reference.data


def _bottom_up(nodes: dict[str, lus.NodeOp]) -> list[lus.NodeOp]:
    """Nodes with every callee before its callers; rejects recursion."""
    order: list[lus.NodeOp] = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[tuple[str, lus.InstanceOp | None]]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            start = next(i for i, (n, _) in enumerate(path) if n == name)
            cycle = [n for n, _ in path[start:]]  # path ends with the repeated name
            inst = path[-1][1]
            raise OpDiagnosticError(
                inst, "recursive instance: " + " -> ".join(f"@{n}" for n in cycle)
            )
        state[name] = 1
        for inst in _instances(nodes[name]):
            callee = _callee_name(inst)
            if callee in nodes:
                visit(callee, [*path, (callee, inst)])
        state[name] = 2
        order.append(nodes[name])

    for name in nodes:
        visit(name, [(name, None)])
    return order


def inline_instance(caller: lus.NodeOp, inst: lus.InstanceOp, callee: lus.NodeOp,
                    rewriter: PatternRewriter) -> None:
    """Inline one instance of `callee` into `caller`, through `rewriter`."""
    mapping: dict[SSAValue, SSAValue] = {}
    n_static = callee.num_static.value.data
    operands = list(inst.args)
    for arg, value in zip(callee.static_args, operands[:n_static]):
        mapping[arg] = value
    for arg, value in zip(callee.input_args, operands[n_static:]):
        mapping[arg] = value
    # Callee state becomes caller state, inserted after the caller's own.
    block = caller.body.block
    insert_at = caller.num_static.value.data + caller.num_state.value.data
    for i, arg in enumerate(callee.state_args):
        new_arg = rewriter.insert_block_argument(block, insert_at + i, arg.type)
        new_arg.name_hint = arg.name_hint
        mapping[arg] = new_arg
    new_state = len(callee.state_args)
    if new_state:
        caller.num_state = IntegerAttr(caller.num_state.value.data + new_state, 64)
        rewriter.notify_op_modified(caller)
    # Clone the body (graph region: map results first so forward uses resolve).
    body_ops = [op for op in callee.body.block.ops if not isinstance(op, lus.YieldOp)]
    clones: list[Operation] = []
    for op in body_ops:
        clone = op.clone_without_regions(value_mapper=mapping, clone_operands=False)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
        clones.append(clone)
    for op, clone in zip(body_ops, clones):
        clone.operands = [mapping.get(v, v) for v in op.operands]
        # Regions after every result is mapped, so forward uses resolve.
        for region, new_region in zip(op.regions, clone.regions):
            region.clone_into(new_region, value_mapper=dict(mapping))
    rewriter.insert(clones, InsertPoint.before(inst))
    yield_op = callee.body.block.last_op
    assert isinstance(yield_op, lus.YieldOp)
    # not replace_op: that would give the clones' unnamed results the instance's name
    for res, out in zip(inst.res, yield_op.outputs):
        rewriter.replace_all_uses_with(res, mapping.get(out, out))
    rewriter.erase(inst)
    if new_state:
        caller_yield = block.last_op
        assert isinstance(caller_yield, lus.YieldOp)
        state = [*caller_yield.state, *(mapping.get(v, v) for v in yield_op.state)]
        rewriter.replace(caller_yield, lus.YieldOp(list(caller_yield.outputs), state))


@dataclass
class InlineInstance(RewritePattern):
    """One `lus.instance` directly in `caller`'s body replaced by its callee's body.

    Applied to one node at a time, callees before callers (`_bottom_up`), so a
    callee has no instance left of a known node when it is cloned.
    """

    caller: lus.NodeOp
    nodes: dict[str, lus.NodeOp]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lus.InstanceOp, rewriter: PatternRewriter) -> None:
        callee = self.nodes.get(_callee_name(op))
        if callee is not None and op.parent is self.caller.body.block:
            inline_instance(self.caller, op, callee, rewriter)


@dataclass(frozen=True)
class LusInlineInstancesPass(ModulePass):
    """Inline every lus.instance, bottom-up; reject recursive instances.

    Example: `step-opt -p lus-inline-instances prog.mlir` leaves no
    `lus.instance`; callee state becomes state of the caller.
    """

    name = "lus-inline-instances"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        nodes = {n.sym_name.data: n for n in op.walk() if isinstance(n, lus.NodeOp)}
        order = _bottom_up(nodes)  # rejects recursion
        sizes = unrolled_sizes(
            {n: [c for i in _instances(node) if (c := _callee_name(i)) in nodes]
             for n, node in nodes.items()},
            list(nodes), {n: sum(1 for _ in node.walk()) for n, node in nodes.items()})
        total = sum(sizes[n] for n in nodes)
        if total > MAX_INLINED_OPS:
            worst = max(nodes, key=lambda n: sizes[n])
            raise OpDiagnosticError(
                nodes[worst], f"inlining every instance would make {total} ops (more than "
                f"{MAX_INLINED_OPS}; @{worst} alone {sizes[worst]})")
        for node in order:
            PatternRewriteWalker(InlineInstance(node, nodes), apply_recursively=False).rewrite_region(node.body)
