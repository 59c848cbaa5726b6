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

from steplus.dialects.step import builder_args as ba
from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step.functions import get_function
from steplus.dialects.step.types import SelectorType, StreamType, TileType, TupleType


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _arr(vs: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vs))


class GraphBuilder:
    """Builds one `step.graph`; every method appends an op and returns its result(s).

    Arguments are checked first (`builder_args`): a wrong kind of value raises
    `TypeError`, a bad value `ValueError`, naming the method and the argument;
    a stream must come from this builder and be consumed once."""

    def __init__(self, name: str):
        self.block = Block()
        self.graph = GraphOp(ba.symbol_arg("GraphBuilder", "name", name), Region(self.block))
        self._consumed: set[SSAValue] = set()

    # -- plumbing ---------------------------------------------------------
    def _add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        self._consumed.update(op.operands)
        return op

    def _use(self, where: str, **streams: object) -> list[StreamType]:
        """Check stream arguments (this graph's, unconsumed, none twice); their types."""
        for arg, v in streams.items():
            ba.stream_value_arg(where, arg, v, self.block, self._consumed)
        if len({id(v) for v in streams.values()}) < len(streams):
            raise ba.BuilderError(f"{where}: a stream is passed twice; broadcast it first")
        return [v.type for v in streams.values()]

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
        dims = ba.dims_arg("GraphBuilder.argument", "dims", dims)
        element = ba.element_arg("GraphBuilder.argument", "element", element)
        return self.block.insert_arg(StreamType(dims, element), len(self.block.args))

    def load(self, tile: tuple[int, int], dtype: Attribute, shape: Sequence[int],
             base_addr: int = 0, ref: SSAValue | None = None) -> SSAValue:
        """`step.linear_offchip_load` of tiles walking `shape` (after `ref`'s dims)."""
        where = "GraphBuilder.load"
        element = ba.tile_type_arg(where, tile, dtype)
        shape = ba.ints_arg(where, "shape", shape, minimum=1)
        base_addr = ba.int_arg(where, "base_addr", base_addr)
        outer = self._use(where, ref=ref)[0].dims if ref is not None else []
        out = StreamType([*outer, *shape], element)
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
        """`step.linear_offchip_store` of every element of `s`."""
        self._use("GraphBuilder.store", s=s)
        base_addr = ba.int_arg("GraphBuilder.store", "base_addr", base_addr)
        self._add(so.LinearOffChipStoreOp.create(
            operands=[s], properties={"base_addr": _i64(base_addr)}))

    def consume(self, s: SSAValue) -> None:
        """`step.consume` of `s` (a sink)."""
        self._use("GraphBuilder.consume", s=s)
        self._add(sr.ConsumeOp.create(operands=[s]))

    # -- higher-order -------------------------------------------------------
    def _fn_region(self, arg_types: list[Attribute], fn: str, extra: list[Attribute] = ()) -> tuple[Region, TileType]:
        block = Block(arg_types=[*arg_types, *extra])
        f = get_function(fn)
        assert f is not None  # checked by the caller (builder_args.function_arg)
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
        where = "GraphBuilder.map"
        if isinstance(inputs, SSAValue):
            types = self._use(where, inputs=inputs)
        else:
            items = ba.sequence_arg(where, "inputs", inputs, max_length=ba.MAX_COUNT)
            types = self._use(where, **{f"inputs[{i}]": v for i, v in enumerate(items)})
        elems = [e for t in types for e in
                 (t.element.elements.data if isinstance(t.element, TupleType) else [t.element])]
        ba.function_arg(where, "fn", fn, operands=elems)
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
        (t,) = self._use("GraphBuilder.accum", s=s)
        ba.function_arg("GraphBuilder.accum", "fn", fn, operands=[t.element], extra=1)
        rank = ba.int_arg("GraphBuilder.accum", "rank", rank, 1, t.rank)
        update, res_t = self._fn_region([t.element], fn, extra=[t.element])
        zero = so.ApplyOp.create(result_types=[res_t], properties={"fn": _str("zero")})
        init = Region(Block([zero, so.YieldOp.create(operands=[zero.results[0]])]))
        op = so.AccumOp.create(
            operands=[s], result_types=[StreamType(t.dims[: t.rank - rank], res_t)],
            regions=[update, init], properties={"rank": _i64(rank)})
        return self._add(op).results[0]

    # -- shape and routing --------------------------------------------------
    def zip(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`step.zip` of `a` and `b`: a stream of tuples."""
        ta, tb = self._use("GraphBuilder.zip", a=a, b=b)
        out = StreamType(ta.dims, TupleType([ta.element, tb.element]))
        return self._add(sr.ZipOp.create(operands=[a, b], result_types=[out])).results[0]

    def flatten(self, s: SSAValue, lo: int, hi: int) -> SSAValue:
        """`step.flatten` of dims `lo..hi` of `s` (counted from the innermost, 0)."""
        (t,) = self._use("GraphBuilder.flatten", s=s)
        hi = ba.int_arg("GraphBuilder.flatten", "hi", hi, 0, t.rank - 1)
        lo = ba.int_arg("GraphBuilder.flatten", "lo", lo, 0, hi)
        d, n = t.dims, t.rank
        merged = sympy.Mul(*d[n - 1 - hi: n - lo])
        out = StreamType([*d[: n - 1 - hi], merged, *d[n - lo:]], t.element)
        return self._add(sr.FlattenOp.create(
            operands=[s], result_types=[out],
            properties={"min": _i64(lo), "max": _i64(hi)})).results[0]

    def reshape(self, s: SSAValue, split_dim: int, chunk: int) -> tuple[SSAValue, SSAValue]:
        """`step.reshape`: split dim `split_dim` of `s` into chunks of `chunk`."""
        from xdsl.dialects.builtin import i1

        (t,) = self._use("GraphBuilder.reshape", s=s)
        split_dim = ba.int_arg("GraphBuilder.reshape", "split_dim", split_dim, 0, t.rank - 1)
        chunk = ba.int_arg("GraphBuilder.reshape", "chunk", chunk, minimum=1)
        n = t.rank
        d = t.dims[n - 1 - split_dim]
        dims = [*t.dims[: n - 1 - split_dim], sympy.ceiling(d / chunk), chunk, *t.dims[n - split_dim:]]
        op = self._add(sr.ReshapeOp.create(
            operands=[s], result_types=[StreamType(dims, t.element), StreamType(dims, i1)],
            properties={"split_dim": _i64(split_dim), "chunk_size": _i64(chunk)}))
        return op.results[0], op.results[1]

    def broadcast(self, s: SSAValue, n: int) -> list[SSAValue]:
        """`step.broadcast` of `s` to `n` consumers."""
        self._use("GraphBuilder.broadcast", s=s)
        n = ba.int_arg("GraphBuilder.broadcast", "n", n, 1, ba.MAX_COUNT)
        op = sr.BroadcastOp.create(operands=[s], result_types=[s.type] * n)
        return list(self._add(op).results)

    def partition(self, s: SSAValue, sel: SSAValue) -> list[SSAValue]:
        """`step.partition` of `s` by the selector stream `sel`: one output per choice."""
        t, st = self._use("GraphBuilder.partition", s=s, sel=sel)
        if not isinstance(st.element, SelectorType):
            raise ba.BuilderError(f"GraphBuilder.partition: sel must be a selector stream, "
                                  f"got {st}")
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
