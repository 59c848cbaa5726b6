"""The dense lowering of a `torch.export` graph: what the recognizers left, as parts.

`dense_parts` (called by `aten.lower_exported(ep, dense="tile=... schedule=...")`)
builds, in graph order:

- **embeddings** (`aten.embedding`, `nn.Embedding`) and `index_select` along
  dim 0 of a 2-D tensor: a gather part. The indices (an integer tensor: a user input or another part's result) stream
  in as `1x1` integer tiles — addresses — and drive a `random_offchip_load`
  of the table's rows (`1 x D` tiles of the weight, an off-chip tensor); the
  rows are stored. Integer tensors are only ever indices: the lowering never
  computes on them;
- **convolutions** (`conv.py`, `nn.Conv2d` of batch 1): an im2col gather
  part (the column matrix's addresses generated at compile time, streamed
  into a `random_offchip_load`) and a matmul part (`batch_matmul` over the
  groups: depthwise is O/g = 1), the output NCHW in memory;
- **pooling** (`pool.py`): max/average pools as a window gather part and a
  row-reduction part, a global average pool as the reduction alone;
- **data movement** (`move.py`): permutes, transposes, selects and slices as
  gathers of rows (the last dim kept) or elements; RoPE's `rotate_half` (a cat of
  signed slices of the last dim) as one tile map (`column_perm.py`);
- **recurrences** (`rnn.py`): `nn.LSTM`/`nn.GRU` unrolled in one graph;
- **softmax over another dim than the last** (`softmax_dim.py`): moved to
  the last dim, the row softmax, moved back;
- **regions** (`glue.py`): the rest that linalg on tensors expresses
  (projections, element-wise ops, norms, softmax), each built as a linalg
  function and lowered by `convert-linalg-to-step` with the tile and schedule
  options; a region that cannot be tiled is a remark naming its nodes and
  `(option dense)`.

Every part is a `LoweredPart` of kind "dense" (`role`: "gather", "im2col",
"conv", "pool_gather", "pool", "move", "rnn", "projection", "norm" or "elementwise") whose `lowered` says where its tensors live, so
`step_run_linalg.run_part` binds it like any dense part.

Example: `nn.Embedding(50, 16)` on `[2, 6]` token ids gives a part whose graph
loads 12 addresses, gathers 12 rows of 16 and stores them as `[2, 6, 16]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, f32, i64

from steplus.dialects.step.builder import Graph
from steplus.lowering.linalg_to_step.aten import (
    LoweredPart, Remark, _shape, name_of, where_of,
)
from steplus.lowering.linalg_to_step.emit import Layout, Lowered, _nbytes
from steplus.lowering.linalg_to_step.options import layout
from steplus.lowering.linalg_to_step import (
    column_perm, conv, glue, lower_module, move, pool, rnn, softmax_dim, split,
)
from steplus.lowering.linalg_to_step.conv import gather_elements
from steplus.lowering.linalg_to_step.linalg_region import region_func
from steplus.lowering.linalg_to_step.options import parse_tiles
from steplus.utils.diagnostics import OpDiagnosticError

EMBEDDING = "aten.embedding.default"
INDEX_SELECT = "aten.index_select.default"
INTEGERS = ("torch.int64", "torch.int32", "torch.int16", "torch.int8", "torch.uint8")
MAX_TOKENS = 1 << 20  # one address per token: a gather larger than this is refused


def _dtype(node) -> str:
    return str(getattr((getattr(node, "meta", {}) or {}).get("val"), "dtype", ""))


def _table(n):
    """(table, indices) of `embedding(w, idx)` or `index_select(x, 0, idx)`."""
    if name_of(n) == EMBEDDING:
        return n.args[0], n.args[1]
    return n.args[0], n.args[2]


def gatherable(n) -> str | None:
    """Why an `aten.embedding` / `aten.index_select` node cannot be a gather part (None:
    it can)."""

    if name_of(n) == INDEX_SELECT and (len(n.args) != 3 or n.args[1] not in (0, -2)):
        return "only index_select along dim 0 of a 2-D tensor is lowered"
    w, idx = _table(n)
    if not glue._float_tensor(w) or len(glue.static(w)) != 2:
        return "the table is not a static 2-D floating-point tensor"
    s = _shape(idx)
    if s is None or _dtype(idx) not in INTEGERS:
        return "the indices are not a static integer tensor"
    if not s or 0 in s or int(np.prod(s)) > MAX_TOKENS:
        return f"{int(np.prod(s or (0,)))} indices (1..{MAX_TOKENS} supported)"
    return None


def gather_part(n, fname: str) -> LoweredPart:
    """The gather graph of an embedding node (see the module doc)."""
    w, idx = _table(n)

    V, D = glue.static(w)
    T = int(np.prod(glue.static(idx)))
    out = glue.static(n)

    el_name = glue.element(w) if w.op == "placeholder" else "f32"  # parts store f32
    el = {"f32": f32, "bf16": BFloat16Type(), "f16": Float16Type()}[el_name]
    sizes = {"arg0": T * 8, "arg1": V * D * _nbytes(el), "result0": T * D * 4}
    addr = layout(sizes, {})
    g = Graph(fname)
    ids = g.load((1, 1), i64, [T], base_addr=addr["arg0"], name="arg0")
    rows = g.random_load(ids, (1, D), el, in_shape=(V,), base_addr=addr["arg1"], name="arg1")
    rows.store(base_addr=addr["result0"])
    lowered = Lowered(g, addr, [Layout(1, D, T, 1)], [out],
                      [(0, (T, 1)), (1, (V, D))])
    return LoweredPart("dense", g.module(), None, {"arg0": idx.name, "arg1": w.name}, T,
                       outputs=[n.name], lowered=lowered, role="gather",
                       out_shapes=[out], covered={n})


def _guard(read, n):
    """`read(n)` (a geometry or why not); an argument form not foreseen is a why-not."""
    try:
        return read(n)
    except (TypeError, ValueError, AttributeError, IndexError, KeyError) as e:
        return f"an argument form not foreseen ({type(e).__name__})"


@dataclass(frozen=True)
class Kind:
    """One kind of dense part built per node: which nodes it `takes`, the node's
    geometry (`read`: the geometry, or why not as a string), the parts it builds
    (`build(node, geometry, fname, tile_m, tile_n)`; ValueError / OpDiagnosticError when
    the tiling does not fit), their function name (`fname(graph name, k)`), and what a
    remark calls the node (`what(node, geometry)`)."""

    takes: Callable[[Any], bool]
    read: Callable[[Any], Any]
    build: Callable[[Any, Any, str, int, int], list[LoweredPart]]
    fname: Callable[[str, int], str]
    what: Callable[[Any, Any], str] = lambda n, _g: name_of(n)


KINDS = (  # through the modules' attributes at each call (a test may replace a reader)
    Kind(takes=lambda n: conv.is_conv(n), read=lambda n: conv.read(n),
         build=lambda _n, c, f, _tm, tn: conv.conv_parts(c, f, tn),
         fname=lambda name, k: f"{name}_conv{k}", what=lambda _n, _g: "convolution"),
    Kind(takes=lambda n: pool.is_pool(n), read=lambda n: pool.read(n),
         build=lambda _n, pl, f, tm, _tn: pool.pool_parts(pl, f, tm),
         fname=lambda name, k: f"{name}_pool{k}", what=lambda _n, _g: "pooling"),
    Kind(takes=lambda n: column_perm.is_rotate_half(n), read=lambda n: column_perm.read(n),
         build=lambda n, g, f, tm, tn: [column_perm.rotate_part(n, g, f, tm, tn)],
         fname=lambda name, k: f"{name}_rotate{k}"),
    Kind(takes=lambda n: move.is_move(n), read=lambda n: move.indices(n),
         build=lambda n, idx, f, _tm, _tn: [move.move_part(n, idx, f)],
         fname=lambda name, k: f"{name}_move{k + 1}"),
    Kind(takes=lambda n: split.is_chunk(n), read=lambda n: split.indices(n),
         build=lambda n, idx, f, _tm, _tn: [split.split_part(n, idx, f)],
         fname=lambda name, k: f"{name}_split{k}", what=lambda _n, _g: "split"),
    Kind(takes=lambda n: softmax_dim.dim_of(n) is not None, read=lambda n: softmax_dim.dim_of(n),
         build=lambda n, d, f, tm, _tn: softmax_dim.softmax_parts(n, d, f, tm),
         fname=lambda name, k: f"{name}_softmax{k}",
         what=lambda n, d: f"{name_of(n)} over dim {d}"),
    Kind(takes=lambda n: rnn.is_rnn(n), read=lambda n: rnn.read(n),
         build=lambda _n, r, f, tm, _tn: [rnn.rnn_part(r, f, tm)],
         fname=lambda name, k: f"{name}_rnn{k}"),
)
"""The dense parts built per node, in this order (before the regions): conv.py's
convolutions, pool.py's pools, column_perm.py's rotate_half (a slice/neg/cat chain as
one on-chip tile map), move.py's data movement, softmax_dim.py's softmax over
another dim, rnn.py's recurrences."""


