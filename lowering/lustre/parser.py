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
        text = source = _lemma_proofs(nested_contract_comments(text), dialect)
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


# -- comments inside contracts --------------------------------------------------------

_SCAN = re.compile(r'--|//|"|\(\*|\*\)|/\*|\*/')
_OPENED = re.compile(r"(\(\*|/\*)\s*@contract\b")


def nested_contract_comments(text: str) -> str:
    """`text` with the comments inside each `(*@contract ... *)` (and
    `/*@contract ... */`) block blanked, positions kept. Kind 2 reads a
    comment there as a comment, nested in the block (`(* a note *)` inside
    `(*@contract ... *)`), and the block ends at the `*)` that closes it; the
    grammar's one-token annotation stops at the first `*)`. Outside
    contracts, comments do not nest (as `lustre.lark` reads them); a block
    left open is left for the grammar to report."""
    if "@contract" not in text:
        return text
    out: list[tuple[int, int]] = []
    k, n = 0, len(text)
    while k < n:
        m = _SCAN.search(text, k)
        if m is None:
            break
        tok, at = m.group(0), m.start()
        if tok in ("--", "//"):
            nl = text.find("\n", at)
            k = n if nl < 0 else nl
        elif tok == '"':
            close = text.find('"', at + 1)
            k = n if close < 0 else close + 1
        elif tok in ("(*", "/*") and (opened := _OPENED.match(text, at)) is not None:
            k = _contract_block(text, opened.end(), tok, out)
        elif tok in ("(*", "/*"):
            close = text.find("*)" if tok == "(*" else "*/", at + 2)
            k = n if close < 0 else close + 2
        else:
            k = at + 2
    if not out:
        return text
    chars = list(text)
    for start, stop in out:
        for j in range(start, stop):
            if chars[j] != "\n":
                chars[j] = " "
    return "".join(chars)


def _contract_block(text: str, k: int, opener: str, spans: list[tuple[int, int]]) -> int:
    """Scan the contract block whose items start at `k` (opened by `opener`):
    record the spans of its comments in `spans`, return the offset past its end."""
    close = "*)" if opener == "(*" else "*/"
    depth, start, n = 0, -1, len(text)
    while k < n:
        m = _SCAN.search(text, k)
        if m is None:
            return n
        tok, at = m.group(0), m.start()
        if depth == 0 and tok in ("--", "//"):
            nl = text.find("\n", at)
            stop = n if nl < 0 else nl
            spans.append((at, stop))
            k = stop
        elif depth == 0 and tok == '"':
            q = text.find('"', at + 1)
            k = n if q < 0 else q + 1
        elif tok == opener:
            if depth == 0:
                start = at
            depth, k = depth + 1, at + 2
        elif tok == close:
            if depth == 0:
                return at + 2
            depth, k = depth - 1, at + 2
            if depth == 0:
                spans.append((start, k))
        else:
            k = at + 2 if len(tok) == 2 else at + 1
    return n


# -- Kind 2 lemmas ---------------------------------------------------------------------

_LEMMA = re.compile(r"\blemma\b")


def _lemma_proofs(text: str, dialect: str) -> str:
    """`text` with the proof of each Kind 2 `lemma L(...) contract let proof tel`
    blanked (positions kept): its steps (`auto;`, `L(a - 1, b);` invoking a lemma,
    `when c then ... else ... end`) guide Kind 2's prover and have no run-time
    meaning; the lemma's contract is what `step-run --check` checks."""
    if not _LEMMA.search(text):
        return text
    try:
        toks = list(_lark(dialect).lex(text))
    except UnexpectedInput:
        return text  # the parser reports the bad character
    chars: list[str] | None = None
    k = 0
    while k < len(toks):
        if toks[k].value != "lemma":
            k += 1
            continue
        let = next((j for j in range(k + 1, len(toks)) if toks[j].value == "let"), None)
        tel = None if let is None else next(
            (j for j in range(let + 1, len(toks)) if toks[j].value == "tel"), None)
        if let is None or tel is None:
            return text if chars is None else "".join(chars)  # the parser reports it
        chars = list(text) if chars is None else chars
        for j in range((toks[let].end_pos or 0), toks[tel].start_pos or 0):
            if chars[j] != "\n":
                chars[j] = " "
        k = tel + 1
    return text if chars is None else "".join(chars)


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
