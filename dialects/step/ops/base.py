"""Base classes of the `step` operators: what most of them share, written once
(as xDSL's arith factors its binary operations into base ops).

- `StepOp`: an operator of a `step.graph` body (the `IN_GRAPH` trait) that owns its
  shape rule (`InferShapes`, verified by the `INFER_SHAPES` trait), prints as `step.op %a {props} : (types) -> types`
  (`FMT`) and accepts its properties in the attribute dictionary;
- `UnaryStreamOp`: a `StepOp` from one stream (`input`) to one stream (`output`).

Example (a `UnaryStreamOp`):

```mlir
step.graph @example {
^bb0(%w: !step.stream<[4], !step.tile<64x64xf32>>):
  %r = step.repeat %w {count = 2 : i64} : (!step.stream<[4], !step.tile<64x64xf32>>) -> !step.stream<[4, 2], !step.tile<64x64xf32>>
}
```
"""

from __future__ import annotations

from abc import ABC
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, operand_def, result_def, traits_def

from steplus.dialects.step.shape_rules import INFER_SHAPES, InferShapes
from steplus.dialects.step.types import StreamType
from steplus.dialects.step.ops.graph import IN_GRAPH
from steplus.dialects.step.verify import FMT


class StepOp(InferShapes, IRDLOperation, ABC):
    """An operator of a step graph with the common syntax and its own shape rule."""

    traits = traits_def(IN_GRAPH, INFER_SHAPES)
    assembly_format = FMT
    irdl_options = (ParsePropInAttrDict(),)


class UnaryStreamOp(StepOp, ABC):
    """A step operator from one stream to one stream."""

    input = operand_def(StreamType)
    output = result_def(StreamType)


def array_values(attr: DenseArrayBase[Any]) -> tuple[int | float, ...]:
    """The values of a dense array property of any element type (xDSL types
    `get_values` per element type, which a property of either kind matches neither of)."""
    values: tuple[int | float, ...] = attr.get_values()
    return values
