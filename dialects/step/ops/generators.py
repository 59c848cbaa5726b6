"""Generator operators of the `step` dialect: selectors, metadata and addresses.

The reference graphs (reference spec §8) feed routing operators and random
memory operators from streams that a real deployment gets from the router or
the KV-cache manager; these ops produce such streams from the bound routing
or KV trace (`step-specialize`), or from literal values.

Example:

```mlir
step.graph @example {
  %s = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1>} : !step.stream<[2], !step.selector<2>>
}
```
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.ops.base import StepOp, array_values
from steplus.dialects.step.shape_rules import (
    INFER_SHAPES,
    Fresh,
    InferShapes,
    ResultShape,
    same,
    sym,
)
from steplus.dialects.step.types import SelectorType, StreamType, TileType
from steplus.dialects.step.ops.graph import IN_GRAPH
from steplus.dialects.step.verify import (
    GEN_FMT,
    int_of,
    selector_of,
    stream_of,
)


@irdl_op_definition
class SelectGenOp(InferShapes, IRDLOperation):
    """Generate selectors from a multi-hot matrix `rows x choices` (row-major).

    Example:

    ```mlir
    step.graph @example {
      %s = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1>} : !step.stream<[2], !step.selector<2>>
    }
    ```
    """

    name = "step.select_gen"
    traits = traits_def(IN_GRAPH, INFER_SHAPES)
    output = result_def(StreamType)
    choices = prop_def(IntegerAttr[I64])
    """The number of outputs a selector chooses among (the `N` of `!step.selector<N>`)."""
    values = opt_prop_def(DenseArrayBase)
    """The multi-hot matrix, row-major, `choices` entries (0 or 1) per emitted
    selector; absent: a source whose selectors are bound later (e.g. by a routing trace)."""
    assembly_format = GEN_FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_rules(self) -> None:
        out = stream_of(self, self.output, "result")
        n = int_of(self.choices)
        selector_of(self, out, n)
        if self.values is not None:
            vals = list(array_values(self.values))
            if len(vals) % n or any(v not in (0, 1) for v in vals):
                raise VerifyException(
                    f"{self.name}: values must be a 0/1 matrix with {n} columns"
                )
            if out.rank != 1 and all(d.is_Integer for d in out.dims):
                total = int(sympy.Mul(*out.dims))
                if total != len(vals) // n:
                    raise VerifyException(
                        f"{self.name}: {len(vals) // n} selectors for a stream of {total}")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """A rank-1 stream of literal selectors has one dim per row of `values`;
        otherwise (a source bound later, or rows over several dims) the written
        dims are the input."""
        written = self.output.type
        assert isinstance(written, StreamType)
        if self.values is None or written.rank != 1:
            return [ResultShape(written.dims)]
        rows = len(self.values) // int_of(self.choices)  # len: no unpacking
        return [ResultShape([sym(rows)], SelectorType(int_of(self.choices)))]


@irdl_op_definition
class MetadataGenOp(InferShapes, IRDLOperation):
    """Generate a stream of 1x1 integer tiles from a list of values.

    Example:

    ```mlir
    step.graph @example {
      %m = step.metadata_gen {values = array<i64: 3, 7, 5>} : !step.stream<[3], !step.tile<1x1xi64>>
    }
    ```
    """

    name = "step.metadata_gen"
    traits = traits_def(IN_GRAPH, INFER_SHAPES)
    output = result_def(StreamType)
    values = prop_def(DenseArrayBase)
    """The integers emitted, one 1x1 tile each, in order."""
    assembly_format = GEN_FMT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_rules(self) -> None:
        out = stream_of(self, self.output, "result")
        if not (isinstance(out.element, TileType) and out.element.is_address):
            raise VerifyException(f"{self.name}: elements must be 1x1 integer tiles")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """One element per value."""
        return [ResultShape([sym(len(self.values))])]


def _address_result(op, out) -> None:
    s = stream_of(op, out, "result")
    if not (isinstance(s.element, TileType) and s.element.is_address):
        raise VerifyException(f"{op.name}: results must be streams of 1x1 integer tiles")


@irdl_op_definition
class ExpertAddrGenOp(StepOp):
    """Per selector element, emit the addresses of the `tiles_per_expert` weight tiles.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%s: !step.stream<[N], !step.selector<8>>):
      %a = step.expert_addr_gen %s {tiles_per_expert = 4 : i64} : (!step.stream<[N], !step.selector<8>>) -> !step.stream<[N, 4], !step.tile<1x1xi64>>
    }
    ```
    """

    name = "step.expert_addr_gen"
    sel = operand_def(StreamType)
    output = result_def(StreamType)
    tiles_per_expert = prop_def(IntegerAttr[I64])
    """How many weight-tile addresses each selected expert gets (the innermost dim
    of the result)."""

    def verify_rules(self) -> None:
        s = stream_of(self, self.sel, "sel")
        selector_of(self, s)
        _address_result(self, self.output)

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """The selector's dims ++ `tiles_per_expert` addresses."""
        return [ResultShape([*ins[0].dims, sym(int_of(self.tiles_per_expert))])]


@irdl_op_definition
class CacheReadAddrGenOp(StepOp):
    """Per request (index, length), emit `length` KV-cache tile addresses.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%i: !step.stream<[B], !step.tile<1x1xi64>>, %l: !step.stream<[B], !step.tile<1x1xi64>>):
      %a = step.cache_read_addr_gen %i, %l : (!step.stream<[B], !step.tile<1x1xi64>>, !step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, ?L], !step.tile<1x1xi64>>
    }
    ```
    """

    name = "step.cache_read_addr_gen"
    idx = operand_def(StreamType)
    seq_len = operand_def(StreamType)
    output = result_def(StreamType)

    def verify_rules(self) -> None:
        i = stream_of(self, self.idx, "idx")
        n = stream_of(self, self.seq_len, "seq_len")
        _address_result(self, self.output)
        out = stream_of(self, self.output, "result")
        if i.rank != n.rank or out.rank != i.rank + 1:
            raise VerifyException(f"{self.name}: result must add one dim to idx/seq_len")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """idx's dims ++ a fresh ragged per-request length; seq_len has idx's dims."""
        idx, n = ins
        same(n.dims, idx.dims, "seq_len", "idx")
        length = fresh("len", "L", True)
        return [ResultShape([*idx.dims, length], fresh={length})]


@irdl_op_definition
class FilterLastTileOp(StepOp):
    """Per length n, emit n-1 selectors for output 1 and one for output 0.

    Example:

    ```mlir
    step.graph @example {
    ^bb0(%l: !step.stream<[B], !step.tile<1x1xi64>>):
      %s = step.filter_last_tile %l : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, ?L], !step.selector<2>>
    }
    ```
    """

    name = "step.filter_last_tile"
    seq_len = operand_def(StreamType)
    output = result_def(StreamType)

    def verify_rules(self) -> None:
        n = stream_of(self, self.seq_len, "seq_len")
        out = stream_of(self, self.output, "result")
        selector_of(self, out, 2)
        if out.rank != n.rank + 1:
            raise VerifyException(f"{self.name}: result must add one dim to seq_len")

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """seq_len's dims ++ a fresh ragged per-request length of 2-way selectors."""
        length = fresh("len", "L", True)
        return [ResultShape([*ins[0].dims, length], SelectorType(2), {length})]


GENERATOR_OPS = [SelectGenOp, MetadataGenOp, ExpertAddrGenOp, CacheReadAddrGenOp, FilterLastTileOp]
