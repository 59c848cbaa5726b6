"""The Lustre grammar's parser and its errors (`lustre.lark`, lark LALR), shared
by the program parser (`parser.py`) and the contract reader (`contracts.py`):
syntax errors and unsupported constructs as located `LustreError`s, the
reserved words of unsupported extensions, single expressions, and renaming.

Example::

    e = parse_expr("node n ... x + 1 ...", start, end)   # an ast.Expr, positions kept
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.transform import (
    _UNSUPPORTED_TOKENS,
    LustreError,
    _ToAst,
    _unsupported,
)


# Reserved words of Kind 2 / Heptagon extensions steplus does not support:
# a located "unsupported construct" error names them.
UNSUPPORTED_WORDS: dict[str, str] = {
    "automaton": "automata (Heptagon, in .ept files)",
    "switch": "Heptagon 'switch' blocks",
    "present": "Heptagon 'present' blocks",
    "unless": "automata (Heptagon, in .ept files)",
    "until": "automata (Heptagon, in .ept files)",
    "frame": "Kind 2 frame blocks",
    "contract": "Kind 2 contracts",
    "con": "Kind 2 contracts ('con ... noc')",
    "package": "Lustre V6 packages",
    "model": "Lustre V6 models",
    "include": "'include' directives",
    "array": "arrays",
}

# Characters that only appear in constructs outside the supported subset.
_UNSUPPORTED_CHARS: dict[str, str] = {
    "[": "arrays", "]": "arrays", "^": "arrays",
    "{": "records and set literals", "}": "records and set literals", ".": "records (field access)",
    "#": "the at-most-one operator", "@": "Kind 2 type applications",
    "%": "Kind 2 annotations",
    "|": "Kind 2 refinement types and 'cond'/'match' cases",
    "'": "Kind 2 group literals",
}

@functools.lru_cache(maxsize=2)
def _lark(dialect: str = "lustre") -> Lark:
    """The parser of a dialect: Heptagon's adds heptagon.lark (automata)."""
    grammar = (Path(__file__).parent / "lustre.lark").read_text()
    if dialect == "heptagon":
        grammar += "\n" + (Path(__file__).parent / "heptagon.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="basic", propagate_positions=True,
                maybe_placeholders=False, start=["start", "expr_start", "type_start"])


def _describe(tok: Token) -> str:
    if tok.type == "$END":
        return "end of input"
    return f"'{tok.value}'"


# Words of unsupported constructs that are not reserved (they stay usable as
# variable names): named when a syntax error follows them.
_SOFT_WORDS = {"reset": "Heptagon 'reset' blocks", "last": "Heptagon 'last'"}
_SOFT_TYPES = {"set": "Kind 2 set types", "map": "Kind 2 map types"}
_PREVIOUS_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")
_ABSTRACT_TYPE = re.compile(r"\btype\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")


def _error_for(text: str, e: UnexpectedInput) -> LustreError:
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        if ch in _UNSUPPORTED_CHARS:
            return LustreError(pos, _unsupported(f"{_UNSUPPORTED_CHARS[ch]} ('{ch}')"))
        return LustreError(pos, f"syntax error: unexpected character '{ch}'")
    assert isinstance(e, UnexpectedToken)
    tok = e.token
    pos = len(text) if tok.type == "$END" or tok.start_pos is None else tok.start_pos
    if tok.value == "cond":
        return LustreError(pos, "syntax error: Kind 2's 'cond' is a block of equations "
                           "('cond | g: x = e; ... otherwise: x = e; end'), not an expression")
    if tok.type in _UNSUPPORTED_TOKENS:
        return LustreError(pos, _unsupported(_UNSUPPORTED_TOKENS[tok.type]))
    abstract = _ABSTRACT_TYPE.search(text, 0, pos)
    if abstract and tok.value == ";":  # `type T;`
        return LustreError(abstract.start(1), _unsupported(
            f"Kind 2 abstract types ('type {abstract.group(1)};')"))
    previous = _PREVIOUS_WORD.search(text, 0, pos)
    if previous and previous.group(1) in _SOFT_TYPES and tok.value == "<":
        word = previous.group(1)
        return LustreError(previous.start(1), _unsupported(f"{_SOFT_TYPES[word]} ('{word}')"))
    if previous and previous.group(1) in _SOFT_WORDS and tok.type == "IDENT":
        word = previous.group(1)
        return LustreError(previous.start(1), _unsupported(f"{_SOFT_WORDS[word]} ('{word}')"))
    if tok.value == "<" and "<<" in text[max(0, pos - 1) : pos + 2]:
        start = pos - 1 if text.startswith("<<", pos - 1) else pos
        return LustreError(start, _unsupported("Lustre V6 static arguments ('<<')"))
    if tok.value in _UNSUPPORTED_CHARS:
        return LustreError(pos, _unsupported(f"{_UNSUPPORTED_CHARS[tok.value]} ('{tok.value}')"))
    return LustreError(pos, f"syntax error: unexpected {_describe(tok)}")


