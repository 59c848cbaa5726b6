"""Kind 2 contracts: inline contracts (`(*@contract ... *)`, `con ... noc`)
and contract declarations with their imports, read into a node's observers,
modes, ghost locals and constants (`_contract`, `_contract_decls`, `_import`;
type parameters in `contract_params.py`).

Example::

    contract Inc(x: int) returns (y: int); let guarantee y > x; tel
    node N(x: int) returns (y: int)
    (*@contract import Inc(x) returns (y); *)
    let y = x + 1; tel          -- N's property 'y > x'
"""

from __future__ import annotations

import dataclasses
import re

from lark import Token
from lark.exceptions import UnexpectedInput

from steplus.lowering.lustre import ast, contract_params
from steplus.lowering.lustre.grammar import (
    _check_reserved,
    _conj,
    _error_for,
    _expr_end,
    _lark,
    _rename,
    parse_expr,
)
from steplus.lowering.lustre.transform import (
    _CONTRACT_OPEN,
    LustreError,
    _ToAst,
)


def _contract(text: str, tok: Token, node: ast.Node,
              decls: dict[str, _ContractDecl] | None = None) -> None:
    """Read a Kind 2 contract `(*@contract ... *)` into `node` (its items
    by `_contract_items`; `decls` the program's `contract` declarations)."""
    opened = _CONTRACT_OPEN.match(tok)
    assert opened is not None  # `annotation` passes contracts only
    start = (tok.start_pos or 0) + opened.end()
    end = (tok.start_pos or 0) + len(tok) - (3 if tok.endswith("noc") else 2)  # `*)`, `noc`
    _contract_items(text, start, end, node, decls or {}, ())


def _contract_type(text: str, toks: list[Token], k: int) -> tuple[ast.TypeRef, int]:
    """The type of a contract variable starting at toks[k] (up to its `=`),
    and the index of that `=`."""
    depth, j = 0, k
    while j < len(toks) and not (toks[j].value == "=" and depth == 0):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(toks[j].value, 0)
        j += 1
    start = toks[k].start_pos or 0 if k < len(toks) else len(text)
    if j >= len(toks) or j == k:
        raise LustreError(start, "syntax error in a contract: expected 'v: type = e'")
    end = toks[j].start_pos or 0
    masked = " " * start + text[start:end]
    try:
        tree = _lark().parse(masked, start="type_start")
    except UnexpectedInput as e:
        raise _error_for(masked, e) from None
    ty = _ToAst().transform(tree)
    assert isinstance(ty, ast.TypeRef)
    return ty, j


