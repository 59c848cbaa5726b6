"""Dialect resources (`{-# dialect_resources: { builtin: { key: "0x..." } } #-}`) that stay readable.

torch-mlir and IREE write parameters as `dense_resource<key>` attributes whose bytes sit in the
file's resource section.  xDSL 0.74 keeps those blobs in the `OpAsmDialectInterface` of its one
module-level `builtin` dialect and renames a key it has seen before (`key_0`, `key_1`, ...) —
so the second parse of a file (step-run parses the program twice) links its attributes to empty
blobs.  `BlobTable` is the interface step-opt installs instead: a key keeps its name and maps to
the blob of the most recent parse that defined it (one table per process, shared by every
context).  `resource_array(attr)` decodes a `DenseResourceAttr` into numpy, and
`materialize_resources(module)` (step-opt calls it after every parse) replaces the attributes
by `dense` ones with the same bytes, so a module never depends on the table after its parse.

Example:

```
arr = resource_array(op.properties["value"])   # np.ndarray of the attribute's shape
```
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, DenseResourceAttr
from xdsl.ir import Dialect, Operation

_BLOBS: dict[str, str] = {}


class BlobTable(OpAsmDialectInterface):
    """A resource interface that never renames keys; blobs live in one process-wide table."""

    def __init__(self) -> None:
        super().__init__()
        self._blob_storage = _BLOBS

    def declare_resource(self, key: str) -> str:
        _BLOBS.setdefault(key, "")
        return key

    def parse_resource(self, key: str, val: str):
        if not val.startswith("0x"):
            raise ValueError(f"Blob must be a hex string, got: {val[:20]}")
        _BLOBS[key] = val


def builtin_with_blobs() -> Dialect:
    """xDSL's builtin dialect with `BlobTable` as its resource interface."""
    from xdsl.dialects.builtin import Builtin

    return Dialect("builtin", list(Builtin.operations), list(Builtin.attributes), [BlobTable()])


_DTYPES = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i64": "<i8", "i32": "<i4", "i16": "<i2", "i8": "i1",
           "i1": "i1", "index": "<i8"}


class ResourceError(ValueError):
    """A dense_resource attribute whose blob is missing or does not fit its type."""


MAX_RESOURCE_BYTES = 1 << 31
"""Largest tensor a dense_resource constant may expand to (a splat blob is
4 bytes whatever its type's size)."""


def resource_array(attr) -> np.ndarray:
    """The value of a `DenseResourceAttr` (static shape) as a numpy array of its element type."""
    key = attr.resource_handle.data
    blob = _BLOBS.get(key)
    if not blob:
        raise ResourceError(f"dense_resource<{key}> has no blob in the file's dialect_resources section")
    t = attr.type
    shape = tuple(t.get_shape())
    elt = str(t.element_type)
    if elt not in _DTYPES or any(d < 0 for d in shape):
        raise ResourceError(f"dense_resource<{key}>: cannot read a blob of type {t}")
    try:
        raw = bytes.fromhex(blob[2:])
    except ValueError:
        raise ResourceError(f"dense_resource<{key}>: the blob is not hexadecimal") from None
    data = raw[4:]  # the first 4 bytes are the blob's alignment
    dtype = np.dtype(_DTYPES[elt])
    size = math.prod(shape)  # Python ints: no overflow for a hostile shape
    if size * dtype.itemsize > MAX_RESOURCE_BYTES:
        raise ResourceError(f"dense_resource<{key}>: {t} needs {size * dtype.itemsize} bytes, "
                            f"more than the limit of {MAX_RESOURCE_BYTES}")
    if len(data) == dtype.itemsize and size != 1:  # a splat blob
        return np.full(shape, np.frombuffer(data, dtype)[0])
    if len(data) != size * dtype.itemsize:
        raise ResourceError(f"dense_resource<{key}>: the blob has {len(data)} bytes, {t} needs "
                            f"{size * dtype.itemsize}")
    return np.frombuffer(data, dtype).reshape(shape).copy()


def materialize_resources(module: Operation) -> int:
    """Replace every `dense_resource` attribute of `module` whose blob is known
    by a `dense` attribute holding the same bytes; return how many.

    Call it right after parsing: the blob table is process-wide and keyed by
    name (torch-mlir names weights by shape, `torch_tensor_10_torch.float32`),
    so a later parse of another file could otherwise change the values an
    earlier module reads. A missing or unreadable blob is left as it is (its
    use reports the error at the op)."""
    count = 0
    for op in module.walk():
        for table in (op.properties, op.attributes):
            for name, attr in list(table.items()):
                if not isinstance(attr, DenseResourceAttr):
                    continue
                elt = str(attr.type.element_type)
                if elt in ("i1", "index"):  # no packed byte form in `dense`
                    continue
                try:
                    values = resource_array(attr)
                except ResourceError:
                    continue
                data = values.astype(np.dtype(_DTYPES[elt]), copy=False).tobytes()
                table[name] = DenseIntOrFPElementsAttr(attr.type, BytesAttr(data))
                count += 1
    return count
