"""The `sync` dialect: low-level reactive SSA.

`lus` lowers to `sync`: a `sync.node` is an ordinary SSACFG function whose
arguments are input and output *signals*; it reads inputs with `sync.input`,
writes outputs with `sync.output`, ends a cycle with `sync.tick` and carries
values across it with `sync.sync`. Instances of other nodes run one reaction
with `sync.inst`. `sync.undef` stands for the value of an absent variable.

Example:

```mlir
sync.node @integr(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
  %c0 = arith.constant 0 : i32
  %r = scf.while (%s = %c0) : (i32) -> i32 {
    %true = arith.constant true
    scf.condition(%true) %s : i32
  } do {
  ^bb0(%s2: i32):
    %x = sync.input(%i) : i32
    %n = arith.addi %s2, %x : i32
    %e = sync.output(%o : %n) : i32
    %t = sync.tick(%e) : i32
    %n2 = sync.sync(%t, %n : i32)
    scf.yield %n2 : i32
  }
  sync.halt
}
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I1,
    I32,
    FunctionType,
    I64,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class SigInType(ParametrizedAttribute, TypeAttribute):
    """An input signal carrying values of type T: `!sync.sigin<T>`."""

    name = "sync.sigin"
    element: Attribute = param_def()


@irdl_attr_definition
class SigOutType(ParametrizedAttribute, TypeAttribute):
    """An output signal carrying values of type T: `!sync.sigout<T>`."""

    name = "sync.sigout"
    element: Attribute = param_def()


@irdl_op_definition
class NodeOp(IRDLOperation):
    """A reactive node: a function over input and output signals.

    The body is an SSACFG region whose entry block takes the input signals,
    then the output signals, and ends with `sync.halt`.

    Example:

    ```mlir
    sync.node @id(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
      %x = sync.input(%i) : f32
      %e = sync.output(%o : %x) : f32
      sync.halt
    }
    ```
    """

    name = "sync.node"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    body = region_def()
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        outputs: Sequence[Attribute],
        body: Region | None = None,
    ):
        """`inputs`/`outputs` are the carried types T (wrapped into signals)."""
        ins = [SigInType(t) for t in inputs]
        outs = [SigOutType(t) for t in outputs]
        if body is None:
            body = Region(Block(arg_types=[*ins, *outs]))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(ins, outs),
            },
            regions=[body],
        )

    @property
    def num_inputs(self) -> int:
        return len(self.function_type.inputs.data)

    @classmethod
    def parse(cls, parser: Parser) -> NodeOp:
        name = parser.parse_symbol_name().data
        ins = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        parser.parse_punctuation("->")
        outs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([*ins, *outs])
        op = cls.__new__(cls)
        IRDLOperation.__init__(
            op,
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(
                    [a.type for a in ins], [a.type for a in outs]
                ),
            },
            regions=[body],
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        args = self.body.blocks[0].args if self.body.blocks else ()
        n = self.num_inputs
        printer.print_string("(")
        printer.print_list(args[:n], printer.print_block_argument)
        printer.print_string(") -> (")
        printer.print_list(args[n:], printer.print_block_argument)
        printer.print_string(")")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        ins = self.function_type.inputs.data
        outs = self.function_type.outputs.data
        for t in ins:
            if not isinstance(t, SigInType):
                raise VerifyException(f"sync.node inputs must be !sync.sigin, got {t}")
        for t in outs:
            if not isinstance(t, SigOutType):
                raise VerifyException(f"sync.node outputs must be !sync.sigout, got {t}")
        if not self.body.blocks:
            raise VerifyException("sync.node needs a body")
        args = tuple(a.type for a in self.body.blocks[0].args)
        if args != (*ins, *outs):
            raise VerifyException(
                "sync.node entry block arguments must be the input then the output signals"
            )


_T = VarConstraint("T", AnyAttr())


@irdl_op_definition
class InputOp(IRDLOperation):
    """Read the value of an input signal in the current cycle.

    Example:

    ```mlir
    sync.node @id(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
      %x = sync.input(%i) : i32
      %e = sync.output(%o : %x) : i32
      sync.halt
    }
    ```
    """

    name = "sync.input"
    signal = operand_def(SigInType)
    result = result_def()

    def __init__(self, signal: SSAValue):
        assert isinstance(signal.type, SigInType)
        super().__init__(operands=[signal], result_types=[signal.type.element])

    @classmethod
    def parse(cls, parser: Parser) -> InputOp:
        parser.parse_punctuation("(")
        sig_un = parser.parse_unresolved_operand()
        parser.parse_punctuation(")")
        parser.parse_punctuation(":")
        t = parser.parse_type()
        sig = parser.resolve_operand(sig_un, SigInType(t))
        op = cls.__new__(cls)
        IRDLOperation.__init__(op, operands=[sig], result_types=[t])
        return op

    def print(self, printer: Printer):
        printer.print_string("(")
        printer.print_operand(self.signal)
        printer.print_string(") : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        sig = self.signal.type
        if isinstance(sig, SigInType) and sig.element != self.result.type:
            raise VerifyException(
                f"sync.input result type {self.result.type} does not match the "
                f"signal's element type {sig.element}"
            )


@irdl_op_definition
class OutputOp(IRDLOperation):
    """Write a value to an output signal; the i32 token orders it before the tick.

    Example:

    ```mlir
    sync.node @id(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
      %v = sync.input(%i) : i32
      %e = sync.output(%o : %v) : i32
      sync.halt
    }
    ```
    """

    name = "sync.output"
    signal = operand_def(SigOutType)
    value = operand_def()
    token = result_def(I32)

    def __init__(self, signal: SSAValue, value: SSAValue):
        super().__init__(operands=[signal, value], result_types=[IntegerType(32)])

    @classmethod
    def parse(cls, parser: Parser) -> OutputOp:
        parser.parse_punctuation("(")
        sig_un = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        val_un = parser.parse_unresolved_operand()
        parser.parse_punctuation(")")
        parser.parse_punctuation(":")
        t = parser.parse_type()
        sig = parser.resolve_operand(sig_un, SigOutType(t))
        return cls(sig, parser.resolve_operand(val_un, t))

    def print(self, printer: Printer):
        printer.print_string("(")
        printer.print_operand(self.signal)
        printer.print_string(" : ")
        printer.print_operand(self.value)
        printer.print_string(") : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        sig = self.signal.type
        if isinstance(sig, SigOutType) and sig.element != self.value.type:
            raise VerifyException(
                f"sync.output value type {self.value.type} does not match the "
                f"signal's element type {sig.element}"
            )


@irdl_op_definition
class TickOp(IRDLOperation):
    """The cycle barrier; its operands are what must happen before it.

    The operands are i32 tokens (of `sync.output`, or of other ticks).

    Example:

    ```mlir
    sync.node @pair(%i: !sync.sigin<i32>, %j: !sync.sigin<f32>) -> (%o: !sync.sigout<i32>, %p: !sync.sigout<f32>) {
      %x = sync.input(%i) : i32
      %y = sync.input(%j) : f32
      %e1 = sync.output(%o : %x) : i32
      %e2 = sync.output(%p : %y) : f32
      %t = sync.tick(%e1, %e2) : i32
      %a, %b = sync.sync(%t, %x : i32, %y : f32)
      sync.halt
    }
    ```
    """

    name = "sync.tick"
    deps = var_operand_def(I32)
    result = result_def(I32)
    assembly_format = "`(` $deps `)` attr-dict `:` type($result)"

    def __init__(self, deps: Sequence[SSAValue] = ()):
        super().__init__(operands=[deps], result_types=[IntegerType(32)])


@irdl_op_definition
class SyncOp(IRDLOperation):
    """Carry values past a tick: the results are the values after the barrier.

    Example:

    ```mlir
    sync.node @pair(%i: !sync.sigin<i32>, %j: !sync.sigin<f32>) -> (%o: !sync.sigout<i32>, %p: !sync.sigout<f32>) {
      %x = sync.input(%i) : i32
      %y = sync.input(%j) : f32
      %e1 = sync.output(%o : %x) : i32
      %e2 = sync.output(%p : %y) : f32
      %t = sync.tick(%e1, %e2) : i32
      %a, %b = sync.sync(%t, %x : i32, %y : f32)
      sync.halt
    }
    ```
    """

    name = "sync.sync"
    tick = operand_def(I32)
    values = var_operand_def()
    res = var_result_def()

    def __init__(self, tick: SSAValue, values: Sequence[SSAValue]):
        super().__init__(
            operands=[tick, values], result_types=[[v.type for v in values]]
        )

    @classmethod
    def parse(cls, parser: Parser) -> SyncOp:
        parser.parse_punctuation("(")
        tick = parser.resolve_operand(parser.parse_unresolved_operand(), IntegerType(32))
        values: list[SSAValue] = []
        while parser.parse_optional_punctuation(",") is not None:
            un = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            values.append(parser.resolve_operand(un, parser.parse_type()))
        parser.parse_punctuation(")")
        return cls(tick, values)

    def print(self, printer: Printer):
        printer.print_string("(")
        printer.print_operand(self.tick)
        for v in self.values:
            printer.print_string(", ")
            printer.print_operand(v)
            printer.print_string(" : ")
            printer.print_attribute(v.type)
        printer.print_string(")")

    def verify_(self) -> None:
        if tuple(v.type for v in self.values) != tuple(r.type for r in self.res):
            raise VerifyException("sync.sync results must have the types of its values")


class _InstCallee(SymbolUserOpInterface):
    """The callee of a `sync.inst` is a `sync.node` taking its operands'
    types and returning its results' types."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, InstOp)
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if callee is None:
            raise VerifyException(f"sync.inst: no node named {op.callee}")
        if not isinstance(callee, NodeOp):
            raise VerifyException(f"sync.inst: {op.callee} is not a sync.node")
        signature = callee.function_type
        for what, got, signals, side in (
            ("operand", op.args, signature.inputs.data, "inputs"),
            ("result", op.res, signature.outputs.data, "outputs"),
        ):
            types = tuple(v.type for v in got)
            want = tuple(getattr(t, "element", t) for t in signals)
            if types != want:
                raise VerifyException(
                    f"sync.inst: {what} types ({', '.join(map(str, types))}) do not match "
                    f"the {side} of {op.callee} ({', '.join(map(str, want))})"
                )


