"""Data in and out of a `step.graph` on the fabric simulator (functional mode).

    step-run g.mlir --input X=x.npy --input 16777216=wg.npy --output out.npz

`--input NAME=FILE` binds the off-chip tensor a load reads. NAME is the load's
SSA name (`X` for `%X = step.linear_offchip_load ...`), its context name in
step-run's table (`linear_offchip_load0`) or its `base_addr` (decimal or
`0x...`). The tensor is the 2-D matrix the load's `tiled_in_shape` indexes:
`(prod(tiled_in_shape[:-1]) * R, tiled_in_shape[-1] * C)` for `RxC` tiles
(a 1-D shape `[N]` is `(N * R, C)`), tile `i` at block row `i // last`,
block column `i % last`; its values must fit the tile's element type. Loads
without an `--input` read random N(0, 1/64) tensors (seed 0), as `--functional`.

`--output OUT.npz` writes every stored region, one array per store, named by
the stored value's SSA name (`%y` -> `y`), else the context name: a
`linear_offchip_store` of a stream `[d0, ..., dn]` of `RxC` tiles as the
matrix `(d0 * ... * d(n-1) * R, dn * C)` (the load layout, so it can be read
back), a `random_offchip_store` as the tiles stacked by address. Arrays have
the element type of the tiles (f32 -> float32, i64 -> int64; bf16, which numpy
lacks, as float32). `--output OUT.npy` is for a graph with a single store.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation

from steplus.dialects.semantics.domain import numpy_dtype
from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.types import StreamType, TileType
from steplus.passes.step.fabric_placement import find_graph, place
from steplus.tools.cli import UsageError
from steplus.tools.inputs import InputSignature, check_array, parse_input_specs, read_array
from steplus.tools.outputs import save_outputs

__all__ = ["GraphData", "OffChip", "bind_inputs", "collect_outputs", "graph_data",
           "offchip_regions", "save_outputs"]

_LOADS = (so.LinearOffChipLoadOp, so.RandomOffChipLoadOp)
_STORES = (so.LinearOffChipStoreOp, so.RandomOffChipStoreOp)


@dataclass(frozen=True)
class OffChip:
    """A load or store of the graph, with the names it is known by."""

    op: Operation
    context: str  # the simulator context's name (step-run's table)
    ssa: str | None  # the SSA name of the loaded / stored value
    base_addr: int
    tile: TileType

    @property
    def name(self) -> str:
        return self.ssa or self.context

    def describe(self) -> str:
        if self.ssa and self.ssa != self.context:
            return f"{self.ssa} ({self.context}, base_addr {self.base_addr})"
        return f"{self.name} (base_addr {self.base_addr})"


def _tile_of(t: Attribute) -> TileType | None:
    while isinstance(t, StreamType):
        t = t.element
    return t if isinstance(t, TileType) else None


def _base_addr(op: Operation) -> int:
    a = op.attributes.get("base_addr") or op.properties.get("base_addr")
    value = getattr(a, "value", None)
    return int(getattr(value, "data", -1))


def offchip_regions(graph: GraphOp, context_names: dict[Operation, str]
                    ) -> tuple[list[OffChip], list[OffChip]]:
    """(loads, stores) of `graph` in program order; `context_names` maps each
    op to its context (from the fabric placement)."""
    loads: list[OffChip] = []
    stores: list[OffChip] = []
    for op in graph.body.block.ops:
        if isinstance(op, _LOADS):
            value = op.results[0]
            out = loads
        elif isinstance(op, _STORES):
            value = op.operands[-1] if isinstance(op, so.RandomOffChipStoreOp) else op.operands[0]
            out = stores
        else:
            continue
        tile = _tile_of(value.type)
        if tile is None or op not in context_names:
            continue
        out.append(OffChip(op, context_names[op], value.name_hint, _base_addr(op), tile))
    return loads, stores


def _load_shape(load: OffChip) -> tuple[int, int]:
    r, c = load.tile.rows.data, load.tile.cols.data
    attr = load.op.attributes.get("tiled_in_shape") or load.op.properties.get("tiled_in_shape")
    in_shape = [int(v) for v in attr.get_values()] if attr is not None else []  # type: ignore[union-attr]
    if len(in_shape) >= 2:
        return math.prod(in_shape[:-1]) * r, in_shape[-1] * c
    return (in_shape[0] if in_shape else 1) * r, c


def _find(loads: Sequence[OffChip], key: str) -> OffChip | None:
    key = key.lstrip("%")
    try:
        addr: int | None = int(key, 0)
    except ValueError:
        addr = None
    for load in loads:
        if key in (load.ssa, load.context) or (addr is not None and addr == load.base_addr):
            return load
    return None


def bind_inputs(specs: Sequence[str], loads: Sequence[OffChip], graph: str
                ) -> dict[str, np.ndarray]:
    """The tensors of `--input NAME=FILE` flags, by context name (float64)."""
    tensors: dict[str, np.ndarray] = {}
    for key, path in parse_input_specs(specs).items():
        load = _find(loads, key)
        if load is None:
            have = ", ".join(x.describe() for x in loads) or "none"
            raise UsageError(f"--input: {graph} has no off-chip load '{key}' (loads: {have})")
        if load.context in tensors:
            raise UsageError(f"--input: load {load.describe()} is given twice")
        if load.tile.rows.data < 0 or load.tile.cols.data < 0:
            raise UsageError(f"--input: load {load.name} has dynamic tiles; it cannot be bound")
        rows, cols = _load_shape(load)
        scalar = load.tile.scalar
        sig = InputSignature(load.name, f"{rows}x{cols}x{scalar} off-chip tensor", str(scalar),
                             numpy_dtype(scalar), (rows, cols), False)
        tensors[load.context] = check_array(sig, read_array(path, key), path).astype(np.float64)
    return tensors


def _dtype(tile: TileType) -> np.dtype:
    scalar = tile.scalar
    if isinstance(scalar, IntegerType):
        return numpy_dtype(scalar)
    return np.dtype(np.float64) if str(scalar) == "f64" else \
        np.dtype(np.float16) if str(scalar) == "f16" else np.dtype(np.float32)


def _static_dims(op: Operation) -> list[int] | None:
    t = op.operands[0].type
    if not isinstance(t, StreamType):
        return None
    dims: list[int] = []
    for d in t.dims:
        if not getattr(d, "is_Integer", False):
            return None
        dims.append(int(d))
    return dims


def _blocks(tiles: list[np.ndarray], dims: list[int] | None) -> np.ndarray:
    """Tiles in stream order as the load layout's matrix (see the module doc)."""
    if not tiles:
        return np.zeros((0, 0))
    inner = dims[-1] if dims and len(dims) >= 2 and math.prod(dims) == len(tiles) else 1
    shapes = {t.shape for t in tiles}
    if inner > 1 and len(shapes) == 1:
        rows = [np.hstack(tiles[i:i + inner]) for i in range(0, len(tiles), inner)]
        return np.vstack(rows)
    if len({s[1] for s in shapes}) == 1:
        return np.vstack(tiles)
    return np.concatenate([t.reshape(-1) for t in tiles])  # ragged: the values in order


