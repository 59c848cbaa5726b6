"""The size of a step-graph simulation, estimated before anything is allocated.

The simulator's cost and memory follow the number of stream elements its
contexts produce (each is a firing and, for loads, a precomputed walk entry),
and in functional mode the bytes of the random input tensors. Both come from
the graph's static dims (after `step-specialize{rewrite=true}`), so a bound
symbol such as `--bind B=1000000000` is refused up front instead of growing
the process to many gigabytes:

- elements: the sum over operators of the elements of their result streams
  (the product of the dims; a load walks `ref dims x tiled_out_shape`); a
  stream whose dims are not static counts as many elements as the largest
  input stream of its operator;
- tensor bytes (functional mode): the random input tensor of a load is
  `tiled_in_shape[0] x rows x tiled_in_shape[-1] x cols` float64 values;
  `check_tensor_bytes` is called before each allocation, and on the largest
  tile any stream of the graph carries (`largest_tile_bytes`, e.g. the
  output of a matmul of two thin tiles).

`check_simulation_size` raises `SimulationTooLarge` (a `SimulationError`,
defined here, so a tool reports it like any simulation error) past `MAX_SIM_ELEMENTS`, and
`check_tensor_bytes` past `MAX_TENSOR_BYTES` in total; `build_program(...,
limits=False)` (`runtime/fabric/build.py`) (`step-run --force`) skips both. `check_tile_bytes` (one tile
past `MAX_TILE_BYTES`) is never skipped.

Example:

```python
estimate_simulation(graph)    # 20 for a load of [4] tiles feeding a [4, 4] repeat
check_simulation_size(graph)  # the same, or SimulationTooLarge past the limit
```
"""

from __future__ import annotations

import math

import sympy
from xdsl.ir import Operation, SSAValue

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import to_expr
from steplus.dialects.step.types import StreamType, TileType, TupleType
from steplus.utils.attrs import ints_of

MAX_SIM_ELEMENTS = 10_000_000
"""Stream elements a simulation may produce: ~20x the largest reference workload
(Mixtral B=1024, tile_N=16: ~525k), about 10 minutes and 2 GB."""
MAX_TENSOR_BYTES = 2 << 30
"""Bytes of random input tensors a functional simulation may allocate."""


MAX_TILE_BYTES = 1 << 32
"""Bytes of one tile (8 per value) the simulator accepts, even with --force:
far above any on-chip memory, far below where its 64-bit byte counts overflow."""


class SimulationError(Exception):
    """A user-facing failure of simulating a step graph: too large, not
    placeable (`fabric_placement.LoweringError`), or, raised by the simulator,
    a deadlock or a malformed stream. Defined here, below the runtime, so the
    checks made before anything is built need no runtime import;
    `steplus.runtime.fabric.engine` uses this class."""


class SimulationTooLarge(SimulationError):
    """The estimated simulation exceeds a limit (the message names the estimate)."""

    def __init__(self, msg: str, op: Operation | None = None):
        super().__init__(msg)
        self.op = op


def _count(dims: list[sympy.Expr]) -> int | None:
    n = 1
    for d in dims:
        d = to_expr(d)
        if not d.is_Integer:
            return None
        n *= int(d)
    return n


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _load_elements(op: so.LinearOffChipLoadOp) -> int:
    """The elements a linear load walks (its ref stream's dims x tiled_out_shape)."""
    ref = op.ref
    outer = _count(ref.type.dims) if ref is not None and isinstance(ref.type, StreamType) else 1
    return (outer or 1) * _prod(ints_of(op.tiled_out_shape))


def estimate_simulation(graph: GraphOp) -> int:
    """The stream elements simulating `graph` produces (see module doc)."""
    counts: dict[SSAValue, int] = {}
    for arg in graph.body.block.args:
        if isinstance(arg.type, StreamType):
            counts[arg] = _count(arg.type.dims) or 0
    elements = 0
    for op in graph.body.block.ops:
        inputs = max((counts.get(v, 0) for v in op.operands), default=0)
        for r in op.results:
            if not isinstance(r.type, StreamType):
                continue
            n = _count(r.type.dims)
            counts[r] = inputs if n is None else n
            if isinstance(op, so.LinearOffChipLoadOp):
                counts[r] = max(counts[r], _load_elements(op))
            elements += counts[r]
    return elements


def largest_tile_bytes(graph: GraphOp) -> int:
    """The float64 bytes of the largest static tile a stream of `graph` carries."""
    def tiles(t):
        if isinstance(t, TileType):
            yield t
        elif isinstance(t, TupleType):
            for e in t.elements.data:
                yield from tiles(e)

    sizes = [t.rows.data * t.cols.data * 8
             for op in graph.walk() for r in op.results if isinstance(r.type, StreamType)
             for t in tiles(r.type.element) if t.rows.data > 0 and t.cols.data > 0]
    return max(sizes, default=0)


def check_tile_bytes(graph: GraphOp, max_bytes: int | None = None) -> None:
    """SimulationTooLarge if one tile of `graph` holds more than `max_bytes`
    (default `MAX_TILE_BYTES`) at 8 bytes a value. Checked even with --force:
    the timing model counts bytes in 64-bit integers."""
    limit = MAX_TILE_BYTES if max_bytes is None else max_bytes
    largest = largest_tile_bytes(graph)
    if largest > limit:
        raise SimulationTooLarge(f"simulation too large: one tile holds about "
                                 f"{_amount(largest)} bytes (limit {limit:,} per tile)", graph)


def unbound_symbols(graph: GraphOp) -> list[str]:
    """The names of the symbols left in the dims of `graph`'s result streams."""
    names = {s.name for op in graph.body.block.ops for r in op.results
             if isinstance(r.type, StreamType)
             for d in r.type.dims for s in to_expr(d).free_symbols if isinstance(s, sympy.Symbol)}
    return sorted(names)


def _amount(n: int) -> str:
    return f"{n:,}" if n < 10**15 else f"~1e{int(math.log10(n))}"


def check_simulation_size(graph: GraphOp, max_elements: int | None = None) -> int:
    """The estimated stream elements of `graph`, or SimulationTooLarge past the
    limit (default `MAX_SIM_ELEMENTS`)."""
    if max_elements is None:
        max_elements = MAX_SIM_ELEMENTS
    elements = estimate_simulation(graph)
    if elements > max_elements:
        raise SimulationTooLarge(
            f"simulation too large: about {_amount(elements)} stream elements "
            f"(limit {max_elements:,}); bind smaller dims, or pass --force to run it anyway",
            graph)
    return elements


def check_tensor_bytes(total: int, max_bytes: int | None = None,
                       what: str = "random input tensors") -> None:
    """SimulationTooLarge if the functional input tensors would take `total`
    bytes, past `max_bytes` (default `MAX_TENSOR_BYTES`)."""
    if max_bytes is None:
        max_bytes = MAX_TENSOR_BYTES
    if total > max_bytes:
        raise SimulationTooLarge(
            f"simulation too large: about {_amount(total)} bytes of {what} "
            f"(limit {max_bytes:,}); bind smaller dims, drop --functional, or pass --force "
            "to run it anyway")
