"""Routing and merging operators of the `step` dialect (seed table 5): `partition`,
`reassemble`, `eager_merge`, plus `parallelize`, `broadcast` (explicit fan-out)
and `consume` (a sink).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

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

from steplus.dialects.step.ops.base import StepOp, array_values
from steplus.dialects.step.shape_rules import (
    Fresh,
    ResultShape,
    ShapeError,
    base_name,
    check_inputs,
    same,
)
from steplus.dialects.step.types import (
    SelectorType,
    StreamType,
)
from steplus.dialects.step.ops.graph import IN_GRAPH
from steplus.dialects.step.verify import (
    selector_of,
    stream_of,
)

@irdl_op_definition
class PartitionOp(StepOp):
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
    input = operand_def(StreamType)
    sel = operand_def(StreamType)
    outputs = var_result_def(StreamType)

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        sel = stream_of(self, self.sel, "sel")
        selector_of(self, sel, len(self.outputs))
        if sel.rank > s.rank:
            raise VerifyException(f"{self.name}: sel has more dims than the input")
        inner = s.rank - sel.rank
        for i, out in enumerate(self.outputs):
            o = stream_of(self, out, f"result #{i}")
            if o.rank != inner + 1 or o.element != s.element:
                raise VerifyException(
                    f"{self.name}: result #{i} must have {inner + 1} dims "
                    f"(fresh outer + inner dims of the input) and the input's element"
                )

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 5: result i = a fresh outer dim `B_i` (seed Fig. 3) ++ the input's
        dims below the selector's; `sel` has the input's outer dims."""
        data, sel = ins
        if sel.rank > data.rank:
            raise ShapeError(f"sel has {sel.rank} dims, more than the input's {data.rank}")
        same(sel.dims, data.dims[: sel.rank], "sel", "input")
        base = base_name(sel.dims, "P")
        out = []
        for i in range(len(self.outputs)):
            b = fresh(f"out{i}", f"{base}_{i}", False)
            out.append(ResultShape([b, *data.dims[sel.rank :]], data.element, {b}))
        return out


@irdl_op_definition
class ReassembleOp(StepOp):
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
    inputs = var_operand_def(StreamType)
    output = result_def(StreamType)

    @property
    def data_inputs(self):
        return self.inputs[:-1]

    @property
    def sel(self):
        return self.inputs[-1]

    def verify_rules(self) -> None:
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

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 5: sel dims ++ a fresh ragged dim (the groups gathered per
        selector element, seed Fig. 4) ++ the inputs' inner dims."""
        *data, sel = ins
        check_inputs(data)
        b = fresh("sel", f"{base_name(sel.dims, 'R')}_sel", True)
        return [ResultShape([*sel.dims, b, *data[0].dims[1:]], data[0].element, {b})]


@irdl_op_definition
class EagerMergeOp(StepOp):
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
    inputs = var_operand_def(StreamType)
    output = result_def(StreamType)
    sel = result_def(StreamType)
    RESULT_NAMES: ClassVar[tuple[str, ...]] = ("data result", "selector result")

    def verify_rules(self) -> None:
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

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 5: the data's outer dim is the sum of the inputs' outer dims; a
        rank-1 selector over the inputs says where each group came from."""
        check_inputs(ins)
        total = sympy.Add(*(s.dims[0] for s in ins))
        return [
            ResultShape([total, *ins[0].dims[1:]], ins[0].element),
            ResultShape([total], SelectorType(len(ins))),
        ]


@irdl_op_definition
class BroadcastOp(StepOp):
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
    input = operand_def(StreamType)
    outputs = var_result_def(StreamType)

    def verify_rules(self) -> None:
        if len(self.outputs) < 1:
            raise VerifyException(f"{self.name}: needs at least one result")
        for i, o in enumerate(self.outputs):
            if o.type != self.input.type:
                raise VerifyException(f"{self.name}: result #{i} must have the input's type")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Every result is a copy of the input."""
        return [ResultShape(ins[0].dims, ins[0].element) for _ in self.outputs]


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
class ParallelizeOp(StepOp):
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
    input = operand_def(StreamType)
    outputs = var_result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    """How many innermost dims make one group: whole groups go round-robin to the
    results (0: single elements)."""
    switch_cycles = opt_prop_def(DenseArrayBase)
    """Optional: per result, the cycles the fabric spends switching to it before
    an element is enqueued there (default 0 each)."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        for i, o in enumerate(self.outputs):
            t = stream_of(self, o, f"result #{i}")
            if t.rank != s.rank or t.element != s.element:
                raise VerifyException(f"{self.name}: result #{i} must be shaped like the input")
        if self.switch_cycles is not None and len(array_values(self.switch_cycles)) != len(self.outputs):
            raise VerifyException(f"{self.name}: switch_cycles needs one entry per result")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Result i: a fresh outer dim (the groups it gets) ++ the input's inner dims."""
        s = ins[0]
        base = base_name(s.dims[:1], "P")
        out = []
        for i in range(len(self.outputs)):
            b = fresh(f"out{i}", f"{base}_{i}", False)
            out.append(ResultShape([b, *s.dims[1:]], s.element, {b}))
        return out


ROUTING_OPS = [
    PartitionOp,
    ReassembleOp,
    EagerMergeOp,
    ParallelizeOp,
    BroadcastOp,
    ConsumeOp,
]
