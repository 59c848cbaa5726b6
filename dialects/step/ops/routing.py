"""Routing and merging operators of the `step` dialect (seed table 5): `partition`,
`reassemble`, `eager_merge`, plus `parallelize`, `broadcast` (explicit fan-out)
and `consume` (a sink).
"""


import sympy
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr
from xdsl.irdl import (
    ParsePropInAttrDict,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.verify import (
    FMT,
    IN_GRAPH,
    check_dim,
    same_dims,
    selector_of,
    stream_of,
)
from steplus.dialects.step.types import (
    StreamType,
)







@irdl_op_definition
class PartitionOp(IRDLOperation):
    """Route groups of `in` to the outputs chosen by `sel` (one result per consumer).

    `sel` has the outer dims of `in`; each result has the remaining inner dims
    under a fresh outer dimension (`B_i` elements went to output i).

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[B, 4], !step.tile<1x64xf32>>, %s: !step.stream<[B], !step.selector<2>>):
      %a, %b = step.partition %x, %s : (!step.stream<[B, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>)
    }
    ```
    """

    name = "step.partition"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    sel = operand_def(StreamType)
    outputs = var_result_def(StreamType)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        sel = stream_of(self, self.sel, "sel")
        selector_of(self, sel, len(self.outputs))
        if sel.rank > s.rank:
            raise VerifyException(f"{self.name}: sel has more dims than the input")
        same_dims(self, sel.dims, s.dims[: sel.rank], "sel")
        inner = s.dims[sel.rank :]
        for i, out in enumerate(self.outputs):
            o = stream_of(self, out, f"result #{i}")
            if o.rank != len(inner) + 1 or o.element != s.element:
                raise VerifyException(
                    f"{self.name}: result #{i} must have {len(inner) + 1} dims "
                    f"(fresh outer + inner dims of the input) and the input's element"
                )
            same_dims(self, o.dims[1:], inner, f"result #{i}")


@irdl_op_definition
class ReassembleOp(IRDLOperation):
    """Collect groups from the inputs chosen by `sel`, in `sel` order.

    Result dims = sel dims ++ [fresh dim] ++ inner dims of the inputs.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%a: !step.stream<[B_0, 4], !step.tile<1x64xf32>>, %b: !step.stream<[B_1, 4], !step.tile<1x64xf32>>, %s: !step.stream<[B], !step.selector<2>>):
      %r = step.reassemble %a, %b, %s : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> !step.stream<[B, 1, 4], !step.tile<1x64xf32>>
    }
    ```
    """

    name = "step.reassemble"
    traits = traits_def(IN_GRAPH)
    inputs = var_operand_def(StreamType)
    output = result_def(StreamType)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def data_inputs(self):
        return self.inputs[:-1]

    @property
    def sel(self):
        return self.inputs[-1]

    def verify_(self) -> None:
        if len(self.inputs) < 2:
            raise VerifyException(f"{self.name}: needs at least one input and a selector")
        sel = stream_of(self, self.sel, "sel")
        ins = [stream_of(self, v, f"input #{i}") for i, v in enumerate(self.data_inputs)]
        selector_of(self, sel, len(ins))
        first = ins[0]
        for i, s in enumerate(ins):
            if s.rank != first.rank or s.element != first.element:
                raise VerifyException(f"{self.name}: input #{i} differs in dims or element")
        out = stream_of(self, self.output, "result")
        if out.rank != sel.rank + first.rank or out.element != first.element:
            raise VerifyException(
                f"{self.name}: result must have {sel.rank + first.rank} dims "
                "(sel dims + input dims) and the inputs' element"
            )
        same_dims(self, out.dims[: sel.rank], sel.dims, "result")
        same_dims(self, out.dims[sel.rank + 1 :], first.dims[1:], "result")


@irdl_op_definition
class EagerMergeOp(IRDLOperation):
    """Merge groups from the inputs in arrival order; also emit which input each came from.

    Results: the data (outer dim = sum of the inputs' outer dims) and a
    rank-1 selector stream over the inputs.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%a: !step.stream<[B_0, 4], !step.tile<1x64xf32>>, %b: !step.stream<[B_1, 4], !step.tile<1x64xf32>>):
      %d, %s = step.eager_merge %a, %b : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>) -> (!step.stream<["B_0 + B_1", 4], !step.tile<1x64xf32>>, !step.stream<["B_0 + B_1"], !step.selector<2>>)
    }
    ```
    """

    name = "step.eager_merge"
    traits = traits_def(IN_GRAPH)
    inputs = var_operand_def(StreamType)
    output = result_def(StreamType)
    sel = result_def(StreamType)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException(f"{self.name}: needs at least one input")
        ins = [stream_of(self, v, f"input #{i}") for i, v in enumerate(self.inputs)]
        first = ins[0]
        for i, s in enumerate(ins):
            if s.rank != first.rank or s.element != first.element:
                raise VerifyException(f"{self.name}: input #{i} differs in dims or element")
        out = stream_of(self, self.output, "data result")
        sel = stream_of(self, self.sel, "selector result")
        if out.rank != first.rank or out.element != first.element:
            raise VerifyException(f"{self.name}: data result must be shaped like the inputs")
        selector_of(self, sel, len(ins))
        if sel.rank != 1:
            raise VerifyException(f"{self.name}: selector result must have 1 dim")
        total = sum((s.dims[0] for s in ins), sympy.Integer(0))
        check_dim(self, out.dims[0], total, "data outer dimension")
        same_dims(self, out.dims[1:], first.dims[1:], "data result")


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Explicit fan-out: copy a stream to every result.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], !step.tile<1x64xf32>>):
      %a, %b = step.broadcast %x : (!step.stream<[N], !step.tile<1x64xf32>>) -> (!step.stream<[N], !step.tile<1x64xf32>>, !step.stream<[N], !step.tile<1x64xf32>>)
    }
    ```
    """

    name = "step.broadcast"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    outputs = var_result_def(StreamType)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        if len(self.outputs) < 1:
            raise VerifyException(f"{self.name}: needs at least one result")
        for i, o in enumerate(self.outputs):
            if o.type != self.input.type:
                raise VerifyException(f"{self.name}: result #{i} must have the input's type")


@irdl_op_definition
class ConsumeOp(IRDLOperation):
    """A sink: drains a stream.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], i1>):
      step.consume %x : !step.stream<[N], i1>
    }
    ```
    """

    name = "step.consume"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    assembly_format = "$input attr-dict `:` type($input)"
    irdl_options = (ParsePropInAttrDict(),)


@irdl_op_definition
class ParallelizeOp(IRDLOperation):
    """Static round-robin of groups of rank `rank` over the results.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[B, 1], !step.tile<8x64xf32>>):
      %a, %b = step.parallelize %x {rank = 1 : i64} : (!step.stream<[B, 1], !step.tile<8x64xf32>>) -> (!step.stream<[B_0, 1], !step.tile<8x64xf32>>, !step.stream<[B_1, 1], !step.tile<8x64xf32>>)
    }
    ```
    """

    name = "step.parallelize"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    outputs = var_result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    switch_cycles = opt_prop_def(DenseArrayBase)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        for i, o in enumerate(self.outputs):
            t = stream_of(self, o, f"result #{i}")
            if t.rank != s.rank or t.element != s.element:
                raise VerifyException(f"{self.name}: result #{i} must be shaped like the input")
        if self.switch_cycles is not None and len(list(self.switch_cycles.get_values())) != len(self.outputs):
            raise VerifyException(f"{self.name}: switch_cycles needs one entry per result")


ROUTING_OPS = [
    PartitionOp,
    ReassembleOp,
    EagerMergeOp,
    ParallelizeOp,
    BroadcastOp,
    ConsumeOp,
]
