"""Softmax over another dim than the last: moved to the last dim, the row softmax, moved back.

`torch.softmax(x, dim=d)` with `d` not the last dim reduces along a strided
dim of row-major memory, which the row reductions of the dense path do not
read. It becomes three dense parts: a **move** part gathers `x` with dims `d`
and last swapped (the element addresses computed at compile time, as
`move.py` does), a **norm** part computes the row softmax of that `[R, L]`
view (`L = x.shape[d]`; one tile spans a row), and a second **move** part
swaps the dims back into the node's own tensor. Intermediate tensors have
synthetic names (`<node>:swapped`, `<node>:softmax`).

Example: `torch.softmax(x, dim=1)` of a `[2, 5, 4]` tensor: a gather of 40
elements into `[2, 4, 5]`, a softmax of 8 rows of 5, a gather back.
"""

from __future__ import annotations

import numpy as np

from steplus.lowering.linalg_to_step import glue, lower_module
from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.conv import gather_elements
from steplus.lowering.linalg_to_step.linalg_build import LinalgFunc, tensor_type
from steplus.lowering.linalg_to_step.linalg_region import RegionOps, row_softmax
from steplus.lowering.linalg_to_step.move import MAX_ELEMENTS

SOFTMAX = ("aten.softmax.int", "aten._softmax.default")


def dim_of(n) -> int | None:
    """The softmax dim of `n` when it is a softmax over another dim than the last that
    these parts take (a static float tensor, no dtype change), else None."""
    if getattr(n, "op", None) != "call_function" or name_of(n) not in SOFTMAX or n.kwargs:
        return None
    args = list(n.args)
    x = args[0] if args else None
    if len(args) < 2 or not glue._float_tensor(x) or not glue._float_tensor(n):
        return None
    if len(args) > 2 and args[2] not in (False, None):
        return None
    d, rank = args[1], len(glue.static(x))
    if not isinstance(d, int) or isinstance(d, bool) or not -rank <= d < rank:
        return None
    d %= rank
    if d == rank - 1 or int(np.prod(glue.static(x))) > MAX_ELEMENTS:
        return None
    return d


def softmax_parts(n, d: int, fname: str, tile_m: int) -> list[LoweredPart]:
    """The three parts of `softmax(x, d)` (see the module doc); ValueError /
    OpDiagnosticError when the softmax cannot be tiled."""
    x = n.args[0]
    s = glue.static(x)
    size = int(np.prod(s))
    swapped = tuple(np.swapaxes(np.empty(s, dtype=np.bool_), d, -1).shape)
    L = s[d]
    R = size // L
    el = glue.element(x) if x.op == "placeholder" else "f32"
    there = np.swapaxes(np.arange(size).reshape(s), d, -1).reshape(-1)
    back = np.swapaxes(np.arange(size).reshape(swapped), d, -1).reshape(-1)
    a, b = f"{n.name}:swapped", f"{n.name}:softmax"
    first = gather_elements(there, size, x.name, a, f"{fname}_to_last", el, (size, 1), None,
                            "move", out=a)
    first.out_shapes = [swapped]
    fn = LinalgFunc(fname, [tensor_type((R, L))])
    module = fn.module([row_softmax((fn.args[0], (R, L), "f32"), RegionOps(fn))])
    tm = tile_m if tile_m <= R and R % tile_m == 0 else R
    (low,) = lower_module(module, tile=f"{tm}x{L}", schedule="mn")
    soft = LoweredPart("dense", module, None, {"arg0": a}, R, outputs=[b], lowered=low,
                       role="norm", out_shapes=[swapped], covered=set())
    last = gather_elements(back, size, b, n.name, f"{fname}_back", "f32", (size, 1), None,
                           "move", out=n.name)
    last.out_shapes, last.covered = [glue.static(n)], {n}
    return [first, soft, last]
