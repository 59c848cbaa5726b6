"""A small Python builder for step graphs: ops as calls returning streams.

Result types are computed on construction from the operand types (the local
shape rules of the seed's tables), so a frontend writes dataflow, not types.

Example:

```python
from xdsl.dialects.builtin import f32
from steplus.dialects.step_builder import GraphBuilder

g = GraphBuilder("gemm")
x = g.load(tile=(16, 64), dtype=f32, shape=[4], base_addr=0)
w = g.load(tile=(64, 32), dtype=f32, shape=[4], base_addr=4096)
y = g.map([x, w], "matmul")              # stream of 16x32 tiles
s = g.accum(y, "add", rank=1)            # sum over the 4 tiles
g.store(s, base_addr=8192)
print(g.module())                        # a builtin.module holding step.graph @gemm
```
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from steplus.dialects import step_ops as so
from steplus.dialects import step_routing as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step_functions import get_function
from steplus.dialects.step_types import StreamType, TileType, TupleType


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _arr(vs: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vs))


class GraphBuilder:
    """Builds one `step.graph`; every method appends an op and returns its result(s)."""

    def __init__(self, name: str):
        self.block = Block()
        self.graph = GraphOp(name, Region(self.block))

    # -- plumbing ---------------------------------------------------------
    def _add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    @staticmethod
    def _type(v: SSAValue) -> StreamType:
        assert isinstance(v.type, StreamType), f"not a stream: {v.type}"
        return v.type

    def module(self) -> ModuleOp:
        """The graph wrapped in a module, verified."""
        m = ModuleOp([self.graph])
        m.verify()
        return m

    # -- sources and sinks --------------------------------------------------
    def argument(self, dims: Sequence[object], element: Attribute) -> SSAValue:
        """A graph input stream."""
        return self.block.insert_arg(StreamType(dims, element), len(self.block.args))

    def load(self, tile: tuple[int, int], dtype: Attribute, shape: Sequence[int],
             base_addr: int = 0, ref: SSAValue | None = None) -> SSAValue:
        """`step.linear_offchip_load` of tiles walking `shape` (after `ref`'s dims)."""
        outer = self._type(ref).dims if ref is not None else []
        out = StreamType([*outer, *shape], TileType(tile[0], tile[1], dtype))
        op = so.LinearOffChipLoadOp.create(
            operands=[ref] if ref is not None else [],
            result_types=[out],
            properties={
                "base_addr": _i64(base_addr),
                "tiled_in_shape": _arr(shape),
                "stride": _arr([1] * len(shape)),
                "tiled_out_shape": _arr(shape),
            },
        )
        return self._add(op).results[0]

    def store(self, s: SSAValue, base_addr: int = 0) -> None:
        self._add(so.LinearOffChipStoreOp.create(
            operands=[s], properties={"base_addr": _i64(base_addr)}))

    def consume(self, s: SSAValue) -> None:
        self._add(sr.ConsumeOp.create(operands=[s]))

    # -- higher-order -------------------------------------------------------
    def _fn_region(self, arg_types: list[Attribute], fn: str, extra: list[Attribute] = ()) -> tuple[Region, TileType]:
        block = Block(arg_types=[*arg_types, *extra])
        f = get_function(fn)
        if f is None:
            raise ValueError(f"unknown step function '{fn}'")
        shapes = [(t.rows.data, t.cols.data) for t in block.arg_types]
        args = list(block.args)
        if extra:  # accumulator first for reductions: update(acc, x)
            args = [args[-1], *args[:-1]]
            shapes = [shapes[-1], *shapes[:-1]]
        r, c = f.out_shape(shapes)
        res_t = TileType(r, c, arg_types[0].scalar)
        apply = so.ApplyOp.create(operands=args, result_types=[res_t],
                                  properties={"fn": _str(fn)})
        block.add_ops([apply, so.YieldOp.create(operands=[apply.results[0]])])
        return Region(block), res_t

    def map(self, inputs: SSAValue | Sequence[SSAValue], fn: str) -> SSAValue:
        """`step.map` of a library function over one stream (or a zip of several)."""
        if not isinstance(inputs, SSAValue):
            s = inputs[0]
            for other in inputs[1:]:
                s = self.zip(s, other)
        else:
            s = inputs
        t = self._type(s)
        elems = list(t.element.elements.data) if isinstance(t.element, TupleType) else [t.element]
        region, res_t = self._fn_region(elems, fn)
        op = so.MapOp.create(operands=[s], result_types=[StreamType(t.dims, res_t)],
                             regions=[region])
        return self._add(op).results[0]

    def accum(self, s: SSAValue, fn: str, rank: int) -> SSAValue:
        """`step.accum` reducing the `rank` innermost dims with `fn(acc, x)`, init zero."""
        t = self._type(s)
        update, res_t = self._fn_region([t.element], fn, extra=[t.element])
        zero = so.ApplyOp.create(result_types=[res_t], properties={"fn": _str("zero")})
        init = Region(Block([zero, so.YieldOp.create(operands=[zero.results[0]])]))
        op = so.AccumOp.create(
            operands=[s], result_types=[StreamType(t.dims[: t.rank - rank], res_t)],
            regions=[update, init], properties={"rank": _i64(rank)})
        return self._add(op).results[0]

    # -- shape and routing --------------------------------------------------
    def zip(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ta, tb = self._type(a), self._type(b)
        out = StreamType(ta.dims, TupleType([ta.element, tb.element]))
        return self._add(sr.ZipOp.create(operands=[a, b], result_types=[out])).results[0]

    def flatten(self, s: SSAValue, lo: int, hi: int) -> SSAValue:
        t = self._type(s)
        d, n = t.dims, t.rank
        merged = sympy.Mul(*d[n - 1 - hi: n - lo])
        out = StreamType([*d[: n - 1 - hi], merged, *d[n - lo:]], t.element)
        return self._add(sr.FlattenOp.create(
            operands=[s], result_types=[out],
            properties={"min": _i64(lo), "max": _i64(hi)})).results[0]

    def reshape(self, s: SSAValue, split_dim: int, chunk: int) -> tuple[SSAValue, SSAValue]:
        from xdsl.dialects.builtin import i1

        t = self._type(s)
        n = t.rank
        d = t.dims[n - 1 - split_dim]
        dims = [*t.dims[: n - 1 - split_dim], sympy.ceiling(d / chunk), chunk, *t.dims[n - split_dim:]]
        op = self._add(sr.ReshapeOp.create(
            operands=[s], result_types=[StreamType(dims, t.element), StreamType(dims, i1)],
            properties={"split_dim": _i64(split_dim), "chunk_size": _i64(chunk)}))
        return op.results[0], op.results[1]

    def broadcast(self, s: SSAValue, n: int) -> list[SSAValue]:
        op = sr.BroadcastOp.create(operands=[s], result_types=[s.type] * n)
        return list(self._add(op).results)

    def partition(self, s: SSAValue, sel: SSAValue) -> list[SSAValue]:
        t, st = self._type(s), self._type(sel)
        n = st.element.choices.data
        inner = t.dims[st.rank:]
        outs = [StreamType([sympy.Symbol(f"{_name(t.dims[0])}_{i}"), *inner], t.element)
                for i in range(n)]
        return list(self._add(sr.PartitionOp.create(operands=[s, sel], result_types=outs)).results)


def _name(d: sympy.Expr) -> str:
    return str(d) if isinstance(d, sympy.Symbol) else "D"


def _str(s: str):
    from xdsl.dialects.builtin import StringAttr

    return StringAttr(s)
