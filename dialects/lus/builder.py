"""A small Python builder for lus nodes.

Values may be used before they are defined (a node body is a graph region):
`forward(type)` makes a placeholder that `define(placeholder, value)` later
replaces, which is how feedback through `fby` is written.

Example (the integrator):

```python
from xdsl.dialects.builtin import i32
from steplus.dialects.lus.builder import NodeBuilder

n = NodeBuilder("integr", inputs=[i32], outputs=[i32])
(i,) = n.inputs
incr = n.forward(i32)
s = n.fby(n.const(0, i32), incr)
out = n.op("arith.addi", [s, i], i32)
n.define(incr, out)    # from here on use `out`: the placeholder `incr` is gone
n.finish([out])
print(n.module())
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue, TypeAttribute
from xdsl.utils.exceptions import VerifyException

from steplus.dialects import lus


def _types(arg: str, types: object) -> list[Attribute]:
    """`types` as a list of xDSL types, or a TypeError naming `arg`."""
    if isinstance(types, str | bytes) or not isinstance(types, Sequence):
        raise TypeError(f"{arg} must be a list of xDSL types (e.g. [i32]), got {types!r}")
    for k, t in enumerate(types):
        _type(f"{arg}[{k}]", t)
    return list(types)


def _type(arg: str, t: object) -> Attribute:
    if not isinstance(t, TypeAttribute):
        hint = " (write the xDSL type, e.g. i32 from xdsl.dialects.builtin)" if isinstance(
            t, str) else ""
        raise TypeError(f"{arg} must be an xDSL type, got {t!r} ({type(t).__name__}){hint}")
    return t


class NodeBuilder:
    """Builds one `lus.node`.

    Misuse raises `TypeError` (a wrong kind of argument: a string where a
    type is expected, a value of another type) or `ValueError` (an unknown op,
    a value of another builder, a wrong number of outputs), naming the
    argument and what was expected."""

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        outputs: Sequence[Attribute],
        state: Sequence[Attribute] = (),
        static: Sequence[Attribute] = (),
    ):
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str, got {name!r}")
        inputs, outputs = _types("inputs", inputs), _types("outputs", outputs)
        state, static = _types("state", state), _types("static", static)
        self.node = lus.NodeOp(name, inputs, outputs, static=static, state=state)
        self.block: Block = self.node.body.block
        self._placeholders: list[Operation] = []
        self._replaced: set[SSAValue] = set()
        self._finished = False
        self.nodes: list[lus.NodeOp] = []

    @property
    def inputs(self):
        return self.node.input_args

    @property
    def state(self):
        return self.node.state_args

    @property
    def static(self):
        return self.node.static_args

    def _value(self, arg: str, v: object) -> SSAValue:
        """`v` as a value of this node, or a TypeError/ValueError naming `arg`."""
        if not isinstance(v, SSAValue):
            raise TypeError(f"{arg} must be a value of this node (an SSAValue), got {v!r}")
        if v in self._replaced:
            raise ValueError(f"{arg} is a forward placeholder already replaced by define(); "
                             "use the value it was defined as")
        owner = v.owner
        block = owner if isinstance(owner, Block) else owner.parent_block()
        if block is not self.block:
            raise ValueError(f"{arg} is not a value of node @{self.node.sym_name.data}")
        return v

    def _same_type(self, arg: str, v: SSAValue, expected: Attribute) -> None:
        if v.type != expected:
            raise TypeError(f"{arg} has type {v.type}, expected {expected}")

    def _append(self, op: Operation) -> None:
        if self._finished:
            raise ValueError(f"node @{self.node.sym_name.data} is already finished")
        self.block.add_op(op)

    def _add(self, op: Operation) -> SSAValue:
        self._append(op)
        return op.results[0]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        _type("t", t)
        if isinstance(t, IntegerType):
            if isinstance(value, bool) and t.width.data != 1 or not isinstance(value, int):
                raise TypeError(f"value must be an int for type {t}, got {value!r}")
            try:
                attr = IntegerAttr(value, t)
            except VerifyException as e:
                raise ValueError(f"value {value} does not fit in {t}: {e}") from None
        elif isinstance(t, AnyFloat):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"value must be a number for type {t}, got {value!r}")
            attr = FloatAttr(float(value), t)
        else:
            raise TypeError(f"t must be an integer or float type, got {t}")
        return self._add(arith.ConstantOp(attr, t))

    def op(self, name: str, operands: Sequence[SSAValue], result: Attribute, **props) -> SSAValue:
        """Any clock-polymorphic op by name (e.g. `"arith.addi"`)."""
        from xdsl.dialects import get_all_dialects

        if not isinstance(name, str) or "." not in name:
            raise ValueError(f"name must be an op name such as 'arith.addi', got {name!r}")
        factory = get_all_dialects().get(name.split(".")[0])
        cls = None
        if factory is not None:
            cls = next((o for o in factory().operations if o.name == name), None)
        if cls is None:
            raise ValueError(f"unknown op {name!r}")
        if isinstance(operands, str | bytes) or not isinstance(operands, Sequence):
            raise TypeError(f"operands must be a list of values, got {operands!r}")
        values = [self._value(f"operands[{k}]", v) for k, v in enumerate(operands)]
        _type("result", result)
        return self._add(cls.create(operands=values, result_types=[result], properties=props))

    def forward(self, t: Attribute) -> SSAValue:
        """A placeholder for a value defined later (replaced by `define`)."""
        from xdsl.dialects.test import TestOp

        op = TestOp(result_types=[_type("t", t)])
        self._placeholders.append(op)
        return self._add(op)

    def define(self, placeholder: SSAValue, value: SSAValue) -> None:
        """Replace every use of `placeholder` (from `forward`) by `value`."""
        owner = placeholder.owner if isinstance(placeholder, SSAValue) else None
        if owner not in self._placeholders:
            raise ValueError(f"placeholder must be an undefined value made by forward() "
                             f"on this builder, got {placeholder!r}")
        self._value("value", value)
        self._same_type("value", value, placeholder.type)
        assert isinstance(owner, Operation)
        placeholder.replace_all_uses_with(value)
        self._placeholders.remove(owner)
        self._replaced.add(placeholder)
        owner.detach()
        owner.erase()

    def fby(self, init: SSAValue, next: SSAValue) -> SSAValue:
        self._value("init", init)
        self._same_type("next", self._value("next", next), init.type)
        return self._add(lus.FbyOp(init, next))

    def pre(self, x: SSAValue) -> SSAValue:
        return self._add(lus.PreOp(self._value("x", x)))

    def _condition(self, cond: object) -> None:
        if isinstance(cond, str):
            try:
                lus.parse_kperiodic(cond)
            except VerifyException as e:
                raise ValueError(f"cond: {e}") from None
            return
        self._same_type("cond", self._value("cond", cond), IntegerType(1))

    def when(self, x: SSAValue, cond: SSAValue | str, negated: bool = False) -> SSAValue:
        self._value("x", x)
        self._condition(cond)
        if isinstance(cond, str):
            return self._add(lus.WhenOp(x, word=cond, negated=negated))
        return self._add(lus.WhenOp(x, condition=cond, negated=negated))

    def merge(self, cond: SSAValue | str, t: SSAValue, f: SSAValue) -> SSAValue:
        self._condition(cond)
        self._value("t", t)
        self._same_type("f", self._value("f", f), t.type)
        if isinstance(cond, str):
            return self._add(lus.MergeOp(t, f, word=cond))
        return self._add(lus.MergeOp(t, f, condition=cond))

    def kperiodic(self, word: str) -> SSAValue:
        if not isinstance(word, str):
            raise TypeError(f"word must be a k-periodic word such as '1(0)', got {word!r}")
        self._condition(word)
        return self._add(lus.KPeriodicOp(word))

    def instance(self, callee: str, args: Sequence[SSAValue], results: Sequence[Attribute]):
        """Instantiate node `callee` (checked against it in `module()`)."""
        if not isinstance(callee, str) or not callee:
            raise TypeError(f"callee must be a node name (str), got {callee!r}")
        if isinstance(args, str | bytes) or not isinstance(args, Sequence):
            raise TypeError(f"args must be a list of values, got {args!r}")
        values = [self._value(f"args[{k}]", v) for k, v in enumerate(args)]
        op = lus.InstanceOp(callee.lstrip("@"), values, _types("results", results))
        self._append(op)
        return list(op.results)

    def finish(self, outputs: Sequence[SSAValue], state: Sequence[SSAValue] = ()) -> lus.NodeOp:
        """End the node with `lus.yield state(state) (outputs)`."""
        if self._finished:
            raise ValueError(f"node @{self.node.sym_name.data} is already finished")
        if self._placeholders:
            raise ValueError("forward values were never defined")
        for arg, values, types in (("outputs", outputs, self.node.output_types),
                                   ("state", state, [a.type for a in self.node.state_args])):
            if isinstance(values, str | bytes) or not isinstance(values, Sequence):
                raise TypeError(f"{arg} must be a list of values, got {values!r}")
            if len(values) != len(types):
                raise ValueError(f"{arg}: the node declares {len(types)} "
                                 f"({', '.join(map(str, types))}), got {len(values)} value(s)")
            for k, (v, t) in enumerate(zip(values, types)):
                self._same_type(f"{arg}[{k}]", self._value(f"{arg}[{k}]", v), t)
        self.block.add_op(lus.YieldOp(outputs, state))
        self._finished = True
        return self.node

    def module(self, *others: lus.NodeOp) -> ModuleOp:
        """The node (and other nodes it instantiates) in a verified module;
        a module that does not verify (an unknown callee, a wrong arity) is a
        ValueError with the verifier's message."""
        if not self._finished:
            raise ValueError(f"node @{self.node.sym_name.data} is not finished (call finish())")
        for k, other in enumerate(others):
            if not isinstance(other, lus.NodeOp):
                raise TypeError(f"others[{k}] must be a lus.NodeOp (from finish()), got {other!r}")
        m = ModuleOp([*others, self.node])
        try:
            m.verify()
        except VerifyException as e:
            for node in [*others, self.node]:
                node.detach()  # usable again in another module
            raise ValueError(f"node @{self.node.sym_name.data} does not verify: {e}") from None
        return m