def _contract_items(text: str, start: int, end: int, node: ast.Node,
                    decls: dict[str, _ContractDecl], within: tuple[str, ...]) -> None:
    """Read the contract items of `text[start:end]` into `node`: assumptions and
    guarantees become observers, ghost `var`s locals with their equation,
    `const`s local constants, `mode`s a property `require => ensure` each
    (and one that some mode is active), `import C(args) returns (ids);` the
    items of contract declaration `C` (`_import`); `within` the contract
    declarations being imported (a cycle is an error)."""
    masked = " " * start + text[start:end].replace("::", "__")
    toks = list(_lark().lex(masked))
    k = 0
    mode_names: list[tuple[str, int, list[ast.Expr], list[ast.Expr]]] = []
    taken = {d.name for d in [*node.inputs, *node.outputs, *node.locals]}
    first_local, first_eq, first_ob = len(node.locals), len(node.equations), len(node.observers)

    def expr_until_semi(k: int) -> tuple[ast.Expr, int]:
        j = _expr_end(toks, k, text)
        if j == k:
            raise LustreError(toks[k].start_pos or 0, "syntax error in a contract: "
                              "expected an expression")
        return parse_expr(text, toks[k].start_pos or 0, toks[j].start_pos or 0), j + 1

    while k < len(toks):
        t = toks[k]
        word, pos = t.value, t.start_pos or 0
        if word == "weakly" and k + 1 < len(toks) and toks[k + 1].value == "assume":
            k += 1
            word = "assume"
        if word in ("guarantee", "assume"):
            k += 1
            name = ""
            if k < len(toks) and toks[k].type == "STRING":
                name, k = toks[k].value[1:-1], k + 1
            e, k = expr_until_semi(k)
            node.observers.append(ast.Observer(pos, "property" if word == "guarantee"
                                               else "assume", name, e))
        elif word in ("var", "const"):
            if k + 1 >= len(toks) or toks[k + 1].type != "IDENT":
                raise LustreError(pos, f"syntax error in a contract: '{word}' needs a name")
            idents = [toks[k + 1]]
            k += 2
            while word == "var" and k + 1 < len(toks) and toks[k].value == "," \
                    and toks[k + 1].type == "IDENT":
                idents.append(toks[k + 1])
                k += 2
            ident = idents[0]
            ty = None
            if k < len(toks) and toks[k].value == ":":
                ty, k = _contract_type(text, toks, k + 1)
            if k >= len(toks) or toks[k].value != "=":
                raise LustreError(pos, f"syntax error in a contract: '{word}' needs '= e'")
            e, k = expr_until_semi(k + 1)
            ipos = ident.start_pos or 0
            if word == "const":
                node.consts.append(ast.ConstDecl(ipos, ident.value, ty, e))
            else:
                if ty is None:
                    raise LustreError(ipos, "a contract 'var' needs a type")
                node.locals.extend(ast.Decl(i.start_pos or 0, i.value, ty) for i in idents)
                node.equations.append(ast.Equation(
                    ipos, [ast.Name(i.start_pos or 0, i.value) for i in idents], e))
        elif word == "mode":
            if k + 2 >= len(toks) or toks[k + 1].type != "IDENT" or toks[k + 2].value != "(":
                raise LustreError(pos, "syntax error in a contract: expected 'mode m ('")
            name = toks[k + 1].value
            requires: list[ast.Expr] = []
            ensures: list[ast.Expr] = []
            k += 3
            while k < len(toks) and toks[k].value in ("require", "ensure"):
                which = requires if toks[k].value == "require" else ensures
                k += 1
                if k < len(toks) and toks[k].type == "STRING":
                    k += 1
                e, k = expr_until_semi(k)
                which.append(e)
            if k >= len(toks) or toks[k].value != ")":
                raise LustreError((toks[k].start_pos or 0) if k < len(toks) else pos,
                                  "syntax error in a contract: expected ')' closing the mode")
            k += 1
            if k < len(toks) and toks[k].value == ";":
                k += 1
            mode_names.append((name, pos, requires, ensures))
        elif word == "import":
            k = _import(text, toks, k, node, decls, within)
        elif word == "decreases":  # a termination measure (Kind 2 proves it)
            j = _expr_end(toks, k + 1, text)
            if any(t.value == "," for t in toks[k + 1:j]):
                k = j + 1  # a lexicographic tuple: not used as a bound
                continue
            try:  # bounds the unrolling of a call with non-constant arguments (sized.py)
                node.decreases = parse_expr(text, toks[k + 1].start_pos or 0,
                                            toks[j].start_pos or 0)
            except LustreError:
                pass
            k = j + 1
        else:
            raise LustreError(pos, f"syntax error in a contract: unexpected '{word}'")
    ghosts = {d.name for d in node.locals[first_local:]} & taken
    if ghosts:  # a contract's own variable beside a node variable of that name
        mapping = {g: f"{g}$ghost" for g in ghosts}
        for d in node.locals[first_local:]:
            d.name = mapping.get(d.name, d.name)
        for eq in (e for e in node.equations[first_eq:] if isinstance(e, ast.Equation)):
            for n in eq.lhs:
                n.name = mapping.get(n.name, n.name)
            _rename(eq.rhs, mapping)
        for ob in node.observers[first_ob:]:
            _rename(ob.expr, mapping)
        for _, _, requires, ensures in mode_names:
            for e in [*requires, *ensures]:
                _rename(e, mapping)
    for name, pos, requires, ensures in mode_names:
        req = _conj(requires, pos)
        node.modes[name] = req
        node.observers.append(ast.Observer(pos, "property", f"mode {name}",
                                           ast.Binary(pos, "=>", req, _conj(ensures, pos))))
    if mode_names:
        any_mode: ast.Expr = node.modes[mode_names[0][0]]
        for name, pos, _, _ in mode_names[1:]:
            any_mode = ast.Binary(pos, "or", any_mode, node.modes[name])
        node.observers.append(ast.Observer(mode_names[0][1], "property",
                                           "some mode is active (exhaustiveness)", any_mode))


# -- Kind 2 contract declarations and imports -------------------------------------------


@dataclasses.dataclass
class _ContractDecl:
    """`contract C(inputs) returns (outputs); let items tel`: the items are
    `text[start:end]`, read at each `import` of C."""

    pos: int
    inputs: list[ast.Decl]
    outputs: list[ast.Decl]
    start: int
    end: int
    tparams: list[str] = dataclasses.field(default_factory=list[str])  # `C<T>`


_MAX_IMPORT_DEPTH = 32
_MAX_IMPORTS = 1000
_IMPORTS = [0]
"""Contract imports expanded while parsing one program (bounded by _MAX_IMPORTS:
a chain of contracts each importing the previous twice doubles per level)."""


