"""Types of the `step` dialect: streams with symbolic shapes and their elements.

Textual forms:

```mlir
!weights = !step.stream<[B, 4, 224], !step.tile<64x256xbf16>>  // dims outermost first
!ragged = !step.stream<[?C, "ceil(B/16)", 16], !step.tile<?x64xf32>>
!tile = !step.tile<64x256xbf16>                   // 2-D tile; a dim is static or `?` (dynamic)
!sel = !step.selector<8>                          // multi-hot selector over 8 choices
!buf = !step.buffer<[256, 4], !step.tile<64x64xf32>>  // read-only on-chip buffer
!pair = !step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>

// a graph taking a stream of each
step.graph @types {
^bb0(%a: !weights, %b: !ragged, %c: !step.stream<[N], !tile>, %d: !step.stream<[N], !sel>, %e: !step.stream<[N], !buf>, %f: !step.stream<[N], !pair>):
}
```

A stream dimension is
- static: an integer (`224`);
- dynamic-regular: a symbol (`B`) or a quoted expression over symbols
  (`"ceil(B/16)"`, `"B_0 + B_1"`, `"2*N"`);
- ragged: a symbol marked with `?` (`?C`), also inside expressions
  (`"?C + 1"`). Raggedness absorbs: an expression containing a ragged symbol
  is ragged.

Dimensions are sympy expressions (`StreamType.dims`); `dim_to_text` and
`parse_dim_text` convert between the two. A `1x1` integer tile is an address.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import cast

import sympy
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    IndexType,
    IntAttr,
    IntegerType,
    StringAttr,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step.dims import (  # noqa: F401  (re-exported)
    DimError,
    RaggedSymbol,
    as_dim,
    parse_dim_text,
)


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def dim_to_text(expr: sympy.Expr | int | str) -> str:
    """The canonical text of a dimension."""
    expr = as_dim(expr)
    if isinstance(expr, sympy.Integer):
        return str(int(expr))
    return _expr_text(expr)


@functools.lru_cache(maxsize=65536)
def _expr_text(expr: sympy.Expr) -> str:
    return sympy.sstr(expr)  # memoized: passes print the same dims again and again


def is_ragged(dim: sympy.Expr | int | str) -> bool:
    """True if the dimension is (or contains) a ragged symbol."""
    return any(isinstance(s, RaggedSymbol) for s in as_dim(dim).free_symbols)


def is_static(dim: sympy.Expr | int | str) -> bool:
    """True if the dimension is an integer."""
    return bool(as_dim(dim).is_Integer)


def _parse_dims(parser: AttrParser) -> list[str]:
    def one() -> str:
        if (i := parser.parse_optional_integer(allow_boolean=False, allow_negative=False)) is not None:
            return str(i)
        if parser.parse_optional_punctuation("?") is not None:
            return "?" + parser.parse_identifier(" for a ragged dimension")
        if (s := parser.parse_optional_str_literal()) is not None:
            return s
        return parser.parse_identifier(
            " (a stream dimension: integer, symbol, ?ragged or quoted expression)"
        )

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)


def _print_dims(printer: Printer, dims: Sequence[StringAttr]) -> None:
    def one(d: StringAttr) -> None:
        text = d.data
        if text.isdigit() or _IDENT.match(text) or (
            text.startswith("?") and _IDENT.match(text[1:])
        ):
            printer.print_string(text)
        else:
            printer.print_string_literal(text)

    printer.print_string("[")
    printer.print_list(dims, one)
    printer.print_string("]")


def _verify_dims(dims: ArrayAttr) -> None:
    for d in dims.data:
        if not isinstance(d, StringAttr):
            raise VerifyException("stream dimensions must be strings")
        parse_dim_text(d.data)


# -- parsing cache -------------------------------------------------------------------
#
# A large graph repeats few distinct types many times (Qwen: 2,186 distinct
# stream types in 7,704 uses, tiles far more): a type's parameter text is
# looked up before it is lexed, and a hit skips the text and returns the
# attribute parsed the first time (attributes are immutable).

_BODY = re.compile(r"<(?:[^<>]|<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)*>")
"""The `<...>` parameter text of a type, up to four levels of nesting (a
stream of tuples of buffers); anything else is parsed without the cache."""
MAX_TYPE_TEXT = 4096
"""Longest parameter text looked up in the cache (characters)."""
MAX_CACHED_TYPES = 1 << 16
"""Cache capacity; the cache starts over when full (bounded memory)."""
_TYPES: dict[tuple[type, str], ParametrizedAttribute] = {}


_BUILT: dict[tuple[type, tuple[str, ...], Attribute], _ShapedType] = {}
"""Streams and buffers built from Python (`StreamType(dims, element)`), keyed by
their dimension texts and element: a graph builds the same type many times
(Qwen B=1024: 6,424 stream types for a few hundred distinct ones), and each
construction verified its parameters (~0.1 ms). Same capacity rule as `_TYPES`."""


class _Parsed(tuple):  # noqa: SLOT001 (carries the cache key to `new`)
    """Parameters returned by `parse_parameters`, keyed by their text."""

    key: tuple[type, str] | None = None


def _type_text(parser: AttrParser) -> tuple[str, int] | None:
    """The `<...>` text at the parser's position and where it ends, if any."""
    resume = getattr(parser, "_resume_from", None)
    if resume is None:  # not an xDSL parser we know how to advance
        return None
    start = parser.pos
    content = parser.lexer.input.content
    if not isinstance(content, str):
        return None
    m = _BODY.match(content, start, min(len(content), start + MAX_TYPE_TEXT))
    return (m.group(), m.end()) if m else None