def dense_parts(nodes, covered: set, tile: str, schedule: str, name: str,
                remarks: list) -> Iterator[LoweredPart]:
    """The dense parts of what `covered` (the recognized layers) leaves (module doc)."""
    gathers = []
    for n in nodes:
        if n in covered or getattr(n, "op", None) != "call_function" or \
                name_of(n) not in (EMBEDDING, INDEX_SELECT):
            continue
        why = _guard(gatherable, n)
        if why is not None:
            remarks.append(Remark(where_of(n), f"{name_of(n)} not lowered: {why}"))
            continue
        gathers.append(gather_part(n, f"{name}_gather{len(gathers)}"))
    yield from gathers
    covered = covered | {n for p in gathers for n in p.covered}

    tile_m, tile_n = parse_tiles(tile)[None][:2]
    k = 0
    for kind in KINDS:  # every convolution, then every pool, ...: parts numbered in that order
        for n in nodes:
            if n in covered or not kind.takes(n):
                continue
            g = _guard(kind.read, n)
            if isinstance(g, str):
                remarks.append(Remark(where_of(n), f"{kind.what(n, g)} not lowered: {g}"))
                continue
            try:
                parts = kind.build(n, g, kind.fname(name, k), tile_m, tile_n)
            except (ValueError, OpDiagnosticError) as e:
                remarks.append(Remark(where_of(n), f"{kind.what(n, g)} not lowered: "
                                                   f"{getattr(e, 'message', e)} (option dense)"))
                continue
            k += 1
            covered = covered | {n} | {c for p in parts for c in p.covered}
            yield from parts
    groups = glue.regions(nodes, covered)
    produced = {n for n in covered if n.op == "call_function"}  # stored by their parts
    for g in groups:
        produced |= {n for n in g if any(u not in g for u in glue.data_users(n))}
    for j, region in enumerate(groups):
        fname = f"{name}_dense{j}"
        try:
            t = region_func(region, fname, produced)
            module = t.module
            (low,) = lower_module(module, tile=tile, schedule=schedule)
        except (ValueError, OpDiagnosticError) as e:
            remarks.append(Remark(where_of(region[0]), f"not lowered ({', '.join(n.name for n in region)}): "
                                                       f"{getattr(e, 'message', e)} (option dense)"))
            continue

        for i, x in enumerate(t.expands):  # the broadcast operands, materialized first
            src = x.src
            el = glue.element(src) if src.op == "placeholder" else "f32"
            D = x.shape[1]
            yield gather_elements(x.rows, int(np.prod(glue.static(src))), src.name, x.name,
                                  f"{fname}_expand{i}", el, x.shape, None, "move", width=D,
                                  out=x.name)
        kinds = {name_of(n) for n in region}
        role = ("projection" if kinds & set(glue.MATMUL) else
                "norm" if kinds & set(glue.REDUCE + glue.ROW_OPS) else "elementwise")
        yield LoweredPart("dense", module, None, {f"arg{i}": a.name for i, a in enumerate(t.inputs)},
                          (_shape(t.inputs[0]) or (0,))[0],
                          outputs=[o.name for o in t.outputs], lowered=low, role=role,
                          out_shapes=[_shape(o) for o in t.outputs],
                          covered=set(region) | t.folded,
                          derive=dict(t.derive))
