"""`lus-clock-analysis`: infer the clock of every value of every lus node.

Clocks are `base`, `ck on %c`, `ck on not %c` and `ck on w` (a k-periodic
word such as `1(0)`). Inference is unification over clock terms with variables:

- node inputs, static and state arguments are on `base`; outputs and the next
  state (`lus.yield`) must be on `base`;
- any op other than lus ops is clock-polymorphic: its operands and results
  share one clock; constants (ops without operands) take the clock of each
  use separately;
- `fby`, `pre`: operands and result on one clock;
- `when c x`: `c` and `x` on `ck`, result on `ck on c` (`on not c` with `not`,
  `on "w"` with a word);
- `merge c t f`: `c` on `ck`, `t` on `ck on c`, `f` on `ck on not c`, result on
  `ck` (with a word `w`, `t` on `ck on "w"` and `f` on `ck on not "w"`); a
  branch already known to be on `ck` itself is accepted too (the seed's normal
  form writes `merge "1(0)" %init %state` with both on the base clock); a
  branch of a word merge whose clock nothing else decides (an input-free
  stream such as Lustre's `v = 0 -> pre v + 1`) is put on `ck`, the clock of
  its context;
- `instance @f(args)`: modular — the callee's signature says its inputs and
  outputs are on its base clock, so all arguments and results share the
  instance's clock.

A clash is reported at the op whose constraint fails, naming both clocks
("expected clock base on %c, found base"); unifying a clock with one of its
own sub-clocks ("ck = ck on %c") is reported as such. With
`lus-clock-analysis{annotate=true}` every op of a node that has results
(but constants, which have no clock of their own) gets a remark with the clock of its first result, for debugging; remarks go to
stderr and the IR on stdout is unchanged. On

```mlir
lus.node @sample(%c: i1, %x: f32) -> (f32) {
  %y = lus.when %c %x : f32
  %z = lus.when not %c %x : f32
  %m = lus.merge %c %y %z : f32
  lus.yield (%m : f32)
}
```

it reports `remark: clock of %y: base on %c` at the first `lus.when`,
`remark: clock of %z: base on not %c` and `remark: clock of %m: base`.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects import lus
from steplus.utils.diagnostics import OpDiagnosticError, emit
from steplus.passes.lus.causality import in_lustre, instantaneous_deps, value_name


@dataclass(eq=False)
class Var:
    """A clock variable, bound to another clock by unification."""

    ref: Clock | None = None


@dataclass(frozen=True)
class Base:
    pass


@dataclass(frozen=True, eq=False)
class On:
    """`parent on [not] cond`; cond is an SSA value or a k-periodic word."""

    parent: Clock
    cond: SSAValue | str
    negated: bool = False

    def same_condition(self, other: On) -> bool:
        return self.cond is other.cond or (
            isinstance(self.cond, str) and self.cond == other.cond
        ) and self.negated == other.negated


Clock = Var | Base | On


def resolve(c: Clock) -> Clock:
    while isinstance(c, Var) and c.ref is not None:
        c = c.ref
    return c


def show(c: Clock) -> str:
    c = resolve(c)
    if isinstance(c, Base):
        return "base"
    if isinstance(c, Var):
        return "'ck"
    cond = c.cond if isinstance(c.cond, str) else value_name(c.cond)
    return f"{show(c.parent)} on {'not ' if c.negated else ''}{cond}"


def equal(a: Clock, b: Clock) -> bool:
    """Are two clocks the same (structurally: `base on %c` built twice is one
    clock)?"""
    a, b = resolve(a), resolve(b)
    if isinstance(a, On) and isinstance(b, On):
        return a.same_condition(b) and equal(a.parent, b.parent)
    return a == b


class ClockError(Exception):
    pass


def _occurs(v: Var, c: Clock) -> bool:
    c = resolve(c)
    if c is v:
        return True
    return isinstance(c, On) and _occurs(v, c.parent)


def unify(a: Clock, b: Clock) -> None:
    a, b = resolve(a), resolve(b)
    if a is b:
        return
    if isinstance(a, Var) or isinstance(b, Var):
        var, other = (a, b) if isinstance(a, Var) else (b, a)
        if _occurs(var, other):
            raise ClockError("a clock cannot be unified with its own sub-clock")
        var.ref = other
        return
    if isinstance(a, Base) and isinstance(b, Base):
        return
    if isinstance(a, On) and isinstance(b, On) and (
        (a.cond is b.cond or (isinstance(a.cond, str) and a.cond == b.cond))
        and a.negated == b.negated
    ):
        unify(a.parent, b.parent)
        return
    raise ClockError("clash")


@dataclass
class NodeClocks:
    """The clock of every value of one node."""

    clocks: dict[SSAValue, Clock] = field(default_factory=dict)

    def of(self, v: SSAValue) -> Clock:
        if _is_constant(v):
            # Constants (and k-periodic generators) are clock-polymorphic: each
            # use may put them on a different clock.
            return Var()
        if v not in self.clocks:
            self.clocks[v] = Var()
        return self.clocks[v]


def _expect(op: Operation, value: SSAValue | None, got: Clock, expected: Clock) -> None:
    try:
        unify(got, expected)
    except ClockError as e:
        what = value_name(value) if value is not None else ""
        if "sub-clock" in str(e):
            msg = (f"{what} would be on clock {show(got)} and on its own "
                   f"sub-clock {show(expected)}").lstrip()
        else:
            msg = f"expected clock {show(expected)}, found {show(got)}"
            if what:
                msg = f"{what}: {msg}"
        raise OpDiagnosticError(op, msg) from None


def _expect_branch(op: Operation, value: SSAValue, got: Clock, ck: Clock, sub: On) -> None:
    """A merge branch is on its sub-clock, or (as in the seed's normal form
    `merge "1(0)" %init %state`) on the merge's own clock, read only when the
    branch is selected."""
    if isinstance(resolve(got), Var) and isinstance(op, lus.MergeOp) and op.word is not None:
        # An input-free stream under `->` (`0 -> pre v + 1`): Lustre's `->` is
        # no clock operator, so the branch takes the context's clock.
        _expect(op, value, got, ck)
        return
    if not isinstance(resolve(got), Var):
        try:
            unify(got, sub)
            return
        except ClockError:
            try:
                unify(got, ck)
                return
            except ClockError:
                pass
    _expect(op, value, got, sub)


def infer_node(node: lus.NodeOp) -> NodeClocks:
    """Infer the clocks of one node (raises OpDiagnosticError on a clash)."""
    env = NodeClocks()
    base = Base()
    for arg in node.body.block.args:
        env.clocks[arg] = base
    # A merge branch whose clock is still unknown (a forward reference in the
    # graph region) is decided after the other ops, so that the clocks do not
    # depend on the order the ops are written in.
    postponed: list[lus.MergeOp] = []
    for op in node.body.block.ops:
        if isinstance(op, lus.MergeOp) and _undecided(env, op):
            postponed.append(op)
        else:
            _constrain(env, base, op)
    while postponed:  # each round decides at least one merge
        ready = [op for op in postponed if not _undecided(env, op)] or postponed[:1]
        for op in ready:
            _constrain(env, base, op)
        postponed = [op for op in postponed if op not in ready]
    return env


def _undecided(env: NodeClocks, merge: lus.MergeOp) -> bool:
    """Is the clock of a (non-constant) branch of `merge` still unknown?"""
    return any(
        isinstance(resolve(env.of(b)), Var) and not _is_constant(b)
        for b in (merge.on_true, merge.on_false)
    )


def _is_constant(v: SSAValue) -> bool:
    """A constant (an op without operands or regions): clock-polymorphic. An
    instance of a node without inputs is not: it has state, so all its uses
    share one clock (that of its context)."""
    owner = v.owner
    return (isinstance(owner, Operation) and not owner.operands and not owner.regions
            and not isinstance(owner, lus.InstanceOp))


def _constrain(env: NodeClocks, base: Base, op: Operation) -> None:
    """Add the clock constraints of one op (raises OpDiagnosticError)."""
    if isinstance(op, lus.WhenOp):
        ck = env.of(op.input)
        if op.condition is not None:
            _expect(op, op.condition, env.of(op.condition), ck)
            sub = On(ck, op.condition, op.negated is not None)
        else:
            sub = On(ck, op.word.data, op.negated is not None)
        _expect(op, op.result, env.of(op.result), sub)
    elif isinstance(op, lus.MergeOp):
        ck = env.of(op.result)
        if op.condition is not None:
            _expect(op, op.condition, env.of(op.condition), ck)
            cond: SSAValue | str = op.condition
        else:
            cond = op.word.data
        for branch, negated in ((op.on_true, False), (op.on_false, True)):
            _expect_branch(op, branch, env.of(branch), ck, On(ck, cond, negated))
    elif isinstance(op, lus.YieldOp):
        for v in op.operands:
            # In a Lustre program the yield is the node header: report at the
            # expression that computes the output instead.
            where = v.owner if in_lustre(op) and isinstance(v.owner, Operation) else op
            _expect(where, v, env.of(v), base)
    else:
        # fby, pre, instance and every other op: one shared clock.
        values = [*op.operands, *op.results]
        for region in op.regions:
            for nested in region.walk():
                values.extend(o for o in nested.operands if o.owner not in region.walk())
        if values:
            ck = env.of(values[0])
            for v in values[1:]:
                _expect(op, v, env.of(v), ck)


def clock_conditions(clock: Clock) -> list[SSAValue]:
    """The SSA conditions a clock tests, innermost first (`base on %a on %b`
    gives `[%b, %a]`): a value on that clock is present only where they hold."""
    conds: list[SSAValue] = []
    c = resolve(clock)
    while isinstance(c, On):
        if not isinstance(c.cond, str):
            conds.append(c.cond)
        c = resolve(c.parent)
    return conds


def schedule(node: lus.NodeOp, clocks: NodeClocks) -> list[Operation]:
    """The ops of `node` (but its `lus.yield`) in an order where each op comes
    after what it reads in the tick: its instantaneous operands and the
    conditions of its clock (a `pre` reads nothing of the tick, but whether it
    is present does). Source order is kept where free. Raises
    `OpDiagnosticError` if there is no such order (check `lus-causality`
    first for a better message on instantaneous cycles).
    """
    ops = [op for op in node.body.block.ops if not isinstance(op, lus.YieldOp)]
    index = {op: k for k, op in enumerate(ops)}
    users: list[list[int]] = [[] for _ in ops]
    waiting = [0] * len(ops)  # how many ops each op still waits for
    for k, op in enumerate(ops):
        deps = list(instantaneous_deps(op))
        for r in op.results:
            deps.extend(clock_conditions(clocks.of(r)))
        for owner in {index.get(d.owner) for d in deps} - {None, k}:
            users[owner].append(k)
            waiting[k] += 1
    ready = [k for k, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:  # Kahn's algorithm, earliest op in source order first
        k = heapq.heappop(ready)
        order.append(ops[k])
        for user in users[k]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    if len(order) < len(ops):
        stuck = next(op for k, op in enumerate(ops) if waiting[k])
        raise OpDiagnosticError(
            stuck, "no evaluation order: this op depends (through the conditions of "
            "its clock) on itself in the same cycle"
        )
    return order


@dataclass(frozen=True)
class LusClockAnalysisPass(ModulePass):
    """Infer every value's clock and reject clock clashes.

    Example: `step-opt -p 'lus-clock-analysis{annotate=true}' prog.mlir`
    prints the IR unchanged on stdout and, on stderr, one remark per op with
    results, e.g. `prog.mlir:5:3: remark: clock of %hold: base on not %ck`.
    """

    name = "lus-clock-analysis"
    annotate: bool = False
    """Report every op's clock as a remark on stderr (the IR is unchanged)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in op.walk():
            if not isinstance(node, lus.NodeOp):
                continue
            env = infer_node(node)
            if self.annotate:
                for inner in node.body.block.ops:
                    if inner.results and not _is_constant(inner.results[0]):
                        r = inner.results[0]
                        emit(inner, "remark", f"clock of {value_name(r)}: {show(env.of(r))}")
