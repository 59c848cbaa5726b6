"""Tensor layout helpers shared by the op semantics, isel's importer and the ILA runtime.

`map_dims(op)` reads a `linalg.generic`'s indexing maps as lists of loop dimensions (projections
only); `im2col_nchw(x, kernel, stride)` lays an NCHW tensor out as the rows of a convolution's
GEMM.  Both are pure indexing: they work on numpy float arrays and on object arrays of symbolic
terms alike.

Example::

    map_dims(generic_op)                       # [[0, 1], [1], [0, 1]] for a row-broadcast add
    im2col_nchw(x, (3, 3), (1, 1)).shape       # (N*OH*OW, C*9) for x of shape (N, C, H, W)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def map_dims(op: Any) -> list[list[int]]:
    """Loop dimensions read by each operand's indexing map of a `linalg.generic` `op`.

    A result `dN` gives N; a constant `0` (a size-1 axis read at 0, a broadcast) gives -1.
    Any other affine expression raises ValueError naming the map."""
    out = []
    for m in op.indexing_maps.data:
        dims = []
        for r in m.data.results:
            if type(r).__name__ == "AffineConstantExpr" and r.value == 0:
                dims.append(-1)
                continue
            if type(r).__name__ != "AffineDimExpr":
                raise ValueError(f"linalg.generic: indexing map {m.data} is not a projection")
            dims.append(r.position)
        out.append(dims)
    return out


def im2col_nchw(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int]) -> np.ndarray:
    """Valid-convolution patches of NCHW `x` as rows: shape (N*OH*OW, C*KH*KW), columns in
    (c, kh, kw) order (the order of an FCHW weight flattened per filter)."""
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    cols = np.stack([x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)], axis=2)
    return cols.reshape(n, c * kh * kw, oh * ow).transpose(0, 2, 1).reshape(n * oh * ow, c * kh * kw)
