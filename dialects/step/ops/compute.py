"""Higher-order compute operators of the `step` dialect (seed table 4): `map`,
`accum`, `scan`, `flat_map`, whose regions compute on tiles with `step.apply`
(the function library, `steplus.dialects.step.functions`) and end with `step.yield`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

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
    lazy_traits_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.functions import all_families, all_functions, get_function
from steplus.dialects.step.shape_rules import (
    INFER_SHAPES,
    Fresh,
    InferShapes,
    ResultShape,
    ShapeError,
    yielded,
)
from steplus.dialects.step.types import (
    StreamType,
    TileType,
    TupleType,
)
from steplus.dialects.step.ops.graph import IN_GRAPH
from steplus.dialects.step.verify import DirectlyIn
from steplus.dialects.step.verify import (
    int_of,
    stream_of,
)

# --------------------------------------------------------------------------
# Higher-order operators (table 4)
# --------------------------------------------------------------------------


def _close_functions(name: str) -> str:
    """`; did you mean 'gelu', 'silu'?` for an unknown `step.apply` name (the
    library's names closest to it; a family member by its family) and where the
    library is listed."""
    names = [*all_functions(), *all_families()]
    close = difflib.get_close_matches(name.split("[")[0], names, n=4, cutoff=0.5)
    listed = ", ".join(f"'{c}[...]'" if c in all_families() else f"'{c}'" for c in close)
    return (f"; did you mean {listed}? (the library: docs/dialects/step-functions.md)"
            if close else " (the library: docs/dialects/step-functions.md)")


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
    """The library function applied, by name (e.g. `matmul`, `silu`, `add_scalar[0.5]`);
    the list: docs/dialects/step-functions.md."""
    args = var_operand_def()
    result = result_def()
    traits = lazy_traits_def(lambda: (Pure(), IN_FUNCTION))
    assembly_format = "$fn `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def verify_(self) -> None:
        fn = get_function(self.fn.data)
        if fn is None:
            raise VerifyException(f"step.apply: unknown function '{self.fn.data}'"
                                  f"{_close_functions(self.fn.data)}")
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
    traits = lazy_traits_def(lambda: (IsTerminator(), IN_FUNCTION))
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
    for inner in block.ops:
        if not isinstance(inner, ApplyOp | YieldOp):
            # Metrics and the simulator know only library functions: another op
            # would count as no FLOPs in step-metrics and fail only in step-run.
            raise VerifyException(f"{op.name}: {what} region may hold only step.apply and "
                                  f"step.yield, got '{inner.name}'")


@irdl_op_definition
class MapOp(InferShapes, IRDLOperation):
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
    traits = traits_def(IN_GRAPH, INFER_SHAPES)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    body = region_def("single_block")
    assembly_format = "$input attr-dict `:` type($input) `->` type($output) $body"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if out.rank != s.rank:
            raise VerifyException(f"{self.name}: result must have the input's dims")
        _check_region(self, self.body, _element_args(s.element), out.element, "map")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 4: the input's dims; the element is what the function yields."""
        return [ResultShape(ins[0].dims, yielded(self.body))]


class _Reduce(InferShapes, IRDLOperation):
    input = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    """How many innermost dims of the input one result reduces (accum: the
    result keeps the outer dims; scan: a running value for every element)."""
    update = region_def("single_block")
    init = region_def("single_block")
    assembly_format = (
        "$input attr-dict `:` type($input) `->` type($output) `update` $update `init` $init"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def verify_rules(self) -> None:
        stream_of(self, self.input, "input")
        stream_of(self, self.output, "result")

    def verify_body(self) -> None:
        s = stream_of(self, self.input, "input")
        acc = stream_of(self, self.output, "result").element
        _check_region(self, self.update, [*_element_args(s.element), acc], acc, "update")
        _check_region(self, self.init, [], acc, "init")

    def _rank(self, s: StreamType) -> int:
        b = int_of(self.rank)
        if not 0 <= b <= s.rank:
            raise ShapeError(f"rank {b} must be in 0..{s.rank}")
        return b


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
    traits = traits_def(IN_GRAPH, INFER_SHAPES)

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 4: the outer dims (the `rank` inner ones are reduced); the update's element."""
        s = ins[0]
        return [ResultShape(s.dims[: s.rank - self._rank(s)], yielded(self.update))]


@irdl_op_definition
class ScanOp(_Reduce):
    """Like accum, but emits the running value for every element (shape unchanged).

    Example: as `step.accum`, with the result shaped like the input.
    """

    name = "step.scan"
    traits = traits_def(IN_GRAPH, INFER_SHAPES)

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 4: the input's dims (a running value per element); the update's element."""
        self._rank(ins[0])
        return [ResultShape(ins[0].dims, yielded(self.update))]


@irdl_op_definition
class FlatMapOp(InferShapes, IRDLOperation):
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
    traits = traits_def(IN_GRAPH, INFER_SHAPES)
    input = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    """How many dims the stream the function makes of one element adds
    (innermost) to the input's dims."""
    body = region_def("single_block")
    assembly_format = "$input attr-dict `:` type($input) `->` type($output) $body"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_rules(self) -> None:
        stream_of(self, self.input, "input")
        stream_of(self, self.output, "result")

    def verify_body(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        _check_region(self, self.body, _element_args(s.element), out.element, "flat_map")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 4: the outer dims, then `rank + 1` fresh ragged dims per element."""
        s, b = ins[0], int_of(self.rank)
        if b < 0:
            raise ShapeError(f"rank {b} must be non-negative")
        new = [fresh(f"d{k}", "F", True) for k in range(b + 1)]
        return [ResultShape([*s.dims[:-1], *new], yielded(self.body), set(new))]


IN_FUNCTION = DirectlyIn("the function region of a step.map, step.accum, step.scan or "
                         "step.flat_map", MapOp, AccumOp, ScanOp, FlatMapOp)
"""The trait of `step.apply` / `step.yield` (`HasParent` of the four function-region
ops, resolved lazily: they are defined after apply and yield)."""

HIGHER_ORDER_OPS = [ApplyOp, YieldOp, MapOp, AccumOp, ScanOp, FlatMapOp]
