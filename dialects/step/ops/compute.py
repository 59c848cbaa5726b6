"""Higher-order compute operators of the `step` dialect (seed table 4): `map`,
`accum`, `scan`, `flat_map`, whose regions compute on tiles with `step.apply`
(the function library, `steplus.dialects.step.functions`) and end with `step.yield`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.functions import get_function
from steplus.dialects.step.verify import (
    IN_FUNCTION,
    IN_GRAPH,
    int_of,
    same_dims,
    stream_of,
)
from steplus.dialects.step.types import (
    StreamType,
    TileType,
    TupleType,
)









# --------------------------------------------------------------------------
# Higher-order operators (table 4)
# --------------------------------------------------------------------------


@irdl_op_definition
class ApplyOp(IRDLOperation):
    """Apply a library function (see `step_functions`) to tiles.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], !step.tile<16x64xf32>>, %w: !step.stream<[N], !step.tile<64x32xf32>>):
      %z = step.zip %x, %w : (!step.stream<[N], !step.tile<16x64xf32>>, !step.stream<[N], !step.tile<64x32xf32>>) -> !step.stream<[N], !step.tuple<!step.tile<16x64xf32>, !step.tile<64x32xf32>>>
      %y = step.map %z : !step.stream<[N], !step.tuple<!step.tile<16x64xf32>, !step.tile<64x32xf32>>> -> !step.stream<[N], !step.tile<16x32xf32>> {
      ^bb0(%a: !step.tile<16x64xf32>, %b: !step.tile<64x32xf32>):
        %c = step.apply "matmul"(%a, %b) : (!step.tile<16x64xf32>, !step.tile<64x32xf32>) -> !step.tile<16x32xf32>
        step.yield %c : !step.tile<16x32xf32>
      }
      step.consume %y : !step.stream<[N], !step.tile<16x32xf32>>
    }
    ```
    """

    name = "step.apply"
    fn = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()
    traits = traits_def(Pure(), IN_FUNCTION)
    assembly_format = "$fn `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def verify_(self) -> None:
        fn = get_function(self.fn.data)
        if fn is None:
            raise VerifyException(f"step.apply: unknown function '{self.fn.data}'")
        if len(self.args) != fn.arity:
            raise VerifyException(
                f"step.apply: '{fn.name}' takes {fn.arity} operand(s), got {len(self.args)}"
            )
        shapes = []
        for a in self.args:
            if isinstance(a.type, TileType):
                shapes.append((a.type.rows.data, a.type.cols.data))
        res = self.result.type
        if fn.arity and len(shapes) == fn.arity and all(r >= 0 and c >= 0 for r, c in shapes) and isinstance(res, TileType) and res.is_static:
            expected = fn.out_shape(shapes)
            if (res.rows.data, res.cols.data) != expected:
                raise VerifyException(
                    f"step.apply: '{fn.name}' produces a {expected[0]}x{expected[1]} "
                    f"tile, result is {res.rows.data}x{res.cols.data}"
                )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Return the value(s) of a higher-order op's function region.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], !step.tile<16x16xf32>>):
      %y = step.map %x : !step.stream<[N], !step.tile<16x16xf32>> -> !step.stream<[N], !step.tile<16x16xf32>> {
      ^bb0(%t: !step.tile<16x16xf32>):
        step.yield %t : !step.tile<16x16xf32>
      }
      step.consume %y : !step.stream<[N], !step.tile<16x16xf32>>
    }
    ```
    """

    name = "step.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), IN_FUNCTION)
    assembly_format = "($values^ `:` type($values))? attr-dict"


def _element_args(el: Attribute) -> list[Attribute]:
    return list(el.elements.data) if isinstance(el, TupleType) else [el]


def _check_region(op, region, arg_types: list[Attribute], result: Attribute, what: str):
    block = region.block
    got = [a.type for a in block.args]
    if got != arg_types:
        raise VerifyException(
            f"{op.name}: {what} region arguments must be ({', '.join(map(str, arg_types))})"
        )
    last = block.last_op
    if not isinstance(last, YieldOp) or [v.type for v in last.values] != [result]:
        raise VerifyException(f"{op.name}: {what} region must yield one {result}")


@irdl_op_definition
class MapOp(IRDLOperation):
    """Apply a function to every element; the shape is unchanged.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], !step.tile<16x64xf32>>):
      %y = step.map %x : !step.stream<[N], !step.tile<16x64xf32>> -> !step.stream<[N], !step.tile<16x64xf32>> {
      ^bb0(%t: !step.tile<16x64xf32>):
        %s = step.apply "silu"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
        step.yield %s : !step.tile<16x64xf32>
      }
    }
    ```
    """

    name = "step.map"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    body = region_def("single_block")
    assembly_format = "$input attr-dict `:` type($input) `->` type($output) $body"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if out.rank != s.rank:
            raise VerifyException(f"{self.name}: result must have the input's dims")
        same_dims(self, out.dims, s.dims, "result")
        _check_region(self, self.body, _element_args(s.element), out.element, "map")


class _Reduce(IRDLOperation):
    input = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    update = region_def("single_block")
    init = region_def("single_block")
    assembly_format = (
        "$input attr-dict `:` type($input) `->` type($output) `update` $update `init` $init"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def _check(self, out_rank: int) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        b = int_of(self.rank)
        if not 0 <= b <= s.rank:
            raise VerifyException(f"{self.name}: rank {b} must be in 0..{s.rank}")
        if out.rank != out_rank(s.rank, b):
            raise VerifyException(
                f"{self.name}: result has {out.rank} dims, expected {out_rank(s.rank, b)}"
            )
        same_dims(self, out.dims, s.dims[: out.rank], "result")
        acc = out.element
        _check_region(self, self.update, [*_element_args(s.element), acc], acc, "update")
        _check_region(self, self.init, [], acc, "init")


@irdl_op_definition
class AccumOp(_Reduce):
    """Reduce the `rank` innermost dims with an update function and an init.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[4, 8], !step.tile<16x16xf32>>):
      %s = step.accum %x {rank = 1 : i64} : !step.stream<[4, 8], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> update {
      ^bb0(%t: !step.tile<16x16xf32>, %acc: !step.tile<16x16xf32>):
        %n = step.apply "add"(%acc, %t) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
        step.yield %n : !step.tile<16x16xf32>
      } init {
        %z = step.apply "zero"() : () -> !step.tile<16x16xf32>
        step.yield %z : !step.tile<16x16xf32>
      }
    }
    ```
    """

    name = "step.accum"
    traits = traits_def(IN_GRAPH)

    def verify_(self) -> None:
        self._check(lambda a, b: a - b)


@irdl_op_definition
class ScanOp(_Reduce):
    """Like accum, but emits the running value for every element (shape unchanged).

    Example: as `step.accum`, with the result shaped like the input.
    """

    name = "step.scan"
    traits = traits_def(IN_GRAPH)

    def verify_(self) -> None:
        self._check(lambda a, b: a)


@irdl_op_definition
class FlatMapOp(IRDLOperation):
    """Replace every element by a stream of `rank` + 1 dims produced by a function.

    The result keeps the outer dims and appends the function's stream dims:
    rank(result) = rank(input) + `rank`.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[N], !step.tile<16x64xf32>>):
      %r = step.flat_map %x {rank = 1 : i64} : !step.stream<[N], !step.tile<16x64xf32>> -> !step.stream<[N, 16], !step.tile<1x64xf32>> {
      ^bb0(%t: !step.tile<16x64xf32>):
        %rows = step.apply "retile_streamify"(%t) : (!step.tile<16x64xf32>) -> !step.tile<1x64xf32>
        step.yield %rows : !step.tile<1x64xf32>
      }
    }
    ```
    """

    name = "step.flat_map"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    assembly_format = "$input attr-dict `:` type($input) `->` type($output) $body"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        b = int_of(self.rank)
        if b < 0 or out.rank != s.rank + b:
            raise VerifyException(
                f"{self.name}: result has {out.rank} dims, expected {s.rank + b}"
            )
        same_dims(self, out.dims[: s.rank - 1], s.dims[: s.rank - 1], "result")
        _check_region(self, self.body, _element_args(s.element), out.element, "flat_map")


HIGHER_ORDER_OPS = [ApplyOp, YieldOp, MapOp, AccumOp, ScanOp, FlatMapOp]
