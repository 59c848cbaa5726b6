"""The Python frontend for STeP graphs: ops as calls on streams, types inferred on construction.

In the spirit of the STeP paper's Python frontend: a `Graph` makes sources
(loads, generators, arguments), every `Stream` method appends one step op and
returns the resulting stream(s). Result types are computed as each op is
created, by the same shape rules `step-infer-shapes` uses (seed tables 2-6),
so fresh dimensions (Partition's per-output counts, Reassemble's ragged
groups) get their symbols here; tile shapes follow the function library.

Example:

```python
from xdsl.dialects.builtin import bf16, f32
from steplus.dialects.step.builder import Graph

g = Graph("expert")
x = g.load(tile=(16, 256), dtype=bf16, out_shape=["B/16", 1], name="x")
w = g.load(tile=(256, 64), dtype=bf16, out_shape=["B/16", 1], name="w")
y = x.map("matmul", w, dtype=f32)            # stream [B/16, 1] of 16x64 f32 tiles
y.accum("add", rank=1).store()               # [B/16]
print(g.module())
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import sympy
from xdsl.dialects.builtin import (
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from steplus.dialects.step import builder_args as ba
from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import GraphOp
from steplus.dialects.step.dims import dim_symbols
from steplus.dialects.step.inference import infer_graph
from steplus.dialects.step.shape_rules import ShapeError, has_placeholder, new_symbol, rule_for
from steplus.dialects.step.types import (
    SelectorType,
    StreamType,
    TileType,
)
from steplus.utils.attrs import i64_array, i64_attr
from steplus.utils.gc_pause import gc_paused

# relative, like builder_stream's import of Graph: the two modules type each other, and
# basedpyright must see one identity of each (see test/unit/test_lint.py's link tree)
from .builder_stream import (
    ADDRESS,
    FrontendError,
    Stream,
    eager_merge,
    reassemble,
)

__all__ = ["ADDRESS", "FrontendError", "Graph", "Stream", "TileType", "eager_merge", "reassemble"]


class Graph:
    """One `step.graph` under construction."""

    def __init__(self, name: str):
        self.block = Block()
        self.op = GraphOp(ba.symbol_arg("Graph", "name", name), Region(self.block))
        self._names: set[str] = set()
        self._counter = 0
        self._feedback: set[SSAValue] = set()
        self._consumed: set[SSAValue] = set()
        self._taken = False
        self._retyped = False
        """True once a stream's type was set other than by its op's shape rule
        in `emit` (`with_dims`, a feedback edge, a placeholder argument):
        `module()` then runs the whole-graph inference again."""

    def _stream(self, where: str, arg: str, s: object) -> Stream:
        """Check that `s` is a stream of this graph that nothing consumes yet."""
        if not isinstance(s, Stream):
            raise TypeError(f"{where}: {arg} must be a Stream, got {ba.show(s)}")
        ba.stream_value_arg(where, arg, s.value, self.block, self._consumed)
        return s

    # -- plumbing ----------------------------------------------------------------
    def _open(self, where: str) -> None:
        if self._taken:
            raise FrontendError(f"{where}: the graph was taken by module(take=True)")

    def _fresh(self, op: Operation):
        def fresh(key: str, base: str, ragged: bool) -> sympy.Symbol:
            name = base
            while name in self._names:
                self._counter += 1
                name = f"{base}_{self._counter}"
            self._names.add(name)
            return new_symbol(name, ragged)

        return fresh

    def emit(self, op: Operation, names: Sequence[str | None] = ()) -> list[Stream]:
        """Append `op`, infer its result stream types, return its results as streams."""
        self._open(op.name)
        names = [ba.name_arg(op.name, "name" if len(names) == 1 else f"names[{i}]", n)
                 for i, n in enumerate(names)]
        self.block.add_op(op)
        self._consumed.update(v for v in op.operands if isinstance(v.type, StreamType))
        rule = rule_for(op)
        if rule is not None:
            ins = [cast(StreamType, o.type) for o in op.operands]
            try:
                shapes = rule(op, ins, self._fresh(op))
            except ShapeError as e:
                op.detach()
                self._consumed.difference_update(op.operands)
                raise FrontendError(f"{op.name}: {e}") from None
            for i, shape in enumerate(shapes):
                old = op.results[i].type
                assert isinstance(old, StreamType)
                element = shape.element if shape.element is not None else old.element
                new = StreamType(shape.dims, element)
                if new != old:
                    Rewriter.replace_value_with_new_type(op.results[i], new)
        results = [Stream(self, r) for r in op.results]
        for s, n in zip(results, names):
            if n:
                s.value.name_hint = n
        for s in results:
            for d in s.dims:
                self._names |= {x.name for x in dim_symbols(d)}
        return results

    @gc_paused  # clone, verify, infer: allocation-heavy on a large heap (utils.gc_pause)
    def module(self, take: bool = False) -> ModuleOp:
        """The graph in a module, verified (and its types re-checked by the shape rules).

        The module holds a copy of the graph, so this Graph can grow on; with
        `take=True` it holds the graph's op itself (no clone of every op: the
        path for a graph built once, e.g. a Qwen MoE graph's 5,651 ops) and
        this Graph accepts no further operator."""
        if self._taken:
            raise FrontendError("Graph.module: the graph was already taken by module(take=True)")
        if self._feedback:
            raise FrontendError(f"{len(self._feedback)} feedback stream(s) never connected")
        if take:
            self._taken = True
        m = ModuleOp([self.op if take else self.op.clone()])
        m.verify()
        if self._retyped:  # otherwise `emit` ran every rule on the operands' final types
            graph = next(o for o in m.walk() if isinstance(o, GraphOp))
            infer_graph(graph)
        return m

    # -- sources -----------------------------------------------------------------
    def argument(self, dims: Sequence[object], element: Attribute, name: str | None = None) -> Stream:
        """A graph input stream."""
        self._open("Graph.argument")
        dims = ba.dims_arg("Graph.argument", "dims", dims)
        element = ba.element_arg("Graph.argument", "element", element)
        name = ba.name_arg("Graph.argument", "name", name)
        t = StreamType(dims, element)
        self._retyped |= has_placeholder(t)
        arg = self.block.insert_arg(t, len(self.block.args))
        if name:
            arg.name_hint = name
        for d in t.dims:
            self._names |= {x.name for x in dim_symbols(d)}
        return Stream(self, arg)

    def load(self, tile: tuple[int, int], dtype: Attribute, out_shape: Sequence[object],
             in_shape: Sequence[int] | None = None, stride: Sequence[int] | None = None,
             ref: Stream | None = None, base_addr: int = 0, name: str | None = None) -> Stream:
        """`step.linear_offchip_load`: tiles of `tile` walking `out_shape` (per `ref` element).

        Symbolic outer entries of `out_shape` (`"B"`, `"B/16"`) become a
        reference stream: a graph argument `%<name>_ref` of those dims (a
        load's own walk is static). `in_shape`/`stride` describe the off-chip
        tensor in tiles (defaults: the static walk, row-major)."""
        element = ba.tile_type_arg("Graph.load", tile, dtype)
        base_addr = ba.int_arg("Graph.load", "base_addr", base_addr)
        if ref is not None:
            self._stream("Graph.load", "ref", ref)
        out = ba.dims_arg("Graph.load", "out_shape", out_shape)
        k = next((i for i, d in enumerate(out) if d.is_Integer), len(out))
        if any(not d.is_Integer for d in out[k:]):
            raise FrontendError("load: symbolic extents must be the outermost entries of out_shape")
        if k:
            if ref is not None:
                raise FrontendError("load: symbolic out_shape entries and a ref stream together")
            ref = self.argument(out[:k], ADDRESS, f"{name or 'load'}_ref")
        walk = [int(d) for d in out[k:]]
        in_shape = ba.ints_arg("Graph.load", "in_shape", in_shape, minimum=1) \
            if in_shape is not None else walk
        if stride is None:
            stride = [int(np.prod(in_shape[i + 1:])) for i in range(len(in_shape))]
        stride = ba.ints_arg("Graph.load", "stride", stride, length=len(in_shape))
        outer = ref.dims if ref is not None else []
        op = so.LinearOffChipLoadOp.create(
            operands=[ref.value] if ref is not None else [],
            result_types=[StreamType([*outer, *walk], element)],
            properties={"base_addr": i64_attr(base_addr), "tiled_in_shape": i64_array(in_shape),
                        "stride": i64_array(stride), "tiled_out_shape": i64_array(walk)})
        return self.emit(op, [name])[0]

    def random_load(self, addrs: Stream, tile: tuple[int, int], dtype: Attribute,
                    in_shape: Sequence[int] = (1,), base_addr: int = 0,
                    name: str | None = None) -> Stream:
        """`step.random_offchip_load`: one tile per address element."""
        self._stream("Graph.random_load", "addrs", addrs)
        element = ba.tile_type_arg("Graph.random_load", tile, dtype)
        in_shape = ba.ints_arg("Graph.random_load", "in_shape", in_shape, minimum=1)
        base_addr = ba.int_arg("Graph.random_load", "base_addr", base_addr)
        op = so.RandomOffChipLoadOp.create(
            operands=[addrs.value],
            result_types=[StreamType(addrs.dims, element)],
            properties={"base_addr": i64_attr(base_addr), "tiled_in_shape": i64_array(in_shape)})
        return self.emit(op, [name])[0]

    def select_gen(self, choices: int, dims: Sequence[object], values: np.ndarray | None = None,
                   name: str | None = None) -> Stream:
        """`step.select_gen`: a selector stream (multi-hot rows over `choices`).

        Without `values` the selectors come from a trace bound later
        (`step-specialize{routing=...}`)."""
        choices = ba.int_arg("Graph.select_gen", "choices", choices, 1, ba.MAX_COUNT)
        dims = ba.dims_arg("Graph.select_gen", "dims", dims)
        props: dict[str, Attribute] = {"choices": i64_attr(choices)}
        if values is not None:
            props["values"] = i64_array(ba.ints_arg("Graph.select_gen", "values", values))
        op = sg.SelectGenOp.create(
            result_types=[StreamType(dims, SelectorType(choices))],
            properties=props)
        return self.emit(op, [name])[0]

    def feedback(self, dims: Sequence[object], element: Attribute,
                 name: str | None = None) -> Stream:
        """A stream used before its producer exists (a feedback edge, e.g. the
        "request done" signals an eager_merge waits on): a placeholder that
        `Stream.connect(producer)` later replaces. `dims`/`element` must be the
        producer's type."""
        s = self.argument(dims, element, name)
        self._feedback.add(s.value)
        self._retyped = True
        return s

    def metadata_gen(self, values: Sequence[int], name: str | None = None) -> Stream:
        """`step.metadata_gen`: a stream of `[1,1]` integer tiles."""
        values = ba.ints_arg("Graph.metadata_gen", "values", values)
        op = sg.MetadataGenOp.create(result_types=[StreamType([len(values)], ADDRESS)],
                                     properties={"values": i64_array(values)})
        return self.emit(op, [name])[0]
