"""numpy semantics of the tensor / linalg / TOSA ops that real frontends emit (step-run's host half).

`HOST_OPS[name](op, args, shape)` returns the op's results as a list of numpy arrays, for ops
torch-mlir's linalg-on-tensors and TOSA outputs and IREE's ONNX route contain besides the
ones `host.Interpreter.eval` handles itself: `tensor.pad`, `expand_shape`, `collapse_shape`,
`insert_slice`, `concat`, `extract`, `linalg.broadcast`, `batch_matmul`,
`depthwise_conv_2d_nchw_chw`, `conv_1d_ncw_fcw`, `conv_2d_nchw_fchw` with a bias init,
`pooling_nchw_max/sum`, `linalg.reduce`-free elementwise named ops, and TOSA's
`transpose`, `slice`, `conv2d`, `depthwise_conv2d`, `matmul`, `pow`, `negate`, `erf`, `select`,
`greater`, `maximum`, `minimum`, `cast`, `avg_pool2d`, `reduce_*`.  Every op here is checked
against numpy / torch in test/unit/ila/test_ila_host_ops.py.

Example::

    HOST_OPS["tensor.pad"](op, [x], (1, 3, 10, 10))
"""

from __future__ import annotations

import math

import numpy as np

from steplus.runtime.ila.core import IlaError


def _ints(op, name) -> tuple[int, ...]:
    a = op.properties.get(name)
    if a is None:
        a = op.attributes.get(name)
    if a is None:
        raise IlaError(f"step-run: '{op.name}' has no '{name}'", op)
    return tuple(int(v) for v in a.get_values())


def _f32(x) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype.kind == "f" else x


def _static(op, what, vals) -> None:
    if any(v < 0 for v in vals):
        raise IlaError(f"step-run: '{op.name}' with dynamic {what} is not supported", op)


def _pad(op, a, shape):
    low, high = _ints(op, "static_low"), _ints(op, "static_high")
    _static(op, "padding", low + high)
    if len(op.operands) != 1:
        raise IlaError("step-run: 'tensor.pad' with dynamic padding is not supported", op)
    body = op.regions[0].block
    y = body.last_op
    val = y.operands[0] if y is not None and y.operands else None
    from steplus.passes.isel.constants import splat_value

    owner = getattr(val, "owner", None)
    if owner is None or owner.parent_block() is body or splat_value(owner) is None:
        raise IlaError("step-run: 'tensor.pad' must yield a constant defined outside its body", op)
    x = np.asarray(a[0])
    return [np.pad(x, list(zip(low, high)), constant_values=splat_value(owner)).astype(x.dtype)]


def _reshape(op, a, shape):
    return [np.asarray(a[0]).reshape(shape)]


def _insert_slice(op, a, shape):
    offs, sizes, steps = _ints(op, "static_offsets"), _ints(op, "static_sizes"), _ints(op, "static_strides")
    _static(op, "offsets or sizes", offs + sizes)
    if len(op.operands) != 2:
        raise IlaError("step-run: 'tensor.insert_slice' with dynamic offsets is not supported", op)
    dest = np.array(a[1], copy=True)
    src = np.asarray(a[0])
    idx = tuple(slice(o, o + k * s, s) for o, k, s in zip(offs, sizes, steps))
    dest[idx] = src.reshape(dest[idx].shape)
    return [dest]


def _concat(op, a, shape):
    return [np.concatenate([np.asarray(x) for x in a], axis=int(op.properties["dim"].value.data))]


def _broadcast(op, a, shape):
    dims = _ints(op, "dimensions")
    x = np.asarray(a[0])
    view = [1] * len(shape)
    kept = [d for d in range(len(shape)) if d not in dims]
    for ax, d in enumerate(kept):
        view[d] = x.shape[ax]
    return [np.broadcast_to(x.reshape(view), shape).copy()]


def _batch_matmul(op, a, shape):
    return [_f32(np.asarray(a[2]) + np.matmul(a[0], a[1]))]


