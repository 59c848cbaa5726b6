"""The operators of the `step` dialect (see `steplus.dialects.step` for the overview).

Shape rules follow the seed's appendix tables 2-6. "dims" below count the
dimensions of a stream type, outermost first; `D_0` is the innermost.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step_functions import get_function
from steplus.dialects.step_verify import (
    FMT,
    IN_FUNCTION,
    IN_GRAPH,
    check_base_addr,
    int_of,
    ints_of,
    is_address,
    is_i1,
    same_dims,
    stream_of,
)
from steplus.dialects.step_types import (
    BufferType,
    StreamType,
    TileType,
    TupleType,
)









# --------------------------------------------------------------------------
# Off-chip memory (table 2)
# --------------------------------------------------------------------------


@irdl_op_definition
class LinearOffChipLoadOp(IRDLOperation):
    """Load a tiled off-chip tensor as a stream, once per element of `ref`.

    Result dims = ref dims ++ tiled_out_shape (without `ref`, just
    tiled_out_shape). The element is a statically shaped tile.

    Example:

    ```mlir
    step.graph @example {
      %w = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 2>, stride = array<i64: 2, 1>, tiled_out_shape = array<i64: 4, 2>} : () -> !step.stream<[4, 2], !step.tile<64x64xbf16>>
    }
    ```
    """

    name = "step.linear_offchip_load"
    traits = traits_def(IN_GRAPH)
    ref = opt_operand_def(StreamType)
    output = result_def(StreamType)
    base_addr = prop_def(IntegerAttr[I64])
    tiled_in_shape = prop_def(DenseArrayBase)
    stride = prop_def(DenseArrayBase)
    tiled_out_shape = prop_def(DenseArrayBase)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        check_base_addr(self)
        out = stream_of(self, self.output, "result")
        if not (isinstance(out.element, TileType) and out.element.is_static):
            raise VerifyException(f"{self.name}: result element must be a static tile")
        shape = ints_of(self.tiled_out_shape)
        if len(ints_of(self.stride)) != len(ints_of(self.tiled_in_shape)):
            raise VerifyException(f"{self.name}: stride and tiled_in_shape differ in length")
        outer = stream_of(self, self.ref, "ref").dims if self.ref is not None else []
        if out.rank != len(outer) + len(shape):
            raise VerifyException(
                f"{self.name}: result has {out.rank} dims, expected "
                f"{len(outer)} (ref) + {len(shape)} (tiled_out_shape)"
            )
        same_dims(self, out.dims, [*outer, *shape], "result")


@irdl_op_definition
class LinearOffChipStoreOp(IRDLOperation):
    """Store a stream of static tiles to off-chip memory at `base_addr`.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%y: !step.stream<[4, 1], !step.tile<16x64xf32>>):
      step.linear_offchip_store %y {base_addr = 4096 : i64} : !step.stream<[4, 1], !step.tile<16x64xf32>>
    }
    ```
    """

    name = "step.linear_offchip_store"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    base_addr = prop_def(IntegerAttr[I64])
    assembly_format = "$input attr-dict `:` type($input)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        check_base_addr(self)
        el = stream_of(self, self.input, "input").element
        if not isinstance(el, TileType):
            raise VerifyException(f"{self.name}: input element must be a tile")


@irdl_op_definition
class RandomOffChipLoadOp(IRDLOperation):
    """Load one tile per address of `raddr`; the result has the shape of `raddr`.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%a: !step.stream<[N], !step.tile<1x1xi64>>):
      %t = step.random_offchip_load %a {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[N], !step.tile<1x1xi64>>) -> !step.stream<[N], !step.tile<32x64xbf16>>
    }
    ```
    """

    name = "step.random_offchip_load"
    traits = traits_def(IN_GRAPH)
    raddr = operand_def(StreamType)
    output = result_def(StreamType)
    base_addr = prop_def(IntegerAttr[I64])
    tiled_in_shape = prop_def(DenseArrayBase)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        check_base_addr(self)
        a = stream_of(self, self.raddr, "raddr")
        out = stream_of(self, self.output, "result")
        if not is_address(a.element):
            raise VerifyException(f"{self.name}: raddr elements must be 1x1 integer tiles")
        if not isinstance(out.element, TileType):
            raise VerifyException(f"{self.name}: result element must be a tile")
        if out.rank != a.rank:
            raise VerifyException(f"{self.name}: result must have the dims of raddr")
        same_dims(self, out.dims, a.dims, "result")


@irdl_op_definition
class RandomOffChipStoreOp(IRDLOperation):
    """Store each `wdata` tile at the matching `waddr` address; emits i1 acks.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%a: !step.stream<[N], !step.tile<1x1xi64>>, %d: !step.stream<[N], !step.tile<8x64xbf16>>):
      %ack = step.random_offchip_store %a, %d {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[N], !step.tile<1x1xi64>>, !step.stream<[N], !step.tile<8x64xbf16>>) -> !step.stream<[N], i1>
    }
    ```
    """

    name = "step.random_offchip_store"
    traits = traits_def(IN_GRAPH)
    waddr = operand_def(StreamType)
    wdata = operand_def(StreamType)
    output = result_def(StreamType)
    base_addr = prop_def(IntegerAttr[I64])
    tiled_in_shape = prop_def(DenseArrayBase)
    buffer_depth = opt_prop_def(IntegerAttr[I64])
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        check_base_addr(self)
        a = stream_of(self, self.waddr, "waddr")
        d = stream_of(self, self.wdata, "wdata")
        out = stream_of(self, self.output, "result")
        if not is_address(a.element):
            raise VerifyException(f"{self.name}: waddr elements must be 1x1 integer tiles")
        if not isinstance(d.element, TileType):
            raise VerifyException(f"{self.name}: wdata elements must be tiles")
        if not is_i1(out.element) or out.rank != a.rank:
            raise VerifyException(f"{self.name}: result must be an i1 stream shaped like waddr")


# --------------------------------------------------------------------------
# On-chip memory (table 3)
# --------------------------------------------------------------------------


@irdl_op_definition
class BufferizeOp(IRDLOperation):
    """Buffer the `rank` innermost dims of a stream on chip.

    Result dims = the outer dims; element = buffer of the inner dims.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%s: !step.stream<[4, 8], !step.tile<16x16xf32>>):
      %b = step.bufferize %s {rank = 1 : i64} : (!step.stream<[4, 8], !step.tile<16x16xf32>>) -> !step.stream<[4], !step.buffer<[8], !step.tile<16x16xf32>>>
    }
    ```
    """

    name = "step.bufferize"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        b = int_of(self.rank)
        if not 0 < b <= s.rank:
            raise VerifyException(f"{self.name}: rank {b} must be in 1..{s.rank}")
        if out.rank != s.rank - b:
            raise VerifyException(f"{self.name}: result has {out.rank} dims, expected {s.rank - b}")
        el = out.element
        if not isinstance(el, BufferType) or el.element != s.element or el.rank != b:
            raise VerifyException(
                f"{self.name}: result element must be a {b}-dim buffer of {s.element}"
            )
        same_dims(self, el.dims, s.dims[s.rank - b :], "buffer")
        same_dims(self, out.dims, s.dims[: s.rank - b], "result")


@irdl_op_definition
class StreamifyOp(IRDLOperation):
    """Stream the contents of buffers, once per element of `ref`.

    Result dims = ref dims ++ out_shape; element = the buffer's element.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%b: !step.stream<[4], !step.buffer<[8], !step.tile<16x16xf32>>>, %r: !step.stream<[4, 3], !step.tile<1x1xi64>>):
      %s = step.streamify %b, %r {stride = array<i64: 1>, out_shape = array<i64: 8>} : (!step.stream<[4], !step.buffer<[8], !step.tile<16x16xf32>>>, !step.stream<[4, 3], !step.tile<1x1xi64>>) -> !step.stream<[4, 3, 8], !step.tile<16x16xf32>>
    }
    ```
    """

    name = "step.streamify"
    traits = traits_def(IN_GRAPH)
    input = operand_def(StreamType)
    ref = operand_def(StreamType)
    output = result_def(StreamType)
    stride = prop_def(DenseArrayBase)
    out_shape = prop_def(DenseArrayBase)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        s = stream_of(self, self.input, "input")
        r = stream_of(self, self.ref, "ref")
        out = stream_of(self, self.output, "result")
        if not isinstance(s.element, BufferType):
            raise VerifyException(f"{self.name}: input elements must be buffers")
        if r.rank < s.rank:
            raise VerifyException(f"{self.name}: ref must have at least the input's dims")
        same_dims(self, r.dims[: s.rank], s.dims, "ref")
        shape = ints_of(self.out_shape)
        if out.rank != r.rank + len(shape) or out.element != s.element.element:
            raise VerifyException(
                f"{self.name}: result must have ref dims + out_shape and the buffer's element"
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
MEMORY_OPS = [
    LinearOffChipLoadOp,
    LinearOffChipStoreOp,
    RandomOffChipLoadOp,
    RandomOffChipStoreOp,
    BufferizeOp,
    StreamifyOp,
]

# Routing, shape and generator operators live in their own modules (size).
from steplus.dialects.step_generators import GENERATOR_OPS  # noqa: E402
from steplus.dialects.step_routing import ROUTING_OPS, SHAPE_OPS  # noqa: E402

__all__ = ["GENERATOR_OPS", "HIGHER_ORDER_OPS", "MEMORY_OPS", "ROUTING_OPS", "SHAPE_OPS"]
