"""2-D pooling of a `torch.export` graph: a window gather and a row reduction.

`nn.MaxPool2d` / `nn.AvgPool2d` (`aten.max_pool2d`, `aten.avg_pool2d`: any
kernel, stride, padding, dilation for max) on NCHW become two dense parts:

- **windows** (role "pool_gather"): the compiler generates the address of every
  window element, `[N*C*OH*OW, kh*kw]` row-major (row `(n, c, oh, ow)`, column
  `(i, j)`); a `metadata_gen` streams them into a `random_offchip_load` (as
  `conv.py`'s im2col). A padding position reads the word stored after the
  image: `-inf` for max (never the maximum), 0 for average;
- **pool** (role "pool"): a row reduction of the windows — `row_max` from
  `neg_inf`, or `row_sum` then `div_scalar[kh*kw]` — whose `[N*C*OH*OW, 1]`
  column is the NCHW output in memory.

`nn.AdaptiveAvgPool2d(1)` / `aten.adaptive_avg_pool2d` to `1x1` needs no gather:
the image `[N*C, H*W]` is its windows.

Not lowered (a remark; torch runs it): `ceil_mode` that changes the output
size, average pooling with padding and `count_include_pad=False` or a
`divisor_override`, max pooling's indices, other adaptive output sizes.

Example: `nn.MaxPool2d(2)` on `[1, 4, 8, 8]` gathers 256 addresses into 64 rows
of 4 and takes their row maxima.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.conv import _pair, gather_elements
from steplus.lowering.linalg_to_step.linalg_build import LinalgFunc, tensor_type
from steplus.lowering.linalg_to_step import glue, lower_module

POOLS = ("aten.max_pool2d.default", "aten.avg_pool2d.default",
         "aten.adaptive_avg_pool2d.default")
MAX_ADDRESSES = 1 << 20


def is_pool(n) -> bool:
    return getattr(n, "op", None) == "call_function" and name_of(n) in POOLS


class Pool:
    def __init__(self, n, x, kind: str, k, s, p, d, shape):
        self.n, self.x, self.kind = n, x, kind
        self.k, self.s, self.p, self.d = k, s, p, d
        self.N, self.C, self.H, self.W = shape
        self.OH = (self.H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        self.OW = (self.W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        self.rows = self.N * self.C * self.OH * self.OW
        self.K = k[0] * k[1]

    @property
    def direct(self) -> bool:
        """One window per image plane (a global pool): the image is its windows."""
        return (self.OH, self.OW) == (1, 1) and self.k == (self.H, self.W) \
            and self.p == (0, 0)

    def addresses(self) -> np.ndarray:
        NC = self.N * self.C
        nc = np.arange(NC).reshape(NC, 1, 1, 1, 1)
        oh = np.arange(self.OH).reshape(1, self.OH, 1, 1, 1)
        ow = np.arange(self.OW).reshape(1, 1, self.OW, 1, 1)
        i = np.arange(self.k[0]).reshape(1, 1, 1, self.k[0], 1)
        j = np.arange(self.k[1]).reshape(1, 1, 1, 1, self.k[1])
        h = oh * self.s[0] - self.p[0] + i * self.d[0]
        w = ow * self.s[1] - self.p[1] + j * self.d[1]
        inside = (h >= 0) & (h < self.H) & (w >= 0) & (w < self.W)
        addr = (nc * self.H + h) * self.W + w
        return np.where(inside, addr, NC * self.H * self.W).reshape(-1)


def read(n) -> Pool | str:
    """The window geometry of a pooling node, or why it is not lowered."""
    name = name_of(n)
    args = list(n.args)
    x = args[0] if args else None
    if n.kwargs:
        return "keyword arguments"
    if not glue._float_tensor(x) or len(glue.static(x)) != 4:
        return "the input is not a static 4-D floating-point NCHW tensor"
    shape = glue.static(x)
    if name == "aten.adaptive_avg_pool2d.default":
        if _pair(args[1] if len(args) > 1 else None, 0) != (1, 1):
            return "only an adaptive pool to 1x1 (a global average) is lowered"
        return Pool(n, x, "avg", (shape[2], shape[3]), (1, 1), (0, 0), (1, 1), shape)
    args += [None] * (7 - len(args))
    k = _pair(args[1], 0)
    s = _pair(args[2] if args[2] not in (None, []) else args[1], 1)
    p = _pair(args[3], 0)
    if k is None or s is None or p is None or min(k) < 1 or min(s) < 1 or min(p) < 0:
        return "kernel, stride and padding must be positive integers"
    if name == "aten.max_pool2d.default":
        d, ceil = _pair(args[4], 1), bool(args[5])
        if d is None or min(d) < 1:
            return "the dilation must be a positive integer"
        kind = "max"
    else:
        d, ceil = (1, 1), bool(args[4])
        include_pad = True if args[5] is None else bool(args[5])
        if args[6] is not None:
            return "a divisor_override is not lowered"
        if max(p) > 0 and not include_pad:
            return "padding with count_include_pad=False (a divisor per window)"
        kind = "avg"
    pool = Pool(n, x, kind, k, s, p, d, shape)
    if ceil:
        big = Pool(n, x, kind, k, s, p, d, shape)
        big.OH = -(-(pool.H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0]) + 1
        big.OW = -(-(pool.W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1]) + 1
        if (big.OH, big.OW) != (pool.OH, pool.OW):
            return "ceil_mode changes the output size (partial windows)"
    if pool.OH < 1 or pool.OW < 1:
        return "the window does not fit the padded image"
    if glue.static(n) != (pool.N, pool.C, pool.OH, pool.OW):
        return "an output shape not foreseen"
    if not pool.direct and pool.rows * pool.K > MAX_ADDRESSES:
        return f"{pool.rows * pool.K} gathered elements (at most {MAX_ADDRESSES})"
    return pool


def pool_module(pool: Pool, fname: str, el: str) -> ModuleOp:
    """The row reduction of the windows `[rows, K]` (`el` elements) as a linalg function:
    a row max from -inf, or a row sum from 0 divided by K."""
    R, K = pool.rows, pool.K
    fn = LinalgFunc(fname, [tensor_type((R, K), el)])
    init = fn.const(-math.inf if pool.kind == "max" else 0.0)
    acc = fn.fill(init, (R, 1))

    def reduce(s, a):
        x = s.extf(a[0]) if el != "f32" else a[0]
        return s.max(x, a[1]) if pool.kind == "max" else s.add(x, a[1])

    r = fn.generic([fn.args[0]], acc, ["d0, d1", "d0, 0"], "pr", reduce)
    if pool.kind == "avg":
        k = fn.const(float(K))
        r = fn.generic([r], fn.empty((R, 1)), ["d0, d1", "d0, d1"], "pp",
                       lambda s, a: s.div(a[0], k))
    return fn.module([r])


def pool_parts(pool: Pool, fname: str, tile_m: int) -> list[LoweredPart]:
    """The window gather (unless direct) and the row reduction of `pool`."""


    x_el = glue.element(pool.x) if pool.x.op == "placeholder" else "f32"
    parts = []
    if pool.direct:
        src, el = pool.x.name, x_el
    else:
        pad = -np.inf if pool.kind == "max" else 0.0
        parts.append(gather_elements(pool.addresses(), pool.N * pool.C * pool.H * pool.W,
                                     pool.x.name, pool.n.name, f"{fname}_windows", x_el,
                                     (pool.rows, pool.K), pad, "pool_gather"))
        src, el = parts[0].outputs[0], "f32"
    tm = tile_m if pool.rows % tile_m == 0 else pool.rows
    module = pool_module(pool, fname, el)
    (low,) = lower_module(module, tile=f"{tm}x{pool.K}")
    parts.append(LoweredPart("dense", module, None, {"arg0": src}, pool.N,
                             outputs=[pool.n.name], lowered=low, role="pool",
                             out_shapes=[glue.static(pool.n)], covered={pool.n}))
    return parts
