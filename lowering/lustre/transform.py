"""The lark parse tree of Lustre source to `ast` (the `_ToAst` transformer),
and `LustreError`, the located error of the frontend.

Example::

    from steplus.lowering.lustre.parser import parse_program   # uses _ToAst
"""

from __future__ import annotations

import math
import re

from lark import Token, Transformer_NonRecursive, v_args

from steplus.lowering.lustre import ast

MAX_INT_DIGITS = 40
"""Longest integer literal read (digits, leading zeros aside)."""
F32_MAX = 3.4028234663852886e38
"""Largest finite real: `real` lowers to f32."""


class LustreError(Exception):
    """A located error in Lustre source: `pos` is a character offset."""

    def __init__(self, pos: int, message: str):
        super().__init__(message)
        self.pos = pos
        self.message = message


_UNSUPPORTED_TOKENS: dict[str, str] = {
    "ANNOTATION": "Kind 2 contracts and annotations ('(*@', '--@')",
    "WHEN": "Kind 2 'when' blocks and 'when ... then ... else' expressions",
}


_CONTRACTS: dict[int, list[Token]] = {}
"""The contract annotations of each node being parsed (by id of its ast.Node)."""
_CONTRACT_OPEN = re.compile(r"(\(\*|/\*)\s*@contract\b|con\b")
"""The opening of a Kind 2 contract: `(*@contract`, `/*@contract` or `con` (`... noc`)."""
def _pos(x: object) -> int:
    if isinstance(x, Token):
        return x.start_pos or 0
    return getattr(x, "pos")


_BINARY = {
    "arrow_op": "->", "fby_op": "fby", "impl_op": "=>", "or_op": "or", "xor_op": "xor",
    "and_op": "and", "add_op": "+", "sub_op": "-", "mul_op": "*", "div_op": "/",
    "idiv_op": "div", "mod_op": "mod", "bvand_op": "&&", "bvor_op": "||",
}
_UNARY = {"neg_op": "-", "not_op": "not", "pre_op": "pre", "current_op": "current",
          "cast_int": "int", "cast_real": "real", "bvnot_op": "!", "last_op": "last"}


