"""The stream half of the STeP Python frontend (`builder.py` re-exports it): a
`Stream` is one value of a graph under construction and every method appends one
step op (shape, routing, higher-order ops, sinks); `reassemble` and
`eager_merge` join several streams. The `Graph` (sources, `emit`, `module`) is in
`builder.py`.

Example:

```python
from xdsl.dialects.builtin import bf16
from steplus.dialects.step.builder import Graph, reassemble

g = Graph("route")
x = g.load(tile=(1, 64), dtype=bf16, out_shape=[8, 1], name="x").flatten(0, 1)
s1, s2 = g.select_gen(2, [8]).broadcast(2)
a, b = x.partition(s1)
reassemble([a, b], s2).store()
print(g.module())
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import sympy
from xdsl.dialects.builtin import (
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue
from xdsl.rewriter import Rewriter

from steplus.dialects.step import builder_args as ba
from steplus.dialects.step import ops as so
from steplus.dialects.step import ops as sg
from steplus.dialects.step import ops as sr
from steplus.dialects.step.functions import get_function
from steplus.dialects.step.types import (
    RaggedSymbol,
    SelectorType,
    StreamType,
    TileType,
    TupleType,
    as_dim,
)
from steplus.utils.attrs import i64_array, i64_attr

if TYPE_CHECKING:
    from .builder import Graph  # relative: one identity for basedpyright (builder.py)

ADDRESS = TileType(1, 1, i64)
"""A `[1,1]` integer tile: an address or metadata value."""


FrontendError = ba.BuilderError
"""A bad argument value or inconsistent graph (a `ValueError`; a wrong kind is a `TypeError`)."""


def _is_ragged(d: sympy.Expr) -> bool:
    return any(isinstance(x, RaggedSymbol) for x in as_dim(d).free_symbols)


class Stream:
    """A stream value of a graph under construction; methods append ops."""

    def __init__(self, graph: Graph, value: SSAValue):
        self.g = graph
        self.value = value

    def __repr__(self) -> str:
        return f"Stream({self.value.type})"

    @property
    def type(self) -> StreamType:
        assert isinstance(self.value.type, StreamType)
        return self.value.type

    @property
    def dims(self) -> list[sympy.Expr]:
        return list(self.type.dims)

    @property
    def element(self) -> Attribute:
        return self.type.element

    def _unary(self, cls, props: dict | None = None, n_results: int = 1,
               name: str | None = None, operands: Sequence[Stream] = ()) -> list[Stream]:
        placeholder = StreamType([self.dims[0]] if self.dims else [], self.element)
        op = cls.create(operands=[self.value, *(o.value for o in operands)],
                        result_types=[placeholder] * n_results, properties=props or {})
        return self.g.emit(op, [name])

    def collective(self, kind: str, ranks: int, links: int, link_gbps: int, latency_ns: int,
                   name: str | None = None) -> Stream:
        """`step.all_reduce` (`kind = "all_reduce"`: every tile summed over `ranks`
        sockets) or `step.all_gather` (columns gathered) on the P2P network given."""
        cls = {"all_reduce": so.AllReduceOp, "all_gather": so.AllGatherOp}.get(kind)
        if cls is None:
            raise FrontendError(f"collective: unknown kind '{kind}' (all_reduce, all_gather)")
        props = {k: i64_attr(ba.int_arg(cls.name, k, v))
                 for k, v in (("ranks", ranks), ("links", links), ("link_gbps", link_gbps),
                              ("latency_ns", latency_ns))}
        return self._unary(cls, props, name=name)[0]

    def with_dims(self, dims: Sequence[object]) -> Stream:
        """Name the fresh dims of a just-created result (a partition's or
        parallelize's per-output count, a reassemble's group size, a cache
        length): `[n, "?L0"]` instead of `[n, ?L_3]` (a ragged dim stays
        ragged, `?name`, or is one number for every group). Other dims must stay as
        inferred (`Graph.module` re-checks). Call before using the stream."""
        if self.value.uses:
            raise FrontendError("with_dims: the stream is already used")
        old = self.dims
        new = ba.dims_arg("Stream.with_dims", "dims", dims, nonempty=False)
        if len(new) != len(old):
            raise FrontendError(f"with_dims: {len(new)} dims for a stream of {len(old)}")
        lost = [sympy.sstr(d) for d, n in zip(old, new)
                if isinstance(d, RaggedSymbol) and not (_is_ragged(n) or n.is_Integer)]
        if lost:
            raise FrontendError(f"with_dims: {', '.join(lost)} vary per group: write '?name'")
        hint = self.value.name_hint
        self.g._retyped = True  # Graph.module re-checks the whole graph
        self.value = Rewriter.replace_value_with_new_type(self.value, StreamType(new, self.element))
        self.value.name_hint = hint
        for d in new:
            self.g._names |= {x.name for x in d.free_symbols}
        return self

    def connect(self, producer: Stream) -> None:
        """Replace this `Graph.feedback` placeholder by `producer` (same type)."""
        g = self.g
        if self.value not in g._feedback:
            raise FrontendError("connect: not a feedback stream of this graph")
        g._stream("Stream.connect", "producer", producer)
        if producer.type != self.type:
            raise FrontendError(f"connect: feedback is {self.type}, producer {producer.type}")
        g._feedback.discard(self.value)
        arg = self.value
        arg.replace_all_uses_with(producer.value)
        if arg in g._consumed:
            g._consumed.add(producer.value)
        assert isinstance(arg, BlockArgument)
        g.block.erase_arg(arg)
        self.value = producer.value

    # -- sinks -------------------------------------------------------------------
    def store(self, base_addr: int = 0) -> None:
        """`step.linear_offchip_store` of every element."""
        _use("Stream.store", self=self)
        addr = i64_attr(ba.int_arg("Stream.store", "base_addr", base_addr))
        self.g.emit(so.LinearOffChipStoreOp.create(operands=[self.value],
                                                   properties={"base_addr": addr}))

    def random_store(self, addrs: Stream, in_shape: Sequence[int] = (1,), base_addr: int = 0,
                     buffer_depth: int | None = None, name: str | None = None) -> Stream:
        """`step.random_offchip_store` of each element at the matching `addrs` address."""
        where = "Stream.random_store"
        _use(where, self=self, addrs=addrs)
        props = {"base_addr": i64_attr(ba.int_arg(where, "base_addr", base_addr)),
                 "tiled_in_shape": i64_array(ba.ints_arg(where, "in_shape", in_shape, minimum=1))}
        if buffer_depth is not None:
            props["buffer_depth"] = i64_attr(ba.int_arg(where, "buffer_depth", buffer_depth, 1))
        op = so.RandomOffChipStoreOp.create(
            operands=[addrs.value, self.value],
            result_types=[StreamType(addrs.dims, i1)], properties=props)
        return self.g.emit(op, [name])[0]

    def consume(self) -> None:
        """`step.consume`: drop the stream (a sink)."""
        _use("Stream.consume", self=self)
        self.g.emit(sr.ConsumeOp.create(operands=[self.value]))

    # -- shape ---------------------------------------------------------------------
    def flatten(self, lo: int, hi: int, name: str | None = None) -> Stream:
        """`step.flatten` of dims `lo..hi` (counted from the innermost, 0)."""
        _use("Stream.flatten", self=self)
        hi = ba.int_arg("Stream.flatten", "hi", hi, 0, len(self.dims) - 1)
        lo = ba.int_arg("Stream.flatten", "lo", lo, 0, hi)
        return self._unary(sr.FlattenOp, {"min": i64_attr(lo), "max": i64_attr(hi)}, name=name)[0]

    def reshape(self, chunk: int, split_dim: int = 0,
                name: str | None = None) -> tuple[Stream, Stream]:
        """`step.reshape`: split dim `split_dim` into chunks (data, padding flags)."""
        _use("Stream.reshape", self=self)
        chunk = ba.int_arg("Stream.reshape", "chunk", chunk, minimum=1)
        split_dim = ba.int_arg("Stream.reshape", "split_dim", split_dim, 0, len(self.dims) - 1)
        placeholder = StreamType([self.dims[0]], self.element)
        op = sr.ReshapeOp.create(
            operands=[self.value],
            result_types=[placeholder, StreamType([self.dims[0]], i1)],
            properties={"split_dim": i64_attr(split_dim), "chunk_size": i64_attr(chunk)})
        data, pad = self.g.emit(op, [name])
        return data, pad

    def promote(self, name: str | None = None) -> Stream:
        """`step.promote`: a new outer dim, 1 if the stream is non-empty else 0."""
        _use("Stream.promote", self=self)
        return self._unary(sr.PromoteOp, name=name)[0]

    def repeat(self, count: int, name: str | None = None) -> Stream:
        """`step.repeat`: every element `count` times (a new inner dim)."""
        _use("Stream.repeat", self=self)
        count = ba.int_arg("Stream.repeat", "count", count, minimum=1)
        return self._unary(sr.RepeatOp, {"count": i64_attr(count)}, name=name)[0]

    def regroup(self, dim: int, axis: int = 0, name: str | None = None) -> Stream:
        """`step.regroup`: exchange stream dim `dim` (from the innermost) with the
        tile's rows (`axis=0`) or columns (`axis=1`), on chip."""
        _use("Stream.regroup", self=self)
        dim = ba.int_arg("Stream.regroup", "dim", dim, 0, len(self.dims) - 1)
        axis = ba.int_arg("Stream.regroup", "axis", axis, 0, 1)
        return self._unary(sr.RegroupOp, {"dim": i64_attr(dim), "axis": i64_attr(axis)},
                           name=name)[0]

    def expand(self, ref: Stream, rank: int, name: str | None = None) -> Stream:
        """`step.expand` to the shape of `ref` over its `rank` innermost dims."""
        _use("Stream.expand", self=self, ref=ref)
        rank = ba.int_arg("Stream.expand", "rank", rank, 0, len(ref.dims))
        return self._unary(sr.ExpandOp, {"rank": i64_attr(rank)}, name=name, operands=[ref])[0]

    def broadcast(self, n: int, names: Sequence[str | None] = ()) -> list[Stream]:
        """`step.broadcast` to `n` consumers."""
        _use("Stream.broadcast", self=self)
        n = ba.int_arg("Stream.broadcast", "n", n, 1, ba.MAX_COUNT)
        names = ba.names_arg("Stream.broadcast", "names", names, n)
        op = sr.BroadcastOp.create(operands=[self.value], result_types=[self.type] * n)
        return self.g.emit(op, names)

    def zip(self, other: Stream, name: str | None = None) -> Stream:
        """`step.zip` with `other`: a stream of tuples."""
        _use("Stream.zip", self=self, other=other)
        return self._unary(sr.ZipOp, name=name, operands=[other])[0]

    # -- routing -------------------------------------------------------------------
    def partition(self, sel: Stream, names: Sequence[str | None] = ()) -> list[Stream]:
        """`step.partition` by a selector stream: one output per choice."""
        _use("Stream.partition", self=self, sel=sel)
        if not isinstance(sel.element, SelectorType):
            raise FrontendError(f"partition: sel must be a selector stream, got {sel.type}")
        n = sel.element.choices.data
        names = ba.names_arg("Stream.partition", "names", names, n)
        op = sr.PartitionOp.create(operands=[self.value, sel.value],
                                   result_types=[StreamType([self.dims[0]], self.element)] * n)
        return self.g.emit(op, names)

    def parallelize(self, n: int, names: Sequence[str | None] = (), rank: int = 0,
                    switch_cycles: Sequence[int] | None = None) -> list[Stream]:
        """`step.parallelize` round-robin over `n` outputs: output i gets one
        group of rank `rank` in turn (`switch_cycles[i]`: the cost of a switch)."""
        _use("Stream.parallelize", self=self)
        n = ba.int_arg("Stream.parallelize", "n", n, 1, ba.MAX_COUNT)
        names = ba.names_arg("Stream.parallelize", "names", names, n)
        rank = ba.int_arg("Stream.parallelize", "rank", rank, 0, len(self.dims) - 1)
        props: dict[str, Attribute] = {"rank": i64_attr(rank)}
        if switch_cycles is not None:
            props["switch_cycles"] = i64_array(
                ba.ints_arg("Stream.parallelize", "switch_cycles", switch_cycles, length=n))
        op = sr.ParallelizeOp.create(operands=[self.value], properties=props,
                                     result_types=[StreamType([self.dims[0]], self.element)] * n)
        return self.g.emit(op, names)

    def cache_read_addr_gen(self, seq_len: Stream, name: str | None = None) -> Stream:
        """`step.cache_read_addr_gen` on a stream of request indices: per
        (index, length) pair, the addresses of the request's `length` KV-cache
        tiles (a new ragged inner dim)."""
        _use("Stream.cache_read_addr_gen", self=self, seq_len=seq_len)
        op = sg.CacheReadAddrGenOp.create(operands=[self.value, seq_len.value],
                                          result_types=[StreamType(self.dims, ADDRESS)])
        return self.g.emit(op, [name])[0]

    def filter_last_tile(self, name: str | None = None) -> Stream:
        """`step.filter_last_tile` on a stream of lengths n: per element, n - 1
        selectors for output 1 ("not the last tile"), then one for output 0."""
        _use("Stream.filter_last_tile", self=self)
        op = sg.FilterLastTileOp.create(operands=[self.value],
                                        result_types=[StreamType(self.dims, SelectorType(2))])
        return self.g.emit(op, [name])[0]

    def expert_addr_gen(self, tiles_per_expert: int, name: str | None = None) -> Stream:
        """`step.expert_addr_gen`: per selector, the addresses of the chosen experts' tiles."""
        _use("Stream.expert_addr_gen", self=self)
        tiles_per_expert = ba.int_arg("Stream.expert_addr_gen", "tiles_per_expert",
                                      tiles_per_expert, minimum=1)
        op = sg.ExpertAddrGenOp.create(
            operands=[self.value], result_types=[StreamType(self.dims, ADDRESS)],
            properties={"tiles_per_expert": i64_attr(tiles_per_expert)})
        return self.g.emit(op, [name])[0]

    # -- higher-order ----------------------------------------------------------------
    def _region(self, fn: str, arg_types: list[Attribute], dtype: Attribute | None,
                acc: TileType | None = None, combine: str | None = None) -> tuple[Region, TileType]:
        f = get_function(fn)
        if f is None:
            raise FrontendError(f"unknown step function '{fn}'")
        block = Block(arg_types=[*arg_types, *([acc] if acc is not None else [])])
        args = list(block.args)
        if combine is not None:  # update(acc, x...) = combine(acc, fn(x...))
            assert acc is not None
            inner, _ = self._region(fn, arg_types, acc.scalar)
            first = inner.block.first_op
            assert isinstance(first, so.ApplyOp)
            m = so.ApplyOp.create(operands=args[:-1], result_types=[first.result.type],
                                  properties={"fn": StringAttr(fn)})
            n = so.ApplyOp.create(operands=[args[-1], m.results[0]], result_types=[acc],
                                  properties={"fn": StringAttr(combine)})
            block.add_ops([m, n, so.YieldOp.create(operands=[n.results[0]])])
            return Region(block), acc
        if acc is not None:  # update(acc, x...)
            args = [args[-1], *args[:-1]]
        tiles = [a.type for a in args if isinstance(a.type, TileType)]
        shapes = [(t.rows.data, t.cols.data) for t in tiles]
        if acc is not None and fn == "retile_row":
            rows, cols = acc.rows.data, acc.cols.data  # rows stack up to the capacity
        else:
            rows, cols = f.out_shape(shapes)  # -1 (dynamic) propagates through the rules
        scalar = dtype if dtype is not None else (acc.scalar if acc is not None else tiles[0].scalar)
        res = TileType(rows, cols, scalar)
        apply = so.ApplyOp.create(operands=args, result_types=[res],
                                  properties={"fn": StringAttr(fn)})
        block.add_ops([apply, so.YieldOp.create(operands=[apply.results[0]])])
        return Region(block), res

    def map(self, fn: str, *others: Stream, dtype: Attribute | None = None,
            name: str | None = None) -> Stream:
        """`step.map` of a library function over this stream (zipped with `others`)."""
        _use("Stream.map", self=self, **{f"others[{i}]": o for i, o in enumerate(others)})
        elems = [e for s in (self, *others) for e in _elements(s.element)]
        ba.function_arg("Stream.map", "fn", fn, operands=elems)
        dtype = ba.dtype_arg("Stream.map", "dtype", dtype) if dtype is not None else None
        ba.name_arg("Stream.map", "name", name)  # before the zips below are added
        s = self
        for o in others:
            s = s.zip(o)
        region, res = self._region(fn, list(_elements(s.element)), dtype)
        op = so.MapOp.create(operands=[s.value], result_types=[StreamType(s.dims, res)],
                             regions=[region])
        return self.g.emit(op, [name])[0]

    def accum(self, fn: str, rank: int, *others: Stream, acc: TileType | None = None,
              combine: str | None = None, init: str = "zero",
              name: str | None = None) -> Stream:
        """`step.accum`: reduce the `rank` innermost dims with `fn(acc, x...)`, or
        with `combine(acc, fn(x...))` (e.g. `fn="matmul", combine="add"`).

        `acc` is the accumulator tile (default: the function's output on the
        element, same scalar); `init` the library function that makes it."""
        where = "Stream.accum"
        _use(where, self=self, **{f"others[{i}]": o for i, o in enumerate(others)})
        elems = [e for s in (self, *others) for e in _elements(s.element)]
        rank = ba.int_arg(where, "rank", rank, 1, len(self.dims))
        acc = ba.optional_arg(where, "acc", acc, TileType, "a TileType")
        if combine is not None:
            ba.function_arg(where, "combine", combine, operands=2)
        ba.function_arg(where, "fn", fn, operands=elems, extra=int(combine is None))
        ba.function_arg(where, "init", init, operands=0)
        ba.name_arg(where, "name", name)  # before the zips below are added
        name = ba.name_arg(where, "name", name)
        s = self
        for o in others:
            s = s.zip(o)
        if acc is None:
            f = get_function(fn)
            if f is not None and f.arity == len(elems):  # e.g. matmul(x, w) + acc
                acc = self._region(fn, elems, None)[1]
            elif isinstance(elems[0], TileType):  # e.g. add(acc, x): like the element
                acc = elems[0]
            else:
                raise FrontendError(f"accum: the accumulator of '{fn}' cannot be a "
                                    f"{elems[0]}; give acc=")
        update, res = self._region(fn, elems, acc.scalar, acc=acc, combine=combine)
        if res != acc:
            raise FrontendError(f"accum: '{fn}' gives a {res} tile, accumulator is {acc}")
        zero = so.ApplyOp.create(result_types=[acc], properties={"fn": StringAttr(init)})
        init_r = Region(Block([zero, so.YieldOp.create(operands=[zero.results[0]])]))
        op = so.AccumOp.create(operands=[s.value], result_types=[StreamType([s.dims[0]], acc)],
                               regions=[update, init_r], properties={"rank": i64_attr(rank)})
        return self.g.emit(op, [name])[0]

    def flat_map(self, fn: str, rank: int = 0, name: str | None = None) -> Stream:
        """`step.flat_map`: each element becomes a stream of rank `rank + 1`."""
        _use("Stream.flat_map", self=self)
        ba.function_arg("Stream.flat_map", "fn", fn, operands=_elements(self.element))
        rank = ba.int_arg("Stream.flat_map", "rank", rank, 0, len(self.dims) - 1)
        region, res = self._region(fn, list(_elements(self.element)), None)
        op = so.FlatMapOp.create(operands=[self.value],
                                 result_types=[StreamType([self.dims[0]], res)],
                                 regions=[region], properties={"rank": i64_attr(rank)})
        return self.g.emit(op, [name])[0]


