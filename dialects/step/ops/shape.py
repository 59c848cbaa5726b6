"""Shape operators of the `step` dialect (seed table 6): `flatten`, `reshape`,
`promote`, `expand`, `zip`, plus `repeat`.
"""


import sympy
from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.irdl import (
    ParsePropInAttrDict,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.verify import (
    FMT,
    IN_GRAPH,
    check_dim,
    int_of,
    same_dims,
    stream_of,
)
from steplus.dialects.step.types import (
    StreamType,
    TupleType,
    is_static,
)







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


SHAPE_OPS = [FlattenOp, ReshapeOp, PromoteOp, ExpandOp, ZipOp, RepeatOp]
