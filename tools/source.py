"""Source locations for parsed operations, and MLIR-style diagnostic lines.

xDSL does not keep the source position of an operation unless the text carries
an explicit `loc(...)`.  `LocatingParser` records where every operation starts,
so verifier failures and pass diagnostics can be reported as
`file:line:col: error: message`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from steplus.dialects.resources import HexElement, hex_float_elements, parse_dense_splat


@dataclass(frozen=True)
class SourceLoc:
    """A 1-based line/column position in a named source."""

    name: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.name}:{self.line}:{self.col}"


_NEWLINE = re.compile("\n")


class SourceFile:
    """The text of one input chunk, with its name and line offset in the file."""

    def __init__(self, name: str, text: str, line_offset: int = 0):
        self.name = name
        self.text = text
        self.line_offset = line_offset
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def loc_of_offset(self, pos: int) -> SourceLoc:
        """Location of a character offset in this chunk (lines counted in the file)."""
        import bisect

        pos = max(0, min(pos, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, pos) - 1
        col = pos - self._line_starts[line_index] + 1
        return SourceLoc(self.name, line_index + 1 + self.line_offset, col)

    def line_text(self, file_line: int) -> str | None:
        """The text of a (file-numbered) line of this chunk, if it belongs to it."""
        index = file_line - 1 - self.line_offset
        if 0 <= index < len(self._line_starts):
            start = self._line_starts[index]
            end = self.text.find("\n", start)
            return self.text[start : end if end != -1 else len(self.text)]
        return None


_ATTR_KEY = re.compile(r'([A-Za-z_][A-Za-z0-9_.$-]*|"[^"\n]*")\s*=\s*\Z')
"""The `name =` of the attribute entry an attribute's text follows."""
_ARRAY_ELT = re.compile(r"array\s*<\s*([a-z0-9]+)")


class LocatingParser(Parser):
    """An xDSL parser that remembers the source offset where each operation starts."""

    def __init__(self, ctx: Context, source: SourceFile):
        super().__init__(ctx, source.text, source.name)
        self.source = source
        self.op_offsets: dict[Operation, int] = {}
        self._attr_depth = 0
        self._overflow_at: int | None = None
        # the elements of the dense literal being parsed: (count, hexadecimal ones)
        self._dense: tuple[list[int], list[tuple[int, int, str, int, int]]] | None = None

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (DiagnosticException, ValueError, TypeError, OverflowError) as e:
            # Attribute and property verifiers run while the op is built: report
            # them where the op starts instead of letting them escape unlocated.
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            self.raise_error(message, at_position=start, end_position=max(self.pos, start + 1))
        self.op_offsets[op] = start
        return op

    def parse_optional_attribute(self):
        # `array<f32: 1.0e39>`: xDSL's OverflowError "float too large to pack with f
        # format", at the op; here located at the value, naming the nearest enclosing
        # attribute entry (`{w = {v = [1.0e309]}}` names 'v')
        start = self.pos
        self._attr_depth += 1
        try:
            return super().parse_optional_attribute()
        except OverflowError:
            at = self._overflow_at if self._overflow_at is not None else start
            self._overflow_at = at
            key = _ATTR_KEY.search(self.source.text, 0, start)
            if key is None and self._attr_depth > 1:
                raise
            self._overflow_at = None
            elt = _ARRAY_ELT.match(self.source.text, at)
            what = f"attribute '{key.group(1).strip(chr(34))}'" if key else "an attribute"
            self.raise_error(f"{what}: a value out of the range of "
                             f"{elt.group(1) if elt else 'its element type'}",
                             at_position=at, end_position=max(self.pos, at + 1))
        finally:
            self._attr_depth -= 1

    def parse_optional_float(self, *, allow_negative: bool = True) -> float | None:
        # A decimal literal past f64 (`1.0e309`) would be read as +inf and printed as
        # `0x7ff0000000000000`; it is out of the range of every float type xDSL holds.
        # Explicit bit patterns (`0x7FF0000000000000`) are integer tokens, not seen here.
        value = super().parse_optional_float(allow_negative=allow_negative)
        if value is not None and math.isinf(value):
            raise OverflowError("a value out of the range of f64")
        return value

    def _parse_optional_bool_int_or_float(self):
        # The same for dense literals' elements (`dense<[1.0e309]>`), which xDSL 0.74
        # reads here from the token, not through parse_optional_float. A hex bit
        # pattern comes back as an int, so a float inf is always an overflowed decimal.
        parsed = super()._parse_optional_bool_int_or_float()
        if parsed is not None and isinstance(parsed[0], float) and math.isinf(parsed[0]):
            raise OverflowError("a value out of the range of f64")
        if parsed is not None and self._dense is not None:
            # A hexadecimal element is a bit pattern if the type (after the literal) is a float
            count, hexes = self._dense
            value, span = parsed
            if isinstance(value, int) and not isinstance(value, bool) and "0x" in span.text.lower():
                hexes.append((count[0], value, span.text, span.start, span.end))
                parsed = (HexElement(value), span)
            count[0] += 1
        return parsed

    def parse_dense_int_or_fp_elements_attr(self, type):
        # A large splat stays one element (xDSL would build every element first).
        splat = parse_dense_splat(self, type)
        if splat is not None:
            return splat
        outer, self._dense = self._dense, ([0], [])
        try:
            attr = super().parse_dense_int_or_fp_elements_attr(type)
            count, hexes = self._dense
            return hex_float_elements(self, attr, hexes, count[0])
        finally:
            self._dense = outer

    def parse_optional_type(self):
        # A type whose parameters fail verification is reported where it starts.
        start = self.pos
        try:
            return super().parse_optional_type()
        except ParseError:
            raise
        except (DiagnosticException, ValueError, TypeError, OverflowError) as e:
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            self.raise_error(message, at_position=start, end_position=max(self.pos, start + 1))


class LocationTable:
    """Maps operations to source locations (explicit `loc(...)` wins)."""

    def __init__(self, source: SourceFile, op_offsets: dict[Operation, int]):
        self.source = source
        self.op_offsets = op_offsets

    def loc(self, op: Operation | None) -> SourceLoc:
        """The location of `op`, or of its nearest ancestor that has one."""
        current = op
        while current is not None:
            explicit = current.location
            if isinstance(explicit, FileLineColLoc):
                return SourceLoc(
                    explicit.filename.data,
                    explicit.line.data,
                    explicit.column.data,
                )
            if current in self.op_offsets:
                return self.source.loc_of_offset(self.op_offsets[current])
            current = current.parent_op()
        return SourceLoc(self.source.name, 1 + self.source.line_offset, 1)
