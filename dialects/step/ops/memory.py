"""Memory operators of the `step` dialect: off-chip loads and stores (seed table 2),
on-chip `bufferize` / `streamify` (table 3).

Shape rules follow the seed's appendix tables. "dims" count the dimensions of a
stream type, outermost first; `D_0` is the innermost. Each op's `infer_shapes`
is its rule (see `steplus.dialects.step.shape_rules`); its verifier checks the
written result dims against it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    i1,
)
from xdsl.irdl import (
    ParsePropInAttrDict,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.discardable import MAX_KNOB
from steplus.dialects.step.ops.base import StepOp, UnaryStreamOp
from steplus.dialects.step.shape_rules import (
    PLACEHOLDER,
    Fresh,
    ResultShape,
    ShapeError,
    has_placeholder,
    same,
    sym,
)
from steplus.dialects.step.types import (
    BufferType,
    StreamType,
    TileType,
)
from steplus.dialects.step.ops.graph import IN_GRAPH
from steplus.dialects.step.verify import (
    check_base_addr,
    int_of,
    ints_of,
    is_address,
    is_i1,
    stream_of,
)

# --------------------------------------------------------------------------
# Off-chip memory (table 2)
# --------------------------------------------------------------------------


@irdl_op_definition
class LinearOffChipLoadOp(StepOp):
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
    ref = opt_operand_def(StreamType)
    """Optional: the tensor is walked once per element of `ref` (the reference-driven load)."""
    output = result_def(StreamType)
    """The tiles in walk order: `ref`'s dims, then `tiled_out_shape`."""
    base_addr = prop_def(IntegerAttr[I64])
    """Byte address of the tensor in off-chip memory."""
    tiled_in_shape = prop_def(DenseArrayBase)
    """The tensor as a row-major grid of tiles: how many tiles along each dimension."""
    stride = prop_def(DenseArrayBase)
    """Per walk dimension, the tiles of `tiled_in_shape` one step skips: walk index
    `(i_0, ..., i_n)` reads tile `sum(i_k * stride_k)` (a 0 re-reads the same tiles)."""
    tiled_out_shape = prop_def(DenseArrayBase)
    """The walk: the result stream's dims (after `ref`'s), one tile per element."""

    def verify_rules(self) -> None:
        check_base_addr(self)
        out = stream_of(self, self.output, "result")
        if not (isinstance(out.element, TileType) and out.element.is_static):
            raise VerifyException(f"{self.name}: result element must be a static tile")
        shape = ints_of(self.tiled_out_shape)
        if len(ints_of(self.stride)) != len(ints_of(self.tiled_in_shape)):
            raise VerifyException(f"{self.name}: stride and tiled_in_shape differ in length")
        outer = stream_of(self, self.ref, "ref").rank if self.ref is not None else 0
        if out.rank != outer + len(shape):
            raise VerifyException(
                f"{self.name}: result has {out.rank} dims, expected "
                f"{outer} (ref) + {len(shape)} (tiled_out_shape)"
            )

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 2: ref dims ++ tiled_out_shape; the written tile is kept."""
        outer = ins[0].dims if ins else []
        return [ResultShape([*outer, *map(sym, ints_of(self.tiled_out_shape))])]


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
    """The tiles to write, in stream order, to consecutive tile addresses."""
    base_addr = prop_def(IntegerAttr[I64])
    """Byte address where the first tile is written."""
    assembly_format = "$input attr-dict `:` type($input)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        check_base_addr(self)
        el = stream_of(self, self.input, "input").element
        if not isinstance(el, TileType):
            raise VerifyException(f"{self.name}: input element must be a tile")


@irdl_op_definition
class RandomOffChipLoadOp(StepOp):
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
    raddr = operand_def(StreamType)
    """Tile addresses (1x1 integer tiles): address `a` reads tile `a` of `tiled_in_shape`."""
    output = result_def(StreamType)
    base_addr = prop_def(IntegerAttr[I64])
    """Byte address of the tensor in off-chip memory."""
    tiled_in_shape = prop_def(DenseArrayBase)
    """The tensor as a row-major grid of tiles; tile `a` is at block row `a // last`,
    block column `a % last` (`last` its last dimension)."""

    def verify_rules(self) -> None:
        check_base_addr(self)
        a = stream_of(self, self.raddr, "raddr")
        out = stream_of(self, self.output, "result")
        if not is_address(a.element):
            raise VerifyException(f"{self.name}: raddr elements must be 1x1 integer tiles")
        if not isinstance(out.element, TileType):
            raise VerifyException(f"{self.name}: result element must be a tile")
        if out.rank != a.rank:
            raise VerifyException(f"{self.name}: result must have the dims of raddr")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 2: one tile per address, the dims of `raddr`."""
        return [ResultShape(ins[0].dims)]


