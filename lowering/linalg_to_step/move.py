"""Data movement of a `torch.export` graph: permutes, transposes, selects and slices as gathers.

`aten.permute`, `aten.transpose.int`, `aten.t`, `aten.select.int` and
`aten.slice.Tensor` of a floating-point tensor (batch_first <-> time first,
the head split/merge `[B, S, H, D] <-> [B, H, S, D]`, `x[:, -1]`, `x[..., a:b]`)
become one dense part each (role "move"): the compiler applies the op to the
input's element indices and streams the resulting addresses (a `metadata_gen`)
into a `random_offchip_load`; the tiles are stored contiguous, the output
tensor in row-major memory. When every output row is a whole input row (the
last dim kept: a head split, a time-major/batch-major swap, a select of a
leading dim) the tiles are rows (`1 x D`); otherwise elements (`1 x 1`: a
transpose of the last two dims).

Example: `x.transpose(1, 2)` of a `[2, 6, 4, 8]` tensor gathers 48 rows of 8.
"""

from __future__ import annotations

import numpy as np

from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.conv import gather_elements

MOVES = ("aten.permute.default", "aten.transpose.int", "aten.t.default",
         "aten.select.int", "aten.slice.Tensor")
MAX_ELEMENTS = 1 << 20


def is_move(n) -> bool:
    return getattr(n, "op", None) == "call_function" and name_of(n) in MOVES


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def indices(n) -> np.ndarray | str:
    """The input element index of every output element (the op applied to the input's
    index array), or why it is not lowered."""
    from steplus.lowering.linalg_to_step import glue

    name, args = name_of(n), list(n.args)
    x = args[0] if args else None
    if n.kwargs:
        return "keyword arguments"
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


def move_part(n, idx: np.ndarray, fname: str) -> LoweredPart:
    """The gather of `n`'s elements (see the module doc)."""
    from steplus.lowering.linalg_to_step import glue

    x = n.args[0]
    s, out = glue.static(x), tuple(idx.shape)
    D = s[-1]
    flat = idx.reshape(-1, out[-1]) if out else idx.reshape(1, 1)
    rows = out and out[-1] == D and bool(
        (flat == flat[:, :1] + np.arange(D)).all()) and bool((flat[:, 0] % D == 0).all())
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