def _windows(x, kh, kw, sh, sw, dh, dw, oh, ow):
    """x[..., i*dh + sh*r, j*dw + sw*c] for every kernel offset (i, j): shape (kh, kw, ..., oh, ow)."""
    return np.stack([np.stack([x[..., i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                               for j in range(kw)]) for i in range(kh)])


def _depthwise(op, a, shape):
    x, w, init = (np.asarray(v) for v in a)
    (sh, sw), (dh, dw) = _ints(op, "strides"), _ints(op, "dilations")
    kh, kw = w.shape[1:]
    oh, ow = shape[2], shape[3]
    win = _windows(x, kh, kw, sh, sw, dh, dw, oh, ow)  # kh, kw, n, c, oh, ow
    return [_f32(init + np.einsum("ijnchw,cij->nchw", win, w))]


def _conv1d(op, a, shape):
    x, w, init = (np.asarray(v) for v in a)
    (s,), (d,) = _ints(op, "strides"), _ints(op, "dilations")
    ow = shape[2]
    cols = np.stack([x[:, :, k * d:k * d + s * (ow - 1) + 1:s] for k in range(w.shape[2])])  # k, n, c, ow
    return [_f32(init + np.einsum("kncw,fck->nfw", cols, w))]


def _conv2d(op, a, shape):
    x, w, init = (np.asarray(v) for v in a)
    (sh, sw), (dh, dw) = _ints(op, "strides"), _ints(op, "dilations")
    win = _windows(x, w.shape[2], w.shape[3], sh, sw, dh, dw, shape[2], shape[3])  # kh, kw, n, c, oh, ow
    return [_f32(init + np.einsum("ijnchw,fcij->nfhw", win, w))]


def _pool(reduce, combine):
    def f(op, a, shape):
        x, k, init = (np.asarray(v) for v in a)
        (sh, sw), (dh, dw) = _ints(op, "strides"), _ints(op, "dilations")
        win = _windows(x, k.shape[0], k.shape[1], sh, sw, dh, dw, shape[2], shape[3])
        return [_f32(combine(init, reduce(win, axis=(0, 1))))]

    return f


_ELEMENTWISE = {"linalg.exp": np.exp, "linalg.log": np.log, "linalg.sqrt": np.sqrt}


def _named_unary(op, a, shape):
    return [_f32(_ELEMENTWISE[op.name](a[0]))]


def _copy(op, a, shape):
    return [np.array(a[0], copy=True)]


# -- TOSA -----------------------------------------------------------------------------------------

def _const_operand(op, k):
    """The integer values of a constant operand (`tosa.const_shape`, `tosa.const`)."""
    from steplus.passes.isel.constants import CONSTANT_OPS, constant_array

    owner = op.operands[k].owner
    if owner.name == "tosa.const_shape":
        return tuple(int(v) for v in owner.properties["values"].get_values())
    if owner.name in CONSTANT_OPS:
        return tuple(int(v) for v in constant_array(owner).reshape(-1))
    raise IlaError(f"step-run: '{op.name}' needs a constant operand {k}", op)


def _tosa_transpose(op, a, shape):
    perms = _ints(op, "perms")
    return [np.transpose(a[0], perms).copy()]


def _tosa_slice(op, a, shape):
    start = _const_operand(op, 1)
    idx = tuple(slice(s, s + k) for s, k in zip(start, shape))
    return [np.asarray(a[0])[idx].copy()]


def _tosa_conv(depthwise: bool):
    def f(op, a, shape):
        x, w, b = (np.asarray(v) for v in a[:3])
        pt, pb, pl, pr = _ints(op, "pad")
        sh, sw = _ints(op, "stride")
        dh, dw = _ints(op, "dilation")
        xp = np.pad(x, [(0, 0), (pt, pb), (pl, pr), (0, 0)])
        xc = np.transpose(xp, (0, 3, 1, 2))  # NCHW
        oh, ow = shape[1], shape[2]
        if depthwise:  # w: KH, KW, C, M -> out channel c*M + m
            kh, kw, c, m = w.shape
            win = _windows(xc, kh, kw, sh, sw, dh, dw, oh, ow)  # kh, kw, n, c, oh, ow
            y = np.einsum("ijnchw,ijcm->nhwcm", win, w).reshape(x.shape[0], oh, ow, c * m)
        else:  # w: O, KH, KW, C
            win = _windows(xc, w.shape[1], w.shape[2], sh, sw, dh, dw, oh, ow)
            y = np.einsum("ijnchw,oijc->nhwo", win, w)
        return [_f32(y + b.reshape(-1))]

    return f


def _tosa_avg_pool(op, a, shape):
    kh, kw = _ints(op, "kernel")
    sh, sw = _ints(op, "stride")
    pt, pb, pl, pr = _ints(op, "pad")
    x = np.asarray(a[0])
    xp = np.transpose(np.pad(x, [(0, 0), (pt, pb), (pl, pr), (0, 0)]), (0, 3, 1, 2))
    ones = np.transpose(np.pad(np.ones_like(x), [(0, 0), (pt, pb), (pl, pr), (0, 0)]), (0, 3, 1, 2))
    win = _windows(xp, kh, kw, sh, sw, 1, 1, shape[1], shape[2]).sum(axis=(0, 1))
    cnt = _windows(ones, kh, kw, sh, sw, 1, 1, shape[1], shape[2]).sum(axis=(0, 1))  # pads do not count
    return [_f32(np.transpose(win / cnt, (0, 2, 3, 1)))]


def _reduce(fn):
    def f(op, a, shape):
        return [_f32(fn(a[0], axis=int(op.properties["axis"].value.data), keepdims=True))]

    return f


def _tosa_cast(op, a, shape):
    elt = str(op.results[0].type.element_type)
    x = np.asarray(a[0])
    if elt.startswith("f"):
        return [x.astype(np.float32)]
    if elt == "i1":
        return [x != 0]
    return [np.rint(x).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)]


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