@v_args(meta=True, inline=True)
class _ToAst(Transformer_NonRecursive):
    """Builds the AST from lark's parse tree (iteratively: deep input is fine)."""

    # -- Kind 2 data types: algebraic data types, type applications and
    # parameters, tuple types and group literals, machine integers, `match`
    # (adts.py, patterns.py, poly.py, machine_ints.py)
    def datatype_decl(self, meta, name, *rest):
        params: list[str] = []
        if rest and isinstance(rest[0], tuple) and rest[0][0] == "tparams":
            params, rest = rest[0][1], rest[1:]
        ctors = [c for c, _ in rest]
        if not params and all(not fields for _, fields in rest):
            return [ast.TypeDecl(_pos(name), str(name), ctors=ctors)]  # an enumeration
        return [ast.TypeDecl(_pos(name), str(name), ctors=ctors,
                             payloads=[fields for _, fields in rest], params=params)]

    def adt_ctor(self, meta, name, *fields):
        return (ast.Name(_pos(name), str(name)), list(fields))

    def adt_field(self, meta, name, ty):
        return (str(name), _pos(name), ty)

    def type_params(self, meta, *toks):
        return ("tparams", [str(t) for t in toks if t.type == "IDENT"])

    def type_args(self, meta, _lt, *rest):
        return list(rest[:-1])

    def poly_alias_def(self, meta, name, tparams, ty):
        return ast.TypeDecl(_pos(name), str(name), alias=ty, params=tparams[1])

    def refined_param_group(self, meta, names, ty, pred):
        if len(names) != 1:
            raise LustreError(names[1].pos, "a refinement type names one variable")
        refined = ast.TypeRef(names[0].pos, "|", elem=ty, refine=(names[0].name, pred))
        return [ast.Decl(names[0].pos, names[0].name, refined)]

    def ascription(self, meta, arg, ty):
        return ast.Ascription(meta.start_pos, arg, ty)

    def index_update(self, meta, tok, e):
        text = str(tok)
        k = int(text[2:], 16) if text[:2] in ("0x", "0X") else int(text)
        return (f"[{k}]", _pos(tok), e)

    def t_bitvec(self, meta, name, _lt, n, _gt):
        if str(name) != "uint":
            raise LustreError(_pos(name), f"syntax error: unexpected '<' after '{name}'")
        return ast.TypeRef(_pos(name), f"uint<{int(str(n))}>")

    def t_sbitvec(self, meta, _lt, n, _gt):
        return ast.TypeRef(meta.start_pos, f"int<{int(str(n))}>")

    def concat_op(self, meta, a, b):
        return ast.BitConcat(meta.start_pos, a, b)

    def extract_op(self, meta, arg, hi, lo):
        return ast.BitExtract(meta.start_pos, arg, int(str(hi)), int(str(lo)))

    def type_start(self, meta, ty):
        return ty

    def t_apply(self, meta, name, args):
        return ast.TypeRef(_pos(name), str(name), args=args)

    def t_mint(self, meta, tok):
        return ast.TypeRef(_pos(tok), str(tok))

    def t_tuple(self, meta, *items):
        return ast.TypeRef(meta.start_pos, "[]", items=list(items))

    def cast_mint(self, meta, tok, arg):
        return ast.Unary(meta.start_pos, str(tok), arg)

    # Kind 2 sets and maps (sets.py)
    def in_op(self, meta, a, b):
        return ast.Binary(meta.start_pos, "in", a, b)

    def set_lit(self, meta, *items):
        return ast.Call(meta.start_pos, "$set", meta.start_pos, list(items))

    def empty_set(self, meta, targs):
        return ast.Var(meta.start_pos, "$set", targs)

    def empty_map(self, meta, arg, targs):
        if not (isinstance(arg, ast.Var) and arg.name == "map" and arg.targs is None):
            raise LustreError(meta.start_pos, "syntax error: '[]@<...>' follows 'map'")
        return ast.Var(meta.start_pos, "$map", targs)

    def poly_ref(self, meta, name, targs):
        return ast.Var(_pos(name), str(name), targs)

    def poly_call(self, meta, name, targs, args):
        return ast.Call(meta.start_pos, str(name), _pos(name), args, targs=targs)

    def poly_record_lit(self, meta, name, targs, *inits):
        return ast.RecordLit(meta.start_pos, str(name), list(inits), targs)

    def adt_test(self, meta, name, arg):
        return ast.Tester(meta.start_pos, str(name), arg)

    def match_e(self, meta, arg, *cases):
        return ast.Match(meta.start_pos, arg, list(cases))

    def match_case(self, meta, pattern, e):
        return (pattern, e)

    def pat_name(self, meta, tok):
        return ast.Pattern(_pos(tok), str(tok))

    def pat_ctor(self, meta, tok, *args):
        return ast.Pattern(_pos(tok), str(tok), list(args))

    def group_lit(self, meta, *items):
        return items[0] if len(items) == 1 else ast.Tuple(meta.start_pos, list(items))

    def poly_node_decl(self, meta, name, tparams, *rest):
        if isinstance(name, Token) and name.type == "REC":  # `function rec f<T>`
            node = self.poly_node_decl(meta, tparams, *rest)
            node.rec = True
            return node
        node = self.node_decl(meta, name, *rest)
        node.tparams = tparams[1]
        return node

    def __default__(self, data, children, meta):
        start = meta.start_pos if not meta.empty else 0
        if data in _BINARY:
            return ast.Binary(start, _BINARY[data], children[0], children[1])
        if data in _UNARY:
            return ast.Unary(start, _UNARY[data], children[0])
        raise LustreError(start, f"internal: no AST for '{data}'")  # pragma: no cover

    # -- declarations ---------------------------------------------------------
    def start(self, meta, *decls):
        prog = ast.Program([], [], [])
        for d in decls:
            if isinstance(d, ast.Node):
                prog.nodes.append(d)
            elif isinstance(d, list) and d and isinstance(d[0], ast.ConstDecl):
                prog.consts.extend(d)
            elif isinstance(d, list):
                prog.types.extend(d)
        return prog

    def const_block(self, meta, *defs):
        return _flat(defs)

    def const_def(self, meta, name, *rest):
        ty = rest[0] if len(rest) == 2 else None
        return ast.ConstDecl(_pos(name), str(name), ty, rest[-1])

    def free_const(self, meta, *rest):
        # Kind 2 free constants `const a, b: t;`: an oracle each (oracles.py)
        *names, ty = rest
        return [ast.ConstDecl(_pos(n), str(n), ty, ast.Any(_pos(n), ty)) for n in names]

    def type_block(self, meta, *defs):
        return list(defs)

    def enum_def(self, meta, name, ctors):
        return ast.TypeDecl(_pos(name), str(name), ctors=ctors)

    def hept_enum_def(self, meta, name, *ctors):
        return ast.TypeDecl(_pos(name), str(name), ctors=[ast.Name(_pos(c), str(c)) for c in ctors])

    def alias_def(self, meta, name, ty):
        return ast.TypeDecl(_pos(name), str(name), alias=ty)

    def abstract_def(self, meta, name):
        # Kind 2 `type T;`: values of an unknown type, compared by = and <>;
        # steplus runs them as ints
        return ast.TypeDecl(_pos(name), str(name), alias=ast.TypeRef(_pos(name), "int"))

    def t_int(self, meta):
        return ast.TypeRef(meta.start_pos, "int")

    def t_real(self, meta):
        return ast.TypeRef(meta.start_pos, "real")

    def t_bool(self, meta):
        return ast.TypeRef(meta.start_pos, "bool")

    def t_named(self, meta, name):
        return ast.TypeRef(_pos(name), str(name))

    def t_history(self, meta, word, var):
        if str(word) != "history":
            raise LustreError(_pos(word) + len(word), "syntax error: unexpected '('")
        return ast.TypeRef(_pos(word), "history", size=ast.Var(_pos(var), str(var)))

    def t_subrange(self, meta, lo, hi):
        return ast.TypeRef(meta.start_pos, "int", (lo, hi))

    def t_array(self, meta, elem, size):
        return ast.TypeRef(meta.start_pos, "^", elem=elem, size=size)

    def t_record(self, meta, *groups):
        fields = [(n.name, t) for names, t in groups for n in names]
        return ast.TypeRef(meta.start_pos, "{}", fields=fields)

    def t_refine(self, meta, names, ty, pred):
        if len(names) != 1:
            raise LustreError(names[1].pos, "a refinement type names one variable")
        return ast.TypeRef(meta.start_pos, "|", elem=ty, refine=(names[0].name, pred))

    def field_decl(self, meta, names, ty):
        return (names, ty)

    def field_op(self, meta, arg, name):
        return ast.Field(meta.start_pos, arg, str(name))

    def record_lit(self, meta, name, *inits):
        return ast.RecordLit(meta.start_pos, str(name), list(inits))

    def record_update(self, meta, arg, *updates):
        return ast.RecordUpdate(meta.start_pos, arg, list(updates))

    def field_init(self, meta, name, e):
        return (str(name), _pos(name), e)

    field_update = field_init

    def index_op(self, meta, arg, index):
        return ast.Index(meta.start_pos, arg, index)

    def slice_op(self, meta, arg, lo, hi):
        return ast.Index(meta.start_pos, arg, lo, hi)

    def repeat_op(self, meta, arg, count):
        return ast.Repeat(meta.start_pos, arg, count)

    def array_lit(self, meta, *items):
        return ast.ArrayLit(meta.start_pos, list(items))

    def map_it(self, meta, _open, name, size, _close, args):
        return ast.Iterate(meta.start_pos, "map", str(name), _pos(name), size, args)

    def fold_it(self, meta, _open, name, size, _close, args):
        return ast.Iterate(meta.start_pos, "fold", str(name), _pos(name), size, args)

    def bound(self, meta, e):
        return e

    def no_bound(self, meta):
        return None

    def ident_list(self, meta, *names):
        return [ast.Name(_pos(n), str(n)) for n in names]

    def node_decl(self, meta, name, inputs, outputs, *rest):
        if isinstance(name, Token) and name.type == "REC":  # `function rec f(...)`
            node = self.node_decl(meta, inputs, outputs, *rest)
            node.rec = True
            return node
        *decls, body = rest
        equations = [e for e in body
                     if isinstance(e, ast.Equation | ast.Automaton | ast.Frame | ast.IfBlock)]
        node = ast.Node(_pos(name), str(name), inputs, outputs, [], [], equations, meta.end_pos)
        node.observers = [e for e in body if isinstance(e, ast.Observer)]
        contracts = [t for e in body if isinstance(e, Token) for t in [e]]
        for kind, items in decls:
            if kind == "var":
                node.locals.extend(items)
            elif kind == "const":
                node.consts.extend(items)
            else:
                contracts.append(items)
        _CONTRACTS[id(node)] = contracts
        return node

    def lemma_decl(self, meta, name, inputs, *decls):
        # Kind 2 `lemma L(ins) contract let proof tel`: a node without outputs whose
        # guarantees are its properties (its proof is blanked by parser.py)
        return self.node_decl(meta, name, inputs, [], *decls, [])

    def imported_decl(self, meta, name, inputs, outputs, *decls):
        if isinstance(name, Token) and name.type == "REC":
            raise LustreError(_pos(name), "an imported function has no body to recurse in "
                              "('rec')")
        # Kind 2 `node imported f(...) returns (...)`: no body (oracles.py)
        node = self.node_decl(meta, name, inputs, outputs, *decls, [])
        node.imported = True
        return node

    def params(self, meta, *groups):
        return [d for g in groups for d in g]

    def _group(self, names, ty, clock, static):
        return [ast.Decl(n.pos, n.name, ty, clock, static) for n in names]

    def param_group(self, meta, names, ty, clock=None):
        return self._group(names, ty, clock, False)

    def const_param_group(self, meta, names, ty, clock=None):
        return self._group(names, ty, clock, True)

    def clock_ann(self, meta, clock):
        return clock

    def var_decl(self, meta, *groups):
        return ("var", [d for g in groups for d in g])

    def var_group(self, meta, names, ty, clock=None):
        return self._group(names, ty, clock, False)

    def local_const(self, meta, *defs):
        return ("const", _flat(defs))

    def annotation(self, meta, tok):
        if not _CONTRACT_OPEN.match(tok):
            raise LustreError(_pos(tok), _unsupported(_UNSUPPORTED_TOKENS["ANNOTATION"]))
        return ("contract", tok)  # read by `_contract` once the node is built

    def annotation_eq(self, meta, tok):
        return self.annotation(meta, tok)[1]

    def expr_start(self, meta, e):
        return e

    def body(self, meta, *eqs):
        return [x for e in eqs if e is not None for x in (e if isinstance(e, list) else [e])]

    def eq(self, meta, lhs, rhs):
        if isinstance(lhs, tuple):  # A[i] = e
            return ast.Equation(meta.start_pos, [lhs[0]], rhs, index=lhs[1])
        return ast.Equation(meta.start_pos, lhs, rhs)

    def indexed_lhs(self, meta, name, *index):
        # `A[i] = e`, `A[i][j] = e` (Kind 2 definitions by index)
        names = [str(v) for v in index]
        return (ast.Name(_pos(name), str(name)), names[0] if len(names) == 1 else names)

    # -- Kind 2 imperative blocks (frames.py) ------------------------------------
    def block(self, meta, *items):  # a `cond` may give a list of equations
        return [x for e in items if e is not None for x in (e if isinstance(e, list) else [e])]

    def frame_block(self, meta, names, init, body):
        return ast.Frame(meta.start_pos, names, init, body)

    def if_block(self, meta, cond, then, *rest):
        # `if c then .. elsif d then .. else .. fi`: the `elsif`s nest in the else branch
        other: list[ast.Equation | ast.IfBlock | ast.Frame] = (
            rest[-1] if rest and not isinstance(rest[-1], ast.IfBlock) else [])
        for inner in reversed([r for r in rest if isinstance(r, ast.IfBlock)]):
            inner.other, other = other, [inner]
        return ast.IfBlock(meta.start_pos, cond, then, other)

    def elsif_part(self, meta, cond, then):
        return ast.IfBlock(meta.start_pos, cond, then, [])

    def cond_case(self, meta, guard, block):
        return (guard, block)

    def cond_block(self, meta, *parts):
        """Kind 2's `cond | g1: eqs1 | g2: eqs2 otherwise: eqs3 end`: the first
        case whose guard holds. When every case (and `otherwise`) defines the
        same variables, each by one equation `x = e`, it is `x = when g1 then
        e1 else when g2 then e2 else e3` per variable (the lazy conditional: a
        node call runs only in the case taken, so a `function rec` unrolls);
        otherwise nested `when` blocks (frames.py)."""
        cases = [p for p in parts if isinstance(p, tuple)]
        other = parts[-1] if parts and not isinstance(parts[-1], tuple) else None
        blocks = [b for _, b in cases] + ([other] if other is not None else [])

        def simple(block: list) -> dict[str, ast.Equation] | None:
            if not all(isinstance(e, ast.Equation) and len(e.lhs) == 1 and e.index is None
                       for e in block):
                return None
            eqs = {e.lhs[0].name: e for e in block}
            return eqs if len(eqs) == len(block) else None

        defs = [d for d in map(simple, blocks) if d is not None]
        if other is not None and len(defs) == len(blocks) and \
                all(d.keys() == defs[0].keys() for d in defs):
            out = []
            for x, first in defs[0].items():
                value: ast.Expr = defs[-1][x].rhs
                for (guard, _), d in reversed(list(zip(cases, defs))):
                    value = ast.If(d[x].pos, guard, d[x].rhs, value, lazy=True)
                out.append(ast.Equation(first.pos, [first.lhs[0]], value))
            return out
        inner: list = other or []
        for guard, block in reversed(cases):
            inner = [ast.IfBlock(guard.pos, guard, block, inner, when=True)]
        return inner[0]

    def when_block(self, meta, cond, then, other=None):
        return ast.IfBlock(meta.start_pos, cond, then, other or [], when=True)

    def when_ite(self, meta, c, t, e):
        return ast.If(meta.start_pos, c, t, e, lazy=True)

    # -- Heptagon automata (heptagon.lark) --------------------------------------
    def automaton_eq(self, meta, automaton):
        return automaton

    def automaton(self, meta, *states):
        return ast.Automaton(meta.start_pos, list(states))

    def auto_state(self, meta, name, *rest):
        state = ast.State(_pos(name), str(name), [])
        for item in rest:
            if isinstance(item, ast.Equation):
                state.equations.append(item)
            elif isinstance(item, tuple) and item[0] == "until":
                state.until.extend(item[1])
            elif isinstance(item, tuple):
                state.unless.extend(item[1])
            else:
                raise LustreError(getattr(item, "pos", _pos(name)),
                                  "only equations are allowed in an automaton state")
        return state

    def until_escapes(self, meta, *escapes):
        return ("until", list(escapes))

    def unless_escapes(self, meta, *escapes):
        return ("unless", list(escapes))

    def escape_then(self, meta, cond, target):
        return ast.Escape(meta.start_pos, cond, str(target), _pos(target), True)

    def escape_continue(self, meta, cond, target):
        return ast.Escape(meta.start_pos, cond, str(target), _pos(target), False)

    def assert_eq(self, meta, expr):
        # an assumption on the environment: no change to the outputs; the
        # falsifier (step-run --check) draws inputs within it
        return ast.Observer(meta.start_pos, "assume", "", expr)

    def reach_eq(self, meta, *children):
        # `check reachable ["name"] e [from m] [within n] [at k]` (Kind 2)
        name, rest = "", children
        if isinstance(children[0], Token):
            name, rest = str(children[0])[1:-1], children[1:]
        expr, bounds = rest[0], dict(rest[1:])
        lo = bounds.get("at", bounds.get("from"))
        hi = bounds.get("at", bounds.get("within"))
        return ast.Observer(meta.start_pos, "reachable", name, expr, (lo, hi))

    def reach_bound(self, meta, word, n):
        if str(word) not in ("from", "within", "at"):
            raise LustreError(_pos(word), f"syntax error: unexpected '{word}' (a reachability "
                              "check takes 'from n', 'within n' or 'at n')")
        if len(n) > 9:
            raise LustreError(_pos(n), f"reachability bound {n} is too large")
        return (str(word), int(n, 0) if n[:2] in ("0x", "0X") else int(n))

    def check_eq(self, meta, *children):
        name = str(children[0])[1:-1] if len(children) == 2 else ""
        return ast.Observer(meta.start_pos, "property", name, children[-1])

    def lhs(self, meta, names):
        return names

    # -- expressions ----------------------------------------------------------
    def any_expr(self, meta, ty):
        if isinstance(ty, list):  # `any@<T>`
            if len(ty) != 1:
                raise LustreError(meta.start_pos, "'any@<...>' takes one type")
            ty = ty[0]
        return ast.Any(meta.start_pos, ty)

    def choose_expr(self, meta, ty):
        any_ = self.any_expr(meta, ty)  # `choose@<T>` too
        any_.choose = True
        return any_

    def forall_expr(self, meta, params, body):
        return ast.Quantifier(meta.start_pos, "forall", params, body)

    def exists_expr(self, meta, params, body):
        return ast.Quantifier(meta.start_pos, "exists", params, body)

    def ite(self, meta, c, t, e):
        return ast.If(meta.start_pos, c, t, e)

    def when_op(self, meta, e, clock):
        return ast.When(meta.start_pos, e, clock)

    def whenot_op(self, meta, e, var):
        return ast.When(meta.start_pos, e, ast.Clock(_pos(var), str(var), False))

    def cmp_op(self, meta, a, op, b):
        return ast.Binary(meta.start_pos, str(op), a, b)

    def eq_op(self, meta, a, b):
        return ast.Binary(meta.start_pos, "=", a, b)

    def int_lit(self, meta, tok):
        # Range checks against the int type happen at lowering; here only
        # bound the text so that int() never converts thousands of digits.
        digits = tok[2:] if tok[:2] in ("0x", "0X") else tok
        if len(digits.lstrip("0")) > MAX_INT_DIGITS:
            raise LustreError(_pos(tok), f"integer literal of {len(tok)} digits is too large")
        return ast.Const(_pos(tok), int(digits, 16 if digits is not tok else 10), "int")

    def real_lit(self, meta, tok):
        value = float.fromhex(tok) if tok[:2] in ("0x", "0X") else float(tok)
        if not math.isfinite(value) or abs(value) > F32_MAX:
            raise LustreError(_pos(tok), f"real literal {tok} does not fit in real (32-bit float)")
        return ast.Const(_pos(tok), value, "real")

    def true_lit(self, meta, tok):
        return ast.Const(_pos(tok), True, "bool")

    def false_lit(self, meta, tok):
        return ast.Const(_pos(tok), False, "bool")

    def var_ref(self, meta, tok):
        return ast.Var(_pos(tok), str(tok))

    def tuple(self, meta, *items):
        return ast.Tuple(meta.start_pos, list(items))

    def args(self, meta, *items):
        return list(items)

    def call(self, meta, name, args):
        return ast.Call(meta.start_pos, str(name), _pos(name), args)

    def call_every(self, meta, name, args, reset):
        return ast.Call(meta.start_pos, str(name), _pos(name), args, reset=reset)

    def restart_call(self, meta, name, reset, args):
        return ast.Call(meta.start_pos, str(name), _pos(name), args, reset=reset)

    def activate_call(self, meta, name, cond, args):
        return ast.Call(meta.start_pos, str(name), _pos(name), args, activate=cond)

    def activate_default_call(self, meta, name, cond, default, args):
        return ast.Call(meta.start_pos, str(name), _pos(name), args, activate=cond,
                        default=default)

    def condact_call(self, meta, cond, name, args, default):
        return ast.Call(meta.start_pos, str(name), _pos(name), args, activate=cond,
                        default=[default])

    def merge_kind2(self, meta, var, on_true, on_false):
        cases: list[tuple[bool | str, int, ast.Expr]] = [
            (True, on_true.pos, on_true), (False, on_false.pos, on_false)]
        return ast.Merge(meta.start_pos, str(var), _pos(var), cases, implicit=True)

    def merge_cases(self, meta, var, *cases):
        return ast.Merge(meta.start_pos, str(var), _pos(var), list(cases))

    def merge_case(self, meta, tag, expr):
        return (tag[0], tag[1], expr)

    def case_tag(self, meta, tok):
        value = {"true": True, "false": False}.get(str(tok), str(tok))
        return (value, _pos(tok))

    def clock_var(self, meta, var):
        return ast.Clock(_pos(var), str(var), True)

    def clock_not(self, meta, var):
        return ast.Clock(_pos(var), str(var), False)

    def clock_ctor(self, meta, ctor, var):
        tag = {"true": True, "false": False}.get(str(ctor), str(ctor))
        return ast.Clock(_pos(ctor), str(var), tag)


def _flat(defs) -> list[ast.ConstDecl]:
    """Constant definitions, a free-constant group (a list) spliced in."""
    return [d for x in defs for d in (x if isinstance(x, list) else [x])]


def _unsupported(what: str) -> str:
    return f"unsupported construct: {what}"
