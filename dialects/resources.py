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
A splat blob stays a splat; a malformed blob is an error at the constant; `reset_resources()`
(step-opt calls it before each chunk) empties the table.  Bounds: SECURITY.md, *Resource limits*.

Example:

```
arr = resource_array(op.properties["value"])   # np.ndarray of the attribute's shape
```
"""

from __future__ import annotations

import math
import re

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (AnyFloat, BytesAttr, DenseIntOrFPElementsAttr, DenseResourceAttr,
                                   IndexType, IntegerType, MemRefType, TensorType, VectorType)
from xdsl.ir import Dialect, Operation
from xdsl.utils.exceptions import VerifyException

from steplus.utils.diagnostics import OpDiagnosticError

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
    """A dense_resource attribute whose blob is missing, malformed or does not fit its type."""


MAX_RESOURCE_BYTES = 1 << 31
"""Largest tensor a dense_resource constant may declare (its type's size), splat or not."""

MAX_ALIGNMENT = 1 << 16
"""Largest alignment a blob's first word may declare (a power of two)."""

SPLAT_EXPAND_BYTES = 1 << 20
"""A splat constant (a `dense<v>` literal or a one-element `dense_resource` blob)
whose type holds more than this many bytes stays one element (MLIR's splat form,
which `constant_array` and the printer read as such); smaller ones are expanded
to every element as xDSL's parser does."""


def dense_splat(t, element: bytes) -> DenseIntOrFPElementsAttr:
    """The `dense` attribute of type `t` holding `element` everywhere: one element
    past `SPLAT_EXPAND_BYTES`, else every element."""
    size = math.prod(t.get_shape()) * len(element)
    return DenseIntOrFPElementsAttr(t, BytesAttr(element if size > SPLAT_EXPAND_BYTES
                                                 else element * math.prod(t.get_shape())))


_SPLAT = re.compile(r'<\s*(?:"0x[0-9a-fA-F]+"|(0x[0-9a-fA-F]+)|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|true|false)\s*>')
"""A splat literal `<v>`: one decimal or hexadecimal number, `true`/`false` or a hex string (looked
up in the source before anything is consumed, so no backtracking is needed)."""


def parse_dense_splat(parser, type):
    """For a `Parser` subclass's `parse_dense_int_or_fp_elements_attr`: a splat
    literal (`dense<1.0> : tensor<...>`, or a hex string) parsed as one element and
    expanded only up to `SPLAT_EXPAND_BYTES` (xDSL 0.74 builds the whole list first:
    2 GiB of f32 from a 40-byte literal). None, with nothing consumed, for any other
    literal (xDSL parses it). A type past `MAX_RESOURCE_BYTES` is a parse error, as
    for a `dense_resource` constant. Public parser API only: the splat is recognized
    by a regex on the source at the parser's position."""
    start = parser.pos
    splat = _SPLAT.match(parser.lexer.input.content, start)
    if splat is None:
        return None
    bits = splat.group(1)  # an unquoted hexadecimal number
    parser.parse_punctuation("<")
    text = parser.parse_optional_str_literal()
    value: int | float | bool | None = None
    if text is None:
        value = parser.parse_optional_boolean()
        if value is None:
            value = parser.parse_number()
    parser.parse_punctuation(">")
    t = type
    if t is None:
        parser.parse_punctuation(":")
        t = parser.parse_type()
    elt = getattr(t, "element_type", None)
    if (not isinstance(t, (TensorType, VectorType, MemRefType))
            or not isinstance(elt, (IntegerType, IndexType, AnyFloat))):
        parser.raise_error("Expected memref, vector or tensor type of integer, index, float, or "
                           "complex type", at_position=start, end_position=parser.pos)
    if any(d < 0 for d in t.get_shape()):
        parser.raise_error("Dense literal attribute should have a static shape.",
                           at_position=start, end_position=parser.pos)
    itemsize = 8 if isinstance(elt, IndexType) else getattr(elt, "compile_time_size", None)
    if not isinstance(itemsize, int):
        parser.raise_error(f"dense literal of element type {elt}: not supported", at_position=start,
                           end_position=parser.pos)
        return None  # raise_error raised
    n = math.prod(t.get_shape())
    if n * itemsize > MAX_RESOURCE_BYTES:
        parser.raise_error(f"dense literal of type {t} needs {n * itemsize} bytes, more than the "
                           f"limit of {MAX_RESOURCE_BYTES}", at_position=start,
                           end_position=parser.pos)
    if text is not None:
        data = bytes.fromhex(text[2:]) if len(text) % 2 == 0 else b""
        if len(data) == itemsize:
            return dense_splat(t, data)
        if len(data) == n * itemsize:
            return DenseIntOrFPElementsAttr(t, BytesAttr(data))
        parser.raise_error(f"hex literal of {len(data)} bytes for {t}: expected {itemsize} "
                           f"(a splat) or {n * itemsize}", at_position=start, end_position=parser.pos)
    if bits is not None and isinstance(elt, AnyFloat):
        return dense_splat(t, hex_float_bytes(parser, bits, int(bits, 16), elt, itemsize, start,
                                              parser.pos))
    if isinstance(elt, AnyFloat) and isinstance(value, bool):
        parser.raise_error(f"expected a float literal for {elt}, got a boolean", at_position=start,
                           end_position=parser.pos)
    if not isinstance(elt, AnyFloat) and isinstance(value, float):
        parser.raise_error(f"expected an integer literal for {elt}, got {value}", at_position=start,
                           end_position=parser.pos)
    if value is None:  # a hex literal returned above
        return None
    try:
        if isinstance(elt, IntegerType):
            one = DenseIntOrFPElementsAttr.from_list(TensorType(elt, [1]), [int(value)])
        elif isinstance(elt, IndexType):
            one = DenseIntOrFPElementsAttr.from_list(TensorType(elt, [1]), [int(value)])
        elif isinstance(elt, AnyFloat):
            one = DenseIntOrFPElementsAttr.from_list(TensorType(elt, [1]), [float(value)])
        else:  # refused above
            return None
    except (VerifyException, ValueError, TypeError, OverflowError) as e:
        parser.raise_error(str(e).strip().splitlines()[0] or "invalid dense literal",
                           at_position=start, end_position=parser.pos)
    return dense_splat(t, one.data.data)


def hex_float_bytes(parser, text: str, raw: int, elt, itemsize: int, start: int, end: int) -> bytes:
    """MLIR reads a hexadecimal integer in a float literal as the element's bit pattern (f16, bf16,
    f32 or f64 by `itemsize`): torch-mlir writes a -inf mask as `dense<0xFF800000> : tensor<f32>`,
    which xDSL 0.74 made the number 4286578688.0. Its little-endian bytes, or a located parse
    error for a pattern wider than the type or a negated one (`-0x3F800000`, which MLIR refuses)."""
    if raw < 0:
        parser.raise_error(f"hexadecimal literal {text} of {elt} has a minus sign: a bit pattern "
                           "is not negated", at_position=start, end_position=end)
    if raw >> (8 * itemsize):
        parser.raise_error(f"hexadecimal literal {text} is wider than {elt}", at_position=start,
                           end_position=end)
    return raw.to_bytes(itemsize, "little")


class HexElement(int):
    """A hexadecimal element of a `dense<[...]>` literal while its element type is not yet known
    (the type follows the literal). An integer type reads its value; a float type converts it
    to a placeholder 0.0 (so a pattern like f16's 0xFFFF does not overflow xDSL's conversion),
    and `hex_float_elements` writes the bit pattern over it."""

    def __float__(self) -> float:
        return 0.0


def hex_float_elements(parser, attr: DenseIntOrFPElementsAttr,
                       hexes: list[tuple[int, int, str, int, int]], count: int) -> DenseIntOrFPElementsAttr:
    """`attr` (parsed by xDSL from a `dense<[...]>` literal of `count` elements) with each
    hexadecimal element `(ordinal, value, text, start, end)` read as its bit pattern, as
    `parse_dense_splat` reads a splat, if the element type is a float; `attr` itself otherwise."""
    elt = attr.get_element_type()
    if not hexes or not isinstance(elt, AnyFloat):
        return attr
    itemsize = elt.compile_time_size
    data = bytearray(attr.data.data)
    for ordinal, raw, text, start, end in hexes:
        bits = hex_float_bytes(parser, text, raw, elt, itemsize, start, end)
        if count == 1:  # a splat: every element
            data[:] = bits * (len(data) // itemsize)
        else:
            data[ordinal * itemsize:(ordinal + 1) * itemsize] = bits
    return DenseIntOrFPElementsAttr(attr.type, BytesAttr(bytes(data)))


def reset_resources() -> None:
    """Forget every blob: called before each parse (a `--split-input-file` chunk
    without a resources section must not see the previous chunk's weights)."""
    _BLOBS.clear()


_NOT_HEX = re.compile(r"[^0-9a-fA-F]")


def _blob_bytes(key: str, blob: str) -> bytes:
    """The data bytes of a hex blob (after its alignment word), or a `ResourceError`."""
    digits = blob[2:]
    if len(digits) % 2:
        raise ResourceError(f"dense_resource<{key}>: the blob has an odd number of hex digits "
                            f"({len(digits)})")
    bad_at = _NOT_HEX.search(digits)  # a regex: a 1 GB blob is not a Python loop
    if bad_at is not None:
        bad = bad_at.group()
        raise ResourceError(f"dense_resource<{key}>: the blob is not hexadecimal "
                            f"(character {bad!r})")
    raw = bytes.fromhex(digits)
    if len(raw) < 4:
        raise ResourceError(f"dense_resource<{key}>: the blob has {len(raw)} bytes, fewer than "
                            "its 4-byte alignment word")
    align = int.from_bytes(raw[:4], "little")
    if align == 0 or align & (align - 1) or align > MAX_ALIGNMENT:
        raise ResourceError(f"dense_resource<{key}>: the blob's alignment word is {align}, "
                            f"not a power of two at most {MAX_ALIGNMENT}")
    return raw[4:]


_ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4,
             "i64": 8, "ui8": 1, "ui16": 2, "ui32": 4, "ui64": 8, "si8": 1, "si16": 2, "si32": 4,
             "si64": 8, "index": 8}
"""Bytes per element of the element types a blob is read as (numpy reads `_DTYPES`' ones)."""


def _decode(attr, cache: dict[str, bytes] | None = None) -> tuple[int, tuple[int, ...], bytes, bool]:
    """(bytes per element, shape, data bytes, is a splat) of a `DenseResourceAttr`,
    checked against its type. A splat's data is its one element."""
    key = attr.resource_handle.data
    blob = _BLOBS.get(key)
    if not blob:
        raise ResourceError(f"dense_resource<{key}> has no blob in the file's dialect_resources section")
    t = attr.type
    shape = tuple(t.get_shape())
    elt = str(t.element_type)
    if elt not in _ITEMSIZE or any(d < 0 for d in shape):
        raise ResourceError(f"dense_resource<{key}>: cannot read a blob of type {t}")
    itemsize = _ITEMSIZE[elt]
    size = math.prod(shape)  # Python ints: no overflow for a hostile shape
    if size * itemsize > MAX_RESOURCE_BYTES:
        raise ResourceError(f"dense_resource<{key}>: {t} needs {size * itemsize} bytes, "
                            f"more than the limit of {MAX_RESOURCE_BYTES}")
    if cache is not None and key in cache:
        data = cache[key]
    else:
        data = _blob_bytes(key, blob)
        if cache is not None:
            cache[key] = data  # one copy per blob, however many constants name it
    if len(data) == itemsize and size != 1:  # a splat blob
        return itemsize, shape, data, True
    if len(data) != size * itemsize:
        raise ResourceError(f"dense_resource<{key}>: the blob has {len(data)} bytes, {t} needs "
                            f"{size * itemsize}")
    return itemsize, shape, data, False


def resource_array(attr) -> np.ndarray:
    """The value of a `DenseResourceAttr` (static shape) as a numpy array of its element type.

    A splat blob gives a read-only broadcast view of its one element (nothing of
    the type's size is allocated)."""
    _, shape, data, splat = _decode(attr)
    elt = str(attr.type.element_type)
    if elt not in _DTYPES:
        raise ResourceError(f"dense_resource<{attr.resource_handle.data}>: cannot read a blob of "
                            f"type {attr.type} as numbers")
    dtype = np.dtype(_DTYPES[elt])
    if splat:
        return np.broadcast_to(np.frombuffer(data, dtype)[0], shape)
    return np.frombuffer(data, dtype).reshape(shape).copy()


def materialize_resources(module: Operation) -> int:
    """Replace every `dense_resource` attribute of `module` whose blob is in the
    file by a `dense` attribute holding the same bytes; return how many.

    Call it right after parsing: the blob table is process-wide and keyed by
    name (torch-mlir names weights by shape, `torch_tensor_10_torch.float32`),
    so a later parse of another file could otherwise change the values an
    earlier module reads. A splat blob stays a splat (a `dense` attribute
    holding one element, printed `dense<v> : tensor<...>`); each blob is decoded
    once, however many constants name it. A malformed blob (not hexadecimal, an
    odd number of digits, a bad alignment word, a size that fits neither one
    element nor the whole type, a type past `MAX_RESOURCE_BYTES`) is an
    `OpDiagnosticError` at the constant. A key with no blob in the file is left
    as it is (its use reports the error at the op)."""
    count = 0
    cache: dict[str, bytes] = {}
    for op in module.walk():
        for table in (op.properties, op.attributes):
            for name, attr in list(table.items()):
                if not isinstance(attr, DenseResourceAttr):
                    continue
                t = attr.type
                if not _BLOBS.get(attr.resource_handle.data) or not isinstance(t, TensorType | VectorType) \
                        or str(t.element_type) not in _ITEMSIZE:
                    continue  # no blob in this file, a type `dense` cannot hold, or an element type kept as a resource
                try:
                    _, _, data, splat = _decode(attr, cache)
                except ResourceError as e:
                    raise OpDiagnosticError(op, str(e)) from None
                if str(t.element_type) in ("i1", "index"):  # no packed byte form in `dense`
                    continue
                table[name] = dense_splat(t, data) if splat else DenseIntOrFPElementsAttr(t, BytesAttr(data))
                count += 1
    return count