@irdl_op_definition
class RandomOffChipStoreOp(StepOp):
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
    waddr = operand_def(StreamType)
    """Tile addresses (1x1 integer tiles) where the `wdata` tiles go."""
    wdata = operand_def(StreamType)
    """The tiles to write, one per address."""
    output = result_def(StreamType)
    """One `i1` acknowledgement per tile written."""
    base_addr = prop_def(IntegerAttr[I64])
    """Byte address of the tensor in off-chip memory."""
    tiled_in_shape = prop_def(DenseArrayBase)
    """The tensor as a row-major grid of tiles (as `random_offchip_load`'s)."""
    buffer_depth = opt_prop_def(IntegerAttr[I64])
    """Tiles it buffers on chip while they are written (default 1), in [1, 2^40]."""

    def verify_rules(self) -> None:
        check_base_addr(self)
        if self.buffer_depth is not None and not 1 <= self.buffer_depth.value.data <= MAX_KNOB:
            raise VerifyException(f"{self.name}: buffer_depth must be an integer in "
                                  f"[1, {MAX_KNOB}], got {self.buffer_depth.value.data}")
        a = stream_of(self, self.waddr, "waddr")
        d = stream_of(self, self.wdata, "wdata")
        out = stream_of(self, self.output, "result")
        if not is_address(a.element):
            raise VerifyException(f"{self.name}: waddr elements must be 1x1 integer tiles")
        if not isinstance(d.element, TileType):
            raise VerifyException(f"{self.name}: wdata elements must be tiles")
        if not is_i1(out.element) or out.rank != a.rank:
            raise VerifyException(f"{self.name}: result must be an i1 stream shaped like waddr")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 2: an i1 acknowledgement per address; `wdata` has the dims of `waddr`."""
        waddr, wdata = ins
        same(wdata.dims, waddr.dims, "wdata", "waddr")
        return [ResultShape(waddr.dims, i1)]


# --------------------------------------------------------------------------
# On-chip memory (table 3)
# --------------------------------------------------------------------------


@irdl_op_definition
class BufferizeOp(UnaryStreamOp):
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
    rank = prop_def(IntegerAttr[I64])
    """How many innermost dims of the input go into each on-chip buffer."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        b = int_of(self.rank)
        if 0 < b <= s.rank:
            el = out.element
            if not isinstance(el, BufferType) or el.element != s.element or el.rank != b:
                raise VerifyException(
                    f"{self.name}: result element must be a {b}-dim buffer of {s.element}"
                )

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 3: the outer dims; the element is a buffer of the `rank` inner dims."""
        s, b = ins[0], int_of(self.rank)
        if not 0 < b <= s.rank:
            raise ShapeError(f"rank {b} must be in 1..{s.rank}")
        outer, inner = s.dims[: s.rank - b], s.dims[s.rank - b :]
        return [ResultShape(outer, BufferType(inner, s.element))]


@irdl_op_definition
class StreamifyOp(StepOp):
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
    input = operand_def(StreamType)
    ref = operand_def(StreamType)
    output = result_def(StreamType)
    stride = prop_def(DenseArrayBase)
    """Per read dim, the buffer elements one step skips: read index
    `(i_0, ..., i_n)` reads element `sum(i_k * stride_k)` of the buffer (seed §3.2.2's affine
    read); ignored for a dynamically sized buffer, which is read linearly."""
    out_shape = prop_def(DenseArrayBase)
    """The dims of one read of the buffer, appended to `ref`'s dims in the result."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        r = stream_of(self, self.ref, "ref")
        out = stream_of(self, self.output, "result")
        if not isinstance(s.element, BufferType):
            raise VerifyException(f"{self.name}: input elements must be buffers")
        if r.rank < s.rank:
            raise VerifyException(f"{self.name}: ref must have at least the input's dims")
        shape = ints_of(self.out_shape)
        if out.rank != r.rank + len(shape) or out.element != s.element.element:
            raise VerifyException(
                f"{self.name}: result must have ref dims + out_shape and the buffer's element"
            )

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 3: ref dims ++ out_shape (a dynamically sized buffer is read
        linearly: its own dims), the buffer's element; `ref` starts with the input's dims."""
        data, ref = ins
        buf = data.element
        if not isinstance(buf, BufferType):
            raise ShapeError("input elements must be buffers")
        same(ref.dims[: data.rank], data.dims, "ref", "input")
        shape = [sym(v) for v in ints_of(self.out_shape)]
        if any(has_placeholder(d) for d in buf.dims):
            shape = [PLACEHOLDER] * len(shape)  # known once the buffer's dims are
        elif not all(d.is_Integer for d in buf.dims):
            shape = buf.dims
        return [ResultShape([*ref.dims, *shape], buf.element)]


MEMORY_OPS = [
    LinearOffChipLoadOp,
    LinearOffChipStoreOp,
    RandomOffChipLoadOp,
    RandomOffChipStoreOp,
    BufferizeOp,
    StreamifyOp,
]
