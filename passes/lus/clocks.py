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
  form writes `merge "1(0)" %init %state` with both on the base clock);
- `instance @f(args)`: modular — the callee's signature says its inputs and
  outputs are on its base clock, so all arguments and results share the
  instance's clock.

A clash is reported at the op whose constraint fails, naming both clocks
("expected clock base on %c, found base"); unifying a clock with one of its
own sub-clocks ("ck = ck on %c") is reported as such. With
`lus-clock-analysis{annotate=true}` every lus node op gets a `lus.clock`
attribute with the clock of its (first) result, for debugging:

```mlir
%y = lus.when %c %x {lus.clock = "base on %c"} : f32
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects import lus
from steplus.passes.diagnostics import OpDiagnosticError
from steplus.passes.lus.causality import value_name


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
        owner = v.owner
        if isinstance(owner, Operation) and not owner.operands and not owner.regions:
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
        what = f"{value_name(value)} " if value is not None else ""
        if "sub-clock" in str(e):
            msg = (f"{what}would be on clock {show(got)} and on its own "
                   f"sub-clock {show(expected)}")
        else:
            msg = f"expected clock {show(expected)}, found {show(got)}"
            if what:
                msg = f"{what}: {msg}"
        raise OpDiagnosticError(op, msg) from None


def _expect_branch(op: Operation, value: SSAValue, got: Clock, ck: Clock, sub: On) -> None:
    """A merge branch is on its sub-clock, or (as in the seed's normal form
    `merge "1(0)" %init %state`) on the merge's own clock, read only when the
    branch is selected."""
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
    for op in node.body.block.ops:
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
                _expect(op, v, env.of(v), base)
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
    return env


@dataclass(frozen=True)
class LusClockAnalysisPass(ModulePass):
    """Infer every value's clock and reject clock clashes.

    Example: `step-opt -p 'lus-clock-analysis{annotate=true}' prog.mlir` prints
    each op with a `lus.clock` attribute such as `"base on not %c"`.
    """

    name = "lus-clock-analysis"
    annotate: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in op.walk():
            if not isinstance(node, lus.NodeOp):
                continue
            env = infer_node(node)
            if self.annotate:
                for inner in node.body.block.ops:
                    if inner.results:
                        inner.attributes["lus.clock"] = StringAttr(
                            show(env.of(inner.results[0]))
                        )