def _elements(element: Attribute) -> list[Attribute]:
    if isinstance(element, TupleType):
        return list(element.elements.data)
    return [element]


def _use(where: str, **streams: object) -> Graph:
    """Check stream arguments (one graph, unconsumed, none twice); return their graph."""
    first = next(iter(streams.values()))
    if not isinstance(first, Stream):
        raise TypeError(f"{where}: {next(iter(streams))} must be a Stream, got {ba.show(first)}")
    for arg, s in streams.items():
        first.g._stream(where, arg, s)
    if len({id(s) for s in streams.values()}) < len(streams):
        raise FrontendError(f"{where}: a stream is passed twice; broadcast it first")
    return first.g


def _inputs(where: str, inputs: object) -> dict[str, object]:
    """A non-empty list of streams as named arguments `inputs[i]` (for `_use`)."""
    items = ba.sequence_arg(where, "inputs", inputs, max_length=ba.MAX_COUNT)
    return {f"inputs[{i}]": s for i, s in enumerate(items)}


def reassemble(inputs: Sequence[Stream], sel: Stream, name: str | None = None) -> Stream:
    """`step.reassemble`: gather the selected inputs' groups per selector element."""
    g = _use("reassemble", **_inputs("reassemble", inputs), sel=sel)
    name = ba.name_arg("reassemble", "name", name)
    op = sr.ReassembleOp.create(
        operands=[*(s.value for s in inputs), sel.value],
        result_types=[StreamType([sel.dims[0]], inputs[0].element)])
    return g.emit(op, [name])[0]


def eager_merge(inputs: Sequence[Stream], names: Sequence[str | None] = ()) -> tuple[Stream, Stream]:
    """`step.eager_merge`: (data, selector) in arrival order."""
    g = _use("eager_merge", **_inputs("eager_merge", inputs))
    names = ba.names_arg("eager_merge", "names", names, 2)
    n = len(inputs)
    op = sr.EagerMergeOp.create(
        operands=[s.value for s in inputs],
        result_types=[StreamType([inputs[0].dims[0]], inputs[0].element),
                      StreamType([inputs[0].dims[0]], SelectorType(n))])
    data, sel = g.emit(op, names)
    return data, sel