def _cached_parameters(cls: type, parser: AttrParser,
                       parse: Callable[[], Sequence[Attribute]]) -> Sequence[Attribute]:
    """`parse()`'s parameters, or those of the same text parsed before."""
    found = _type_text(parser)
    if found is None:
        return parse()
    text, end = found
    key = (cls, text)
    hit = _TYPES.get(key)
    if hit is not None:
        parser._resume_from(end)  # noqa: SLF001 (skip the text: it was parsed before)
        params = _Parsed(hit.parameters)
        params.key = key
        return params
    params = _Parsed(parse())
    pos = parser.pos
    # Cache only when the parse consumed exactly the matched text.
    if pos >= end and not parser.lexer.input.content[end:pos].strip():
        params.key = key
    return params


def _new_cached(cls: type[ParametrizedAttribute], params: Sequence[Attribute],
                new: Callable[[Sequence[Attribute]], ParametrizedAttribute]):
    key = getattr(params, "key", None)
    if key is None:
        return new(params)
    attr = _TYPES.get(key)
    if attr is None:
        attr = new(tuple(params))
        if len(_TYPES) >= MAX_CACHED_TYPES:
            _TYPES.clear()
        _TYPES[key] = attr
    return attr


class _ShapedType(ParametrizedAttribute, TypeAttribute):
    """Common parts of streams and buffers: symbolic dims plus an element type.

    The parameters are declared on each concrete class (xDSL derives equality
    and hashing from the decorated class's own fields)."""

    shape: ArrayAttr[StringAttr]
    element: Attribute

    def __init__(self, dims: Sequence[object], element: Attribute):
        texts = tuple(d.data if isinstance(d, StringAttr) else dim_to_text(cast(sympy.Expr | int, d))
                      if not isinstance(d, str) else d for d in dims)
        key = (type(self), texts, element)
        try:
            hit = _BUILT.get(key)
        except TypeError:  # an unhashable element: built (and verified) afresh
            hit, key = None, None
        if hit is not None:
            # The same parameters were built and verified before: share them
            # (attributes are immutable), and the parsed dims with them.
            object.__setattr__(self, "shape", hit.shape)
            object.__setattr__(self, "element", hit.element)
            parsed = hit.__dict__.get("_dims")
            if parsed is not None:
                object.__setattr__(self, "_dims", parsed)
            return
        super().__init__(ArrayAttr([StringAttr(t) for t in texts]), element)
        if key is not None:
            if len(_BUILT) >= MAX_CACHED_TYPES:
                _BUILT.clear()
            _BUILT[key] = self

    @property
    def dims(self) -> list[sympy.Expr]:
        """The dimensions, outermost first, as sympy expressions (parsed once
        per attribute; a fresh list each call)."""
        dims = self.__dict__.get("_dims")
        if dims is None:
            dims = tuple(parse_dim_text(d.data) for d in self.shape.data)
            object.__setattr__(self, "_dims", dims)  # a cache, not a parameter
        return list(dims)

    @property
    def rank(self) -> int:
        """The number of dimensions."""
        return len(self.shape.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def parse() -> Sequence[Attribute]:
            with parser.in_angle_brackets():
                dims = _parse_dims(parser)
                parser.parse_punctuation(",")
                element = parser.parse_type()
            return (ArrayAttr([StringAttr(d) for d in dims]), element)

        return _cached_parameters(cls, parser, parse)

    @classmethod
    def new(cls, params: Sequence[Attribute]):
        return _new_cached(cls, params, super().new)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_dims(printer, self.shape.data)
            printer.print_string(", ")
            printer.print_attribute(self.element)

    def verify(self) -> None:
        _verify_dims(self.shape)
        if not is_element_type(self.element):
            raise VerifyException(
                f"{self.name} element must be a tile, selector, buffer, tuple or i1, "
                f"got {self.element}"
            )


@irdl_attr_definition
class StreamType(_ShapedType):
    """A stream of elements with a symbolic shape `[D_n, ..., D_0]`.

    Example: `!step.stream<[B, ?C, 4], !step.tile<16x64xbf16>>`
    """

    name = "step.stream"
    shape: ArrayAttr[StringAttr] = param_def()
    element: Attribute = param_def()

    def __init__(self, dims: Sequence[object], element: Attribute):
        # Spelled out so type checkers see this signature (dims as numbers,
        # sympy expressions or text), not one synthesized from the fields.
        super().__init__(dims, element)


@irdl_attr_definition
class BufferType(_ShapedType):
    """A read-only reference to an on-chip buffer with shape and element type.

    Example: `!step.buffer<[4, 16], !step.tile<64x64xf32>>`
    """

    name = "step.buffer"
    shape: ArrayAttr[StringAttr] = param_def()
    element: Attribute = param_def()

    def __init__(self, dims: Sequence[object], element: Attribute):
        # Spelled out so type checkers see this signature (dims as numbers,
        # sympy expressions or text), not one synthesized from the fields.
        super().__init__(dims, element)


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """A 2-D tile of scalars; each dimension static or dynamic (`?`).

    Example: `!step.tile<64x256xbf16>`, `!step.tile<?x64xf32>`
    """

    name = "step.tile"
    rows: IntAttr = param_def()
    cols: IntAttr = param_def()
    scalar: Attribute = param_def()

    def __init__(self, rows: int, cols: int, scalar: Attribute):
        super().__init__(IntAttr(rows), IntAttr(cols), scalar)

    @property
    def is_static(self) -> bool:
        return self.rows.data >= 0 and self.cols.data >= 0

    @property
    def is_address(self) -> bool:
        return (self.rows.data, self.cols.data) == (1, 1) and isinstance(
            self.scalar, IntegerType
        )

    def bytes_per_scalar(self) -> int:
        width = getattr(self.scalar, "bitwidth", None)
        if width is None:
            width = getattr(getattr(self.scalar, "width", None), "data", 32)
        return max(1, int(width) // 8)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def parse() -> Sequence[Attribute]:
            with parser.in_angle_brackets():
                shape, scalar = parser.parse_ranked_shape()
            if len(shape) != 2:
                parser.raise_error(f"a step tile is 2-D, got {len(shape)} dimension(s)")
            return (IntAttr(max(shape[0], -1)), IntAttr(max(shape[1], -1)), scalar)

        return _cached_parameters(cls, parser, parse)

    @classmethod
    def new(cls, params: Sequence[Attribute]):
        return _new_cached(cls, params, super().new)

    def print_parameters(self, printer: Printer) -> None:
        def d(v: int) -> str:
            return "?" if v < 0 else str(v)

        printer.print_string(f"<{d(self.rows.data)}x{d(self.cols.data)}x")
        printer.print_attribute(self.scalar)
        printer.print_string(">")

    def verify(self) -> None:
        for v in (self.rows.data, self.cols.data):
            if v < -1:
                raise VerifyException("tile dimensions must be non-negative or ?")
        if not isinstance(self.scalar, IntegerType | IndexType | AnyFloat):
            raise VerifyException(
                f"a step tile holds scalars (an integer, index or float type), got {self.scalar}")


@irdl_attr_definition
class SelectorType(ParametrizedAttribute, TypeAttribute):
    """A multi-hot selector over N choices.

    Example: `!step.selector<8>`
    """

    name = "step.selector"
    choices: IntAttr = param_def()

    def __init__(self, choices: int):
        super().__init__(IntAttr(choices))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            n = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (IntAttr(n),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.choices.data}>")

    def verify(self) -> None:
        if self.choices.data < 1:
            raise VerifyException("a selector chooses among at least 1 output")


@irdl_attr_definition
class TupleType(ParametrizedAttribute, TypeAttribute):
    """A tuple of stream elements (what `step.zip` produces).

    Example: `!step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>`
    """

    name = "step.tuple"
    elements: ArrayAttr[Attribute] = param_def()

    def __init__(self, elements: Sequence[Attribute]):
        super().__init__(ArrayAttr(elements))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        elems = parser.parse_comma_separated_list(
            parser.Delimiter.ANGLE, parser.parse_type
        )
        return (ArrayAttr(elems),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_list(self.elements.data, printer.print_attribute)

    def verify(self) -> None:
        if not self.elements.data:
            raise VerifyException("a step.tuple has at least one element")
        for e in self.elements.data:
            if not is_element_type(e):
                raise VerifyException(f"invalid step.tuple element {e}")


def is_element_type(t: Attribute) -> bool:
    """Tiles, selectors, buffers, tuples, and i1 (padding / ack flags)."""
    if isinstance(t, TileType | SelectorType | BufferType | TupleType):
        return True
    return isinstance(t, IntegerType) and t.width.data == 1
