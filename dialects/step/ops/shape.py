"""Shape operators of the `step` dialect (seed table 6): `flatten`, `reshape`,
`promote`, `expand`, `zip`, plus `repeat`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar

import sympy
from xdsl.dialects.builtin import I64, IntegerAttr, i1
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.ops.base import StepOp, UnaryStreamOp
from steplus.dialects.step.shape_rules import (
    Fresh,
    ResultShape,
    ShapeError,
    chunks,
    equal_dims,
    has_placeholder,
    is_ragged,
    promoted_dim,
    same,
    sym,
)
from steplus.dialects.step.types import (
    StreamType,
    TileType,
    TupleType,
    is_static,
)
from steplus.dialects.step.verify import (
    int_of,
    is_i1,
    stream_of,
)

@irdl_op_definition
class FlattenOp(UnaryStreamOp):
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
    min = prop_def(IntegerAttr[I64])
    """The innermost dim merged, counted from the innermost (0)."""
    max = prop_def(IntegerAttr[I64])
    """The outermost dim merged, counted from the innermost (0); `max >= min`."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        lo, hi = int_of(self.min), int_of(self.max)
        if 0 <= lo <= hi < s.rank and (out.rank != s.rank - (hi - lo) or out.element != s.element):
            raise VerifyException(
                f"{self.name}: result must have {s.rank - (hi - lo)} dims and the input's element"
            )

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 6: dims `min`..`max` (from the innermost) become their product."""
        s = ins[0]
        lo, hi, n = int_of(self.min), int_of(self.max), s.rank
        if not 0 <= lo <= hi < n:
            raise ShapeError(f"need 0 <= min <= max < {n}, got min={lo} max={hi}")
        d = s.dims
        merged = sympy.Mul(*d[n - 1 - hi : n - lo])
        return [ResultShape([*d[: n - 1 - hi], merged, *d[n - lo :]], s.element)]


@irdl_op_definition
class ReshapeOp(StepOp):
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
    input = operand_def(StreamType)
    output = result_def(StreamType)
    padding = result_def(StreamType)
    split_dim = prop_def(IntegerAttr[I64])
    """The dim split, counted from the innermost (0)."""
    chunk_size = prop_def(IntegerAttr[I64])
    """The size `S` of each chunk: the dim `D` becomes `ceil(D/S), S`, the last
    chunk padded (the padding stream marks the padded elements)."""
    RESULT_NAMES: ClassVar[tuple[str, ...]] = ("data result", "padding result")

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "data result")
        pad = stream_of(self, self.padding, "padding result")
        b, size, n = int_of(self.split_dim), int_of(self.chunk_size), s.rank
        if 0 <= b < n and size >= 1:
            d = s.dims[n - 1 - b]
            if b > 0 and is_static(d) and int(d) % size:
                raise VerifyException(
                    f"{self.name}: splitting a non-innermost dim needs it divisible by "
                    f"{size}, got {d}"
                )
            if out.rank != n + 1 or out.element != s.element:
                raise VerifyException(f"{self.name}: data result must have {n + 1} dims")
            if pad.rank != n + 1 or not is_i1(pad.element):
                raise VerifyException(
                    f"{self.name}: padding result must be an i1 stream of {n + 1} dims")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 6: dim `split_dim` (from the innermost) `D` becomes `ceiling(D/S), S`;
        the padding flags have the same dims."""
        s = ins[0]
        b, size, n = int_of(self.split_dim), int_of(self.chunk_size), s.rank
        if size < 1:
            raise ShapeError("chunk_size must be positive")
        if not 0 <= b < n:
            raise ShapeError(f"split_dim {b} must be in 0..{n - 1}")
        d = s.dims[n - 1 - b]
        dims = [*s.dims[: n - 1 - b], chunks(d, size), sym(size), *s.dims[n - b :]]
        return [ResultShape(dims, s.element), ResultShape(list(dims), i1)]


