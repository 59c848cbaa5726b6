"""Misuse of the lus NodeBuilder raises TypeError/ValueError naming the
argument and what was expected (never StopIteration, KeyError, IndexError or a
list.remove error), and correct use still builds a verified module."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import f32, i1, i8, i32

from steplus.dialects import lus
from steplus.dialects.lus.builder import NodeBuilder


def _integr() -> NodeBuilder:
    n = NodeBuilder("integr", inputs=[i32], outputs=[i32])
    (i,) = n.inputs
    incr = n.forward(i32)
    s = n.fby(n.const(0, i32), incr)
    out = n.op("arith.addi", [s, i], i32)
    n.define(incr, out)
    n.finish([out])
    return n


def test_correct_use_builds_a_verified_module():
    text = str(_integr().module())
    assert "lus.fby" in text and "lus.yield" in text


@pytest.mark.parametrize("kwargs, match", [
    ({"inputs": ["i32"], "outputs": [i32]}, r"inputs\[0\] must be an xDSL type, got 'i32' \(str\)"),
    ({"inputs": "i32", "outputs": [i32]}, r"inputs must be a list of xDSL types"),
    ({"inputs": [i32], "outputs": [3]}, r"outputs\[0\] must be an xDSL type, got 3 \(int\)"),
    ({"inputs": [i32], "outputs": [i32], "state": ["f32"]}, r"state\[0\] must be an xDSL type"),
])
def test_string_dtypes_and_non_types_are_type_errors(kwargs, match):
    with pytest.raises(TypeError, match=match):
        NodeBuilder("n", **kwargs)


def test_unknown_op_names_are_value_errors():
    n = NodeBuilder("n", inputs=[i32], outputs=[i32])
    (x,) = n.inputs
    with pytest.raises(ValueError, match=r"unknown op 'nodialect.addi'"):
        n.op("nodialect.addi", [x, x], i32)  # was KeyError
    with pytest.raises(ValueError, match=r"unknown op 'arith.nosuchop'"):
        n.op("arith.nosuchop", [x, x], i32)  # was StopIteration
    with pytest.raises(ValueError, match=r"name must be an op name such as 'arith.addi'"):
        n.op("addi", [x, x], i32)
    with pytest.raises(TypeError, match=r"result must be an xDSL type, got 'i32'"):
        n.op("arith.addi", [x, x], "i32")
    with pytest.raises(TypeError, match=r"operands\[1\] must be a value of this node"):
        n.op("arith.addi", [x, 1], i32)


def test_define_checks_its_placeholder_and_value():
    n = NodeBuilder("n", inputs=[i32], outputs=[i32])
    (x,) = n.inputs
    fwd = n.forward(i32)
    with pytest.raises(ValueError, match=r"placeholder must be an undefined value made by forward"):
        n.define(x, fwd)  # was list.remove(x): x not in list
    with pytest.raises(TypeError, match=r"value has type f32, expected i32"):
        n.define(fwd, n.const(1.0, f32))
    n.define(fwd, x)
    with pytest.raises(ValueError, match=r"placeholder must be an undefined value"):
        n.define(fwd, x)  # twice
    with pytest.raises(ValueError, match=r"outputs\[0\] is a forward placeholder already replaced"):
        n.finish([fwd])


def test_values_of_another_node_are_rejected():
    a = NodeBuilder("a", inputs=[i32], outputs=[i32])
    b = NodeBuilder("b", inputs=[i32], outputs=[i32])
    with pytest.raises(ValueError, match=r"x is not a value of node @b"):
        b.pre(a.inputs[0])


def test_type_mismatches_are_type_errors():
    n = NodeBuilder("n", inputs=[i32, f32, i32], outputs=[i32])
    x, y, c = n.inputs
    with pytest.raises(TypeError, match=r"next has type f32, expected i32"):
        n.fby(x, y)
    with pytest.raises(TypeError, match=r"cond has type i32, expected i1"):
        n.when(x, c)
    with pytest.raises(TypeError, match=r"f has type f32, expected i32"):
        n.merge("1(0)", x, y)
    with pytest.raises(ValueError, match=r"cond: invalid k-periodic word '12'"):
        n.when(x, "12")
    with pytest.raises(TypeError, match=r"word must be a k-periodic word"):
        n.kperiodic(1)
    with pytest.raises(TypeError, match=r"t must be an xDSL type, got 'i32'"):
        n.const(0, "i32")
    with pytest.raises(TypeError, match=r"value must be an int for type i32, got 1.5"):
        n.const(1.5, i32)
    with pytest.raises(ValueError, match=r"value 1000 does not fit in i8"):
        n.const(1000, i8)


def test_finish_checks_the_arity_and_types_of_outputs_and_state():
    n = NodeBuilder("n", inputs=[i32], outputs=[i32], state=[i1])
    (x,) = n.inputs
    (s,) = n.state
    with pytest.raises(ValueError, match=r"outputs: the node declares 1 \(i32\), got 2 value\(s\)"):
        n.finish([x, x], [s])
    with pytest.raises(ValueError, match=r"state: the node declares 1 \(i1\), got 0 value\(s\)"):
        n.finish([x])
    with pytest.raises(TypeError, match=r"outputs\[0\] has type i1, expected i32"):
        n.finish([s], [s])
    with pytest.raises(ValueError, match=r"node @n is not finished"):
        n.module()
    n.finish([x], [s])
    with pytest.raises(ValueError, match=r"node @n is already finished"):
        n.finish([x], [s])
    with pytest.raises(ValueError, match=r"node @n is already finished"):
        n.pre(x)


def test_an_unknown_or_mismatched_callee_is_a_value_error():
    top = NodeBuilder("top", inputs=[i32], outputs=[i32])
    (x,) = top.inputs
    (r,) = top.instance("integr", [x, x], [i32])
    top.finish([r])
    with pytest.raises(ValueError, match=r"node @top does not verify: lus.instance: no node named @integr"):
        top.module()
    integr = _integr()
    with pytest.raises(ValueError, match=r"lus.instance: operand types \(i32, i32\) do not match"):
        top.module(integr.node)
    assert isinstance(integr.node, lus.NodeOp) and integr.node.parent is None


def test_when_keeps_not_on_a_word():
    n = NodeBuilder("n", inputs=[i32], outputs=[i32])
    (x,) = n.inputs
    w = n.when(x, "1(0)", negated=True)
    assert isinstance(w.owner, lus.WhenOp) and w.owner.negated is not None
