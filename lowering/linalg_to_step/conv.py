"""2-D convolutions of a `torch.export` graph as an im2col gather and a matmul pipeline.

`nn.Conv2d` (`aten.conv2d`: strided, padded, dilated, grouped/depthwise,
1x1) on NCHW images becomes two dense parts (three for a batch above 1):

- **im2col** (role "im2col"): address generation. The compiler computes the
  address of every element of the column matrix `cols [g, C/g*kh*kw, N*OH*OW]`
  (patch element `(c, i, j)` of group `g` at output pixel `(n, oh, ow)` reads
  `x[n, c, oh*s - p + i*d, ow*s - p + j*d]`); a `metadata_gen` streams them as
  `1x1` address tiles into a `random_offchip_load` of the input, and the
  gathered elements are stored. A padding position reads the zero word stored
  right after the image (`<conv>:padded_input`, the input with one 0
  appended). A 1x1 convolution of stride 1 without padding needs no gather:
  the image `[C, H*W]` is its column matrix;
- **conv** (role "conv"): `linalg.batch_matmul` of the weight `[g, O/g,
  C/g*kh*kw]` (the `[O, C/g, kh, kw]` parameter, a view) by the columns (g = 1:
  `linalg.matmul`), plus the bias as a column broadcast, lowered by
  `convert-linalg-to-step`: the output `[g, O/g, N*OH*OW]` is, for one image,
  NCHW `[1, O, OH, OW]` in memory. Its tile: M = O/g, K = C/g*kh*kw whole, N (output pixels)
  the dense option's N when it divides N*OH*OW;
- for a batch N > 1 the conv's output is `[O, N, OH*OW]` (CNHW): a **move**
  part gathers its rows `(o, n)` in the order `(n, o)`: NCHW.

Not lowered (a located remark at the model's line, the conv stays in torch):
`padding="same"` with an even kernel, non-float or non-static tensors, weights that are not parameters,
more than `MAX_ADDRESSES` gathered elements.

Example: `nn.Conv2d(8, 16, 3, stride=2, padding=1)` on `[1, 8, 8, 8]` gives an
im2col part of 1152 addresses (72 x 16) and a `16 x 72 @ 72 x 16` matmul part.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, f32
from xdsl.dialects.linalg.ops import MatmulOp

from steplus.dialects.step.builder import Graph
from steplus.dialects.step.functions import member_name
from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step.emit import Layout, Lowered
from steplus.lowering.linalg_to_step.options import layout
from steplus.dialects.linalg_ext import BatchMatmulOp
from steplus.lowering.linalg_to_step import glue, lower_module
from steplus.lowering.linalg_to_step.linalg_build import LinalgFunc, tensor_type

CONV2D = ("aten.conv2d.default", "aten.conv2d.padding")  # integer / "same"/"valid" padding
# nn.Conv1d on [N, C, L]: the 2-D convolution of [N, C, 1, L] by [O, C/g, 1, k] (the same
# memory: NCL is NCHW with H = 1)
CONV1D = ("aten.conv1d.default", "aten.conv1d.padding")
MAX_ADDRESSES = 1 << 20


def _pair(v, default: int) -> tuple[int, int] | None:
    if v is None:
        return (default, default)
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return (v, v)
    if not isinstance(v, (list, tuple)):
        return None
    v = list(v)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return None
    return (v[0], v[1])


def _same(padding: str, s, d, ws) -> tuple[int, int] | str | None:
    """torch's string paddings as integers: 'valid' is 0, 'same' half of `d * (k - 1)`
    on each side (an odd total pads one side more: not lowered)."""
    if padding == "valid":
        return (0, 0)
    if padding != "same" or s is None or d is None:
        return None
    totals = [d[i] * (ws[2 + i] - 1) for i in (0, 1)]
    if any(t % 2 for t in totals):
        return "padding='same' with an even kernel pads one side more (not lowered)"
    return (totals[0] // 2, totals[1] // 2)


class Conv:
    """The geometry of a conv2d node (see `read`)."""
    def __init__(self, n, x, w, b, stride, padding, dilation, groups: int, shapes):
        self.n, self.x, self.w, self.b = n, x, w, b
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        (self.N, self.C, self.H, self.W), (self.O, self.Cg, self.kh, self.kw) = shapes
        self.OH = (self.H + 2 * padding[0] - dilation[0] * (self.kh - 1) - 1) // stride[0] + 1
        self.OW = (self.W + 2 * padding[1] - dilation[1] * (self.kw - 1) - 1) // stride[1] + 1
        self.Og = self.O // groups
        self.Kg = self.Cg * self.kh * self.kw
        self.P = self.OH * self.OW
        self.NP = self.N * self.P  # the columns: (n, oh, ow)

    @property
    def direct(self) -> bool:
        """A 1x1 conv of stride 1 without padding of one image: the image is its column
        matrix."""
        return ((self.kh, self.kw) == (1, 1) and self.stride == (1, 1)
                and self.padding == (0, 0) and self.N == 1)

    def addresses(self) -> np.ndarray:
        """The im2col addresses, `[g, Kg, N*P]` row-major (columns `(n, oh, ow)`); padding
        reads `N*C*H*W` (the zero after the images)."""
        g, Cg, kh, kw = self.groups, self.Cg, self.kh, self.kw
        c = (np.arange(g)[:, None] * Cg + np.arange(Cg)[None, :]).reshape(g, Cg, 1, 1, 1, 1, 1)
        i = np.arange(kh).reshape(1, 1, kh, 1, 1, 1, 1)
        j = np.arange(kw).reshape(1, 1, 1, kw, 1, 1, 1)
        n = np.arange(self.N).reshape(1, 1, 1, 1, self.N, 1, 1)
        oh = np.arange(self.OH).reshape(1, 1, 1, 1, 1, self.OH, 1)
        ow = np.arange(self.OW).reshape(1, 1, 1, 1, 1, 1, self.OW)
        h = oh * self.stride[0] - self.padding[0] + i * self.dilation[0]
        w = ow * self.stride[1] - self.padding[1] + j * self.dilation[1]
        inside = (h >= 0) & (h < self.H) & (w >= 0) & (w < self.W)
        addr = ((n * self.C + c) * self.H + h) * self.W + w
        zero = self.N * self.C * self.H * self.W
        return np.where(inside, addr, zero).reshape(g * Cg * kh * kw * self.NP)


def _single(v, default: int) -> tuple[int, int] | None:
    """A conv1d's stride/padding/dilation as the (1 or 0, v) pair of its H = 1 conv2d."""
    if isinstance(v, (list, tuple)) and len(v) == 1:
        v = v[0]
    p = _pair(v, default)
    return None if p is None else ((0 if default == 0 else 1), p[1])