@irdl_op_definition
class PromoteOp(UnaryStreamOp):
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

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if out.rank != s.rank + 1 or out.element != s.element:
            raise VerifyException(f"{self.name}: result must add exactly one outer dim")
        new = out.dims[0]
        if is_static(new) and int(new) not in (0, 1):
            raise VerifyException(f"{self.name}: the new outer dim is 1 (or 0), got {new}")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 6: a new outer dim `Min(1, D)` (1 unless the stream is empty)."""
        s = ins[0]
        outer = s.dims[0] if s.rank else sym(1)
        return [ResultShape([promoted_dim(outer), *s.dims], s.element)]


@irdl_op_definition
class ExpandOp(StepOp):
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
    input = operand_def(StreamType)
    ref = operand_def(StreamType)
    output = result_def(StreamType)
    rank = prop_def(IntegerAttr[I64])
    """How many innermost dims of `ref` each element of `in` is repeated over."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        r = stream_of(self, self.ref, "ref")
        out = stream_of(self, self.output, "result")
        if s.rank != r.rank:
            raise VerifyException(f"{self.name}: input and ref must have the same number of dims")
        if out.rank != r.rank or out.element != s.element:
            raise VerifyException(f"{self.name}: result must have ref's dims and the input's element")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Table 6: ref's dims; the input's `rank` inner dims are 1 and its outer
        dims are ref's."""
        data, ref = ins
        b = int_of(self.rank)
        if data.rank != ref.rank:
            raise ShapeError(f"input has {data.rank} dims, ref has {ref.rank}")
        if not 0 <= b <= data.rank:
            raise ShapeError(f"rank {b} must be in 0..{data.rank}")
        for i in range(data.rank - b, data.rank):
            d = sym(data.dims[i])
            if not has_placeholder(d) and not equal_dims(d, sympy.Integer(1)):
                raise ShapeError(f"dimension {i} of input must be 1 to expand, got {sympy.sstr(d)}",
                                 static=bool(d.is_Integer))
        same(data.dims[: data.rank - b], ref.dims[: ref.rank - b], "input", "ref")
        return [ResultShape(ref.dims, data.element)]


@irdl_op_definition
class ZipOp(StepOp):
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
    lhs = operand_def(StreamType)
    rhs = operand_def(StreamType)
    output = result_def(StreamType)

    def verify_rules(self) -> None:
        a = stream_of(self, self.lhs, "lhs")
        b = stream_of(self, self.rhs, "rhs")
        out = stream_of(self, self.output, "result")
        if a.rank != b.rank:
            raise VerifyException(f"{self.name}: operands must have the same dims")
        el = out.element
        if out.rank != a.rank or not (isinstance(el, TupleType)
                                      and tuple(el.elements.data) == (a.element, b.element)):
            raise VerifyException(f"{self.name}: result must be a stream of tuple<lhs, rhs>")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Same dims on both sides; a ragged dim (data-dependent, e.g. the rows a
        flat_map produced) cannot be compared statically and takes the other
        side's dim (the MoE's routing weights zipped with the expert's rows)."""
        a, b = ins
        if a.rank != b.rank:
            raise ShapeError(f"lhs has {a.rank} dims, rhs has {b.rank}")
        regular = [(x, y) for x, y in zip(a.dims, b.dims) if not (is_ragged(x) or is_ragged(y))]
        same([y for _, y in regular], [x for x, _ in regular], "rhs", "lhs")
        dims = [y if is_ragged(x) and not is_ragged(y) else x for x, y in zip(a.dims, b.dims)]
        return [ResultShape(dims, _tuple_of(a.element, b.element))]


@irdl_op_definition
class RepeatOp(UnaryStreamOp):
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
    count = prop_def(IntegerAttr[I64])
    """How many times every element is repeated (the size of the new innermost dim)."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        if int_of(self.count) < 1:
            raise VerifyException(f"{self.name}: count must be positive")
        if out.rank != s.rank + 1 or out.element != s.element:
            raise VerifyException(f"{self.name}: result must add one innermost dim")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """The input's dims ++ `count` (every element `count` times)."""
        return [ResultShape([*ins[0].dims, sym(int_of(self.count))], ins[0].element)]


MAX_REGROUP_EXTENT = 1 << 16
"""The largest stream dim a `step.regroup` moves into a tile (tile rows or columns)."""