_TOSA_BINARY = {"tosa.pow": np.power, "tosa.maximum": np.maximum, "tosa.minimum": np.minimum,
                "tosa.greater": np.greater, "tosa.greater_equal": np.greater_equal, "tosa.equal": np.equal,
                "tosa.logical_and": np.logical_and, "tosa.intdiv": np.floor_divide}
_TOSA_UNARY = {"tosa.negate": np.negative, "tosa.erf": _erf, "tosa.log": np.log, "tosa.abs": np.abs,
               "tosa.floor": np.floor, "tosa.ceil": np.ceil}


def _tosa_binary(op, a, shape):
    return [_f32(_TOSA_BINARY[op.name](a[0], a[1]))]


def _tosa_unary(op, a, shape):
    return [_f32(_TOSA_UNARY[op.name](a[0]))]


def _tosa_select(op, a, shape):
    return [_f32(np.where(a[0], a[1], a[2]))]


def _tosa_identity(op, a, shape):
    return [np.array(a[0], copy=True)]


HOST_OPS = {
    "tensor.pad": _pad, "tensor.expand_shape": _reshape, "tensor.collapse_shape": _reshape,
    "tensor.reshape": _reshape, "tensor.cast": _reshape, "tensor.insert_slice": _insert_slice,
    "tensor.concat": _concat, "linalg.broadcast": _broadcast, "linalg.batch_matmul": _batch_matmul,
    "linalg.depthwise_conv_2d_nchw_chw": _depthwise, "linalg.conv_1d_ncw_fcw": _conv1d,
    "linalg.conv_2d_nchw_fchw": _conv2d, "linalg.copy": _copy,
    "linalg.pooling_nchw_max": _pool(np.max, np.maximum), "linalg.pooling_nchw_sum": _pool(np.sum, np.add),
    **{k: _named_unary for k in _ELEMENTWISE},
    "tosa.transpose": _tosa_transpose, "tosa.slice": _tosa_slice, "tosa.conv2d": _tosa_conv(False),
    "tosa.depthwise_conv2d": _tosa_conv(True), "tosa.avg_pool2d": _tosa_avg_pool,
    "tosa.reduce_min": _reduce(np.min), "tosa.reduce_product": _reduce(np.prod), "tosa.cast": _tosa_cast,
    "tosa.reduce_all": _reduce(np.all), "tosa.reduce_any": _reduce(np.any),
    "tosa.select": _tosa_select, "tosa.identity": _tosa_identity,
    **{k: _tosa_binary for k in _TOSA_BINARY}, **{k: _tosa_unary for k in _TOSA_UNARY},
}