def collect_outputs(prog: object, stores: Sequence[OffChip]) -> dict[str, np.ndarray]:
    """Every store's region after a functional run, by name (see the module doc)."""
    out: dict[str, np.ndarray] = {}
    context = getattr(prog, "context")
    for st in stores:
        ctx = context(st.context)
        if isinstance(st.op, so.RandomOffChipStoreOp):
            by_addr = {int(np.ravel(np.asarray(a))[0]): np.atleast_2d(np.asarray(v))
                       for a, v in ctx.stored if v is not None}
            tiles = [by_addr[k] for k in sorted(by_addr)]
            arr = np.stack(tiles) if tiles and len({t.shape for t in tiles}) == 1 else \
                np.zeros((0, st.tile.rows.data, st.tile.cols.data))
        else:
            tiles = [np.atleast_2d(np.asarray(v)) for v in ctx.stored if v is not None]
            arr = _blocks(tiles, _static_dims(st.op))
        name = st.name
        if name in out:  # two stores of values of one name: the context tells them apart
            name = st.context
        out[name] = arr.astype(_dtype(st.tile))
    return out


@dataclass
class GraphData:
    """What a functional run reads (`tensors`, by context name) and how its
    outputs are read back (`collect(program)` -> arrays by name)."""

    tensors: dict[str, np.ndarray]
    collect: Callable[[object], dict[str, np.ndarray]]


def graph_data(specs: Sequence[str], module: Operation, graph_name: str | None,
               config: object) -> GraphData:
    """step-run's `--input`s on the loads of the graph, its stores as outputs."""
    graph = find_graph(module, graph_name)  # type: ignore[arg-type]
    names = {s.op: s.name for s in place(graph, config).contexts  # type: ignore[arg-type]
             if s.op is not None}
    loads, stores = offchip_regions(graph, names)
    tensors = bind_inputs(specs, loads, f"@{graph.sym_name.data}")
    return GraphData(tensors, lambda prog: collect_outputs(prog, stores))
