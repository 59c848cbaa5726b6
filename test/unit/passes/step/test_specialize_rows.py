"""`step-specialize` binds a dynamic accumulator's rows from the tile-shape analysis of
only the operators it reads from (issue 32 item 2: on the Qwen graphs, the token path
rather than the 128 expert pipelines). That partial analysis names an unnamed value's
dynamic dim by counting (`t<n>_rows`) differently from the whole graph's, so when such a
symbol is read the whole graph is analysed: the bindings are the whole analysis's either way.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32

from steplus.dialects.step import GraphOp
from steplus.dialects.step.builder import Graph, TileType
from steplus.passes.step.specialize import specialize_graph
from steplus.passes.step.tile_shapes import TileShapes


def _graph(named: bool):
    """Tokens partitioned over two experts, each promoted to one dynamic tile of its
    tokens by a retile_row accumulator (named `acc0`/`acc1`, or unnamed), after an
    unrelated unnamed stream of dynamic tiles."""
    g = Graph("rows")
    # first, an unrelated unnamed stream of dynamic tiles: the whole analysis names its
    # rows by counting, the accumulators' own analysis never visits it
    g.argument([4], TileType(-1, 8, f32)).repeat(2).consume()
    x = g.load((1, 8), f32, ["B", 1], name="x").flatten(0, 1, name="flat")
    sel = g.select_gen(2, ["B"], name="sel")
    parts = x.partition(sel, ["p0", "p1"])
    counts = [p.dims[0] for p in parts]
    accs = [p.promote(name=f"rs{e}").accum("retile_row", 1, acc=TileType(-1, 8, f32),
                                           name=f"acc{e}" if named else None)
            for e, p in enumerate(parts)]
    for a in accs:
        a.consume()
    module = g.module(take=True)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    return graph, [str(c) for c in counts], [a.value for a in accs]


def test_named_accumulators_get_their_token_counts_as_rows():
    graph, counts, _ = _graph(named=True)
    bound = specialize_graph(graph, {"B": 5, counts[0]: 3, counts[1]: 2})
    assert bound["acc0_rows"] == 3 and bound["acc1_rows"] == 2


def test_unnamed_accumulators_are_bound_under_the_whole_analysis_names():
    graph, counts, accs = _graph(named=False)
    whole = TileShapes(graph)  # the names step-metrics' analysis gives these rows
    names = [str(whole.of(a)[0][0]) for a in accs]
    assert all(n.startswith("t") and n.endswith("_rows") for n in names)
    partial = TileShapes(graph, upstream_of=[a.owner for a in accs])
    assert [str(partial.of(a)[0][0]) for a in accs] != names  # counted differently
    bound = specialize_graph(graph, {"B": 5, counts[0]: 3, counts[1]: 2})
    assert (bound[names[0]], bound[names[1]]) == (3, 2)
