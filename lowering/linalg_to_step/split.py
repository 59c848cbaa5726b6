"""`torch.split` / `Tensor.split` as data movement: each chunk a gather part.

`aten.split.Tensor(x, size, dim)` (or `split_with_sizes(x, sizes, dim)`:
`x.split([8, 8, 16], dim)`) returns a tuple its `getitem` users take
apart (GPT-2's `self.c_attn(x).split(self.split_size, dim=2)` into the
query, key and value). Each `getitem` whose chunk the program reads becomes
one dense part (role "move"), as `move.py` gathers a `slice`: the chunk's
element indices in the input are computed at compile time and stream (a
`metadata_gen`) into a `random_offchip_load`. When every output row is an
aligned run of the input (a split of the last dim into chunks dividing it)
the tiles are rows of the chunk width (`1 x size`), otherwise elements. The
`split` node itself has no tensor: it is covered with its chunks when every
user of it is a chunk this lowers.

Example: `[2, 6, 96].split(32, dim=2)` gives three parts, each gathering 12
rows of 32 (rows 3r, 3r + 1, 3r + 2 of the `[36, 32]` view).
"""

from __future__ import annotations

import operator

import numpy as np

from steplus.lowering.linalg_to_step import glue
from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.conv import gather_elements

SPLIT = "aten.split.Tensor"
SPLIT_SIZES = "aten.split_with_sizes.default"  # x.split([8, 8, 16], dim)
MAX_ELEMENTS = 1 << 20


def is_chunk(n) -> bool:
    """`n` is `getitem(split(x, size, dim), i)`."""
    return (getattr(n, "op", None) == "call_function" and n.target is operator.getitem
            and len(n.args) == 2 and getattr(n.args[0], "op", None) == "call_function"
            and name_of(n.args[0]) in (SPLIT, SPLIT_SIZES))


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def indices(n) -> np.ndarray | str:
    """The input element index of every element of chunk `n`, or why it is not lowered."""
    split, i = n.args
    args = list(split.args)
    x = args[0]
    size = args[1] if len(args) > 1 else None
    dim = args[2] if len(args) > 2 else split.kwargs.get("dim", 0)
    if not (glue._float_tensor(x) and glue._float_tensor(n)):
        return "not a static floating-point tensor"
    if name_of(split) == SPLIT_SIZES:
        sizes = list(size) if isinstance(size, (list, tuple)) else []
        if not (sizes and all(_int(k) and k >= 0 for k in sizes) and _int(i)
                and 0 <= i < len(sizes)):
            return "a split by non-constant sizes"
        start, stop = sum(sizes[:i]), sum(sizes[:i + 1])
    elif isinstance(size, int) and _int(size) and size > 0 and _int(i):
        start, stop = i * size, (i + 1) * size
    else:
        return "a split by a non-constant size"
    if not _int(dim):
        return "a split along a non-constant dim"
    s = glue.static(x)
    total = int(np.prod(s))
    if total > MAX_ELEMENTS:
        return f"more than {MAX_ELEMENTS} elements"
    sl = [slice(None)] * len(s)
    try:
        sl[dim] = slice(start, stop)
        out = np.arange(total).reshape(s)[tuple(sl)]
    except (IndexError, ValueError, TypeError) as e:
        return f"an argument form not foreseen ({type(e).__name__})"
    if tuple(out.shape) != glue.static(n):
        return "the output shape is not the op's"
    return out


def split_part(n, idx: np.ndarray, fname: str) -> LoweredPart:
    """The gather of chunk `n` (see the module doc)."""
    split = n.args[0]
    x = split.args[0]
    size, out = int(np.prod(glue.static(x))), tuple(idx.shape)
    el = glue.element(x) if x.op == "placeholder" else "f32"
    W = out[-1]
    flat = idx.reshape(-1, W)
    rows = bool((flat == flat[:, :1] + np.arange(W)).all()) and bool((flat[:, 0] % W == 0).all()) \
        and size % W == 0
    if rows:
        part = gather_elements(flat[:, 0] // W, size, x.name, n.name, fname, el,
                               (int(np.prod(out[:-1])), W), None, "move", width=W, out=n.name)
    else:
        part = gather_elements(idx.reshape(-1), size, x.name, n.name, fname, el,
                               (int(np.prod(out)), 1), None, "move", out=n.name)
    chunks = list(split.users)
    whole = all(is_chunk(u) and not isinstance(indices(u), str) for u in chunks)
    part.covered = {n, split} if whole else {n}
    part.out_shapes = [out]
    return part
