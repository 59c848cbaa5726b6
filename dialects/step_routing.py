"""Routing, merging and shape operators of the `step` dialect.

Tables 5 and 6 of the seed's appendix, plus `repeat`, `broadcast` and
`consume`; the selector/address/metadata generators of the reference graphs
are in `step_generators.py`.
"""

from __future__ import annotations

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

from steplus.dialects.step_verify import (
    FMT,
    IN_GRAPH,
    check_dim,
    int_of,
    same_dims,
    selector_of,
    stream_of,
)
from steplus.dialects.step_types import (
    StreamType,
    TupleType,
    is_static,
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
class FlattenOp(IRDLOperation):
    """Merge dims `min`..`max` (counted from the innermost, 0) into one.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[4, 2, 8], !step.tile<1x64xf32>>):
      %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[4, 2, 8], !step.tile<1x64xf32>>) -> !step.stream<[4, 16], !step.tile<1x64xf32>>
    }
    ```
    """

    name = "step.flatten"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    min = prop_def(IntegerAttr[I64])
    max = prop_def(IntegerAttr[I64])
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        lo, hi = int_of(self.min), int_of(self.max)
        if not 0 <= lo <= hi < s.rank:
            raise VerifyException(
                f"{self.name}: need 0 <= min <= max < {s.rank}, got min={lo} max={hi}"
            )
        if out.rank != s.rank - (hi - lo) or out.element != s.element:
            raise VerifyException(
                f"{self.name}: result must have {s.rank - (hi - lo)} dims and the input's element"
            )
        dims = s.dims
        n = s.rank
        merged = sympy.Mul(*dims[n - 1 - hi : n - lo])
        expected = [*dims[: n - 1 - hi], merged, *dims[n - lo :]]
        same_dims(self, out.dims, expected, "result")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Split dim `split_dim` (from the innermost) into chunks of `chunk_size`, padding.

    Results: data with dims [..., ceil(D/S), S, ...] and an i1 padding stream
    of the same shape.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[B], !step.tile<1x64xf32>>):
      %d, %p = step.reshape %x {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[B], !step.tile<1x64xf32>>) -> (!step.stream<["ceil(B/16)", 16], !step.tile<1x64xf32>>, !step.stream<["ceil(B/16)", 16], i1>)
    }
    ```
    """

    name = "step.reshape"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    padding = result_def(StreamType)
    split_dim = prop_def(IntegerAttr[I64])
    chunk_size = prop_def(IntegerAttr[I64])
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "data result")
        pad = stream_of(self, self.padding, "padding result")
        b, size = int_of(self.split_dim), int_of(self.chunk_size)
        if size < 1:
            raise VerifyException(f"{self.name}: chunk_size must be positive")
        if not 0 <= b < s.rank:
            raise VerifyException(f"{self.name}: split_dim {b} must be in 0..{s.rank - 1}")
        n = s.rank
        d = s.dims[n - 1 - b]
        if b > 0 and is_static(d) and int(d) % size:
            raise VerifyException(
                f"{self.name}: splitting a non-innermost dim needs it divisible by "
                f"{size}, got {d}"
            )
        if out.rank != n + 1 or out.element != s.element:
            raise VerifyException(f"{self.name}: data result must have {n + 1} dims")
        if pad.rank != n + 1 or not (hasattr(pad.element, "width") and pad.element.width.data == 1):
            raise VerifyException(f"{self.name}: padding result must be an i1 stream of {n + 1} dims")
        expected = [*s.dims[: n - 1 - b], sympy.ceiling(d / size), size, *s.dims[n - b :]]
        same_dims(self, out.dims, expected, "data result")
        same_dims(self, pad.dims, expected, "padding result")


@irdl_op_definition
class PromoteOp(IRDLOperation):
    """Add an outer dimension of size 1 (0 for an empty stream).

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], !step.tile<1x64xf32>>):
      %p = step.promote %x : (!step.stream<[N], !step.tile<1x64xf32>>) -> !step.stream<[1, N], !step.tile<1x64xf32>>
    }
    ```
    """

    name = "step.promote"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if out.rank != s.rank + 1 or out.element != s.element:
            raise VerifyException(f"{self.name}: result must add exactly one outer dim")
        new = out.dims[0]
        if is_static(new) and int(new) not in (0, 1):
            raise VerifyException(f"{self.name}: the new outer dim is 1 (or 0), got {new}")
        same_dims(self, out.dims[1:], s.dims, "result")


@irdl_op_definition
class ExpandOp(IRDLOperation):
    """Repeat each element of `in` to match the shape of `ref` in the `rank` inner dims.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%q: !step.stream<[B, 1], !step.tile<8x64xf32>>, %k: !step.stream<[B, ?L], !step.tile<32x64xf32>>):
      %e = step.expand %q, %k {rank = 1 : i64} : (!step.stream<[B, 1], !step.tile<8x64xf32>>, !step.stream<[B, ?L], !step.tile<32x64xf32>>) -> !step.stream<[B, ?L], !step.tile<8x64xf32>>
    }
    ```
    """

    name = "step.expand"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    ref = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        r = stream_of(self, self.ref, "ref")
        out = stream_of(self, self.output, "result")
        b = int_of(self.rank)
        if s.rank != r.rank:
            raise VerifyException(f"{self.name}: input and ref must have the same number of dims")
        if not 0 <= b < s.rank + 1:
            raise VerifyException(f"{self.name}: rank {b} out of range")
        for i, d in enumerate(s.dims[s.rank - b :]):
            check_dim(self, d, 1, f"input dimension {s.rank - b + i}")
        if out.rank != r.rank or out.element != s.element:
            raise VerifyException(f"{self.name}: result must have ref's dims and the input's element")
        same_dims(self, out.dims, r.dims, "result")


@irdl_op_definition
class ZipOp(IRDLOperation):
    """Pair up the elements of two streams of the same shape.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%a: !step.stream<[N], !step.tile<1x64xf32>>, %b: !step.stream<[N], !step.tile<8x64xf32>>):
      %z = step.zip %a, %b : (!step.stream<[N], !step.tile<1x64xf32>>, !step.stream<[N], !step.tile<8x64xf32>>) -> !step.stream<[N], !step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>>
    }
    ```
    """

    name = "step.zip"
    traits = traits_def(IN_GRAPH)
    lhs = operand_def(StreamType)
    rhs = operand_def(StreamType)
    output = result_def(StreamType)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        a = stream_of(self, self.lhs, "lhs")
        b = stream_of(self, self.rhs, "rhs")
        out = stream_of(self, self.output, "result")
        if a.rank != b.rank:
            raise VerifyException(f"{self.name}: operands must have the same dims")
        same_dims(self, b.dims, a.dims, "rhs")
        if out.rank != a.rank or out.element != TupleType([a.element, b.element]):
            raise VerifyException(f"{self.name}: result must be a stream of tuple<lhs, rhs>")
        same_dims(self, out.dims, a.dims, "result")


@irdl_op_definition
class RepeatOp(IRDLOperation):
    """Repeat every element `count` times (a new innermost dim of size `count`).

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%w: !step.stream<[4], !step.tile<64x64xf32>>):
      %r = step.repeat %w {count = 224 : i64} : (!step.stream<[4], !step.tile<64x64xf32>>) -> !step.stream<[4, 224], !step.tile<64x64xf32>>
    }
    ```
    """

    name = "step.repeat"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    count = prop_def(IntegerAttr[I64])
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if int_of(self.count) < 1:
            raise VerifyException(f"{self.name}: count must be positive")
        if out.rank != s.rank + 1 or out.element != s.element:
            raise VerifyException(f"{self.name}: result must add one innermost dim")
        same_dims(self, out.dims, [*s.dims, int_of(self.count)], "result")


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
SHAPE_OPS = [FlattenOp, ReshapeOp, PromoteOp, ExpandOp, ZipOp, RepeatOp]
