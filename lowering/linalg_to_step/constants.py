"""Tensor constants of an imported program: their values, as the off-chip tensors they become.

torch-mlir puts every parameter of a module in an `arith.constant
dense_resource<...>` (the bytes in the file's `{-# dialect_resources #-}`
blob: a 4-byte alignment, then the little-endian values), small or splat
tensors in `dense<...>`. `convert-linalg-to-step` reads each as an off-chip
tensor (an argument numbered after the function's own: `memory=argN=...`
places it) whose values `Lowered.constants` carries; a constant whose values
are all equal (a splat, torch's zero `h0`) is also a fill where it initializes
a matmul or a reduction.

Example: `tensor_values(op, lookup)` on `%w = arith.constant
dense_resource<torch_tensor_4_8_torch.float32> : tensor<4x8xf32>` gives the
`[4, 8]` float32 array of the blob.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type, DenseIntOrFPElementsAttr, DenseResourceAttr, Float16Type, Float32Type,
    Float64Type, IntegerType, TensorType,
)
from xdsl.ir import Attribute

from steplus.utils.diagnostics import OpDiagnosticError

MAX_CONSTANT_BYTES = 1 << 31  # a constant larger than this is refused (user input)
Lookup = Callable[[str], "str | None"]


def resource_lookup(ctx) -> Lookup:
    """The `builtin` dialect's resource blobs of a parse context (empty without one)."""
    dialect = ctx.get_optional_dialect("builtin") if ctx is not None else None
    iface = dialect.get_interface(OpAsmDialectInterface) if dialect is not None else None
    return iface.lookup if iface is not None else (lambda key: None)


def _dtype(el: Attribute) -> np.dtype | str | None:
    if isinstance(el, Float32Type):
        return np.dtype("<f4")
    if isinstance(el, Float64Type):
        return np.dtype("<f8")
    if isinstance(el, Float16Type):
        return np.dtype("<f2")
    if isinstance(el, BFloat16Type):
        return "bf16"
    if isinstance(el, IntegerType) and el.width.data in (8, 16, 32, 64):
        return np.dtype(f"<i{el.width.data // 8}")
    return None


def _decode(raw: bytes, el: Attribute, count: int, op) -> np.ndarray:
    dt = _dtype(el)
    if dt is None:
        raise OpDiagnosticError(op, f"a tensor constant of element type {el} is not supported")
    if dt == "bf16":
        bits = np.frombuffer(raw, dtype="<u2", count=count).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return np.frombuffer(raw, dtype=dt, count=count).astype(np.float64)


def tensor_values(op: arith.ConstantOp, lookup: Lookup) -> np.ndarray:
    """The values of a tensor `arith.constant` (float64, the tensor's shape); a located
    error for a resource that is missing or of the wrong size."""
    v = op.value
    t = op.result.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise OpDiagnosticError(op, "a tensor constant without a static shape")
    shape = tuple(t.get_shape())
    count = int(np.prod(shape)) if shape else 1
    el = t.get_element_type()
    width = 2 if isinstance(el, (BFloat16Type, Float16Type)) else (
        el.width.data // 8 if isinstance(el, IntegerType) else
        8 if isinstance(el, Float64Type) else 4)
    if count * width > MAX_CONSTANT_BYTES:
        raise OpDiagnosticError(op, f"a tensor constant of {count * width} bytes (at most "
                                    f"{MAX_CONSTANT_BYTES})")
    if isinstance(v, DenseIntOrFPElementsAttr):
        vals = np.asarray(v.get_values(), dtype=np.float64)
        if vals.size == 1 and count != 1:
            vals = np.full(count, vals[0])
        if vals.size != count:
            raise OpDiagnosticError(op, f"a dense constant of {vals.size} values for {t}")
        return vals.reshape(shape)
    if isinstance(v, DenseResourceAttr):
        key = v.resource_handle.data
        blob = lookup(key)
        if not blob:
            raise OpDiagnosticError(op, f"dense_resource<{key}> has no blob in the file's "
                                        "dialect_resources")
        try:
            raw = bytes.fromhex(blob[2:])[4:]  # "0x", then a 4-byte alignment
        except ValueError:
            raise OpDiagnosticError(op, f"dense_resource<{key}>: the blob is not hex") from None
        if len(raw) != count * width:
            raise OpDiagnosticError(op, f"dense_resource<{key}> holds {len(raw)} bytes, "
                                        f"{t} needs {count * width}")
        return _decode(raw, el, count, op).reshape(shape)
    raise OpDiagnosticError(op, f"a tensor constant of the form {v.name} is not supported "
                                "(dense and dense_resource are)")
