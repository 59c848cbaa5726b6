"""`step.graph`, the op every step operator sits directly in, and the typed parent trait.

`IN_GRAPH` (a `HasParent(GraphOp)`) is the parent contract of every step
operator: it matches the parent by class, not by op name, and says where the
op was found:

```mlir
step.graph @g {
^bb0(%in: !step.stream<[B], !step.tile<1x64xf32>>):
  step.consume %in : !step.stream<[B], !step.tile<1x64xf32>>
}
```

A `step.map` outside a `step.graph` is "step.map must be directly inside a
step.graph (found in func.func)".
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, SymbolNameConstraint
from xdsl.ir import Block, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.discardable import verify_discardable
from steplus.dialects.step.types import StreamType
from steplus.dialects.step.verify import DirectlyIn, check_graph


@irdl_op_definition
class GraphOp(IRDLOperation):
    """A streaming tensor program: a named graph of operators.

    The body is a graph region (uses may precede definitions, feedback edges
    are legal) with no terminator. Block arguments are input streams; they
    are written as the arguments of the entry block (`^bb0(%in: ...)`), not
    after the symbol name. Every
    stream value has at most one consumer; fan-out goes through
    `step.broadcast`.

    Example:

    ```mlir
    step.graph @g {
    ^bb0(%in: !step.stream<[B], !step.tile<1x64xf32>>):
      step.consume %in : !step.stream<[B], !step.tile<1x64xf32>>
    }
    ```
    """

    name = "step.graph"
    sym_name = prop_def(SymbolNameConstraint())
    """The graph's symbol name (`@name`), how tools pick it (`step-run --graph`)."""
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())
    assembly_format = "$sym_name attr-dict-with-keyword $body"

    def __init__(self, name: str, body: Region | None = None):
        super().__init__(
            properties={"sym_name": StringAttr(name)},
            regions=[body if body is not None else Region(Block())],
        )

    def verify_(self) -> None:
        check_graph(self)
        verify_discardable(self, is_graph=True)
        for op in self.body.block.ops:
            try:
                verify_discardable(op, is_graph=False)
            except VerifyException as e:
                op.emit_error(str(e), e)  # located at the operator, not the graph
        for op in self.body.walk():
            if op is self:
                continue
            for res in op.results:
                if isinstance(res.type, StreamType):
                    n = len(list(res.uses))
                    if n > 1:
                        raise VerifyException(
                            f"stream #{res.index} of {op.name} has {n} consumers; "
                            "every stream has at most one consumer (use step.broadcast)"
                        )
        for arg in self.body.block.args:
            if isinstance(arg.type, StreamType) and len(list(arg.uses)) > 1:
                raise VerifyException(
                    f"graph argument #{arg.index} has more than one consumer; "
                    "use step.broadcast"
                )


IN_GRAPH = DirectlyIn("a step.graph", GraphOp)
"""The trait of every step operator: a node of a `step.graph` (`HasParent(GraphOp)`)."""
