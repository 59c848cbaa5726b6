"""A tick-by-tick interpreter for lus nodes.

Each tick, every value of a node is present (a numpy scalar or array) or
`ABSENT`. The ops of a node are evaluated in an order that respects the
instantaneous dependencies and the conditions of their clocks (fby's `next`
and pre's input are read at the end of the tick, to update state). Whether a
value is present is decided by its inferred clock, never by whether its
operands were computed yet: a `pre` is present in the ticks of its clock (that
of its input), with the input's value at the previous tick of that clock, even
if the input is defined later in the node. Instances are sub-runners with their own state
that react only in ticks where their inputs are present. Reading an absent
value where a present one is required (an operand of an ordinary op, an
output) is a `ReactiveError` naming the value; `pre` in its first cycle gives
an undefined value that is an error to observe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from steplus.dialects import lus
from steplus.dialects.lus.instances import unrolled
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.lus.causality import find_cycle, value_name
from steplus.passes.lus.clocks import Base, On, Var, infer_node, resolve, schedule
from steplus.runtime.reactive.errors import ReactiveError, RuntimeArithmeticError
from steplus.runtime.reactive.ops import evaluate, numpy_dtype


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


class _Undefined:
    def __repr__(self) -> str:
        return "UNDEFINED"


ABSENT = _Absent()
UNDEFINED = _Undefined()


def check_not_recursive(chain: tuple[str, ...], callee: str) -> None:
    """An instance of `callee` inside the instances `chain` (outermost first)
    must not be one of them: that would instantiate nodes without end."""
    if callee in chain:
        cycle = " -> ".join(f"@{n}" for n in (*chain, callee))
        raise ReactiveError(f"recursive instance: {cycle}")


def _callee(op: lus.InstanceOp) -> str:
    return op.callee.root_reference.data


def check_instance_count(calls: Mapping[str, Sequence[str]], root: str) -> None:
    """A run of `root` (`calls`: each node's instances' callees) must create at
    most `MAX_INSTANCES` node instances, itself included."""
    count = unrolled(calls, root)
    if count > MAX_INSTANCES:
        raise ReactiveError(f"@{root} would run {count} node instances (more than "
                            f"{MAX_INSTANCES})")


class NodeRunner:
    """The state of one running instance of a node."""

    def __init__(self, module: ModuleOp, name: str, callers: tuple[str, ...] = ()):
        nodes = {n.sym_name.data: n for n in module.walk() if isinstance(n, lus.NodeOp)}
        if name not in nodes:
            raise ReactiveError(f"no lus.node named @{name}")
        self.nodes = nodes
        self.module = module
        self.node = nodes[name]
        if not callers:
            check_instance_count(
                {n: [_callee(i) for i in node.body.block.ops if isinstance(i, lus.InstanceOp)]
                 for n, node in nodes.items()}, name)
        self.chain = (*callers, name)  # the instances this one runs inside
        self.memory: dict[Operation, object] = {}  # fby/pre state
        self.started: set[Operation] = set()
        self.counters: dict[Operation, int] = {}  # k-periodic position
        self.children: dict[Operation, NodeRunner] = {}
        self.state = [UNDEFINED] * len(self.node.state_args)
        try:
            self.clocks = infer_node(self.node)
        except OpDiagnosticError as e:
            raise ReactiveError(f"@{name}: {e.message}") from None
        if find_cycle(self.node) is not None:
            raise ReactiveError(f"@{name} has an instantaneous dependency cycle")
        try:
            self.order = schedule(self.node, self.clocks)
        except OpDiagnosticError as e:
            raise ReactiveError(f"@{name}: {e.message}") from None
        self.word_counts: dict[int, int] = {}
        self._tick_presence: dict[int, bool] = {}

    def _present(self, value: SSAValue, env: dict[SSAValue, object]) -> bool:
        """Is `value` present this tick, according to its inferred clock?"""
        owner = value.owner
        if isinstance(owner, Operation) and not owner.operands and not owner.regions:
            return True  # constants are clock-polymorphic
        return self._clock_present(self.clocks.of(value), env)

    def _clock_present(self, clock, env) -> bool:
        c = resolve(clock)
        if isinstance(c, Base | Var):
            return True
        assert isinstance(c, On)
        key = id(c)
        if key in self._tick_presence:
            return self._tick_presence[key]
        result = False
        if self._clock_present(c.parent, env):
            if isinstance(c.cond, str):
                n = self.word_counts.get(key, 0)
                self.word_counts[key] = n + 1
                result = lus.kperiodic_value(c.cond, n) != c.negated
            else:
                v = env.get(c.cond, ABSENT)
                if v is UNDEFINED:
                    raise ReactiveError(
                        f"clock condition {value_name(c.cond)} is undefined (a pre in its first cycle)"
                    )
                result = v is not ABSENT and bool(v) != c.negated
        self._tick_presence[key] = result
        return result

    def _read(self, env: dict[SSAValue, object], v: SSAValue, user: Operation) -> object:
        value = env.get(v, ABSENT)
        if value is UNDEFINED:
            raise ReactiveError(
                f"{value_name(v)} is read by {user.name} but is undefined (a pre in its first cycle)"
            )
        return value

    def step(self, inputs: Sequence[object], static: Sequence[object] = ()) -> list[object]:
        """One reaction: inputs (or ABSENT) in, outputs (or ABSENT) out."""
        node = self.node
        self._tick_presence = {}
        env: dict[SSAValue, object] = {}
        for arg, v in zip(node.static_args, static):
            env[arg] = v
        for arg, v in zip(node.state_args, self.state):
            env[arg] = v
        for arg, v in zip(node.input_args, inputs):
            env[arg] = v
        for op in self.order:
            self._eval(op, env)
        # End of tick: delayed reads.
        for op in self.order:
            if isinstance(op, lus.FbyOp) and env[op.results[0]] is not ABSENT:
                self.memory[op] = env.get(op.next, ABSENT)
            elif isinstance(op, lus.PreOp) and env[op.result] is not ABSENT:
                x = env.get(op.input, ABSENT)
                if x is not ABSENT:
                    self.memory[op] = x
        y = node.body.block.last_op
        assert isinstance(y, lus.YieldOp)
        self.state = [env.get(v, ABSENT) for v in y.state]
        outs = []
        for v in y.outputs:
            value = env.get(v, ABSENT)
            if value is UNDEFINED:
                raise ReactiveError(f"output {value_name(v)} is undefined in this cycle")
            outs.append(value)
        return outs

    def _eval(self, op: Operation, env: dict[SSAValue, object]) -> None:
        """Evaluate one op of the tick: a lus op by its class (`_LUS_OPS`), any other through the
        op-semantics registry (`ops.evaluate`)."""
        handler = _LUS_OPS.get(type(op))
        if handler is None:
            self._ordinary(op, env)
        else:
            handler(self, op, env)

    def _fby(self, op: lus.FbyOp, env: dict[SSAValue, object]) -> None:
        init = env.get(op.init, ABSENT)
        if not self._present(op.result, env) or init is ABSENT:
            env[op.result] = ABSENT
        elif op not in self.started:
            self.started.add(op)
            env[op.result] = init
        else:
            env[op.result] = self.memory.get(op, UNDEFINED)

    def _pre(self, op: lus.PreOp, env: dict[SSAValue, object]) -> None:
        # Present on its clock (that of its input, which is read only at the
        # end of the tick); the input's previous value there, or undefined.
        present = self._present(op.result, env)
        env[op.result] = self.memory.get(op, UNDEFINED) if present else ABSENT

    def _kperiodic(self, op: lus.KPeriodicOp, env: dict[SSAValue, object]) -> None:
        n = self.counters.get(op, 0)
        self.counters[op] = n + 1
        env[op.result] = np.bool_(lus.kperiodic_value(op.word.data, n))

    def _when(self, op: lus.WhenOp, env: dict[SSAValue, object]) -> None:
        x = env.get(op.input, ABSENT)
        if x is ABSENT:
            env[op.result] = ABSENT
            return
        if op.word is not None:
            n = self.counters.get(op, 0)
            self.counters[op] = n + 1
            take = lus.kperiodic_value(op.word.data, n) != (op.negated is not None)
        else:
            cond = _condition(op)
            c = self._read(env, cond, op)
            if c is ABSENT:
                raise ReactiveError(f"condition {value_name(cond)} is absent")
            take = bool(c) != (op.negated is not None)
        env[op.result] = x if take else ABSENT

    def _merge(self, op: lus.MergeOp, env: dict[SSAValue, object]) -> None:
        if not self._present(op.result, env):
            env[op.result] = ABSENT
            return
        if op.word is not None:
            n = self.counters.get(op, 0)
            self.counters[op] = n + 1
            take = lus.kperiodic_value(op.word.data, n)
        else:
            c = self._read(env, _condition(op), op)
            if c is ABSENT:
                env[op.result] = ABSENT
                return
            take = bool(c)
        branch = op.on_true if take else op.on_false
        value = self._read(env, branch, op)
        if value is ABSENT:
            raise ReactiveError(
                f"lus.merge reads {value_name(branch)}, which is absent in this cycle"
            )
        env[op.result] = value

    def _instance(self, op: lus.InstanceOp, env: dict[SSAValue, object]) -> None:
        args = [env.get(a, ABSENT) for a in op.args]
        if all(a is ABSENT for a in args) and args:
            for r in op.res:
                env[r] = ABSENT
            return
        if op not in self.children:
            callee = op.callee.root_reference.data
            check_not_recursive(self.chain, callee)
            self.children[op] = NodeRunner(self.module, callee, self.chain)
        child = self.children[op]
        n_static = child.node.num_static.value.data
        for a, v in zip(op.args, args):
            if v is ABSENT or v is UNDEFINED:
                raise ReactiveError(f"instance argument {value_name(a)} is {v!r}")
        outs = child.step(args[n_static:], args[:n_static])
        for r, v in zip(op.res, outs):
            env[r] = v

    def _ordinary(self, op: Operation, env: dict[SSAValue, object]) -> None:
        args = [env.get(a, ABSENT) for a in op.operands]
        if op.results and not self._present(op.results[0], env):
            for r in op.results:
                env[r] = ABSENT
            return
        for a, v in zip(op.operands, args):
            if v is ABSENT:
                raise ReactiveError(
                    f"{op.name} reads {value_name(a)}, which is absent in this cycle"
                )
            if v is UNDEFINED:
                for r in op.results:
                    env[r] = UNDEFINED
                return
        results = evaluate(op, args)
        for r, v in zip(op.results, results):
            env[r] = v


_LUS_OPS: dict[type[Operation], Callable[[NodeRunner, Any, dict[SSAValue, object]], None]] = {
    lus.FbyOp: NodeRunner._fby, lus.PreOp: NodeRunner._pre, lus.KPeriodicOp: NodeRunner._kperiodic,
    lus.WhenOp: NodeRunner._when, lus.MergeOp: NodeRunner._merge, lus.InstanceOp: NodeRunner._instance,
}
"""The meaning of each lus op in a reaction (state, presence, instances), by op class as the
op-semantics registry keys the ordinary ops; every other op goes to `ops.evaluate`."""


def _condition(op: lus.WhenOp | lus.MergeOp) -> SSAValue:
    """The clock condition of a `when` / `merge` that has no k-periodic word (the verifier
    requires one of the two)."""
    if op.condition is None:
        raise ReactiveError(f"{op.name} has neither a condition nor a word")
    return op.condition


Outputs = list[np.ndarray] | list[list[object]]
"""A run's outputs, one entry per output: one value per tick, or an array (ticks first)
from a batched backend."""

MAX_TICKS = 10_000_000
"""The default bound on the ticks of one run (each tick is a Python reaction)."""
MAX_INSTANCES = 100_000
"""The node instances one run may create (a runner each; `fib(n - 1) + fib(n - 2)`
unrolled makes exponentially many): counted before the run (`instances.unrolled`)."""


def drive(
    step,
    names: Sequence[str | None],
    inputs,
    ticks: int,
    n_outputs: int,
    max_ticks: int = MAX_TICKS,
) -> list[list[object]]:
    """Feed input streams (by name or position) to `step(values) -> outputs`
    for `ticks` ticks; one list per output, one value per tick. The three
    execution paths (lus, sync, IREE) share it. More than `max_ticks` ticks (or
    a negative count) is a `ReactiveError` before any tick runs."""
    streams = input_streams(names, inputs, ticks, max_ticks)
    outputs: list[list[object]] = [[] for _ in range(n_outputs)]
    for t in range(ticks):
        for lst, v in zip(outputs, step([s[t] for s in streams])):
            lst.append(v)
    return outputs


def input_streams(names: Sequence[str | None], inputs, ticks: int,
                  max_ticks: int = MAX_TICKS) -> list:
    """The input streams (given by name or position) in input order, checked:
    `ticks` within 0..`max_ticks`, every input given, at least `ticks` values
    each; a `ReactiveError` otherwise."""
    if not 0 <= ticks <= max_ticks:
        raise ReactiveError(f"{ticks} ticks requested; the limit is 0 to {max_ticks}")
    if isinstance(inputs, Mapping):
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ReactiveError(f"missing input(s): {', '.join(map(str, missing))}")
        streams = [inputs[n] for n in names]
    else:
        streams = list(inputs)
        if len(streams) != len(names):
            raise ReactiveError(f"{len(streams)} input stream(s) for {len(names)} input(s)")
    for s, n in zip(streams, names):
        if len(s) < ticks:
            raise ReactiveError(f"input %{n} has {len(s)} values for {ticks} ticks")
    return streams


def run_node(
    module: ModuleOp,
    name: str,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    ticks: int,
    max_ticks: int = MAX_TICKS,
) -> list[list[object]]:
    """Run node `@name` for `ticks` ticks (at most `max_ticks`); inputs by
    argument name or position.

    Returns one list per output with one value per tick (ABSENT where absent)."""
    names, step, n_out = node_stepper(module, name)
    return drive(step, names, inputs, ticks, n_out, max_ticks)


def node_stepper(module: ModuleOp, name: str):
    """(input names, `step(values) -> outputs` running one tick of node
    `@name`, number of outputs): the tick-by-tick interface of `run_node`."""
    runner = NodeRunner(module, name)
    args = list(runner.node.input_args)
    dtypes = [numpy_dtype(a.type) for a in args]
    return [a.name_hint for a in args], counting_ticks(lambda values: runner.step(
        [np.asarray(v).astype(d)[()] for v, d in zip(values, dtypes)])), len(runner.node.output_types)


def counting_ticks(step):
    """`step` (one reaction per call) that locates a `RuntimeArithmeticError` at its tick (0, 1, ...)."""
    tick = 0

    def run(values):
        nonlocal tick
        try:
            outputs = step(values)
        except RuntimeArithmeticError as e:
            raise e.at_tick(tick) from None
        tick += 1
        return outputs

    return run