def _blank(text: str, start: int, stop: int) -> str:
    """`text` with `text[start:stop]` replaced by spaces (newlines kept)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:stop]) + text[stop:]


def _contract_decls(text: str, dialect: str) -> tuple[str, dict[str, _ContractDecl]]:
    """The Kind 2 contract declarations of a program by name, and the text with
    them blanked (so the node grammar never sees them; positions are kept).
    A `contract` followed by anything but `C (` or `C <` is left for
    `_check_reserved` to name."""
    decls: dict[str, _ContractDecl] = {}
    if not re.search(r"\bcontract\b", text):
        return text, decls
    try:
        toks = list(_lark(dialect).lex(text))
    except UnexpectedInput:
        _check_reserved(text, dialect)  # a reserved word before the bad character
        raise
    source, spans = text, list[tuple[int, str, int, int]]()
    k = 0
    while k + 2 < len(toks):
        t = toks[k]
        if not (t.type == "IDENT" and t.value == "contract" and toks[k + 1].type == "IDENT"
                and toks[k + 2].value in ("(", "<")):
            k += 1
            continue
        pos, name = t.start_pos or 0, toks[k + 1].value
        let = next((j for j in range(k + 3, len(toks)) if toks[j].value == "let"), None)
        tel = None if let is None else next(
            (j for j in range(let + 1, len(toks)) if toks[j].value == "tel"), None)
        if let is None or tel is None:
            raise LustreError(pos, f"syntax error: contract '{name}' needs 'let ... tel'")
        if name in decls:
            raise LustreError(toks[k + 1].start_pos or 0, f"contract '{name}' is declared twice")
        let_pos = toks[let].start_pos or 0
        end = toks[tel].start_pos or 0
        stop = end + len("tel")
        if tel + 1 < len(toks) and toks[tel + 1].value == ";":
            stop, tel = (toks[tel + 1].start_pos or 0) + 1, tel + 1
        spans.append((pos, name, let_pos, end))
        decls[name] = _ContractDecl(pos, [], [], let_pos + len("let"), end)
        text = _blank(text, pos, stop)
        k = tel + 1
    # the unsupported constructs outside the contracts first (in source order)
    _check_reserved(text, dialect)
    for pos, name, let_pos, end in spans:
        header = " " * pos + "node    " + source[pos + len("contract"):let_pos] + "let tel"
        node = _ToAst().transform(_lark(dialect).parse(header, start="start")).nodes[0]
        decls[name].inputs, decls[name].outputs = node.inputs, node.outputs
        decls[name].tparams = node.tparams  # `contract C<T>(...)`: contract_params.py
    for name, decl in decls.items():  # each is checked, imported or not
        scratch = ast.Node(decl.pos, name, decl.inputs, decl.outputs, [], [], [])
        _contract_items(source, decl.start, decl.end, scratch, decls, (name,))
    return text, decls


def _import(text: str, toks: list[Token], k: int, node: ast.Node,
            decls: dict[str, _ContractDecl], within: tuple[str, ...]) -> int:
    """`import C(args) returns (ids);` at toks[k]: the items of contract C with
    its inputs bound to the arguments (an argument that is not a variable gets
    a ghost local) and its outputs to `ids`; C's own ghost variables and
    constants are renamed apart. Returns the index past the import."""
    pos = toks[k].start_pos or 0
    targs, open_at = None, k + 2
    if k + 2 < len(toks) and toks[k + 1].type == "IDENT" and toks[k + 2].value in ("<", "@"):
        targs, open_at = _type_args(text, toks, k + 2)  # `import C@<int>(x) ...`
    if open_at >= len(toks) or toks[k + 1].type != "IDENT" or toks[open_at].value != "(":
        raise LustreError(pos, "syntax error in a contract: expected 'import C ('")
    name_tok = toks[k + 1]
    name = name_tok.value
    args: list[ast.Expr] = []
    depth, first, j = 0, open_at + 1, open_at + 1
    while True:
        if j >= len(toks) or (toks[j].value == ";" and depth == 0):
            raise LustreError(pos, "syntax error in a contract: missing ')' closing the import")
        v = toks[j].value
        if v in ("(", "["):
            depth += 1
        elif v in (")", "]") and depth > 0:
            depth -= 1
        elif (v == "," or v == ")") and depth == 0:
            if j == first and (v == "," or args):
                raise LustreError(toks[j].start_pos or 0,
                                  "syntax error in a contract: expected an expression")
            if j > first:
                args.append(parse_expr(text, toks[first].start_pos or 0, toks[j].start_pos or 0))
            first = j + 1
            if v == ")":
                break
        j += 1
    j += 1
    if j + 1 >= len(toks) or toks[j].value != "returns" or toks[j + 1].value != "(":
        raise LustreError(pos, "syntax error in a contract: expected 'returns (' in the import")
    j += 2
    ids: list[str] = []
    while j < len(toks) and toks[j].type == "IDENT":
        ids.append(toks[j].value)
        j += 1
        if j < len(toks) and toks[j].value == ",":
            j += 1
    if j >= len(toks) or toks[j].value != ")":
        raise LustreError(pos, "syntax error in a contract: expected ')' closing the import")
    j += 1
    if j < len(toks) and toks[j].value == ";":
        j += 1
    decl = decls.get(name)
    if decl is None:
        raise LustreError(name_tok.start_pos or 0, f"unknown contract '{name}'")
    _IMPORTS[0] += 1
    if _IMPORTS[0] > _MAX_IMPORTS:
        raise LustreError(pos, f"contract imports expand to more than {_MAX_IMPORTS} "
                          "instances")
    if name in within:
        raise LustreError(pos, f"contract '{name}' imports itself ({' -> '.join([*within, name])})")
    if len(within) >= _MAX_IMPORT_DEPTH:  # a chain of distinct contracts: not a cycle
        raise LustreError(pos, f"contract imports nest deeper than {_MAX_IMPORT_DEPTH} "
                          f"(importing '{name}' from '{within[0]}')")
    for what, given, params in (("inputs", len(args), decl.inputs),
                                ("outputs", len(ids), decl.outputs)):
        if given != len(params):
            raise LustreError(pos, f"contract '{name}' has {len(params)} {what}, "
                              f"the import gives {given}")
    types = contract_params.bind(name, decl.tparams, targs, decl.inputs, args, node, pos)
    params = contract_params.instantiated(decl.inputs, types)
    sub = ast.Node(decl.pos, name, [], [], [], [], [])
    # the contract's parameters, as names the items can see (ghost clashes are renamed)
    sub.inputs, sub.outputs = params, contract_params.instantiated(decl.outputs, types)
    _contract_items(text, decl.start, decl.end, sub, decls, (*within, name))
    sub.locals = contract_params.instantiated(sub.locals, types)
    suffix = f"${name}{pos}"
    mapping = {d.name: d.name + suffix for d in sub.locals}
    mapping.update({c.name: c.name + suffix for c in sub.consts})
    mapping.update({o.name: i for o, i in zip(decl.outputs, ids, strict=True)})
    bound: list[ast.Equation] = []
    for p, a in zip(params, args, strict=True):
        if isinstance(a, ast.Var):
            mapping[p.name] = a.name
        else:
            mapping[p.name] = p.name + suffix
            node.locals.append(ast.Decl(a.pos, p.name + suffix, p.type))
            bound.append(ast.Equation(a.pos, [ast.Name(a.pos, p.name + suffix)], a))
    seen: set[int] = set()
    for d in sub.locals:
        d.name = mapping[d.name]
    for c in sub.consts:
        c.name = mapping[c.name]
        _rename(c.value, mapping, seen)
    for eq in sub.equations:
        if isinstance(eq, ast.Equation):
            for n in eq.lhs:
                n.name = mapping.get(n.name, n.name)
            _rename(eq.rhs, mapping, seen)
    for ob in sub.observers:
        _rename(ob.expr, mapping, seen)
    for m, req in sub.modes.items():
        _rename(req, mapping, seen)
        node.modes[f"{name}__{m}"] = req  # Kind 2's `::C::m`
    node.locals.extend(sub.locals)
    node.consts.extend(sub.consts)
    node.equations.extend([*bound, *sub.equations])
    node.observers.extend(sub.observers)
    return j


def _type_args(text: str, toks: list[Token], k: int) -> tuple[list[ast.TypeRef], int]:
    """The type arguments `@<t1; t2>` (or `<t1, t2>`) at toks[k], and the index
    past their `>`."""
    j = k + 1 if toks[k].value == "@" else k
    if j >= len(toks) or toks[j].value != "<":
        raise LustreError(toks[k].start_pos or 0, "syntax error in a contract: expected '<'")
    out: list[ast.TypeRef] = []
    depth, first = 0, j + 1
    for m in range(j + 1, len(toks)):
        v = toks[m].value
        depth += {"<": 1, "(": 1, "[": 1, ">": -1, ")": -1, "]": -1}.get(v, 0)
        if depth < 0 or (depth == 0 and v in (",", ";")):
            if m == first:
                raise LustreError(toks[m].start_pos or 0, "syntax error in a contract: "
                                  "expected a type")
            start, end = toks[first].start_pos or 0, toks[m].start_pos or 0
            try:
                ty = _ToAst().transform(_lark().parse(" " * start + text[start:end],
                                                      start="type_start"))
            except UnexpectedInput as e:
                raise _error_for(" " * start + text[start:end], e) from None
            assert isinstance(ty, ast.TypeRef)
            out.append(ty)
            first = m + 1
            if depth < 0:
                return out, m + 1
    raise LustreError(toks[j].start_pos or 0, "syntax error in a contract: missing '>'")
