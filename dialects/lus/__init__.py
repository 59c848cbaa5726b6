"""The `lus` dialect: Lustre-like synchronous dataflow programs.

A `lus.node` runs in cycles (ticks). In each cycle every value is present or
absent; its *clock* says when it is present. Inputs are on the base clock;
`lus.when` sub-samples, `lus.merge` combines complementary flows, `lus.fby` and
`lus.pre` carry a value from one cycle of their clock to the next, and
`lus.instance` runs one cycle of another node. A node body is a graph region:
definitions may follow their uses (xDSL records no region kinds, so dominance is
simply not checked inside nodes; causality is checked by `lus-causality`).

Any other op (arith, math, tensor, linalg, func.call) may appear in a node
body and is clock-polymorphic: its operands and results share one clock.

Example:

```mlir
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
```

K-periodic words are written `prefix(period)` over {0, 1}, e.g. `"0(01)"`:
the sequence 0 0 1 0 1 0 1 ...
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I1,
    FunctionType,
    I64,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
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
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.lus.conditions import (  # noqa: F401 (re-exported)
    kperiodic_value,
    parse_condition as _parse_condition,
    parse_kperiodic,
    print_condition as _print_condition,
    verify_condition as _verify_condition,
)
from steplus.dialects.lus.symbols import lookup_node  # noqa: F401 (re-exported)


def _parse_typed_operands(parser: Parser) -> tuple[list[SSAValue], list[Attribute]]:
    """Parse `%a : T, %b : U` (possibly empty) between already-consumed parens."""
    values: list[SSAValue] = []
    types: list[Attribute] = []

    def one() -> None:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        values.append(parser.resolve_operand(unresolved, t))
        types.append(t)

    if parser.parse_optional_punctuation(")") is None:
        parser.parse_comma_separated_list(parser.Delimiter.NONE, one)
        parser.parse_punctuation(")")
    return values, types


def _print_typed_operands(printer: Printer, values: Sequence[SSAValue]) -> None:
    printer.print_string("(")
    printer.print_list(
        values,
        lambda v: (
            printer.print_operand(v),
            printer.print_string(" : "),
            printer.print_attribute(v.type),
        ),
    )
    printer.print_string(")")


@irdl_op_definition
class NodeOp(IRDLOperation):
    """A synchronous dataflow node.

    The body is a graph region terminated by `lus.yield`. Block arguments are,
    in order, the `static` parameters, the `state` arguments (values of the
    previous cycle, produced by `lus.yield state(...)`), then the inputs. The
    function type lists the static parameters and the inputs (what an instance
    passes) and the outputs.

    Example:

    ```mlir
    lus.node @counter state(%n: i32) (%reset: i1) -> (i32) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %next = arith.addi %n, %c1 : i32
      %v = arith.select %reset, %c0, %next : i32
      lus.yield state(%v : i32) (%v : i32)
    }
    ```
    """

    name = "lus.node"

    sym_name = prop_def(StringAttr)
    """The node's symbol name, what `lus.instance @name` calls."""
    function_type = prop_def(FunctionType)
    """The static parameters and inputs (what an instance passes) to the outputs; state is not in it."""
    num_static = prop_def(IntegerAttr[I64])
    """How many leading block arguments are `static` parameters (constant for the node's life)."""
    num_state = prop_def(IntegerAttr[I64])
    """How many block arguments after the static ones are `state` (last cycle's `lus.yield state(...)`)."""
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        outputs: Sequence[Attribute],
        body: Region | None = None,
        static: Sequence[Attribute] = (),
        state: Sequence[Attribute] = (),
    ):
        if body is None:
            body = Region(Block(arg_types=[*static, *state, *inputs]))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists([*static, *inputs], outputs),
                "num_static": IntegerAttr(len(static), 64),
                "num_state": IntegerAttr(len(state), 64),
            },
            regions=[body],
        )

    @property
    def static_args(self):
        return self.body.block.args[: self.num_static.value.data]

    @property
    def state_args(self):
        n = self.num_static.value.data
        return self.body.block.args[n : n + self.num_state.value.data]

    @property
    def input_args(self):
        return self.body.block.args[self.num_static.value.data + self.num_state.value.data :]

    @property
    def output_types(self) -> tuple[Attribute, ...]:
        return tuple(self.function_type.outputs.data)

    @classmethod
    def parse(cls, parser: Parser) -> NodeOp:
        name = parser.parse_symbol_name().data
        static = []
        state = []
        if parser.parse_optional_keyword("static") is not None:
            static = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_argument
            )
        if parser.parse_optional_keyword("state") is not None:
            state = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_argument
            )
        inputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([*static, *state, *inputs])
        op = cls(
            name,
            [a.type for a in inputs],
            outputs,
            body,
            [a.type for a in static],
            [a.type for a in state],
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)

        def group(keyword: str, args) -> None:
            printer.print_string(f" {keyword}(" if keyword else "(")
            printer.print_list(args, printer.print_block_argument)
            printer.print_string(")")

        if self.num_static.value.data:
            group("static", self.static_args)
        if self.num_state.value.data:
            group("state", self.state_args)
        if self.num_static.value.data or self.num_state.value.data:
            printer.print_string(" ")
        group("", self.input_args)
        printer.print_string(" -> (")
        printer.print_list(self.output_types, printer.print_attribute)
        printer.print_string(")")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def argument_counts_error(self) -> str | None:
        """Why the static/state counts do not fit the block, or None."""
        n_static, n_state = self.num_static.value.data, self.num_state.value.data
        if n_static < 0 or n_state < 0:
            return "static and state counts must be non-negative"
        n_inputs = len(self.function_type.inputs.data)
        if n_static > n_inputs:
            return (f"lus.node has {n_static} static parameter(s) but its function "
                    f"type has only {n_inputs} input(s)")
        extra = len(self.body.block.args) - n_inputs
        if extra < 0:
            return (f"lus.node block has {len(self.body.block.args)} argument(s), fewer "
                    f"than the {n_inputs} input(s) of its function type")
        if n_state != extra:
            return (f"lus.node has {n_state} state argument(s) but its block has "
                    f"{extra} argument(s) beyond the function type's inputs")
        return None

    def verify_(self) -> None:
        block = self.body.block
        n_static, n_state = self.num_static.value.data, self.num_state.value.data
        counts = self.argument_counts_error()
        if counts is not None:
            raise VerifyException(counts)
        declared = list(self.function_type.inputs.data)
        args = [a.type for a in block.args]
        expected = declared[:n_static] + args[n_static : n_static + n_state]
        expected += declared[n_static:]
        if len(args) != len(expected) or args != expected:
            raise VerifyException(
                "node block arguments must be the static parameters, the state "
                "arguments, then the inputs of the function type"
            )
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("a lus.node body must end with lus.yield")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a node: the next state and the outputs of this cycle.

    Example:

    ```mlir
    lus.node @count state(%n: i32) (%step: i32) -> (i32) {
      %next = arith.addi %n, %step : i32
      %out = arith.addi %n, %step : i32
      lus.yield state(%next : i32) (%out : i32)
    }
    ```
    """

    name = "lus.yield"

    state = var_operand_def()
    outputs = var_operand_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(IsTerminator(), HasParent(NodeOp))

    def __init__(self, outputs: Sequence[SSAValue], state: Sequence[SSAValue] = ()):
        super().__init__(operands=[state, outputs])

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        state: list[SSAValue] = []
        if parser.parse_optional_keyword("state") is not None:
            parser.parse_punctuation("(")
            state, _ = _parse_typed_operands(parser)
        parser.parse_punctuation("(")
        outputs, _ = _parse_typed_operands(parser)
        return cls(outputs, state)

    def print(self, printer: Printer):
        if self.state:
            printer.print_string(" state")
            _print_typed_operands(printer, self.state)
        printer.print_string(" ")
        _print_typed_operands(printer, self.outputs)

    def verify_(self) -> None:
        node = self.parent_op()
        if not isinstance(node, NodeOp) or node.argument_counts_error() is not None:
            return  # the node reports its own malformed arguments
        outs = tuple(o.type for o in self.outputs)
        if outs != node.output_types:
            raise VerifyException(
                "lus.yield outputs must match the node's output types: expected ("
                + ", ".join(map(str, node.output_types))
                + "), got ("
                + ", ".join(map(str, outs))
                + ")"
            )
        state_types = tuple(a.type for a in node.state_args)
        got = tuple(s.type for s in self.state)
        if got != state_types:
            raise VerifyException(
                f"lus.yield state must match the node's {len(state_types)} state "
                f"argument(s): expected ({', '.join(map(str, state_types))}), "
                f"got ({', '.join(map(str, got))})"
            )


_T = VarConstraint("T", AnyAttr())


@irdl_op_definition
class FbyOp(IRDLOperation):
    """Followed-by: `init` in the first cycle of its clock, then the previous `next`.

    Example:

    ```mlir
    lus.node @integr(%i: i32) -> (i32) {
      %c0 = arith.constant 0 : i32
      %s = lus.fby %c0 %incr : i32
      %incr = arith.addi %s, %i : i32
      lus.yield (%incr : i32)
    }
    ```
    """

    name = "lus.fby"
    init = operand_def(_T)
    next = operand_def(_T)
    result = result_def(_T)
    traits = traits_def(HasParent(NodeOp))
    assembly_format = "$init $next attr-dict `:` type($result)"

    def __init__(self, init: SSAValue, next: SSAValue):
        super().__init__(operands=[init, next], result_types=[init.type])


@irdl_op_definition
class PreOp(IRDLOperation):
    """The previous value of a flow on its clock; undefined in its first cycle.

    Example:

    ```mlir
    lus.node @delay(%x: f32) -> (f32) {
      %c0 = arith.constant 0.0 : f32
      %p = lus.pre %x : f32
      %y = lus.merge "1(0)" %c0 %p : f32   // %p is undefined in the first cycle
      lus.yield (%y : f32)
    }
    ```
    """

    name = "lus.pre"
    input = operand_def(_T)
    result = result_def(_T)
    traits = traits_def(HasParent(NodeOp))
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])


@irdl_op_definition
class WhenOp(IRDLOperation):
    """Sub-sampling: `x` present only in the cycles where the condition holds.

    The condition is an `i1` flow on the clock of `x`, or a k-periodic word;
    `not` takes the complement (`when not "w" x` is `x` on `ck on not "w"`, the
    other branch of `merge "w"`).

    Example:

    ```mlir
    lus.node @sample(%c: i1, %x: f32) -> (f32, f32) {
      %y = lus.when %c %x : f32
      %z = lus.when not %c %x : f32
      %w = lus.when "0(001)" %x : f32
      %v = lus.when not "0(001)" %x : f32
      %m = lus.merge %c %y %z : f32
      %n = lus.merge "0(001)" %w %v : f32
      lus.yield (%m : f32, %n : f32)
    }
    ```
    """

    name = "lus.when"
    condition = opt_operand_def(I1)
    input = operand_def()
    result = result_def()
    word = opt_prop_def(StringAttr)
    """The k-periodic condition word `prefix(period)` of `0`/`1`, used instead of a `condition` operand."""
    negated = opt_prop_def(UnitAttr)
    """Present for `when not`: keep `x` where the condition is false."""
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasParent(NodeOp))

    def __init__(
        self,
        input: SSAValue,
        condition: SSAValue | None = None,
        word: str | None = None,
        negated: bool = False,
    ):
        props: dict[str, Attribute] = {}
        if word is not None:
            props["word"] = StringAttr(word)
        if negated:
            props["negated"] = UnitAttr()
        super().__init__(
            operands=[[condition] if condition is not None else [], [input]],
            result_types=[input.type],
            properties=props,
        )

    @classmethod
    def parse(cls, parser: Parser) -> WhenOp:
        cond, word, negated = _parse_condition(parser)
        unresolved = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(parser.resolve_operand(unresolved, t), cond, word, negated)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer):
        _print_condition(printer, self.condition, self.word, self.negated is not None)
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        _verify_condition(self, self.condition, self.word)
        if self.input.type != self.result.type:
            raise VerifyException("lus.when result type must equal the input type")


@irdl_op_definition
class MergeOp(IRDLOperation):
    """Merge two complementary flows onto the faster clock.

    `t` is present when the condition is true, `f` when it is false; the result
    is present on the clock of the condition.

    Example:

    ```mlir
    lus.node @choose(%c: i1, %x: f32, %i: i32) -> (f32, i32) {
      %a = lus.when %c %x : f32
      %b = lus.when not %c %x : f32
      %y = lus.merge %c %a %b : f32
      %init = arith.constant 0 : i32
      %rest = lus.pre %i : i32
      %z = lus.merge "1(0)" %init %rest : i32
      lus.yield (%y : f32, %z : i32)
    }
    ```
    """

    name = "lus.merge"
    condition = opt_operand_def(I1)
    on_true = operand_def(_T)
    on_false = operand_def(_T)
    result = result_def(_T)
    word = opt_prop_def(StringAttr)
    """The k-periodic condition word `prefix(period)`, used instead of a `condition` operand."""
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasParent(NodeOp))

    def __init__(
        self,
        on_true: SSAValue,
        on_false: SSAValue,
        condition: SSAValue | None = None,
        word: str | None = None,
    ):
        super().__init__(
            operands=[[condition] if condition is not None else [], [on_true], [on_false]],
            result_types=[on_true.type],
            properties={"word": StringAttr(word)} if word is not None else {},
        )

    @classmethod
    def parse(cls, parser: Parser) -> MergeOp:
        cond, word, negated = _parse_condition(parser)
        if negated:
            parser.raise_error("lus.merge does not take 'not'")
        t_un = parser.parse_unresolved_operand()
        f_un = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(
            parser.resolve_operand(t_un, t), parser.resolve_operand(f_un, t), cond, word
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer):
        _print_condition(printer, self.condition, self.word, False)
        printer.print_string(" ")
        printer.print_operand(self.on_true)
        printer.print_string(" ")
        printer.print_operand(self.on_false)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        _verify_condition(self, self.condition, self.word)


class _InstanceCallee(SymbolUserOpInterface):
    def verify(self, op: Operation) -> None:
        assert isinstance(op, InstanceOp)
        callee = lookup_node(op, op.callee)
        if callee is None:
            raise VerifyException(f"lus.instance: no node named {op.callee}")
        if not isinstance(callee, NodeOp):
            raise VerifyException(f"lus.instance: {op.callee} is not a lus.node")
        ins = tuple(o.type for o in op.args)
        outs = tuple(r.type for r in op.res)
        if ins != tuple(callee.function_type.inputs.data):
            raise VerifyException(
                f"lus.instance: operand types ({', '.join(map(str, ins))}) do not match "
                f"the inputs of {op.callee} "
                f"({', '.join(map(str, callee.function_type.inputs.data))})"
            )
        if outs != callee.output_types:
            raise VerifyException(
                f"lus.instance: result types ({', '.join(map(str, outs))}) do not match "
                f"the outputs of {op.callee} "
                f"({', '.join(map(str, callee.output_types))})"
            )


@irdl_op_definition
class InstanceOp(IRDLOperation):
    """Run one cycle of another node per cycle of the instance's clock.

    Example:

    ```mlir
    lus.node @integr(%i: i32) -> (i32) {
      %c0 = arith.constant 0 : i32
      %s = lus.fby %c0 %incr : i32
      %incr = arith.addi %s, %i : i32
      lus.yield (%incr : i32)
    }
    lus.node @main(%x: i32) -> (i32) {
      %y = lus.instance @integr(%x) : (i32) -> (i32)
      lus.yield (%y : i32)
    }
    ```
    """

    name = "lus.instance"
    callee = prop_def(SymbolRefAttr)
    """The `lus.node` run, by symbol; operands and results must match its function type."""
    args = var_operand_def()
    res = var_result_def()
    traits = traits_def(_InstanceCallee(), HasParent(NodeOp))
    assembly_format = (
        "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"
    )

    def __init__(
        self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]
    ):
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": SymbolRefAttr(callee)},
        )


@irdl_op_definition
class KPeriodicOp(IRDLOperation):
    """A boolean flow following a k-periodic word `prefix(period)`.

    Example:

    ```mlir
    lus.node @every_other() -> (i1) {
      %b = lus.kperiodic "0(01)" : i1
      lus.yield (%b : i1)
    }
    ```
    """

    name = "lus.kperiodic"
    word = prop_def(StringAttr)
    """The word `prefix(period)` of `0`/`1`: cycle i is true iff its i-th letter (the period repeats) is `1`."""
    result = result_def(I1)
    traits = traits_def(Pure(), HasParent(NodeOp))
    assembly_format = "$word attr-dict `:` type($result)"

    def __init__(self, word: str):
        super().__init__(
            properties={"word": StringAttr(word)}, result_types=[IntegerType(1)]
        )

    def verify_(self) -> None:
        parse_kperiodic(self.word.data)


Lus = Dialect(
    "lus",
    [NodeOp, YieldOp, FbyOp, PreOp, WhenOp, MergeOp, InstanceOp, KPeriodicOp],
    [],
)