def read(n) -> Conv | str:
    """The geometry of an `aten.conv2d` (or `aten.conv1d`, as a conv2d of height 1) node,
    or why it is not lowered."""
    args = list(n.args) + [None] * (7 - len(n.args))
    x, w, b, stride, padding, dilation, groups = args[:7]
    rank = 3 if name_of(n) in CONV1D else 4
    if n.kwargs:
        return "keyword arguments"
    if not glue._float_tensor(x) or len(glue.static(x)) != rank:
        return ("the input is not a static 3-D floating-point NCL tensor" if rank == 3 else
                "the input is not a static 4-D floating-point NCHW tensor")
    if not glue._weight(w, rank):
        return f"the weight is not a {rank}-D floating-point parameter"
    if b is not None and not glue._weight(b, 1):
        return "the bias is not a 1-D floating-point parameter"
    pair = _pair if rank == 4 else _single
    xs, ws = glue.static(x), glue.static(w)
    if rank == 3:  # [N, C, L] as [N, C, 1, L]
        xs, ws = (*xs[:2], 1, xs[2]), (*ws[:2], 1, ws[2])
    s, d = pair(stride, 1), pair(dilation, 1)
    p = pair(padding, 0) if not isinstance(padding, str) else _same(padding, s, d, ws)
    if isinstance(p, str):
        return p
    if s is None or p is None or d is None:
        return "stride, padding and dilation must be integers, or padding 'same'/'valid'"
    groups = 1 if groups is None else groups
    if not isinstance(groups, int) or groups < 1 or xs[1] % groups or ws[0] % groups \
            or ws[1] * groups != xs[1]:
        return f"groups={groups!r} does not divide the {xs[1]} input / {ws[0]} output channels"
    if min(s) < 1 or min(d) < 1 or min(p) < 0:
        return "a stride or dilation below 1, or a negative padding"
    conv = Conv(n, x, w, b, s, p, d, groups, (xs, ws))
    if conv.OH < 1 or conv.OW < 1:
        return "the kernel does not fit the padded image"
    if not conv.direct and conv.groups * conv.Kg * conv.NP > MAX_ADDRESSES:
        return f"{conv.groups * conv.Kg * conv.NP} gathered elements (at most {MAX_ADDRESSES})"
    return conv


