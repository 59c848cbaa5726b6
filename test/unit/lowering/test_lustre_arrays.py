"""Arrays, scalarized by the frontend (lowering/lustre/arrays.py): literals,
`^`, constant and variable indexing, slices, element-wise temporal operators,
arrays as node parameters, and Heptagon's map/fold iterators, on the lus and
sync interpreters, the modular target and IREE, against numpy."""

from __future__ import annotations

import numpy as np
from xdsl.context import Context

from conftest import REPO
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.iree_run import run_node_iree
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

T = 10
RNG = np.random.default_rng(4)


def _all(module, node, inputs) -> list[np.ndarray]:
    got = run_node(module, node, inputs, T)
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for other in (run_sync_node(lowered, node, inputs, T),
                  run_node_modular(module, node, inputs, T),
                  run_node_iree(module, node, inputs, T)):
        assert [[str(v) for v in c] for c in other] == [[str(v) for v in c] for c in got]
    return [np.asarray(c) for c in got]


def test_literals_repeat_index_slice_and_temporal_operators():
    src = """const N: int = 3;
node n(a: int^N; i: int) returns (s: int^3; first: int; sel: int; tail: int^2; z: bool^2);
var w: int^3;
let
  w = [a[2], a[1], a[0]];
  s = 0^3 -> pre w;
  first = a[0];
  sel = w[i];
  tail = a[1..2];
  z = true^2;
tel
"""
    module = translate(SourceFile("a.lus", src))
    a = RNG.integers(-50, 50, (T, 3)).astype(np.int32)
    i = np.array([0, 1, 2, 3, -1, 2, 1, 0, 7, 2], np.int32)
    inputs = {"a.0": a[:, 0], "a.1": a[:, 1], "a.2": a[:, 2], "i": i}
    out = _all(module, "n", inputs)
    w = a[:, ::-1]
    s = np.vstack([np.zeros((1, 3), int), w[:-1]])
    np.testing.assert_array_equal(np.stack(out[:3], axis=1), s)
    np.testing.assert_array_equal(out[3], a[:, 0])
    # a variable index out of bounds reads the last element
    np.testing.assert_array_equal(out[4], w[np.arange(T), np.where((i >= 0) & (i < 3), i, 2)])
    np.testing.assert_array_equal(np.stack(out[5:7], axis=1), a[:, 1:3])
    assert np.asarray(out[7:9]).all()


def test_heptagon_map_and_fold():
    module = translate(SourceFile(str(REPO / "examples/lustre/heptagon/sums.ept"),
                                  (REPO / "examples/lustre/heptagon/sums.ept").read_text()))
    a = RNG.integers(-9, 10, (T, 4)).astype(np.int32)
    k = RNG.integers(-3, 4, T).astype(np.int32)
    inputs = {"a.0": a[:, 0], "a.1": a[:, 1], "a.2": a[:, 2], "a.3": a[:, 3], "k": k}
    total, *scaled = _all(module, "sums", inputs)
    np.testing.assert_array_equal(total, a.sum(axis=1))
    np.testing.assert_array_equal(np.stack(scaled, axis=1), a * k[:, None])


def test_records_construction_access_update_and_equality():
    src = """type pt = struct {x: int; y: int};
type box = {lo: pt; hi: pt; tags: bool^2};
node n(p: pt; b: bool) returns (q: pt; w: int; same: bool; bx: box);
let
  q = p[x := p.y; y := p.x];
  w = q.x - bx.hi.y;
  same = q = p;
  bx = box {lo = pt {x = 0; y = 0}; hi = p; tags = [b, not b]};
tel
"""
    module = translate(SourceFile("r.lus", src))
    x = RNG.integers(-9, 10, T).astype(np.int32)
    y = np.where(np.arange(T) % 3 == 0, x, RNG.integers(-9, 10, T)).astype(np.int32)
    b = RNG.random(T) < 0.5
    qx, qy, w, same, lox, loy, hix, hiy, t0, t1 = _all(module, "n", {"p.x": x, "p.y": y, "b": b})
    np.testing.assert_array_equal(qx, y)
    np.testing.assert_array_equal(qy, x)
    np.testing.assert_array_equal(w, y - y)
    np.testing.assert_array_equal(same, x == y)
    np.testing.assert_array_equal(np.stack([lox, loy, hix, hiy]), [0 * x, 0 * x, x, y])
    np.testing.assert_array_equal(np.stack([t0, t1]), [b, ~b])


def test_definition_by_index_gives_each_element_its_own_index():
    # A[i] = e folds e with i = 0, 1, ...: each a fresh constant declaration,
    # whose cached value must not be taken for another's (ids are reused)
    src = """node m(x: int) returns (A: int^200; B: int^3);
let
  A[i] = i * 2 + x;
  B[i] = if i = 0 then x else B[i - 1] + 1;
tel
"""
    module = translate(SourceFile("d.lus", src))
    x = RNG.integers(-9, 10, T).astype(np.int32)
    out = run_node(module, "m", {"x": x}, T)
    np.testing.assert_array_equal(np.stack(out[:200], axis=1), 2 * np.arange(200) + x[:, None])
    np.testing.assert_array_equal(np.stack(out[200:], axis=1), x[:, None] + np.arange(3))
