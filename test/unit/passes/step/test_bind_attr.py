"""A graph's `step.bind`: a dictionary attribute of integers, written and read by one helper.

`step-specialize` records its bindings with `set_graph_bindings`; `step-metrics`
(and whatever else reads them) goes through `graph_bindings`. A malformed
attribute from a file is an `OpDiagnosticError` at the graph.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr, i1, i64

from steplus.dialects.step import GraphOp
from steplus.passes.step.bindings import (
    BIND_ATTR,
    MAX_BINDING,
    bind_attr,
    graph_bindings,
    parse_bind_attr,
    set_graph_bindings,
)
from steplus.passes.step.specialize import specialize_graph
from steplus.utils.diagnostics import OpDiagnosticError


def test_written_bindings_read_back_in_order():
    g = GraphOp("g")
    values = {"B": 64, "B_0": 13, "sum_L0": MAX_BINDING}
    set_graph_bindings(g, values)
    assert g.attributes[BIND_ATTR] == DictionaryAttr({k: IntegerAttr(v, i64) for k, v in values.items()})
    assert list(graph_bindings(g).items()) == list(values.items())
    set_graph_bindings(g, {})
    assert BIND_ATTR not in g.attributes and graph_bindings(g) == {}


def test_specialize_merges_with_the_recorded_bindings():
    g = GraphOp("g")
    g.attributes[BIND_ATTR] = bind_attr({"B": 4, "C": 2})
    # a new value wins over a recorded one, a recorded one is kept
    assert specialize_graph(g, {"B": 64, "D": 1}) == {"B": 64, "C": 2, "D": 1}
    assert graph_bindings(g) == {"B": 64, "C": 2, "D": 1}


@pytest.mark.parametrize("attr,message", [
    (StringAttr("B=64"), 'step.bind must be a dictionary of integers {NAME = INTEGER : i64, ...}, got "B=64"'),
    (DictionaryAttr({"B": StringAttr("64")}), "step.bind: entry 'B': the value must be an integer"),
    (DictionaryAttr({"B": IntegerAttr(1, i1)}), "step.bind: entry 'B': the value must be an integer"),
    (DictionaryAttr({"B": IntegerAttr(-3, i64)}), "step.bind: entry 'B': the value must be non-negative, got -3"),
    (DictionaryAttr({"1B": IntegerAttr(3, i64)}), "step.bind: entry '1B': '1B' is not a symbol name"),
])
def test_a_malformed_attribute_is_located_at_the_graph(attr, message):
    g = GraphOp("g")
    g.attributes[BIND_ATTR] = attr
    with pytest.raises(OpDiagnosticError) as info:
        graph_bindings(g)
    assert info.value.op is g
    assert info.value.message.startswith(message)
    with pytest.raises(OpDiagnosticError):
        parse_bind_attr(attr, g)
