"""A tick-by-tick interpreter for `sync` programs (reactive SSA).

Each instance of a `sync.node` is a Python generator — a coroutine — that
runs the node's code until its next `sync.tick`, where it gives control back
to whoever triggered the reaction: the environment for the root node, the
parent instance for a `sync.inst`. `scf.while`, `scf.if` and the ordinary ops
of `runtime.reactive.ops` are interpreted directly; `sync.undef` is an
undefined value that propagates through ops and is an error to output.

Example:

```python
from steplus.runtime.reactive.sync_interp import run_sync_node
outs = run_sync_node(module, "integr", {"i": [1, 2, 3]}, ticks=3)  # [[1, 3, 6]]
```
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from steplus.dialects import sync
from steplus.passes.lus.causality import value_name
from steplus.runtime.reactive.interpreter import (
    ABSENT,
    MAX_TICKS,
    UNDEFINED,
    ReactiveError,
    check_instance_count,
    check_not_recursive,
    counting_ticks,
    drive,
)
from steplus.runtime.reactive.ops import evaluate, numpy_dtype

_Run = Generator[None, None, list[object]]


MAX_LOOP_ITERATIONS = 1_000_000
"""The bound on `scf.while` iterations between two ticks of one instance."""


class SyncInstance:
    """One running instance of a sync node (a coroutine).

    A node without a `sync.tick` can never complete a reaction (it halts or
    loops forever), so it is rejected when the instance is created; a node
    whose loops run more than `max_iterations` iterations between two ticks is
    stopped with a `ReactiveError` naming the loop."""

    def __init__(
        self,
        nodes: Mapping[str, sync.NodeOp],
        name: str,
        max_iterations: int = MAX_LOOP_ITERATIONS,
        callers: tuple[str, ...] = (),
    ):
        if name not in nodes:
            raise ReactiveError(f"no sync.node named @{name}")
        self.nodes = nodes
        self.node = nodes[name]
        if not callers:  # one child per instance id (`_inst`)
            check_instance_count({n: list({op.id.value.data: op.callee.root_reference.data
                                           for op in node.walk()
                                           if isinstance(op, sync.InstOp)}.values())
                                  for n, node in nodes.items()}, name)
        if not any(isinstance(op, sync.TickOp) for op in self.node.walk()):
            raise ReactiveError(
                f"sync.node @{name} has no sync.tick: it can never complete a reaction"
            )
        self.max_iterations = max_iterations
        self.chain = (*callers, name)  # the instances this one runs inside
        self.iterations = 0  # scf.while iterations since the last tick
        self.n_in = self.node.num_inputs
        self.children: dict[int, SyncInstance] = {}
        self.inputs: Sequence[object] = ()
        self.outputs: list[object] = []
        self.coroutine = self._run()
        self.started = False

    def react(self, inputs: Sequence[object]) -> list[object]:
        """Run one reaction (up to the next `sync.tick`) on these inputs."""
        self.inputs = inputs
        self.outputs = [ABSENT] * (len(self.node.body.block.args) - self.n_in)
        try:
            if self.started:
                self.coroutine.send(None)
            else:
                self.started = True
                next(self.coroutine)
        except StopIteration:
            raise ReactiveError(f"@{self.node.sym_name.data} halted") from None
        return self.outputs

    def _count_iteration(self) -> None:
        self.iterations += 1
        if self.iterations > self.max_iterations:
            raise ReactiveError(
                f"@{self.node.sym_name.data}: scf.while ran {self.max_iterations} iterations "
                "without reaching a sync.tick (the reaction does not terminate)"
            )

    def _run(self) -> _Run:
        env: dict[SSAValue, object] = {}
        return (yield from self._block(self.node.body.block, env))

    def _block(self, block: Block, env: dict[SSAValue, object]) -> _Run:
        """Run `block` up to its terminator (whose operands it returns): the control ops (loops,
        branches, ticks) as generators (`_CONTROL`), the other sync ops by class
        (`_SYNC_OPS`), every other op through the op-semantics registry (`ops.evaluate`)."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp | sync.HaltOp):
                return [env.get(v, UNDEFINED) for v in op.operands]
            kind = type(op)
            control = _CONTROL.get(kind)
            if control is not None:
                yield from control(self, op, env)
                continue
            simple = _SYNC_OPS.get(kind)
            if simple is not None:
                simple(self, op, env)
                continue
            args = [env[a] for a in op.operands]
            if any(a is UNDEFINED for a in args):
                env.update((r, UNDEFINED) for r in op.results)
            else:
                env.update(zip(op.results, evaluate(op, args)))
        return []

    def _while(self, op: scf.WhileOp, env: dict[SSAValue, object]) -> Generator[None, None, None]:
        values = [env[v] for v in op.arguments]
        while True:
            before = op.before_region.block
            env.update(zip(before.args, values))
            cond, *values = yield from self._block(before, env)
            if cond is UNDEFINED:
                raise ReactiveError("scf.while condition is undefined")
            if not bool(cond):
                break
            self._count_iteration()
            after = op.after_region.block
            env.update(zip(after.args, values))
            values = yield from self._block(after, env)
        env.update(zip(op.results, values))

    def _if(self, op: scf.IfOp, env: dict[SSAValue, object]) -> Generator[None, None, None]:
        cond = env[op.cond]
        if cond is UNDEFINED:
            raise ReactiveError(f"scf.if condition {value_name(op.cond)} is undefined")
        region = op.true_region if bool(cond) else op.false_region
        values = (yield from self._block(region.block, env)) if region.blocks else []
        env.update(zip(op.results, values))

    def _tick(self, op: sync.TickOp, env: dict[SSAValue, object]) -> Generator[None, None, None]:
        self.iterations = 0
        yield
        env[op.result] = np.int32(0)

    def _inst(self, op: sync.InstOp, env: dict[SSAValue, object]) -> None:
        """One reaction of the child instance (its own coroutine), within this tick."""
        key = op.id.value.data
        if key not in self.children:
            callee = op.callee.root_reference.data
            check_not_recursive(self.chain, callee)
            self.children[key] = SyncInstance(
                self.nodes, callee, self.max_iterations, self.chain
            )
        args = [env[a] for a in op.operands]
        for a, v in zip(op.operands, args):
            if v is UNDEFINED:
                raise ReactiveError(f"instance argument {value_name(a)} is undefined")
        env.update(zip(op.res, self.children[key].react(args)))

    def _input(self, op: sync.InputOp, env: dict[SSAValue, object]) -> None:
        x = self.inputs[self.node.body.block.args.index(op.signal)]
        env[op.result] = np.asarray(x).astype(numpy_dtype(op.result.type))[()]

    def _output(self, op: sync.OutputOp, env: dict[SSAValue, object]) -> None:
        value = env[op.value]
        if value is UNDEFINED:
            raise ReactiveError(f"output {value_name(op.value)} is undefined in this cycle")
        self.outputs[self.node.body.block.args.index(op.signal) - self.n_in] = value
        env[op.token] = np.int32(0)

    def _sync(self, op: sync.SyncOp, env: dict[SSAValue, object]) -> None:
        env.update(zip(op.res, (env[v] for v in op.operands[1:])))

    def _undef(self, op: sync.UndefOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = UNDEFINED

    def _select(self, op: sync.SelectOp, env: dict[SSAValue, object]) -> None:
        cond = env[op.cond]
        if cond is UNDEFINED:
            env[op.result] = UNDEFINED
        else:
            env[op.result] = env[op.on_true if bool(cond) else op.on_false]


_CONTROL: dict[type[Operation], Callable[[SyncInstance, Any, dict[SSAValue, object]], Generator[None, None, None]]] = {
    scf.WhileOp: SyncInstance._while, scf.IfOp: SyncInstance._if, sync.TickOp: SyncInstance._tick,
}
_SYNC_OPS: dict[type[Operation], Callable[[SyncInstance, Any, dict[SSAValue, object]], None]] = {
    sync.InputOp: SyncInstance._input, sync.OutputOp: SyncInstance._output, sync.SyncOp: SyncInstance._sync,
    sync.UndefOp: SyncInstance._undef, sync.SelectOp: SyncInstance._select, sync.InstOp: SyncInstance._inst,
}
"""The meaning of each sync op in a reaction, by op class (the control ops are generators: a
`sync.tick` hands control back); every other op goes through the op-semantics registry."""


def sync_nodes(module: ModuleOp) -> dict[str, sync.NodeOp]:
    return {n.sym_name.data: n for n in module.walk() if isinstance(n, sync.NodeOp)}


def run_sync_node(
    module: ModuleOp,
    name: str,
    inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
    ticks: int,
    max_ticks: int = MAX_TICKS,
) -> list[list[object]]:
    """Run sync node `@name` for `ticks` ticks (at most `max_ticks`); inputs by
    signal name or position.

    Returns one list per output with one value per tick."""
    names, step, n_out = sync_stepper(module, name)
    return drive(step, names, inputs, ticks, n_out, max_ticks)


def sync_stepper(module: ModuleOp, name: str):
    """(input names, `step(values) -> outputs` running one reaction of sync
    node `@name`, number of outputs): the tick-by-tick interface."""
    inst = SyncInstance(sync_nodes(module), name)
    sigs = inst.node.body.block.args[: inst.n_in]
    n_out = len(inst.node.body.block.args) - inst.n_in
    return [s.name_hint for s in sigs], counting_ticks(inst.react), n_out
