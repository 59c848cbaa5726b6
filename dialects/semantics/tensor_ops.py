# pyright: strict
"""The table of tensor-op semantics: each op's meaning written once, over any value domain.

`TensorSemantics` holds one `@impl` method per op (or family of ops) of the tensor programs isel
reads and step-run executes: `arith.constant`, `tensor.*` (empty, dim, pad, slices, reshapes,
concat), `linalg.*` (fill, matmul, batch_matmul, transpose, broadcast, convolutions, pooling,
elementwise named ops, `linalg.generic` in `generic.py`), the TOSA ops torch-mlir emits, and the
host layout ops of the ila dialect (`ila.windows`, `ila.im2col`).  Arithmetic goes through the
domain (`self.d`, `domain.py`), so the same method is step-run's numpy meaning and isel-verify's
symbolic one.  Accelerator ops are written once too (`ila.invoke` reshapes what
`self.accelerator(callee, args, attrs)` returns), the hook being what differs: the runtime runs
the ILA simulators, isel-verify builds the accelerator's abstract specification.

Example::

    sem = TensorSemantics(NumpyDomain())
    sem.apply(matmul_op, [a, b, c])         # [c + a @ b] as float32
"""

# pyright: strict

from __future__ import annotations

from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, tensor, tosa
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, ShapedType, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Data, Operation

from steplus.dialects import ila, linalg_ext, tosa_ext
from steplus.dialects.ila.host import Im2colOp, WindowsOp
from steplus.dialects.semantics.arith import ArithSemantics
from steplus.dialects.semantics.constants import CONSTANT_OPS, ConstantError, constant_array, splat_value
from steplus.dialects.semantics.generic import eval_generic
from steplus.dialects.semantics.registry import SemanticsError, impl, register_semantics
from steplus.utils.layouts import im2col_nchw

Values = list[Any]


def result_shape(op: Operation) -> tuple[int, ...]:
    """The static shape of `op`'s first result (`()` for a scalar or no result)."""
    t = op.results[0].type if op.results else None
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _values(a: Attribute | None) -> tuple[int, ...] | None:
    """The integers of an array attribute (`array<i64: ...>`, `dense<...>`), or None."""
    if isinstance(a, DenseArrayBase | DenseIntOrFPElementsAttr):
        return tuple(int(v) for v in a.get_values())
    return None


def ints(op: Operation, name: str) -> tuple[int, ...]:
    """An integer-array property or attribute of `op` (a SemanticsError if it has none)."""
    a = op.properties.get(name)
    vals = _values(a if a is not None else op.attributes.get(name))
    if vals is None:
        raise SemanticsError(f"'{op.name}' has no '{name}'", op)
    return vals


def _number(op: Operation, name: str) -> float | int:
    """A scalar property of `op` (`axis = 1 : i32`, `min_val = 0.0 : f32`)."""
    a = op.properties.get(name)
    if not isinstance(a, IntegerAttr | FloatAttr):
        raise SemanticsError(f"'{op.name}' has no scalar '{name}'", op)
    return a.value.data


def _int_prop(op: Operation, name: str) -> int:
    return int(_number(op, name))


def _static(op: Operation, what: str, vals: tuple[int, ...]) -> None:
    if any(v < 0 for v in vals):
        raise SemanticsError(f"'{op.name}' with dynamic {what} is not supported", op)