def _check_reserved(text: str, dialect: str = "lustre") -> None:
    """Reject the reserved words of unsupported extensions, outside comments."""
    for tok in _lark(dialect).lex(text):
        if tok.type == "IDENT" and str(tok) in UNSUPPORTED_WORDS:
            what = UNSUPPORTED_WORDS[str(tok)]
            raise LustreError(tok.start_pos or 0, _unsupported(f"{what} ('{tok}')"))


def parse_expr(text: str, start: int, end: int) -> ast.Expr:
    """The expression `text[start:end]`, positions in `text` (the rest is
    blanked). Kind 2's mode references `::m` read as `__m`."""
    masked = " " * start + text[start:end].replace("::", "__")
    try:
        _check_reserved(masked)
        return _ToAst().transform(_lark().parse(masked, start="expr_start"))
    except UnexpectedInput as e:
        err = _error_for(masked, e)
        if err.pos >= end and end < len(text):  # the expression stops short
            err = LustreError(end, f"syntax error: unexpected '{text[end]}'")
        raise err from None


def _expr_end(toks: list[Token], k: int, text: str) -> int:
    """Index of the `;` closing the expression starting at toks[k] (depth 0)."""
    depth = 0
    for j in range(k, len(toks)):
        v = toks[j].value
        if v in ("(", "["):
            depth += 1
        elif v in (")", "]"):
            if depth == 0:
                return j
            depth -= 1
        elif v == ";" and depth == 0:
            return j
    raise LustreError((toks[-1].start_pos or 0) if toks else 0,
                      "syntax error in a contract: missing ';'")


def _rename(e: object, mapping: dict[str, str], seen: set[int] | None = None) -> None:
    """Rename the variables (and clock variables) of an expression, in place;
    an object whose id is in `seen` is renamed once (shared subtrees)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if seen is not None and isinstance(x, ast.Expr | ast.Clock):
            if id(x) in seen:
                continue
            seen.add(id(x))
        if isinstance(x, ast.Var | ast.Clock):
            if isinstance(x, ast.Var):
                x.name = mapping.get(x.name, x.name)
            else:
                x.var = mapping.get(x.var, x.var)
        elif isinstance(x, ast.Merge):
            x.var = mapping.get(x.var, x.var)
            stack.extend(c[2] for c in x.cases)
        elif isinstance(x, ast.Quantifier):  # `history(x)` names a variable
            stack.extend(d.type.size for d in x.params if d.type.name == "history")
            stack.append(x.body)
        elif isinstance(x, list | tuple):
            stack.extend(x)
        elif isinstance(x, ast.Expr):
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))


def renamed(e: ast.Expr, mapping: dict[str, str]) -> ast.Expr:
    """A copy of `e` with its variables renamed (`_rename`)."""
    out = copy.deepcopy(e)
    _rename(out, mapping)
    return out


def _conj(items: list[ast.Expr], pos: int) -> ast.Expr:
    if not items:
        return ast.Const(pos, True, "bool")
    out = items[0]
    for e in items[1:]:
        out = ast.Binary(e.pos, "and", out, e)
    return out
