"""Data movement of a `torch.export` graph: permutes, transposes, selects and slices as gathers.

`aten.permute`, `aten.transpose.int`, `aten.t`, `aten.select.int`,
`aten.slice.Tensor`, `aten.expand` (materialized: HF's `repeat_kv` outside a
recognized attention, a broadcast that a view then reshapes) and `aten.cat`
(along any dim; its inputs read from one
region where they lie one after another) of floating-point tensors (batch_first <-> time first,
the head split/merge `[B, S, H, D] <-> [B, H, S, D]`, `x[:, -1]`, `x[..., a:b]`)
become one dense part each (role "move"): the compiler applies the op to the
input's element indices and streams the resulting addresses (a `metadata_gen`)
into a `random_offchip_load`; the tiles are stored contiguous, the output
tensor in row-major memory. When every output row is a whole input row (the
last dim kept: a head split, a time-major/batch-major swap, a select of a
leading dim) the tiles are rows (`1 x D`); a batched transpose (per batch an
`[A, C]` matrix transposed: NCHW <-> NHWC, a transpose of the last two dims) is
no gather: each matrix is one tile, `transpose`d on chip (`transpose_part`);
otherwise elements (`1 x 1`).

Example: `x[:, :, 0]` of a `[2, 6, 4, 8]` tensor gathers 12 rows of 8;
`x.transpose(1, 2)` of it is 2 tiles `[6, 32]`, each `block_transpose[8]`d to `[4, 48]`.
"""

from __future__ import annotations

import numpy as np

from xdsl.dialects.builtin import f32

from steplus.dialects.step.builder import Graph
from steplus.dialects.step.functions import member_name
from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.conv import gather_elements, glue_dtype
from steplus.lowering.linalg_to_step.emit import Layout, Lowered
from steplus.lowering.linalg_to_step.options import layout
from steplus.lowering.linalg_to_step import glue

MOVES = ("aten.permute.default", "aten.transpose.int", "aten.t.default",
         "aten.select.int", "aten.slice.Tensor", "aten.cat.default", "aten.expand.default")
MAX_ELEMENTS = 1 << 20


def is_move(n) -> bool:
    return getattr(n, "op", None) == "call_function" and name_of(n) in MOVES


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def indices(n) -> np.ndarray | str:
    """The input element index of every output element (the op applied to the input's
    index array), or why it is not lowered."""

    name, args = name_of(n), list(n.args)
    x = args[0] if args else None
    if n.kwargs:
        return "keyword arguments"
    if name == "aten.cat.default":
        return _cat_indices(n)
    if not glue._float_tensor(x) or not glue._float_tensor(n):
        return "not a static floating-point tensor"
    s = glue.static(x)
    size = int(np.prod(s))
    if size > MAX_ELEMENTS or int(np.prod(glue.static(n))) > MAX_ELEMENTS:
        return f"more than {MAX_ELEMENTS} elements"
    idx = np.arange(size).reshape(s)
    r = len(s)
    try:
        if name == "aten.permute.default":
            dims = [d % r for d in args[1]]
            out = np.transpose(idx, dims)
        elif name == "aten.transpose.int":
            out = np.swapaxes(idx, args[1], args[2])
        elif name == "aten.t.default":
            out = idx.T
        elif name == "aten.expand.default":  # -1 keeps a dim; new dims lead
            sizes = list(args[1])
            if not all(_int(v) for v in sizes) or len(sizes) < r:
                return "an expand to a non-constant size"
            lead = len(sizes) - r
            out = np.broadcast_to(idx, [s[k - lead] if v == -1 and k >= lead else v
                                        for k, v in enumerate(sizes)])
        elif name == "aten.select.int":
            if not (_int(args[1]) and _int(args[2])):
                return "a select by a non-constant index"
            out = np.take(idx, args[2], axis=args[1])
        else:  # slice.Tensor(x, dim=0, start=None, end=None, step=1)
            args += [None] * (5 - len(args))
            dim = 0 if args[1] is None else args[1]
            start, end, step = args[2], args[3], 1 if args[4] is None else args[4]
            if not all(v is None or _int(v) for v in (dim, start, end, step)) or step < 1:
                return "a slice with a non-constant or non-positive bound"
            sl = [slice(None)] * r
            sl[dim] = slice(start, end, step)
            out = idx[tuple(sl)]
    except (IndexError, ValueError, TypeError, np.exceptions.AxisError) as e:
        return f"an argument form not foreseen ({type(e).__name__})"
    if tuple(out.shape) != glue.static(n):
        return "the output shape is not the op's"
    return out


def _cat_indices(n) -> np.ndarray | str:
    """`cat(tensors, dim)`: the inputs are read from one region where they lie one after
    another (`<cat>:inputs`); the output's element indices into it."""

    xs = list(n.args[0]) if n.args and isinstance(n.args[0], (list, tuple)) else []
    dim = n.args[1] if len(n.args) > 1 else 0
    if not xs or not all(glue._float_tensor(x) for x in xs) or not _int(dim):
        return "the inputs are not static floating-point tensors"
    shapes = [glue.static(x) for x in xs]
    if int(np.prod(glue.static(n))) > MAX_ELEMENTS:
        return f"more than {MAX_ELEMENTS} elements"
    idxs, base = [], 0
    for sh in shapes:
        size = int(np.prod(sh))
        idxs.append(base + np.arange(size).reshape(sh))
        base += size
    try:
        out = np.concatenate(idxs, axis=dim)
    except (ValueError, np.exceptions.AxisError) as e:
        return f"an argument form not foreseen ({type(e).__name__})"
    if tuple(out.shape) != glue.static(n):
        return "the output shape is not the op's"
    return out


