"""Misusing the Python graph frontend raises TypeError/ValueError naming the argument.

For every public method of `steplus.dialects.step.builder` (`Graph`, `Stream`,
`reassemble`, `eager_merge`): wrong kinds of values (a str
where an int goes, an int where a stream goes, None), bad values (negative or
zero sizes, empty shapes, unknown functions, wrong arity, bad dtype strings),
a stream of another graph, and a stream consumed twice. Each case checks the
exception class and a message fragment that names the method and the argument;
then the graph must still be usable (a rejected call adds nothing).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from xdsl.dialects.builtin import f32, i1

from steplus.dialects.step.builder import (
    ADDRESS,
    FrontendError,
    Graph,
    TileType,
    eager_merge,
    reassemble,
)

T = TileType(16, 64, f32)


def frontend() -> SimpleNamespace:
    """A graph with a [4, 2] stream `x` of 16x64 tiles, a [4, 2] stream `w` of 64x32
    tiles, a [4] selector stream `sel`, and `other`, a stream of another graph."""
    g = Graph("g")
    return SimpleNamespace(
        g=g,
        x=g.load((16, 64), f32, [4, 2], name="x"),
        w=g.load((64, 32), f32, [4, 2], base_addr=4096, name="w"),
        sel=g.select_gen(2, [4], name="sel"),
        other=Graph("h").load((16, 64), f32, [4, 2]),
    )


# (id, call on a fresh `frontend()`, exception class, message fragment)
FRONTEND_CASES: list[tuple[str, Callable[[SimpleNamespace], object], type, str]] = [
    # Graph
    ("Graph-name-int", lambda f: Graph(3), TypeError, "Graph: name must be a string, got int 3"),
    ("Graph-name-empty", lambda f: Graph(""), ValueError, "Graph: name must not be empty"),
    ("argument-dims-None", lambda f: f.g.argument(None, T), TypeError,
     "Graph.argument: dims must be a list or tuple, got NoneType None"),
    ("argument-dims-empty", lambda f: f.g.argument([], T), ValueError,
     "Graph.argument: dims must not be empty"),
    ("argument-dims-str", lambda f: f.g.argument("B", T), TypeError,
     "Graph.argument: dims must be a list or tuple, got str 'B'"),
    ("argument-dims-float", lambda f: f.g.argument([4.5], T), TypeError,
     "Graph.argument: dims[0]:"),
    ("argument-element-str", lambda f: f.g.argument([4], "f32"), TypeError,
     "Graph.argument: element must be a stream element type"),
    ("argument-name-int", lambda f: f.g.argument([4], T, name=3), TypeError,
     "Graph.argument: name must be a string or None, got int 3"),
    ("argument-name-invalid", lambda f: f.g.argument([4], T, name="1 x"), ValueError,
     "Graph.argument: name '1 x' is not a valid value name"),
    ("load-tile-str", lambda f: f.g.load("16x64", f32, [4]), TypeError,
     "Graph.load: tile must be a list or tuple, got str '16x64'"),
    ("load-tile-1d", lambda f: f.g.load((16,), f32, [4]), ValueError,
     "Graph.load: tile must have 2 entries, got 1"),
    ("load-tile-negative", lambda f: f.g.load((-16, 64), f32, [4]), ValueError,
     "Graph.load: tile[0] must be >= 1, got -16"),
    ("load-tile-float", lambda f: f.g.load((16, 64.0), f32, [4]), TypeError,
     "Graph.load: tile[1] must be an int, got float 64.0"),
    ("load-dtype-float33", lambda f: f.g.load((16, 64), "float33", [4]), TypeError,
     "Graph.load: dtype must be an integer or float type (use the type object"),
    ("load-dtype-f32-str", lambda f: f.g.load((16, 64), "f32", [4]), TypeError,
     "Graph.load: dtype must be an integer or float type"),
    ("load-dtype-None", lambda f: f.g.load((16, 64), None, [4]), TypeError,
     "Graph.load: dtype must be an integer or float type, got NoneType None"),
    ("load-dtype-tile", lambda f: f.g.load((16, 64), T, [4]), TypeError,
     "Graph.load: dtype must be an integer or float type, got TileType"),
    ("load-out_shape-empty", lambda f: f.g.load((16, 64), f32, []), ValueError,
     "Graph.load: out_shape must not be empty"),
    ("load-out_shape-negative", lambda f: f.g.load((16, 64), f32, [-4]), ValueError,
     "Graph.load: out_shape[0]: stream dimension '-4' must be a non-negative integer"),
    ("load-out_shape-None", lambda f: f.g.load((16, 64), f32, None), TypeError,
     "Graph.load: out_shape must be a list or tuple, got NoneType None"),
    ("load-in_shape-zero", lambda f: f.g.load((16, 64), f32, [4], in_shape=[0]), ValueError,
     "Graph.load: in_shape[0] must be >= 1, got 0"),
    ("load-stride-arity", lambda f: f.g.load((16, 64), f32, [4], stride=[1, 1]), ValueError,
     "Graph.load: stride must have 1 entries, got 2"),
    ("load-base_addr-negative", lambda f: f.g.load((16, 64), f32, [4], base_addr=-1),
     ValueError, "Graph.load: base_addr must be >= 0, got -1"),
    ("load-base_addr-str", lambda f: f.g.load((16, 64), f32, [4], base_addr="0"), TypeError,
     "Graph.load: base_addr must be an int, got str '0'"),
    ("load-base_addr-bool", lambda f: f.g.load((16, 64), f32, [4], base_addr=True), TypeError,
     "Graph.load: base_addr must be an int, got bool True"),
    ("load-ref-int", lambda f: f.g.load((16, 64), f32, [4], ref=5), TypeError,
     "Graph.load: ref must be a Stream, got int 5"),
    ("load-ref-other-graph", lambda f: f.g.load((16, 64), f32, [4], ref=f.other), ValueError,
     "Graph.load: ref is a stream of another graph"),
    ("random_load-addrs-None", lambda f: f.g.random_load(None, (8, 64), f32), TypeError,
     "Graph.random_load: addrs must be a Stream, got NoneType None"),
    ("random_load-in_shape-empty", lambda f: f.g.random_load(f.x, (8, 64), f32, in_shape=()),
     ValueError, "Graph.random_load: in_shape must not be empty"),
    ("select_gen-choices-zero", lambda f: f.g.select_gen(0, [4]), ValueError,
     "Graph.select_gen: choices must be in 1..65536, got 0"),
    ("select_gen-choices-huge", lambda f: f.g.select_gen(1 << 40, [4]), ValueError,
     "Graph.select_gen: choices must be in 1..65536"),
    ("select_gen-choices-str", lambda f: f.g.select_gen("2", [4]), TypeError,
     "Graph.select_gen: choices must be an int, got str '2'"),
    ("select_gen-dims-empty", lambda f: f.g.select_gen(2, []), ValueError,
     "Graph.select_gen: dims must not be empty"),
    ("select_gen-values-negative", lambda f: f.g.select_gen(2, [1], values=[1, -1]),
     ValueError, "Graph.select_gen: values[1] must be >= 0, got -1"),
    ("metadata_gen-empty", lambda f: f.g.metadata_gen([]), ValueError,
     "Graph.metadata_gen: values must not be empty"),
    ("metadata_gen-str", lambda f: f.g.metadata_gen("123"), TypeError,
     "Graph.metadata_gen: values must be a list or tuple, got str '123'"),
    ("feedback-dims-None", lambda f: f.g.feedback(None, ADDRESS), TypeError,
     "Graph.argument: dims must be a list or tuple"),
    # Stream: functions and arity
    ("map-unknown-fn", lambda f: f.x.map("nope"), ValueError,
     "Stream.map: unknown step function 'nope' for fn (known: add,"),
    ("map-fn-int", lambda f: f.x.map(3), TypeError,
     "Stream.map: fn must be a step function name, got int 3"),
    ("map-arity-too-few", lambda f: f.x.map("matmul"), ValueError,
     "Stream.map: fn 'matmul' takes 2 tile operand(s), got 1"),
    ("map-arity-too-many", lambda f: f.x.map("exp", f.w), ValueError,
     "Stream.map: fn 'exp' takes 1 tile operand(s), got 2"),
    ("map-other-int", lambda f: f.x.map("add", 5), TypeError,
     "Stream.map: others[0] must be a Stream, got int 5"),
    ("map-other-other-graph", lambda f: f.x.map("add", f.other), ValueError,
     "Stream.map: others[0] is a stream of another graph"),
    ("map-dtype-str", lambda f: f.x.map("exp", dtype="f32"), TypeError,
     "Stream.map: dtype must be an integer or float type"),
    ("map-name-int", lambda f: f.x.map("exp", name=7), TypeError,
     "Stream.map: name must be a string or None, got int 7"),
    ("repeat-name-invalid", lambda f: f.x.repeat(2, name="a b"), ValueError,
     "step.repeat: name 'a b' is not a valid value name"),
    ("broadcast-names-int", lambda f: f.x.broadcast(2, ["a", 5]), TypeError,
     "Stream.broadcast: names[1] must be a string or None, got int 5"),
    ("map-on-selectors", lambda f: f.sel.map("exp"), ValueError,
     "Stream.map: fn applies to tiles; the stream element !step.selector<2> is not a tile"),
    ("map-on-flags", lambda f: f.g.argument([4], i1).map("exp"), ValueError,
     "Stream.map: fn applies to tiles; the stream element i1 is not a tile"),
    ("accum-rank-zero", lambda f: f.x.accum("add", 0), ValueError,
     "Stream.accum: rank must be in 1..2, got 0"),
    ("accum-rank-too-big", lambda f: f.x.accum("add", 3), ValueError,
     "Stream.accum: rank must be in 1..2, got 3"),
    ("accum-rank-str", lambda f: f.x.accum("add", "1"), TypeError,
     "Stream.accum: rank must be an int, got str '1'"),
    ("accum-acc-str", lambda f: f.x.accum("add", 1, acc="16x64"), TypeError,
     "Stream.accum: acc must be a TileType or None, got str '16x64'"),
    ("accum-combine-unknown", lambda f: f.x.accum("matmul", 1, f.w, combine="nope"),
     ValueError, "Stream.accum: unknown step function 'nope' for combine"),
    ("accum-init-arity", lambda f: f.x.accum("add", 1, init="add"), ValueError,
     "Stream.accum: init 'add' takes 2 tile operand(s), got 0"),
    ("accum-fn-arity", lambda f: f.x.accum("exp", 1), ValueError,
     "Stream.accum: fn 'exp' takes 1 tile operand(s), got 2"),
    ("flat_map-rank-negative", lambda f: f.x.flat_map("retile_streamify", rank=-1),
     ValueError, "Stream.flat_map: rank must be in 0..1, got -1"),
    ("flat_map-unknown-fn", lambda f: f.x.flat_map("nope"), ValueError,
     "Stream.flat_map: unknown step function 'nope'"),
    # Stream: sizes and indices
    ("store-base_addr-negative", lambda f: f.x.store(base_addr=-5), ValueError,
     "Stream.store: base_addr must be >= 0, got -5"),
    ("random_store-addrs-None", lambda f: f.x.random_store(None), TypeError,
     "Stream.random_store: addrs must be a Stream, got NoneType None"),
    ("random_store-buffer_depth-zero", lambda f: f.x.random_store(f.w, buffer_depth=0),
     ValueError, "Stream.random_store: buffer_depth must be >= 1, got 0"),
    ("flatten-hi-out-of-range", lambda f: f.x.flatten(0, 5), ValueError,
     "Stream.flatten: hi must be in 0..1, got 5"),
    ("flatten-lo-above-hi", lambda f: f.x.flatten(1, 0), ValueError,
     "Stream.flatten: lo must be in 0..0, got 1"),
    ("flatten-lo-str", lambda f: f.x.flatten("0", 1), TypeError,
     "Stream.flatten: lo must be an int, got str '0'"),
    ("reshape-chunk-zero", lambda f: f.x.reshape(0), ValueError,
     "Stream.reshape: chunk must be >= 1, got 0"),
    ("reshape-split_dim-out-of-range", lambda f: f.x.reshape(4, split_dim=2), ValueError,
     "Stream.reshape: split_dim must be in 0..1, got 2"),
    ("repeat-count-negative", lambda f: f.x.repeat(-1), ValueError,
     "Stream.repeat: count must be >= 1, got -1"),
    ("repeat-count-None", lambda f: f.x.repeat(None), TypeError,
     "Stream.repeat: count must be an int, got NoneType None"),
    ("expand-ref-int", lambda f: f.x.expand(3, 1), TypeError,
     "Stream.expand: ref must be a Stream, got int 3"),
    ("broadcast-n-zero", lambda f: f.x.broadcast(0), ValueError,
     "Stream.broadcast: n must be in 1..65536, got 0"),
    ("broadcast-n-huge", lambda f: f.x.broadcast(10**9), ValueError,
     "Stream.broadcast: n must be in 1..65536, got 1000000000"),
    ("broadcast-n-float", lambda f: f.x.broadcast(2.0), TypeError,
     "Stream.broadcast: n must be an int, got float 2.0"),
    ("broadcast-names-str", lambda f: f.x.broadcast(2, "ab"), TypeError,
     "Stream.broadcast: names must be a list or tuple, got str 'ab'"),
    ("broadcast-names-too-many", lambda f: f.x.broadcast(2, ["a", "b", "c"]), ValueError,
     "Stream.broadcast: names has 3 entries, at most 2"),
    ("partition-sel-None", lambda f: f.x.partition(None), TypeError,
     "Stream.partition: sel must be a Stream, got NoneType None"),
    ("partition-sel-not-selector", lambda f: f.x.partition(f.w), ValueError,
     "partition: sel must be a selector stream"),
    ("parallelize-n-zero", lambda f: f.x.parallelize(0), ValueError,
     "Stream.parallelize: n must be in 1..65536, got 0"),
    ("parallelize-switch_cycles-arity", lambda f: f.x.parallelize(2, switch_cycles=[1]),
     ValueError, "Stream.parallelize: switch_cycles must have 2 entries, got 1"),
    ("parallelize-rank-out-of-range", lambda f: f.x.parallelize(2, rank=2), ValueError,
     "Stream.parallelize: rank must be in 0..1, got 2"),
    ("cache_read_addr_gen-seq_len-None", lambda f: f.x.cache_read_addr_gen(None), TypeError,
     "Stream.cache_read_addr_gen: seq_len must be a Stream, got NoneType None"),
    ("expert_addr_gen-zero", lambda f: f.sel.expert_addr_gen(0), ValueError,
     "Stream.expert_addr_gen: tiles_per_expert must be >= 1, got 0"),
    ("with_dims-None", lambda f: f.x.with_dims(None), TypeError,
     "Stream.with_dims: dims must be a list or tuple, got NoneType None"),
    ("connect-producer-int", lambda f: f.g.feedback([4], ADDRESS).connect(3), TypeError,
     "Stream.connect: producer must be a Stream, got int 3"),
    # streams: ownership and single consumer
    ("zip-other-graph", lambda f: f.x.zip(f.other), ValueError,
     "Stream.zip: other is a stream of another graph"),
    ("zip-self", lambda f: f.x.zip(f.x), ValueError,
     "Stream.zip: a stream is passed twice; broadcast it first"),
    ("map-consumed-twice", lambda f: (f.x.map("exp"), f.x.map("exp")), ValueError,
     "Stream.map: self is already consumed; a stream has one consumer"),
    ("store-after-consume", lambda f: (f.x.consume(), f.x.store()), ValueError,
     "Stream.store: self is already consumed"),
    ("zip-consumed-other", lambda f: (f.w.consume(), f.x.zip(f.w)), ValueError,
     "Stream.zip: other is already consumed"),
    ("partition-other-graph-self", lambda f: f.other.partition(f.sel), ValueError,
     "Stream.partition: sel is a stream of another graph"),
    # module-level functions
    ("reassemble-inputs-empty", lambda f: reassemble([], f.sel), ValueError,
     "reassemble: inputs must not be empty"),
    ("reassemble-inputs-None", lambda f: reassemble(None, f.sel), TypeError,
     "reassemble: inputs must be a list or tuple, got NoneType None"),
    ("reassemble-inputs-int", lambda f: reassemble([f.x, 3], f.sel), TypeError,
     "reassemble: inputs[1] must be a Stream, got int 3"),
    ("reassemble-input-twice", lambda f: reassemble([f.x, f.x], f.sel), ValueError,
     "reassemble: a stream is passed twice"),
    ("reassemble-sel-int", lambda f: reassemble([f.x, f.w], 0), TypeError,
     "reassemble: sel must be a Stream, got int 0"),
    ("eager_merge-str", lambda f: eager_merge("xy"), TypeError,
     "eager_merge: inputs must be a list or tuple, got str 'xy'"),
    ("eager_merge-other-graph", lambda f: eager_merge([f.x, f.other]), ValueError,
     "eager_merge: inputs[1] is a stream of another graph"),
]


# Cases whose first call is valid (it adds one op) and whose second is rejected.
TWO_CALLS = {"map-consumed-twice", "store-after-consume", "zip-consumed-other"}


@pytest.mark.parametrize("case,call,exc,fragment", [(c[0], *c[1:]) for c in FRONTEND_CASES],
                         ids=[c[0] for c in FRONTEND_CASES])
def test_frontend_misuse(case, call, exc, fragment):
    f = frontend()
    n_ops = len(f.g.block.ops)
    with pytest.raises(exc, match=re.escape(fragment)) as info:
        call(f)
    assert type(info.value) in (TypeError, FrontendError), type(info.value)
    # the rejected call added no op (a half-built zip would be left behind otherwise)
    assert len(f.g.block.ops) == n_ops + (case in TWO_CALLS)
    _still_usable(f)


def _still_usable(f: SimpleNamespace) -> None:
    """Sink whatever is unconsumed; the graph prints as a verified module."""
    for s in (f.x, f.w, f.sel):
        if s.value not in f.g._consumed:
            s.consume()
    for fb in list(f.g._feedback):
        f.g._feedback.discard(fb)
        f.g.block.erase_arg(fb)
    assert "step.graph @g" in str(f.g.module())


def test_rejected_call_adds_nothing():
    f = frontend()
    before = [op.name for op in f.g.block.ops]
    for bad in (lambda: f.x.map("nope"), lambda: f.x.map("matmul"),
                lambda: f.x.accum("add", 9), lambda: f.x.map("add", f.w, name=3)):
        with pytest.raises((TypeError, ValueError)):
            bad()
    assert [op.name for op in f.g.block.ops] == before
    assert f.x.map("exp").element == T  # x and w are still unconsumed
    assert f.x.value in f.g._consumed


def test_a_string_dtype_never_reaches_the_printer():
    g = Graph("g")
    with pytest.raises(TypeError):
        g.load((16, 64), "bf16", [4])
    assert len(g.block.ops) == 0
    g.load((16, 64), f32, [4]).store()
    assert "!step.tile<16x64xf32>" in str(g.module())