@irdl_op_definition
class InstOp(IRDLOperation):
    """Run one reaction of instance `id` of node `callee`.

    Example:

    ```mlir
    sync.node @id(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
      %v = sync.input(%i) : i32
      %e = sync.output(%o : %v) : i32
      sync.halt
    }
    sync.node @main(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
      %a = sync.input(%i) : i32
      %r = sync.inst @id 2 (%a) : (i32) -> i32
      %e = sync.output(%o : %r) : i32
      sync.halt
    }
    ```
    """

    name = "sync.inst"
    callee = prop_def(SymbolRefAttr)
    """The `sync.node` this instance runs, `@name`; its signature must match the operands and results."""
    id = prop_def(IntegerAttr[I64])
    """The instance number: instances of one node with different ids keep separate state."""
    args = var_operand_def()
    res = var_result_def()
    traits = traits_def(_InstCallee())
    assembly_format = (
        "$callee $id ` ` `(` $args `)` attr-dict `:` functional-type($args, $res)"
    )

    def __init__(
        self,
        callee: str,
        id: int,
        args: Sequence[SSAValue],
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": SymbolRefAttr(callee), "id": IntegerAttr(id, 64)},
        )

    def verify_(self) -> None:
        if self.id.value.data < 0:
            raise VerifyException("sync.inst instance id must be non-negative")