@irdl_op_definition
class RegroupOp(UnaryStreamOp):
    """Exchange stream dim `dim` (from the innermost) with tile axis `axis` (0 rows, 1 cols), on chip.

    A stream `[..., M, D_{dim-1}, ..., D_0]` of `R x C` tiles becomes, for
    `axis = 0`, a stream `[..., R, D_{dim-1}, ..., D_0]` of `M x C` tiles with
    `out[..., r, q][i, c] = in[..., i, q][r, c]` (`q` the index in the inner
    dims); for `axis = 1`, `[..., C, ...]` of `R x M` tiles with
    `out[..., c, q][r, i] = in[..., i, q][r, c]`. It is the transpose the SN40L
    seed keeps on chip between the GEMMs of a Monarch FFT ("fused into buffers
    T0* and T1* as an access pattern", §III-A): the `M x D_{dim-1} x ... x
    D_0` tiles of one block (`dim` and the dims inside it) are buffered on chip
    and read out in the exchanged order. No off-chip traffic; on-chip memory:
    one block (`step-metrics`). `M` and the tile's `axis` extent must be
    numbers.

    Example (a 4-point stream of 2x3 tiles exchanged with the tile rows):

    ```mlir
    step.graph @example {
    ^bb0(%x: !step.stream<[B, 4], !step.tile<2x3xf32>>):
      %t = step.regroup %x {dim = 0 : i64, axis = 0 : i64} : (!step.stream<[B, 4], !step.tile<2x3xf32>>) -> !step.stream<[B, 2], !step.tile<4x3xf32>>
    }
    ```
    """

    name = "step.regroup"
    dim = prop_def(IntegerAttr[I64])
    """The stream dim exchanged, counted from the innermost (0); its size must be a number."""
    axis = prop_def(IntegerAttr[I64])
    """The tile axis exchanged: 0 (rows) or 1 (columns); its extent must be a number."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.input, "input")
        out = stream_of(self, self.output, "result")
        d, axis = int_of(self.dim), int_of(self.axis)
        if not 0 <= d < s.rank:
            raise VerifyException(f"{self.name}: dim must be in 0..{s.rank - 1}, got {d}")
        if axis not in (0, 1):
            raise VerifyException(f"{self.name}: axis must be 0 (rows) or 1 (columns), got {axis}")
        el = s.element
        if not isinstance(el, TileType):
            raise VerifyException(f"{self.name}: the input's element must be a tile")
        m = s.dims[s.rank - 1 - d]
        if out.rank != s.rank:
            raise VerifyException(f"{self.name}: result must have {s.rank} dims")
        if is_static(m) and el.is_static:
            want = _regrouped_tile(el, axis, int(m))
            if out.element != want:
                raise VerifyException(f"{self.name}: result element must be {want}, "
                                      f"got {out.element}")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """Stream dim `dim` (from the innermost) `M` and the tile's `axis` extent `E`
        change places: dims `[..., E, inner...]`, tile `M` along `axis`."""
        s = ins[0]
        d, axis, n = int_of(self.dim), int_of(self.axis), s.rank
        if not 0 <= d < n:
            raise ShapeError(f"dim {d} must be in 0..{n - 1}")
        if axis not in (0, 1):
            raise ShapeError(f"axis must be 0 (rows) or 1 (columns), got {axis}")
        el = s.element
        if not isinstance(el, TileType) or not el.is_static:
            raise ShapeError("the input's element must be a tile of static shape")
        m = sym(s.dims[n - 1 - d])
        if has_placeholder(m):
            return [ResultShape(list(s.dims), None)]
        if not m.is_Integer:
            raise ShapeError(f"the exchanged dim must be a number, got {sympy.sstr(m)}",
                             static=False)
        if not 1 <= int(m) <= MAX_REGROUP_EXTENT:
            raise ShapeError(f"the exchanged dim must be in 1..{MAX_REGROUP_EXTENT}, got {m}")
        extent = el.rows.data if axis == 0 else el.cols.data
        dims = [*s.dims[: n - 1 - d], sym(extent), *s.dims[n - d:]]
        return [ResultShape(dims, _regrouped_tile(el, axis, int(m)))]


def _regrouped_tile(el: TileType, axis: int, m: int) -> TileType:
    """`el` with `m` along `axis` (a regroup's result tile)."""
    if axis == 0:
        return TileType(m, el.cols.data, el.scalar)
    return TileType(el.rows.data, m, el.scalar)


@functools.lru_cache(maxsize=256)
def _tuple_of(a: Attribute, b: Attribute) -> TupleType:
    """`tuple<a, b>`, built once per pair of element types (a zip's result element)."""
    return TupleType([a, b])


SHAPE_OPS = [FlattenOp, ReshapeOp, PromoteOp, ExpandOp, ZipOp, RepeatOp, RegroupOp]