def im2col_part(c: Conv, fname: str, el: str) -> LoweredPart:
    """The gather of the column matrix (see the module doc); `el`: the input's element
    type in memory."""
    return gather_elements(c.addresses(), c.N * c.C * c.H * c.W, c.x.name, c.n.name, fname,
                           el, (c.groups * c.Kg, c.NP), 0.0, "im2col")


def gather_elements(addrs: np.ndarray, size: int, src: str, key: str, fname: str, el: str,
                    shape: tuple[int, ...], pad: float | None, role: str, width: int = 1,
                    out: str | None = None) -> LoweredPart:
    """A part gathering `1 x width` tiles (rows of the `[size / width, width]` view) of
    the tensor `src` (`size` elements, then, if `pad` is a number, one padding tile of it)
    at the compile-time tile addresses `addrs`, stored as `shape`: a `metadata_gen` of
    `1x1` address tiles drives a `random_offchip_load`. `out`: the output's name (default
    a synthetic `<key>:cols` / `<key>:windows`)."""
    L, table = len(addrs), size // width + (pad is not None)
    nb = 2 if el in ("bf16", "f16") else 4
    addr = layout({"arg0": table * width * nb, "result0": L * width * 4}, {})
    g = Graph(fname)
    ids = g.metadata_gen([int(a) for a in addrs], name="addrs")
    dtype = f32 if el == "f32" else glue_dtype(el)
    vals = g.random_load(ids, (1, width), dtype, in_shape=(table,), base_addr=addr["arg0"],
                         name="arg0")
    vals.store(base_addr=addr["result0"])
    lowered = Lowered(g, addr, [Layout(1, width, L, 1)], [shape], [(0, (table, width))])
    name = out or f"{key}:{'cols' if role == 'im2col' else 'windows'}"
    if pad is None:
        return LoweredPart("dense", g.module(), None, {"arg0": src}, 1, outputs=[name],
                           lowered=lowered, role=role, out_shapes=[shape], covered=set())
    padded = f"{key}:padded_input"
    return LoweredPart("dense", g.module(), None, {"arg0": padded}, 1, outputs=[name],
                       lowered=lowered, role=role, out_shapes=[shape], covered=set(),
                       derive={padded: lambda v: np.append(np.ravel(v[src]), pad)})


def glue_dtype(el: str):
    return BFloat16Type() if el == "bf16" else Float16Type()


def conv_module(c: Conv, fname: str, cols_el: str) -> ModuleOp:
    """The conv's matmul (+ bias) as linalg on tensors."""
    g, Og, Kg, P = c.groups, c.Og, c.Kg, c.NP
    wel = glue.element(c.w)
    bel = glue.element(c.b) if c.b is not None else "f32"
    batch = () if g == 1 else (g,)
    args = [tensor_type((*batch, Og, Kg), wel), tensor_type((*batch, Kg, P), cols_el)]
    if c.b is not None:
        args.append(tensor_type((*batch, Og, 1), bel))
    fn = LinalgFunc(fname, args)
    zero = fn.const(0.0)
    acc = fn.fill(zero, (*batch, Og, P))
    r = fn.named(MatmulOp if g == 1 else BatchMatmulOp, fn.args[:2], acc)
    if c.b is not None:
        ids, col = ("d0, d1", "d0, 0") if g == 1 else ("d0, d1, d2", "d0, d1, 0")

        def add_bias(s, a):
            return s.add(a[0], s.extf(a[1]) if bel != "f32" else a[1])

        r = fn.generic([r, fn.args[2]], fn.empty((*batch, Og, P)), [ids, col, ids],
                       "p" * (len(batch) + 2), add_bias)
    return fn.module([r])


MAX_PLANE = 1 << 16  # a depthwise conv's image plane held on chip as one tile: at most this


