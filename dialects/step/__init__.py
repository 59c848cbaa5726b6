"""The `step` dialect: Streaming Tensor Programs.

A program is a `step.graph`: a symbol whose body is a graph region of
operators connected by streams (`!step.stream<[dims], element>`, see
`step_types`). Feedback edges are legal (a value may be used before its
definition). Every stream has at most one consumer: fan-out is an explicit
`step.broadcast` (checked by the `step.graph` verifier).

Operators (seed appendix tables 2-6 plus what real graphs need):

- off-chip memory: `linear_offchip_load`, `linear_offchip_store`,
  `random_offchip_load`, `random_offchip_store`
- on-chip memory: `bufferize`, `streamify`
- higher-order: `map`, `accum`, `scan`, `flat_map`, whose regions compute on
  tiles with `step.apply "fn"(...)` (library in `step_functions`) and end
  with `step.yield`
- routing and merging: `partition`, `reassemble`, `eager_merge`
- shape: `flatten`, `reshape`, `promote`, `expand`, `zip`, `regroup`
- extras: `repeat`, `broadcast`, `consume` (sink), and the generators of the
  MoE / attention graphs: `select_gen`, `metadata_gen`, `expert_addr_gen`,
  `cache_read_addr_gen`, `filter_last_tile`, `parallelize`

Most operators print as `step.op %a, %b {props} : (operand types) -> result
types`. Each operator with results owns its shape rule (`infer_shapes`, see
`shape_rules`): the verifier checks the element types and ranks of the tables
and compares the written dims with the rule where they are static;
`step-infer-shapes` and the Python frontend (`builder`) use the same rule.

Example:

```mlir
step.graph @gemm {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<16x64xf32>>
  %y = step.map %x : !step.stream<[4, 1], !step.tile<16x64xf32>> -> !step.stream<[4, 1], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %e = step.apply "exp"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %e : !step.tile<16x64xf32>
  }
  step.linear_offchip_store %y {base_addr = 4096 : i64} : !step.stream<[4, 1], !step.tile<16x64xf32>>
}
```
"""

from __future__ import annotations

from xdsl.ir import Dialect

from steplus.dialects.step.ops import (
    COLLECTIVE_OPS,
    GENERATOR_OPS,
    HIGHER_ORDER_OPS,
    MEMORY_OPS,
    ROUTING_OPS,
    SHAPE_OPS,
)
from steplus.dialects.step.ops.graph import GraphOp
from steplus.dialects.step.types import (
    BufferType,
    SelectorType,
    StreamType,
    TileType,
    TupleType,
)


Step = Dialect(
    "step",
    [GraphOp, *MEMORY_OPS, *HIGHER_ORDER_OPS, *ROUTING_OPS, *GENERATOR_OPS, *SHAPE_OPS,
     *COLLECTIVE_OPS],
    [StreamType, BufferType, TileType, SelectorType, TupleType],
)
