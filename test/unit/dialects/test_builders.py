"""The Python builders produce verified IR that prints and re-parses identically."""

from __future__ import annotations

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i1, i32

from steplus.dialects import lus
from steplus.dialects.lus.builder import NodeBuilder
from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import Graph
from steplus.dialects.step.types import SelectorType, StreamType, TileType
from steplus.lowering.mlir_bridge import parse_xdsl


def _round_trips(module) -> str:
    text = str(module)
    assert str(parse_xdsl(text)) == text
    return text


def _round_trips_to(module) -> list[lus.NodeOp]:
    """The lus nodes of `module` printed and parsed back (which prints the same)."""
    text = str(module)
    parsed = parse_xdsl(text)
    assert str(parsed) == text
    return [op for op in parsed.walk() if isinstance(op, lus.NodeOp)]


def test_gemm_graph_types_are_inferred():
    g = Graph("gemm")
    x = g.load(tile=(16, 64), dtype=f32, out_shape=[4], base_addr=0)
    w = g.load(tile=(64, 32), dtype=f32, out_shape=[4], base_addr=4096)
    y = x.map("matmul", w)
    # matmul of a 16x64 and a 64x32 tile is 16x32; the walk [4] is unchanged
    assert y.type == StreamType([4], TileType(16, 32, f32))
    s = y.accum("add", rank=1)
    # accumulating the one (rank 1) dim leaves a rank-0 stream of the same tile
    assert s.type == StreamType([], TileType(16, 32, f32))
    s.store(base_addr=8192)
    module = g.module()
    _round_trips(module)
    (apply,) = [op for op in module.walk() if isinstance(op, so.ApplyOp) and op.fn.data == "matmul"]
    assert [a.type for a in apply.args] == [TileType(16, 64, f32), TileType(64, 32, f32)]
    assert apply.result.type == TileType(16, 32, f32)


def test_symbolic_shapes_flow_through_shape_ops():
    g = Graph("tokens")
    t = g.argument(["B"], TileType(1, 64, f32))
    d, p = t.reshape(16)
    B = sympy.Symbol("B", integer=True, nonnegative=True)
    # table 6: reshape splits D into ceiling(D/S), S; the padding stream has the same dims
    assert d.type.dims == [sympy.ceiling(B / 16), 16]
    assert p.type.dims == d.type.dims and p.type.element == i1
    f = d.flatten(0, 1)
    assert f.type.dims == [16 * sympy.ceiling(B / 16)]
    f.consume()
    p.consume()
    _round_trips(g.module())


def test_partition_introduces_fresh_symbols():
    g = Graph("route")
    x = g.argument(["B", 4], TileType(1, 64, f32))
    sel = g.argument(["B"], SelectorType(2))
    a, b = x.partition(sel)
    # table 5: output i gets a fresh outer dim B_i (seed Fig. 3) and the inner dims
    assert [str(d) for d in a.type.dims] == ["B_0", "4"]
    assert [str(d) for d in b.type.dims] == ["B_1", "4"]
    a.consume()
    b.consume()
    _round_trips(g.module())


def test_integrator_node():
    n = NodeBuilder("integr", inputs=[i32], outputs=[i32])
    (i,) = n.inputs
    incr = n.forward(i32)
    s = n.fby(n.const(0, i32), incr)
    n.define(incr, n.op("arith.addi", [s, i], i32))
    n.finish([n.block.ops.last.results[0]])
    # the wiring survives printing and parsing, forward reference included:
    # s = 0 fby (s + i), the yield returns s + i
    (node,) = _round_trips_to(n.module())
    (i,) = node.body.block.args
    (fby,) = [op for op in node.body.block.ops if isinstance(op, lus.FbyOp)]
    (add,) = [op for op in node.body.block.ops if op.name == "arith.addi"]
    yld = node.body.block.last_op
    assert isinstance(fby.init.owner, arith.ConstantOp) and fby.init.owner.value.value.data == 0
    assert fby.next == add.results[0]
    assert list(add.operands) == [fby.results[0], i]
    assert isinstance(yld, lus.YieldOp) and list(yld.outputs) == [add.results[0]]


def test_two_cycle_node_with_when_and_merge():
    n = NodeBuilder("two_cycle", inputs=[f32], outputs=[f32])
    (x,) = n.inputs
    ck = n.kperiodic("(10)")
    y = n.forward(f32)
    on = n.when(x, ck)
    off = n.when(y, ck, negated=True)
    m = n.merge(ck, on, off)
    n.define(y, n.fby(n.const(0.0, f32), m))
    n.finish([n.block.ops.last.results[0]])
    # y = 0 fby merge(ck, x when ck, y when not ck), after printing and parsing
    (node,) = _round_trips_to(n.module())
    (x,) = node.body.block.args
    ops = list(node.body.block.ops)
    (ck,) = [op.results[0] for op in ops if isinstance(op, lus.KPeriodicOp)]
    on, off = [op for op in ops if isinstance(op, lus.WhenOp)]
    (merge,) = [op for op in ops if isinstance(op, lus.MergeOp)]
    (fby,) = [op for op in ops if isinstance(op, lus.FbyOp)]
    assert (on.condition, on.input, on.negated) == (ck, x, None)
    assert (off.condition, off.input, off.negated is not None) == (ck, fby.results[0], True)
    assert (merge.condition, merge.on_true, merge.on_false) == (ck, on.results[0], off.results[0])
    assert fby.next == merge.results[0]


def test_undefined_forward_value_is_an_error():
    import pytest

    n = NodeBuilder("bad", inputs=[i32], outputs=[i32])
    n.forward(i32)
    with pytest.raises(ValueError, match="never defined"):
        n.finish(list(n.inputs))


def test_module_take_holds_the_graph_op_and_closes_the_graph():
    import pytest

    from steplus.dialects.step.builder import FrontendError

    def build() -> tuple[Graph, object]:
        g = Graph("g")
        x = g.argument([4], TileType(2, 2, f32), name="x")
        return g, x

    g, x = build()
    copy = g.module()  # a copy: the graph grows on
    assert next(iter(copy.ops)) is not g.op
    g2, x2 = build()
    x2.store()
    taken = g2.module(take=True)
    assert next(iter(taken.ops)) is g2.op
    x.store()
    assert str(g.module()) == str(taken)
    with pytest.raises(FrontendError, match="taken by module"):
        g2.argument([4], TileType(2, 2, f32))
    with pytest.raises(FrontendError, match="already taken"):
        g2.module()


def test_stream_module_doc_example_builds():
    import re

    from steplus.dialects.step import builder_stream

    src = re.search(r"```python\n(.*?)```", builder_stream.__doc__ or "", re.S)
    assert src is not None
    scope: dict[str, object] = {}
    exec(compile(src.group(1).replace("print(", "_ = ("), "<doc>", "exec"), scope)  # our own docstring
    g = scope["g"]
    assert isinstance(g, Graph)
    text = _round_trips(g.module())
    assert "step.reassemble" in text and "-> !step.stream<[8, ?R_sel], !step.tile<1x64xbf16>>" in text