def depthwise(c: Conv) -> bool:
    """A depthwise conv with an odd square kernel, stride 1, no dilation and padding `k // 2`
    (ConvNeXt's 7x7, MobileNet's 3x3): a tile-level `depthwise_same[k]` per image plane."""
    return (c.groups == c.C == c.O and c.Cg == 1 and c.kh == c.kw and c.kh % 2 == 1
            and c.stride == (1, 1) and c.dilation == (1, 1)
            and c.padding == (c.kh // 2, c.kw // 2) and c.H * c.W <= MAX_PLANE)


def depthwise_part(c: Conv, fname: str) -> LoweredPart:
    """One part: every `[H, W]` plane `(n, c)` of the NCHW input a tile, its channel's `[1,
    k*k]` kernel a tile, `depthwise_same[k]`, the bias (a `1x1` tile per plane) added; the
    planes stored in order are the NCHW output. No im2col: the image is read once."""
    N, C, H, W, k = c.N, c.C, c.H, c.W, c.kh
    x_el = glue.element(c.x) if c.x.op == "placeholder" else "f32"
    nb = {"f32": 4}.get(x_el, 2)
    wnb = 4 if glue.element(c.w) == "f32" else 2
    addr = layout({"arg0": N * C * H * W * nb, "arg1": C * k * k * wnb,
                   **({"arg2": C * wnb} if c.b is not None else {}),
                   "result0": N * C * H * W * 4}, {})
    g = Graph(fname)
    dtype = f32 if x_el == "f32" else glue_dtype(x_el)
    wdt = f32 if glue.element(c.w) == "f32" else glue_dtype(glue.element(c.w))
    x = g.load((H, W), dtype, [N, C, 1], base_addr=addr["arg0"], name="arg0")
    # the channel's kernel for plane (n, c): the C kernels walked N times (stride 0 on n)
    w = g.load((1, k * k), wdt, [N, C, 1], in_shape=[1, C, 1], stride=[0, 1, 1],
               base_addr=addr["arg1"], name="arg1")
    y = x.map(member_name("depthwise_same", k), w, dtype=f32, name="dw")
    loads = [(0, (N * C * H, W)), (1, (C, k * k))]
    if c.b is not None:
        b = g.load((1, 1), wdt, [N, C, 1], in_shape=[1, C, 1], stride=[0, 1, 1],
                   base_addr=addr["arg2"], name="arg2")
        y = y.map("add", b, dtype=f32, name="bias")
        loads.append((2, (C, 1)))
    y.store(base_addr=addr["result0"])
    lowered = Lowered(g, addr, [Layout(H, W, N * C, 1)], [glue.static(c.n)], loads)
    inputs = {"arg0": c.x.name, "arg1": c.w.name, **({"arg2": c.b.name} if c.b else {})}
    return LoweredPart("dense", g.module(), None, inputs, N * C, outputs=[c.n.name],
                       lowered=lowered, role="dwconv", out_shapes=[glue.static(c.n)],
                       covered={c.n})


def conv_parts(c: Conv, fname: str, tile_n: int) -> list[LoweredPart]:
    """The im2col part (unless direct) and the conv part of `c` (ValueError or
    OpDiagnosticError when the matmul cannot be tiled); a `depthwise` conv is one part."""

    if depthwise(c):
        return [depthwise_part(c, f"{fname}_dw")]
    parts = []
    # an input another part computed is stored f32; an argument keeps its element type
    x_el = glue.element(c.x) if c.x.op == "placeholder" else "f32"
    if c.direct:
        cols_name, cols_el = c.x.name, x_el
    else:
        parts.append(im2col_part(c, f"{fname}_im2col", x_el))
        cols_name, cols_el = parts[0].outputs[0], "f32"
    tn = tile_n if tile_n < c.NP and c.NP % tile_n == 0 else c.NP
    module = conv_module(c, fname, cols_el)
    (low,) = lower_module(module, tile=f"{c.Og}x{tn}x{c.Kg}", schedule="mnk")
    inputs = {"arg0": c.w.name, "arg1": cols_name}
    if c.b is not None:
        inputs["arg2"] = c.b.name
    if c.N == 1:
        parts.append(LoweredPart("dense", module, None, inputs, 1, outputs=[c.n.name],
                                 lowered=low, role="conv", out_shapes=[glue.static(c.n)],
                                 covered={c.n}))
        return parts
    # several images: the matmul gives [O, N, OH*OW] (CNHW); a row gather makes it NCHW
    cnhw = f"{c.n.name}:cnhw"
    parts.append(LoweredPart("dense", module, None, inputs, c.N, outputs=[cnhw], lowered=low,
                             role="conv", out_shapes=[(c.O * c.N, c.P)], covered=set()))
    rows = np.arange(c.O * c.N).reshape(c.O, c.N).T.reshape(-1)  # row (n, o) reads (o, n)
    move = gather_elements(rows, c.O * c.N * c.P, cnhw, c.n.name, f"{fname}_nchw", "f32",
                           (c.N * c.O, c.P), None, "move", width=c.P, out=c.n.name)
    move.covered, move.out_shapes = {c.n}, [glue.static(c.n)]
    parts.append(move)
    return parts


def is_conv(n) -> bool:
    return getattr(n, "op", None) == "call_function" and name_of(n) in CONV2D + CONV1D