MAX_TILE = 1 << 16  # a batched transpose's tile (one [A, C] matrix) holds at most this


def batched_transpose(shape, idx: np.ndarray) -> tuple[int, int, int, int] | None:
    """`(B, A, C, E)` when the move `idx` (of an input of `shape`) is, for each of B batches,
    the transpose of an `[A, C]` matrix of E-element blocks (a permute moving a group of dims
    behind the next group, the trailing dims kept: NCHW -> NHWC is `(N, C, H*W, 1)`, the head
    split `[B, S, H, D] -> [B, H, S, D]` `(B, S, H, D)`, ViT's `flatten(2).transpose(1, 2)`
    `(N, C, P, 1)`), with `A * C * E` at most MAX_TILE; None otherwise."""
    flat = idx.reshape(-1)
    size, r = flat.size, len(shape)
    if size != int(np.prod(shape)):  # a select, slice or expand: no permutation
        return None
    for e in range(r, 0, -1):  # the kept trailing dims shape[e:] (none first: the finest)
        E = int(np.prod(shape[e:]))
        for b in range(e - 1):
            for a in range(b + 1, e):
                B, A = int(np.prod(shape[:b])), int(np.prod(shape[b:a]))
                C = int(np.prod(shape[a:e]))
                if A == 1 or C == 1 or A * C * E > MAX_TILE:
                    continue
                if np.array_equal(flat, np.arange(size).reshape(B, A, C, E)
                                  .transpose(0, 2, 1, 3).reshape(-1)):
                    return B, A, C, E
    return None


def transpose_part(n, geometry: tuple[int, int, int, int], fname: str) -> LoweredPart:
    """A batched transpose as tiles: each `[A, C*E]` matrix one tile, `transpose`d (E = 1)
    or `block_transpose[E]`d on chip, stored `[C, A*E]`: B tiles moved instead of B*A*C
    gathered rows or elements."""
    B, A, C, E = geometry
    x = n.args[0]
    el = glue.element(x) if x.op == "placeholder" else "f32"
    nb = 2 if el in ("bf16", "f16") else 4
    addr = layout({"arg0": B * A * C * E * nb, "result0": B * A * C * E * 4}, {})
    g = Graph(fname)
    t = g.load((A, C * E), f32 if el == "f32" else glue_dtype(el), [B, 1],
               base_addr=addr["arg0"], name="arg0")
    fn = "transpose" if E == 1 else member_name("block_transpose", E)
    t.map(fn, dtype=f32, name="t").store(base_addr=addr["result0"])
    out = glue.static(n)
    lowered = Lowered(g, addr, [Layout(C, A * E, B, 1)], [out], [(0, (B * A, C * E))])
    return LoweredPart("dense", g.module(), None, {"arg0": x.name}, B, outputs=[n.name],
                       lowered=lowered, role="move", out_shapes=[out], covered={n})


def move_part(n, idx: np.ndarray, fname: str) -> LoweredPart:
    """The gather of `n`'s elements (see the module doc); a batched transpose (NCHW <->
    NHWC) whose last dim changes is a tile map instead (`transpose_part`)."""
    if name_of(n) == "aten.cat.default":
        return _cat_part(n, idx, fname)
    x = n.args[0]
    geometry = batched_transpose(glue.static(x), idx)
    if geometry is not None:
        return transpose_part(n, geometry, fname)
    s, out = glue.static(x), tuple(idx.shape)
    D = s[-1]
    rows = _rows(idx, D)
    flat = idx.reshape(-1, D) if rows else idx
    el = glue.element(x) if x.op == "placeholder" else "f32"
    size = int(np.prod(s))
    if rows:
        part = gather_elements(flat[:, 0] // D, size, x.name, n.name, fname, el,
                               (int(np.prod(out[:-1])), D), None, "move", width=D, out=n.name)
    else:
        part = gather_elements(idx.reshape(-1), size, x.name, n.name, fname, el,
                               (int(np.prod(out)), 1), None, "move", out=n.name)
    part.covered = {n}
    part.out_shapes = [out]
    return part


def _rows(idx: np.ndarray, D: int) -> bool:
    """Every output row is a whole, aligned row of `D` input elements."""
    out = idx.shape
    if not out or out[-1] != D:
        return False
    flat = idx.reshape(-1, D)
    return bool((flat == flat[:, :1] + np.arange(D)).all()) and bool((flat[:, 0] % D == 0).all())


def _cat_part(n, idx: np.ndarray, fname: str) -> LoweredPart:

    xs = list(n.args[0])
    out = tuple(idx.shape)
    size = int(idx.size)
    el = "f32" if any(x.op != "placeholder" for x in xs) else glue.element(xs[0])
    src = f"{n.name}:inputs"
    D = out[-1]
    if all(glue.static(x)[-1] == D for x in xs) and _rows(idx, D):
        part = gather_elements(idx.reshape(-1, D)[:, 0] // D, size, src, n.name, fname, el,
                               (size // D, D), None, "move", width=D, out=n.name)
    else:
        part = gather_elements(idx.reshape(-1), size, src, n.name, fname, el, (size, 1),
                               None, "move", out=n.name)
    names = [x.name for x in xs]
    part.derive = {src: lambda v: np.concatenate([np.ravel(v[k]) for k in names])}
    part.covered, part.out_shapes = {n}, [out]
    return part
