"""Well-formedness of the tensor ops isel imports and isel-verify / step-run evaluate.

xDSL's TOSA and linalg verifiers check operand/result shapes of `matmul`,
`transpose` and elementwise ops, but not the geometry attributes of
`tosa.max_pool2d` or `linalg.conv_2d_nchw_fchw`, nor the axis of a
reduction or concatenation.  `op_problem(op)` returns a one-line reason an
op of that kind is malformed (or None); callers raise it as a diagnostic
located at the op, before the e-graph divides by a zero stride or numpy
indexes out of bounds.

Example::

    problem = op_problem(op)
    if problem is not None:
        raise OpDiagnosticError(op, f"isel: {problem}")
"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from steplus.dialects.ila.host import window_problem
from steplus.utils.attrs import int_values


def _shape(v) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if hasattr(t, "get_shape") else ()


def _attr(op: Operation, name: str):
    """A property or attribute (never `or`: an `IntegerAttr` of 0 is falsy)."""
    attr = op.properties.get(name)
    return op.attributes.get(name) if attr is None else attr


def _ints(op: Operation, name: str) -> tuple[int, ...] | None:
    return int_values(_attr(op, name))


def _axis(op: Operation) -> int | None:
    attr = _attr(op, "axis")
    return int(attr.value.data) if isinstance(attr, IntegerAttr | FloatAttr) else None


def _max_pool(op: Operation) -> str | None:
    kernel, stride, pad = _ints(op, "kernel"), _ints(op, "stride"), _ints(op, "pad")
    if kernel is None or stride is None or pad is None:
        return "expects kernel, stride and pad arrays"
    x = _shape(op.operands[0])
    problem = window_problem(x, kernel, stride, pad)
    if problem is not None:
        return problem
    if max(pad[:2]) >= kernel[0] or max(pad[2:]) >= kernel[1]:
        return "each pad must be smaller than the kernel (a window would hold only padding)"
    n, h, w, c = x
    oh = (h + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    if _shape(op.results[0]) != (n, oh, ow, c):
        return f"result shape must be {[n, oh, ow, c]}"
    return None


def _conv(op: Operation) -> str | None:
    strides, dil = _ints(op, "strides"), _ints(op, "dilations")
    if strides is None or dil is None or len(strides) != 2 or len(dil) != 2:
        return "expects 2 strides and 2 dilations"
    if min(strides) < 1 or min(dil) < 1:
        return "strides and dilations must be positive"
    x, w = _shape(op.operands[0]), _shape(op.operands[1])
    if len(x) != 4 or len(w) != 4 or x[1] != w[1]:
        return f"expects NCHW input and FCHW weights with the same C, got {list(x)} and {list(w)}"
    eh, ew = (w[2] - 1) * dil[0] + 1, (w[3] - 1) * dil[1] + 1
    if x[2] < eh or x[3] < ew:
        return "the kernel is larger than the input"
    out = (x[0], w[0], (x[2] - eh) // strides[0] + 1, (x[3] - ew) // strides[1] + 1)
    if _shape(op.results[0]) != out:
        return f"result shape must be {list(out)}"
    return None


def _reduce(op: Operation) -> str | None:
    x, axis = _shape(op.operands[0]), _axis(op)
    if axis is None or not 0 <= axis < len(x):
        return f"axis {axis} is out of range for rank {len(x)}"
    out = tuple(1 if i == axis else d for i, d in enumerate(x))
    if _shape(op.results[0]) != out:
        return f"result shape must be {list(out)}"
    return None


def _concat(op: Operation) -> str | None:
    shapes, axis = [_shape(v) for v in op.operands], _axis(op)
    rank = len(shapes[0]) if shapes else 0
    if axis is None or not 0 <= axis < rank:
        return f"axis {axis} is out of range for rank {rank}"
    if any(len(s) != rank or s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        return "operands must agree on every dimension but the axis"
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    if list(_shape(op.results[0])) != out:
        return f"result shape must be {out}"
    return None


def _slice(op: Operation) -> str | None:
    offs, sizes, steps = _ints(op, "static_offsets"), _ints(op, "static_sizes"), _ints(op, "static_strides")
    src = _shape(op.operands[0])
    if offs is None or sizes is None or len(offs) != len(src) or len(op.operands) != 1:
        return "step-run and isel support static slices only"
    if steps is not None and any(s != 1 for s in steps):
        return "slices with strides other than 1 are not supported"
    if any(o < 0 or k < 0 or o + k > d for o, k, d in zip(offs, sizes, src)):
        return f"slice offsets {list(offs)} and sizes {list(sizes)} exceed the source shape {list(src)}"
    return None


_CHECKS = {"tosa.max_pool2d": _max_pool, "linalg.conv_2d_nchw_fchw": _conv, "tosa.reduce_max": _reduce,
           "tosa.reduce_sum": _reduce, "tosa.concat": _concat, "tensor.extract_slice": _slice}


def op_problem(op: Operation) -> str | None:
    """Why `op` is malformed for isel / isel-verify / step-run, or None."""
    check = _CHECKS.get(op.name)
    if check is None or not op.results:
        return None
    return check(op)


def check_ops(root: Operation, who: str) -> None:
    """Raise a located `OpDiagnosticError` ("`who`: 'op': reason") at the first malformed op under `root`."""
    from steplus.utils.diagnostics import OpDiagnosticError

    for op in root.walk():
        problem = op_problem(op)
        if problem is not None:
            raise OpDiagnosticError(op, f"{who}: '{op.name}': {problem}")
