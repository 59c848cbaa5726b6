"""The STeP Python frontend: result types come from the shape rules as ops are created."""

from __future__ import annotations

import pytest
import sympy
from xdsl.dialects.builtin import bf16, f32

from steplus.dialects.step.builder import FrontendError, Graph, TileType, reassemble
from steplus.dialects.step.types import RaggedSymbol, SelectorType, parse_dim_text


def test_loads_maps_and_accums_get_their_types_on_construction():
    g = Graph("expert")
    x = g.load((16, 256), bf16, ["B/16", 1], name="x")
    w = g.load((256, 64), bf16, ["B/16", 1], name="w")
    assert [a.type.dims for a in g.block.args] == [[parse_dim_text("B/16")]] * 2
    y = x.accum("matmul", 1, w, acc=TileType(16, 64, f32), combine="add", name="y")
    assert y.dims == [parse_dim_text("B/16")]
    assert y.element == TileType(16, 64, f32)
    z = y.map("row_sum")
    assert z.element == TileType(16, 1, f32)
    z.store()
    text = str(g.module())
    assert '%y = step.accum' in text and "step.linear_offchip_store" in text


def test_partition_reshape_and_reassemble_introduce_the_tables_dims():
    g = Graph("route")
    tok = g.load((1, 8), bf16, ["B", 1]).flatten(0, 1)
    sel = g.select_gen(4, ["B"])
    parts = tok.partition(sel)
    assert [str(p.dims[0]) for p in parts] == ["B_0", "B_1", "B_2", "B_3"]
    rs, pad = parts[0].reshape(16)
    assert rs.dims == [parse_dim_text("ceiling(B_0/16)"), 16]
    pad.consume()
    out = reassemble([rs.flatten(0, 1), *parts[1:]], g.select_gen(4, ["B"]))
    assert out.dims[0] == parse_dim_text("B")
    assert isinstance(out.dims[1], RaggedSymbol)
    out.consume()
    g.module()


def test_a_ragged_dim_zips_with_a_regular_one():
    g = Graph("z")
    d = g.load((4, 8), f32, [3]).flat_map("retile_streamify")  # [?F] rows
    w = g.load((1, 1), f32, [5])
    m = d.map("mul", w)
    assert m.dims == [5]  # the regular side names the data-dependent one
    m.consume()


def test_errors_name_the_problem():
    g = Graph("bad")
    x = g.load((1, 8), f32, [4])
    with pytest.raises(FrontendError, match="sel must be a selector stream"):
        x.partition(g.load((1, 1), f32, [4]))
    with pytest.raises(FrontendError, match="unknown step function 'nope'"):
        x.map("nope")
    with pytest.raises(FrontendError, match="step.zip: dimension 0 of rhs is 3 but dimension 0 of lhs is 4"):
        x.zip(g.load((1, 8), f32, [3]))
    assert isinstance(g.select_gen(2, [4]).element, SelectorType)
