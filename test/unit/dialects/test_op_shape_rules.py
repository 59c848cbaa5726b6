"""Each step op owns its shape rule; the verifier, step-infer-shapes and the frontend share it.

The rule is `infer_shapes` on the op class (the `InferShapes` interface);
`rule_for(op)` is `type(op).infer_shapes`. The verifier compares the written
result dims with the rule where both are numbers, so a static contradiction
is rejected when the IR is parsed; a symbolic one is left to
`step-infer-shapes`, which checks it for every value of the symbols.
"""

from __future__ import annotations

import pytest
import sympy
from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.program_dialects import get_all_dialects
from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.inference import infer_graph
from steplus.dialects.step.shape_rules import InferShapes, rule_for
from steplus.utils.diagnostics import OpDiagnosticError

T = "!step.tile<1x64xf32>"
A = "!step.tile<1x1xi64>"


def _parse(text: str):
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return Parser(ctx, text, "t.mlir").parse_module()


def _graph(body: str, args: str) -> str:
    return f"step.graph @g {{\n^bb0({args}):\n{body}\n}}\n"


def test_every_op_with_stream_results_owns_a_rule():
    for cls in so.ALL_OPS:
        has_streams = cls.name not in ("step.apply", "step.yield") and any(
            True for _ in cls.get_irdl_definition().results)
        assert isinstance(cls, type)
        assert issubclass(cls, InferShapes) == has_streams, cls.name
        if has_streams:
            assert cls.infer_shapes is not InferShapes.infer_shapes, cls.name


def test_rule_for_is_the_op_method():
    m = _parse(_graph(f"  %d, %p = step.reshape %x {{split_dim = 0 : i64, chunk_size = 16 : i64}} "
                      f": (!step.stream<[B], {T}>) -> (!step.stream<[_, 16], {T}>, !step.stream<[_, 16], i1>)",
                      f"%x: !step.stream<[B], {T}>"))
    op = next(o for o in m.walk() if isinstance(o, so.ReshapeOp))
    assert rule_for(op) is so.ReshapeOp.infer_shapes
    shapes = op.infer_shapes([v.type for v in op.operands], lambda *a: pytest.fail("no fresh dim"))
    B = sympy.Symbol("B", integer=True, nonnegative=True)
    # table 6: D -> ceiling(D/S), S for both results
    assert shapes[0].dims == shapes[1].dims == [sympy.ceiling(B / 16), 16]


@pytest.mark.parametrize("body,args,message", [
    # streamify: ref dims ++ out_shape; the result's 8 contradicts out_shape's 4
    ("  %s = step.streamify %b, %r {stride = array<i64: 1>, out_shape = array<i64: 4>} : "
     "(!step.stream<[4], !step.buffer<[4], !step.tile<16x16xf32>>>, !step.stream<[4, 3], !step.tile<1x1xi64>>)"
     " -> !step.stream<[4, 3, 8], !step.tile<16x16xf32>>",
     "%b: !step.stream<[4], !step.buffer<[4], !step.tile<16x16xf32>>>, %r: !step.stream<[4, 3], !step.tile<1x1xi64>>",
     "step.streamify: result dimension 2 is 8, expected 4"),
    # random_offchip_store: wdata must have the dims of waddr
    (f"  %ack = step.random_offchip_store %a, %d {{base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>}} "
     f": (!step.stream<[3], {A}>, !step.stream<[4], {T}>) -> !step.stream<[3], i1>",
     f"%a: !step.stream<[3], {A}>, %d: !step.stream<[4], {T}>",
     "step.random_offchip_store: dimension 0 of wdata is 4 but dimension 0 of waddr is 3"),
    # cache_read_addr_gen: seq_len must have the dims of idx
    (f"  %r = step.cache_read_addr_gen %i, %l : (!step.stream<[2], {A}>, !step.stream<[5], {A}>)"
     f" -> !step.stream<[2, ?L], {A}>",
     f"%i: !step.stream<[2], {A}>, %l: !step.stream<[5], {A}>",
     "step.cache_read_addr_gen: dimension 0 of seq_len is 5 but dimension 0 of idx is 2"),
    # zip of two static streams that differ
    (f"  %z = step.zip %a, %b : (!step.stream<[4], {T}>, !step.stream<[5], {T}>) -> "
     f"!step.stream<[4], !step.tuple<{T}, {T}>>",
     f"%a: !step.stream<[4], {T}>, %b: !step.stream<[5], {T}>",
     "step.zip: dimension 0 of rhs is 5 but dimension 0 of lhs is 4"),
])
def test_the_verifier_rejects_a_static_contradiction_of_the_rule(body, args, message):
    with pytest.raises(VerifyException, match=message.replace("[", r"\[")):
        _parse(_graph(body, args)).verify()


def test_a_symbolic_contradiction_verifies_and_step_infer_shapes_rejects_it():
    # B and C may be equal once bound: the verifier lets it through (dims it
    # cannot decide), the inference checks it for every value of the symbols.
    m = _parse(_graph(f"  %z = step.zip %a, %b : (!step.stream<[B], {T}>, !step.stream<[C], {T}>) -> "
                      f"!step.stream<[B], !step.tuple<{T}, {T}>>\n"
                      f"  step.consume %z : !step.stream<[B], !step.tuple<{T}, {T}>>",
                      f"%a: !step.stream<[B], {T}>, %b: !step.stream<[C], {T}>"))
    m.verify()
    graph = next(o for o in m.walk() if isinstance(o, GraphOp))
    with pytest.raises(OpDiagnosticError, match="dimension 0 of rhs is C but dimension 0 of lhs is B"):
        infer_graph(graph)


def test_a_fresh_dim_takes_any_written_name():
    # partition's outer dims are fresh (seed Fig. 3): any name, or a number, is accepted
    text = _graph(f"  %a, %b = step.partition %x, %s : (!step.stream<[4, 2], {T}>, !step.stream<[4], "
                  f"!step.selector<2>>) -> (!step.stream<[3, 2], {T}>, !step.stream<[K, 2], {T}>)",
                  f"%x: !step.stream<[4, 2], {T}>, %s: !step.stream<[4], !step.selector<2>>")
    _parse(text).verify()
    # but its inner dims are the input's
    with pytest.raises(VerifyException, match="result #1 dimension 1 is 3, expected 2"):
        _parse(text.replace(f"!step.stream<[K, 2], {T}>)", f"!step.stream<[K, 3], {T}>)")).verify()
