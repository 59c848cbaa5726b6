"""A small Python builder for lus nodes.

Values may be used before they are defined (a node body is a graph region):
`forward(type)` makes a placeholder that `define(placeholder, value)` later
replaces, which is how feedback through `fby` is written.

Example (the integrator):

```python
from xdsl.dialects.builtin import i32
from steplus.dialects.lus_builder import NodeBuilder

n = NodeBuilder("integr", inputs=[i32], outputs=[i32])
(i,) = n.inputs
incr = n.forward(i32)
s = n.fby(n.const(0, i32), incr)
n.define(incr, n.op("arith.addi", [s, i], i32))
n.finish([incr])
print(n.module())
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from steplus.dialects import lus


class NodeBuilder:
    """Builds one `lus.node`."""

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        outputs: Sequence[Attribute],
        state: Sequence[Attribute] = (),
        static: Sequence[Attribute] = (),
    ):
        self.node = lus.NodeOp(name, inputs, outputs, static=static, state=state)
        self.block: Block = self.node.body.block
        self._placeholders: list[Operation] = []
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

    def _add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        attr = IntegerAttr(value, t) if isinstance(t, IntegerType) else FloatAttr(value, t)
        return self._add(arith.ConstantOp(attr, t))

    def op(self, name: str, operands: Sequence[SSAValue], result: Attribute, **props) -> SSAValue:
        """Any clock-polymorphic op by name (e.g. `"arith.addi"`)."""
        from xdsl.dialects import get_all_dialects

        dialect = get_all_dialects()[name.split(".")[0]]()
        cls = next(o for o in dialect.operations if o.name == name)
        return self._add(cls.create(operands=list(operands), result_types=[result],
                                    properties=props))

    def forward(self, t: Attribute) -> SSAValue:
        """A placeholder for a value defined later (replaced by `define`)."""
        from xdsl.dialects.test import TestOp

        op = TestOp(result_types=[t])
        self._placeholders.append(op)
        return self._add(op)

    def define(self, placeholder: SSAValue, value: SSAValue) -> None:
        placeholder.replace_all_uses_with(value)
        owner = placeholder.owner
        assert isinstance(owner, Operation)
        self._placeholders.remove(owner)
        owner.detach()
        owner.erase()

    def fby(self, init: SSAValue, next: SSAValue) -> SSAValue:
        return self._add(lus.FbyOp(init, next))

    def pre(self, x: SSAValue) -> SSAValue:
        return self._add(lus.PreOp(x))

    def when(self, x: SSAValue, cond: SSAValue | str, negated: bool = False) -> SSAValue:
        if isinstance(cond, str):
            return self._add(lus.WhenOp(x, word=cond))
        return self._add(lus.WhenOp(x, condition=cond, negated=negated))

    def merge(self, cond: SSAValue | str, t: SSAValue, f: SSAValue) -> SSAValue:
        if isinstance(cond, str):
            return self._add(lus.MergeOp(t, f, word=cond))
        return self._add(lus.MergeOp(t, f, condition=cond))

    def kperiodic(self, word: str) -> SSAValue:
        return self._add(lus.KPeriodicOp(word))

    def instance(self, callee: str, args: Sequence[SSAValue], results: Sequence[Attribute]):
        op = lus.InstanceOp(callee, args, results)
        self.block.add_op(op)
        return list(op.results)

    def finish(self, outputs: Sequence[SSAValue], state: Sequence[SSAValue] = ()) -> lus.NodeOp:
        if self._placeholders:
            raise ValueError("forward values were never defined")
        self.block.add_op(lus.YieldOp(outputs, state))
        return self.node

    def module(self, *others: lus.NodeOp) -> ModuleOp:
        """The node (and other nodes it instantiates) in a verified module."""
        m = ModuleOp([*others, self.node])
        m.verify()
        return m
