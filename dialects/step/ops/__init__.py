"""The operators of the `step` dialect, by concept (see `steplus.dialects.step`).

- `memory`: off-chip loads and stores, `bufferize`, `streamify` (seed tables 2-3)
- `compute`: `map`, `accum`, `scan`, `flat_map`, `apply`, `yield` (table 4)
- `routing`: `partition`, `reassemble`, `eager_merge`, `parallelize`,
  `broadcast`, `consume` (table 5)
- `shape`: `flatten`, `reshape`, `promote`, `expand`, `zip`, `repeat` (table 6)
- `generators`: selector / metadata / address generators of the reference graphs
- `collective`: `all_reduce`, `all_gather` across a tensor-parallel group (SN40L §VII)

Every op class is re-exported here (`from steplus.dialects.step import ops as so;
so.MapOp`).
"""

from steplus.dialects.step.ops.collective import *  # noqa: F403
from steplus.dialects.step.ops.collective import COLLECTIVE_OPS
from steplus.dialects.step.ops.compute import *  # noqa: F403
from steplus.dialects.step.ops.compute import HIGHER_ORDER_OPS
from steplus.dialects.step.ops.generators import *  # noqa: F403
from steplus.dialects.step.ops.generators import GENERATOR_OPS
from steplus.dialects.step.ops.memory import *  # noqa: F403
from steplus.dialects.step.ops.memory import MEMORY_OPS
from steplus.dialects.step.ops.routing import *  # noqa: F403
from steplus.dialects.step.ops.routing import ROUTING_OPS
from steplus.dialects.step.ops.shape import *  # noqa: F403
from steplus.dialects.step.ops.shape import SHAPE_OPS

ALL_OPS = [*MEMORY_OPS, *HIGHER_ORDER_OPS, *ROUTING_OPS, *SHAPE_OPS, *GENERATOR_OPS,
           *COLLECTIVE_OPS]