def windows(x: Any, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int) -> np.ndarray:
    """x[..., i*dh + sh*r, j*dw + sw*c] for every kernel offset (i, j): shape (kh, kw, ..., oh, ow)."""
    return np.stack([np.stack([x[..., i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                               for j in range(kw)]) for i in range(kh)])


def windows_nhwc(x: Any, kernel: tuple[int, ...], stride: tuple[int, ...], pad: tuple[int, ...],
                 fill: Any) -> np.ndarray:
    """`ila.windows`: the (kh*kw, N*OH*OW*C) rows of NHWC max-pool windows, padding read as `fill`."""
    n, h, w, c = np.shape(x)
    kh, kw = kernel
    sh, sw = stride
    pt, pb, pl, pr = pad
    xp = np.empty((n, h + pt + pb, w + pl + pr, c), dtype=np.asarray(x).dtype)
    xp[...] = fill
    xp[:, pt:pt + h, pl:pl + w] = x
    oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
    return np.stack([xp[:, i:i + sh * oh:sh, j:j + sw * ow:sw, :].reshape(-1) for i in range(kh) for j in range(kw)])


# steplus' TOSA op classes, by name
_TOSA: dict[str, type[Operation]] = {op.name: op for op in cast(list[type[Operation]], tosa_ext.EXTRA_OPS)}

_ELEMENTWISE_BINARY: dict[type[Operation], str] = {
    linalg.AddOp: "add", tosa.AddOp: "add", linalg.SubOp: "sub", tosa.SubOp: "sub", linalg.MulOp: "mul",
    tosa.MulOp: "mul", _TOSA["tosa.pow"]: "pow", _TOSA["tosa.maximum"]: "max", _TOSA["tosa.minimum"]: "min",
    _TOSA["tosa.logical_and"]: "and"}
_ELEMENTWISE_UNARY: dict[type[Operation], str] = {
    tosa_ext.SigmoidOp: "sigmoid", tosa_ext.TanhOp: "tanh", tosa_ext.ExpOp: "exp", tosa.ReciprocalOp: "recip",
    tosa_ext.RsqrtOp: "rsqrt", linalg.ExpOp: "exp", linalg.LogOp: "log", linalg.SqrtOp: "sqrt",
    _TOSA["tosa.negate"]: "neg", _TOSA["tosa.erf"]: "erf", _TOSA["tosa.log"]: "log", _TOSA["tosa.abs"]: "abs",
    _TOSA["tosa.floor"]: "floor", _TOSA["tosa.ceil"]: "ceil"}
_COMPARE: dict[type[Operation], str] = {_TOSA["tosa.greater"]: ">", _TOSA["tosa.greater_equal"]: ">=",
                                        _TOSA["tosa.equal"]: "=="}
_REDUCE: dict[type[Operation], str] = {
    tosa.ReduceMaxOp: "max", tosa.ReduceSumOp: "sum", tosa.ReduceMinOp: "min", tosa.ReduceProductOp: "prod",
    tosa.ReduceAllOp: "all", tosa.ReduceAnyOp: "any"}


def _kind(table: dict[type[Operation], str], op: Operation) -> str:
    """`op`'s entry in a class-keyed table (an op of a subclass reads its base's)."""
    return next(v for k, v in table.items() if isinstance(op, k))


@register_semantics
class TensorSemantics(ArithSemantics):
    """The meaning of every tensor op step-run executes and isel-verify proves (see module doc)."""

    def accelerator(self, callee: str, args: Values, attrs: dict[str, Any]) -> Any:
        """The value of accelerator function `callee` (an `ila.invoke`); subclasses define it."""
        raise SemanticsError(f"no {self.d.name} semantics for accelerator function '{callee}'")

    # -- constants and tensor creation ----------------------------------------------------------
    @impl(arith.ConstantOp, tosa_ext.ConstOp, tosa.ConstOp)  # isel emits xDSL's tosa.const
    def constant(self, op: Operation, a: Values) -> Values:
        try:
            arr = constant_array(op, self.max_elements)
        except ConstantError as e:
            raise SemanticsError(str(e), op) from None
        v = self.d.lift(arr, f"'{op.name}'")
        if op.results and not hasattr(op.results[0].type, "get_shape"):  # a scalar (index, f32)
            return [v.item() if isinstance(v, np.ndarray) else v]
        return [v]

    @impl(tosa_ext.ConstShapeOp)
    def const_shape(self, op: Operation, a: Values) -> Values:
        return [ints(op, "values")]

    @impl(tensor.EmptyOp)
    def empty(self, op: Operation, a: Values) -> Values:
        it = iter(a)
        shape = tuple(int(next(it)) if d < 0 else d for d in result_shape(op))
        limit = self.max_elements
        if min(shape, default=0) < 0 or (limit is not None and np.prod(shape, dtype=np.float64) > limit):
            raise SemanticsError(f"'tensor.empty' of shape {list(shape)} is negative or larger than the "
                                 f"limit of {limit} elements per tensor", op)
        return [self.d.empty(shape)]

    @impl(tensor.DimOp)
    def dim(self, op: Operation, a: Values) -> Values:
        return [np.shape(a[0])[int(a[1])]]

    @impl(linalg.FillOp)
    def fill(self, op: Operation, a: Values) -> Values:
        return [self.d.full(result_shape(op), a[0])]

    # -- layout ---------------------------------------------------------------------------------
    @impl(tosa_ext.ReshapeOp, tensor.ExpandShapeOp, tensor.CollapseShapeOp, tensor.ReshapeOp, tensor.CastOp)
    def reshape(self, op: Operation, a: Values) -> Values:
        return [np.reshape(a[0], result_shape(op))]

    @impl(linalg.CopyOp, _TOSA["tosa.identity"])
    def copy(self, op: Operation, a: Values) -> Values:
        return [np.array(a[0], copy=True)]

    @impl(linalg.TransposeOp)
    def transpose(self, op: Operation, a: Values) -> Values:
        return [np.transpose(a[0], ints(op, "permutation")).copy()]

    @impl(_TOSA["tosa.transpose"])
    def tosa_transpose(self, op: Operation, a: Values) -> Values:
        return [np.transpose(a[0], ints(op, "perms")).copy()]

    @impl(tosa.ConcatOp)
    def tosa_concat(self, op: Operation, a: Values) -> Values:
        return [np.concatenate(a, axis=_int_prop(op, "axis"))]

    @impl(tensor.ConcatOp)
    def concat(self, op: Operation, a: Values) -> Values:
        return [np.concatenate(a, axis=_int_prop(op, "dim"))]

    @impl(tensor.ExtractSliceOp)
    def extract_slice(self, op: Operation, a: Values) -> Values:
        offs = ints(op, "static_offsets")
        return [np.asarray(a[0])[tuple(slice(o, o + s) for o, s in zip(offs, result_shape(op)))].copy()]

    @impl(tensor.InsertSliceOp)
    def insert_slice(self, op: Operation, a: Values) -> Values:
        offs, sizes, steps = ints(op, "static_offsets"), ints(op, "static_sizes"), ints(op, "static_strides")
        _static(op, "offsets or sizes", offs + sizes)
        if len(op.operands) != 2:
            raise SemanticsError("'tensor.insert_slice' with dynamic offsets is not supported", op)
        dest = np.array(a[1], copy=True)
        idx = tuple(slice(o, o + k * s, s) for o, k, s in zip(offs, sizes, steps))
        dest[idx] = np.reshape(a[0], dest[idx].shape)
        return [dest]

    @impl(_TOSA["tosa.slice"])
    def tosa_slice(self, op: Operation, a: Values) -> Values:
        start = self._const_operand(op, 1)
        return [np.asarray(a[0])[tuple(slice(s, s + k) for s, k in zip(start, result_shape(op)))].copy()]

    @impl(tensor.PadOp)
    def pad(self, op: Operation, a: Values) -> Values:
        low, high = ints(op, "static_low"), ints(op, "static_high")
        _static(op, "padding", low + high)
        if len(op.operands) != 1:
            raise SemanticsError("'tensor.pad' with dynamic padding is not supported", op)
        body = op.regions[0].block
        y = body.last_op
        owner = getattr(y.operands[0], "owner", None) if y is not None and y.operands else None
        value = splat_value(owner) if isinstance(owner, Operation) and owner.parent_block() is not body else None
        if value is None:
            raise SemanticsError("'tensor.pad' must yield a constant defined outside its body", op)
        return [self.pad_value(a[0], low, high, value)]

    def pad_value(self, x: Any, low: tuple[int, ...], high: tuple[int, ...], value: float) -> np.ndarray:
        """`x` padded by `low`/`high` elements per axis with the constant `value`."""
        shape = tuple(s + lo + hi for s, lo, hi in zip(np.shape(x), low, high))
        out = self.d.full(shape, self.d.scalar(float(value)), like=x)
        out[tuple(slice(lo, lo + s) for lo, s in zip(low, np.shape(x)))] = x
        return out

    @impl(linalg.BroadcastOp)
    def broadcast(self, op: Operation, a: Values) -> Values:
        dims, shape = ints(op, "dimensions"), result_shape(op)
        x = np.asarray(a[0])
        view = [1] * len(shape)
        for ax, d in enumerate(k for k in range(len(shape)) if k not in dims):
            view[d] = x.shape[ax]
        return [np.broadcast_to(x.reshape(view), shape).copy()]

    @impl(WindowsOp)
    def ila_windows(self, op: Operation, a: Values) -> Values:
        return [windows_nhwc(a[0], ints(op, "kernel"), ints(op, "stride"), ints(op, "pad"), self.d.lowest)]

    @impl(Im2colOp)
    def ila_im2col(self, op: Operation, a: Values) -> Values:
        kh, kw = ints(op, "kernel")
        sh, sw = ints(op, "stride")
        return [im2col_nchw(np.asarray(a[0]), (kh, kw), (sh, sw))]

    # -- elementwise ----------------------------------------------------------------------------
    @impl(*_ELEMENTWISE_BINARY)
    def elementwise_binary(self, op: Operation, a: Values) -> Values:
        return [self.d.binary(_kind(_ELEMENTWISE_BINARY, op), a[0], a[1])]

    @impl(_TOSA["tosa.intdiv"])
    def intdiv(self, op: Operation, a: Values) -> Values:
        return [self.d.integer("divsi", a[0], a[1])]

    @impl(*_ELEMENTWISE_UNARY)
    def elementwise_unary(self, op: Operation, a: Values) -> Values:
        return [self.d.unary(_kind(_ELEMENTWISE_UNARY, op), a[0])]

    @impl(*_COMPARE)
    def compare(self, op: Operation, a: Values) -> Values:
        return [self.d.compare(_kind(_COMPARE, op), a[0], a[1])]

    @impl(_TOSA["tosa.select"])
    def tosa_select(self, op: Operation, a: Values) -> Values:
        return [self.d.f32(self.d.select(a[0], a[1], a[2]))]

    @impl(tosa.ClampOp)
    def clamp(self, op: Operation, a: Values) -> Values:
        lo, hi = (self.d.scalar(float(_number(op, k))) for k in ("min_val", "max_val"))
        return [self.d.binary("min", self.d.binary("max", a[0], lo), hi)]

    @impl(_TOSA["tosa.cast"])
    def cast(self, op: Operation, a: Values) -> Values:
        t = op.results[0].type
        return [self.d.cast(a[0], str(cast(TensorType[Attribute], t).element_type if isinstance(t, TensorType) else t))]

    @impl(linalg.GenericOp)
    def generic(self, op: Operation, a: Values) -> Values:
        assert isinstance(op, linalg.GenericOp)
        outer = {v: self.env[v] for bop in op.body.block.ops for v in bop.operands if v in self.env}
        return eval_generic(self.d, op, a, outer, self)

    # -- reductions -----------------------------------------------------------------------------
    @impl(*_REDUCE)
    def reduce(self, op: Operation, a: Values) -> Values:
        return [self.d.reduce(_kind(_REDUCE, op), a[0], (_int_prop(op, "axis"),), keepdims=True)]

    @impl(tosa.MaxPool2DOp)
    def max_pool(self, op: Operation, a: Values) -> Values:
        win = windows_nhwc(a[0], ints(op, "kernel"), ints(op, "stride"), ints(op, "pad"), self.d.lowest)
        return [np.reshape(self.d.reduce("max", win, (0,)), result_shape(op))]

    @impl(tosa.AvgPool2DOp)
    def avg_pool(self, op: Operation, a: Values) -> Values:
        (kh, kw), (sh, sw), (pt, pb, pl, pr) = ints(op, "kernel"), ints(op, "stride"), ints(op, "pad")
        shape = result_shape(op)
        pads = (0, pt, pl, 0), (0, pb, pr, 0)
        xp = np.transpose(self.pad_value(a[0], *pads, 0.0), (0, 3, 1, 2))
        ones = np.transpose(np.pad(np.ones(np.shape(a[0])), [(0, 0), (pt, pb), (pl, pr), (0, 0)]), (0, 3, 1, 2))
        win = self.d.reduce("sum", windows(xp, kh, kw, sh, sw, 1, 1, shape[1], shape[2]), (0, 1))
        cnt = windows(ones, kh, kw, sh, sw, 1, 1, shape[1], shape[2]).sum(axis=(0, 1))  # pads do not count
        return [np.transpose(self.d.binary("div", win, self.d.lift(cnt, "'tosa.avg_pool2d'")), (0, 2, 3, 1))]

    @impl(linalg.PoolingNchwMaxOp, linalg_ext.PoolingNchwSumOp)
    def pooling(self, op: Operation, a: Values) -> Values:
        x, k, init = a
        (sh, sw), (dh, dw) = ints(op, "strides"), ints(op, "dilations")
        shape = result_shape(op)
        win = windows(x, np.shape(k)[0], np.shape(k)[1], sh, sw, dh, dw, shape[2], shape[3])
        kind = "max" if op.name.endswith("max") else "sum"
        return [self.d.binary("max" if kind == "max" else "add", init, self.d.reduce(kind, win, (0, 1)))]

    # -- contractions ---------------------------------------------------------------------------
    @impl(linalg.MatmulOp, linalg_ext.BatchMatmulOp)
    def matmul(self, op: Operation, a: Values) -> Values:
        return [self.d.binary("add", a[2], self.d.matmul(a[0], a[1]))]

    @impl(_TOSA["tosa.matmul"])
    def tosa_matmul(self, op: Operation, a: Values) -> Values:
        return [self.d.matmul(a[0], a[1])]

    @impl(linalg.Conv2DNchwFchwOp)
    def conv2d(self, op: Operation, a: Values) -> Values:
        x, w, init = a
        (sh, sw), (dh, dw) = ints(op, "strides"), ints(op, "dilations")
        if (dh, dw) == (1, 1):
            return [self.d.binary("add", init, self.d.conv2d(x, w, (sh, sw)))]
        shape = result_shape(op)
        win = windows(x, np.shape(w)[2], np.shape(w)[3], sh, sw, dh, dw, shape[2], shape[3])  # kh kw n c oh ow
        return [self.d.binary("add", init, self.d.einsum("ijnchw,fcij->nfhw", win, w))]

    @impl(linalg_ext.DepthwiseConv2DNchwChwOp)
    def depthwise(self, op: Operation, a: Values) -> Values:
        x, w, init = a
        (sh, sw), (dh, dw) = ints(op, "strides"), ints(op, "dilations")
        shape = result_shape(op)
        win = windows(x, np.shape(w)[1], np.shape(w)[2], sh, sw, dh, dw, shape[2], shape[3])
        return [self.d.binary("add", init, self.d.einsum("ijnchw,cij->nchw", win, w))]

    @impl(linalg_ext.Conv1DNcwFcwOp)
    def conv1d(self, op: Operation, a: Values) -> Values:
        x, w, init = a
        (s,), (dl,) = ints(op, "strides"), ints(op, "dilations")
        ow = result_shape(op)[2]
        cols = np.stack([np.asarray(x)[:, :, k * dl:k * dl + s * (ow - 1) + 1:s] for k in range(np.shape(w)[2])])
        return [self.d.binary("add", init, self.d.einsum("kncw,fck->nfw", cols, w))]

    @impl(linalg.Conv2DNgchwGfchwOp)
    def grouped_conv(self, op: Operation, a: Values) -> Values:
        x, w, out = a
        _, _, _, h, wd = np.shape(x)
        _, _, _, kh, kw = np.shape(w)
        sh, sw = ints(op, "strides")
        oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
        for i in range(kh):
            for j in range(kw):
                xs = np.asarray(x)[:, :, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
                out = self.d.binary("add", out, self.d.einsum("ngchw,gfc->ngfhw", xs, np.asarray(w)[:, :, :, i, j]))
        return [out]

    @impl(_TOSA["tosa.conv2d"], _TOSA["tosa.depthwise_conv2d"])
    def tosa_conv(self, op: Operation, a: Values) -> Values:
        x, w, b = a[:3]
        pt, pb, pl, pr = ints(op, "pad")
        (sh, sw), (dh, dw) = ints(op, "stride"), ints(op, "dilation")
        xc = np.transpose(self.pad_value(x, (0, pt, pl, 0), (0, pb, pr, 0), 0.0), (0, 3, 1, 2))  # NCHW
        shape = result_shape(op)
        oh, ow = shape[1], shape[2]
        if op.name == "tosa.depthwise_conv2d":  # w: KH, KW, C, M -> out channel c*M + m
            kh, kw, c, m = np.shape(w)
            win = windows(xc, kh, kw, sh, sw, dh, dw, oh, ow)  # kh, kw, n, c, oh, ow
            y = np.reshape(self.d.einsum("ijnchw,ijcm->nhwcm", win, w), (np.shape(x)[0], oh, ow, c * m))
        else:  # w: O, KH, KW, C
            win = windows(xc, np.shape(w)[1], np.shape(w)[2], sh, sw, dh, dw, oh, ow)
            y = self.d.einsum("ijnchw,oijc->nhwo", win, w)
        return [self.d.binary("add", y, np.reshape(b, -1))]

    # -- accelerators ---------------------------------------------------------------------------
    @impl(ila.InvokeOp)
    def invoke(self, op: Operation, a: Values) -> Values:
        assert isinstance(op, ila.InvokeOp)
        y = self.accelerator(op.callee.data, a, accelerator_attrs(op))
        return [np.reshape(self.d.to_float(y), result_shape(op))]

    def _const_operand(self, op: Operation, k: int) -> tuple[int, ...]:
        """The integer values of a constant operand (`tosa.const_shape`, `tosa.const`)."""
        owner = op.operands[k].owner
        if isinstance(owner, tosa_ext.ConstShapeOp):
            return ints(owner, "values")
        if isinstance(owner, Operation) and owner.name in CONSTANT_OPS:
            return tuple(int(v) for v in constant_array(owner).reshape(-1))
        raise SemanticsError(f"'{op.name}' needs a constant operand {k}", op)


def accelerator_attrs(op: Operation) -> dict[str, Any]:
    """An accelerator op's attributes as Python values (integer arrays as tuples, scalars as numbers)."""
    out: dict[str, Any] = {}
    for k, a in op.attributes.items():
        vals = _values(a)
        if vals is not None:
            out[k] = vals
        elif isinstance(a, IntegerAttr | FloatAttr):
            out[k] = a.value.data
        elif isinstance(a, Data):
            out[k] = cast(Data[Any], a).data
    return out