@irdl_op_definition
class UndefOp(IRDLOperation):
    """The value of an absent variable; a correct program never uses it.

    Example:

    ```mlir
    %u = sync.undef : f32
    ```
    """

    name = "sync.undef"
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: Attribute):
        super().__init__(result_types=[t])


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Choose `t` if `c` else `f` (what `lus.merge` lowers to).

    Example:

    ```mlir
    sync.node @choose(%ci: !sync.sigin<i1>, %ti: !sync.sigin<i32>, %fi: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
      %c = sync.input(%ci) : i1
      %t = sync.input(%ti) : i32
      %f = sync.input(%fi) : i32
      %r = sync.select %c %t %f : i32
      %e = sync.output(%o : %r) : i32
      sync.halt
    }
    ```
    """

    name = "sync.select"
    cond = operand_def(I1)
    on_true = operand_def(_T)
    on_false = operand_def(_T)
    result = result_def(_T)
    traits = traits_def(Pure())
    assembly_format = "$cond $on_true $on_false attr-dict `:` type($result)"

    def __init__(self, cond: SSAValue, on_true: SSAValue, on_false: SSAValue):
        super().__init__(
            operands=[cond, on_true, on_false], result_types=[on_true.type]
        )


@irdl_op_definition
class HaltOp(IRDLOperation):
    """Terminates a `sync.node`.

    Example:

    ```mlir
    sync.halt
    ```
    """

    name = "sync.halt"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


Sync = Dialect(
    "sync",
    [NodeOp, InputOp, OutputOp, TickOp, SyncOp, InstOp, UndefOp, SelectOp, HaltOp],
    [SigInType, SigOutType],
)
