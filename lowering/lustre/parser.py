"""Parse Lustre source (grammar `lustre.lark`, lark LALR) into `ast.Program`.

Syntax errors and unsupported constructs raise `LustreError` located at the
offending token (a character offset; `SourceFile.loc_of_offset` turns it into
line:col; `grammar.py`); Kind 2 contracts are read by `contracts.py`.

Example::

    from steplus.lowering.lustre.parser import parse_program

    prog = parse_program("node id(x: int) returns (y: int); let y = x; tel")
    assert prog.nodes[0].name == "id"
"""

from __future__ import annotations

import re

from lark.exceptions import UnexpectedInput, VisitError

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.contracts import _IMPORTS, _contract, _contract_decls
from steplus.lowering.lustre.grammar import (  # noqa: F401 (re-exported)
    UNSUPPORTED_WORDS,
    _check_reserved,
    _error_for,
    _lark,
    _rename,
    parse_expr,
)
from steplus.lowering.lustre.transform import (  # noqa: F401 (LustreError etc. re-exported)
    _CONTRACTS,
    F32_MAX,
    MAX_INT_DIGITS,
    LustreError,
    _ToAst,
)


def parse_program(text: str, dialect: str = "lustre") -> ast.Program:
    """Parse Lustre source text (`dialect` "heptagon" adds automata); raises
    `LustreError` on a syntax error."""
    _CONTRACTS.clear()
    _IMPORTS[0] = 0
    try:
        source = text
        text, decls = _contract_decls(text, dialect)
        _check_reserved(text, dialect)
        prog = _ToAst().transform(_lark(dialect).parse(text, start="start"))
        for node in prog.nodes:
            for tok in _CONTRACTS.get(id(node), []):
                _contract(source, tok, node, decls)
        _properties(text, prog)
        text = source  # observer names may come from a contract declaration
        for node in prog.nodes:
            _name_observers(text, node)
        return prog
    except UnexpectedInput as e:
        raise _error_for(text, e) from None
    except VisitError as e:  # a callback raised (e.g. an annotation)
        if isinstance(e.orig_exc, LustreError):
            raise e.orig_exc from None
        raise
    finally:
        _CONTRACTS.clear()


# -- properties ----------------------------------------------------------------------

_PROPERTY = re.compile(r"--%PROPERTY\b|\(\*%PROPERTY\b|/\*!PROPERTY\s*:?")
_MAX_NAME = 60


def _properties(text: str, prog: ast.Program) -> None:
    """`--%PROPERTY e;`, `(*%PROPERTY e; *)` and `/*!PROPERTY: e; */` (Kind 2,
    Lustre V4/Lesar comment annotations): properties of the node around them."""
    for m in _PROPERTY.finditer(text):
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        close = {"-": line_end, "(": text.find("*)", m.end()), "/": text.find("*/", m.end())}
        stop = close[m.group(0)[0]]
        stop = line_end if stop < 0 else stop
        semi = text.rfind(";", m.end(), stop)
        end = semi if semi >= 0 else stop
        owner = next((n for n in prog.nodes if n.pos <= m.start() <= n.end), None)
        if owner is None or not text[m.end():end].strip():
            continue  # outside any node (Kind 2 ignores it too) or empty
        e = parse_expr(text, m.end(), end)
        owner.observers.append(ast.Observer(e.pos, "property", "", e))


def _name_observers(text: str, node: ast.Node) -> None:
    """An unnamed observer is called by its text (`out >= 0`), shortened."""
    for ob in node.observers:
        if not ob.name:
            src = _source_of(text, ob.expr)
            ob.name = src if len(src) <= _MAX_NAME else src[: _MAX_NAME - 3] + "..."


def _source_of(text: str, e: ast.Expr) -> str:
    """The source text of an expression (from its first token to the `;`)."""
    end = text.find(";", e.pos)
    end = len(text) if end < 0 else end
    nl = text.find("\n", e.pos)
    if 0 <= nl < end:
        end = nl
    src = " ".join(text[e.pos:end].split())
    for close in ("*)", "*/"):
        src = src.removesuffix(close).rstrip()
    return src


def main_node(text: str, program: ast.Program) -> str | None:
    """The node marked `--%MAIN` (Kind 2), else None."""
    for m in re.finditer(r"(--|\(\*)[%!]MAIN\b", text):
        for node in program.nodes:
            if node.pos <= m.start() <= node.end:
                return node.name
    return None
