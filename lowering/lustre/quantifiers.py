"""Kind 2 quantifiers `forall (x: T; ...) e` and `exists (...) e`, made executable.

- Over a finite domain (bool, an enumeration, a subrange of at most
  `MAX_DOMAIN` values, records of those), a quantifier is expanded: the
  conjunction (`forall`) or disjunction (`exists`) of its body with the
  variables replaced by every value (at most `MAX_DOMAIN` combinations). A
  refinement `x: subtype {v: T | p}` restricts the values: `p => e` under
  `forall`, `p and e` under `exists`.
- Over an unbounded domain (int, real, a subrange with `*`), no expansion is
  possible. Where the quantifier can only be *falsified* by one value — a
  `forall` in a property (a counterexample makes it false) or an `exists` that
  the property negates (`(exists k. p(k)) => q`), and dually an `exists` in an
  assumption — its variable becomes a *witness*: an input of the node's check
  variant `n$check` only, named `forall.L.C.x` (`exists.L.C.x`), which
  `step-run --check` draws at random each tick (within a subrange's bounds).
  The property is then `e` at that value: when it is false the quantified
  property is false (a sound counterexample); when it is true nothing is
  proved. Anywhere else (an equation, under `=`, `xor`, an `if` condition)
  such a quantifier is a located error.

- Over Kind 2's `history(x)` (the values the variable x has taken), `e` at x
  now and at each of the `HISTORY - 1` = 63 ticks before (locals
  `history.L.C.k = x -> pre history.L.C.(k-1)`): exact for runs of at most 64
  ticks; past that the older values are not seen.

Example::

    check forall (i: subrange [0, 2] of int) A[i] >= 0;
    -- is  check A[0] >= 0 and A[1] >= 0 and A[2] >= 0;
"""

from __future__ import annotations

import copy
import itertools

from steplus.lowering.lustre import adts, ast
from steplus.lowering.lustre.oracles import node_roots, rewrite
from steplus.lowering.lustre.program import Program, walk
from steplus.lowering.lustre.transform import LustreError, _unsupported

MAX_DOMAIN = 4096
"""Most combinations of values a quantifier is expanded over."""
HISTORY = 64
"""Values of `history(x)` a quantifier ranges over: x now and at the 63 ticks before
(exact for runs of at most 64 ticks)."""


def _has_quantifier(e: ast.Expr) -> bool:
    return any(isinstance(x, ast.Quantifier) for x in walk(e))


class _Expander:
    def __init__(self, prog: Program, node: ast.Node, text: str):
        self.prog, self.node, self.text = prog, node, text
        self.observing = False  # expanding an observer: its history locals are n$check's

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return f"{line}.{col}"

    def go(self, e: ast.Expr, pol: int) -> ast.Expr:
        """`e` with its quantifiers expanded; `pol` its polarity (1: the truth of
        a property, -1: of an assumption or negated, 0: neither)."""
        if isinstance(e, ast.Quantifier):
            return self.quantifier(e, self.go(e.body, pol), pol)
        if isinstance(e, ast.Unary):
            e.arg = self.go(e.arg, -pol if e.op == "not" else pol if e.op == "pre" else 0)
        elif isinstance(e, ast.Binary):
            monotone = e.op in ("and", "or", "->", "fby")
            e.lhs = self.go(e.lhs, pol if monotone else -pol if e.op == "=>" else 0)
            e.rhs = self.go(e.rhs, pol if monotone or e.op == "=>" else 0)
        elif isinstance(e, ast.If):
            e.cond = self.go(e.cond, 0)
            e.then, e.other = self.go(e.then, pol), self.go(e.other, pol)
        else:
            rewrite(e, lambda x: self.go(x, 0) if isinstance(x, ast.Quantifier) else None)
        return e

    def domain(self, d: ast.Decl) -> list[list[tuple[str, ast.Expr]]] | None:
        """The values of a quantified variable, each as (path, value) pairs
        (`x`, or `x.f` ... for a record), or None if not finite."""
        base, _ = self.prog.unrefined(d.type)
        leaves = self.prog.leaves(base)
        per_leaf: list[list[tuple[str, ast.Expr]]] = []
        for suffix, t in leaves:
            if "[" in suffix:
                return None
            path = d.name + suffix
            t, _ = self.prog.unrefined(t)
            r = self.prog.int_range(t)
            ltype = self.prog.resolve_type(t)
            if r is not None:
                if r[1] - r[0] >= MAX_DOMAIN:
                    return None
                per_leaf.append([(path, ast.Const(d.pos, k, "int"))
                                 for k in range(r[0], r[1] + 1)])
            elif ltype == "bool":
                per_leaf.append([(path, ast.Const(d.pos, b, "bool")) for b in (False, True)])
            elif not self.prog.is_enum(ltype) or ltype in self.prog.adt_instances:
                return None
            else:
                per_leaf.append([(path, ast.Var(d.pos, c)) for c in self.prog.ctor_names(ltype)])
        size = 1
        for values in per_leaf:
            size *= len(values)
            if size > MAX_DOMAIN:
                return None
        return [list(combo) for combo in itertools.product(*per_leaf)]

    def quantifier(self, q: ast.Quantifier, body: ast.Expr, pol: int) -> ast.Expr:
        if any(d.type.name == "history" for d in q.params):
            return self.history(q, body)
        domains = [self.domain(d) for d in q.params]
        finite = all(dom is not None for dom in domains)
        total = 1
        for dom in domains:
            total *= len(dom) if dom is not None else 1
        if finite and total <= MAX_DOMAIN:
            return self.expand(q, body, [dom for dom in domains if dom is not None])
        if (q.kind == "forall") != (pol == 1) or pol == 0:
            d = next((d for d, dom in zip(q.params, domains) if dom is None), q.params[0])
            # expanded: bool, enumerations, subranges of at most MAX_DOMAIN values,
            # records of those; a witness: a `forall` of a property, or an `exists`
            # it negates (docs/guide/lustre.md)
            raise LustreError(d.pos, _unsupported(
                "Kind 2 quantifiers over an unbounded type where no witness falsifies "
                f"them ('{q.kind}' over '{d.name}')"))
        return self.witness(q, body)

    def history(self, q: ast.Quantifier, body: ast.Expr) -> ast.Expr:
        """`forall (old: history(x)) e`: `e` at x now and at each of the
        `HISTORY - 1` ticks before (the values x has taken; fewer at the
        start: `h_k = x -> pre h_(k-1)` repeats x's first value there), the
        conjunction (`exists`: disjunction)."""
        d = q.params[0]
        var = d.type.size
        if len(q.params) != 1 or not isinstance(var, ast.Var):
            raise LustreError(q.params[-1].pos, _unsupported(
                "a Kind 2 history quantifier over several variables or an expression's "
                "history ('history')"))
        decl = next((x for x in [*self.node.inputs, *self.node.outputs, *self.node.locals]
                     if x.name == var.name), None)
        if decl is None:
            raise LustreError(var.pos, f"unknown variable '{var.name}'")
        if len(self.prog.leaves(self.prog.unrefined(decl.type)[0])) != 1:
            raise LustreError(var.pos, _unsupported(
                f"Kind 2 history types of a composite value ('history({var.name})')"))
        terms = [_substitute(body, {d.name: ast.Var(var.pos, var.name)})]
        prev: ast.Expr = ast.Var(var.pos, var.name)
        for k in range(1, HISTORY):
            name = f"history.{self.where(q.pos)}.{k}"
            self.node.locals.append(ast.Decl(var.pos, name, copy.deepcopy(decl.type),
                                             witness=self.observing))
            self.node.equations.append(ast.Equation(var.pos, [ast.Name(var.pos, name)],
                                                    ast.Binary(var.pos, "->", ast.Var(var.pos, var.name),
                                                               ast.Unary(var.pos, "pre", prev))))
            prev = ast.Var(var.pos, name)
            terms.append(_substitute(body, {d.name: prev}))
        out = terms[0]
        for t in terms[1:]:
            out = ast.Binary(q.pos, "and" if q.kind == "forall" else "or", out, t)
        return out

    def _guards(self, q: ast.Quantifier, values: dict[str, ast.Expr]) -> list[ast.Expr]:
        out = []
        for d in q.params:
            for var, pred in self.prog.unrefined(d.type)[1]:
                out.append(_substitute(pred, {var: values.get(d.name, ast.Var(d.pos, d.name))}))
        return out

    def expand(self, q: ast.Quantifier, body: ast.Expr,
               domains: list[list[list[tuple[str, ast.Expr]]]]) -> ast.Expr:
        op = "and" if q.kind == "forall" else "or"
        terms: list[ast.Expr] = []
        for combo in itertools.product(*domains):
            values = {path: v for leaf in combo for path, v in leaf}
            term: ast.Expr | None = _substitute(body, values)
            for guard in self._guards(q, values):
                try:  # a predicate on the value alone: drop the value or the guard
                    holds, ltype = self.prog.fold(guard)
                except LustreError:
                    holds, ltype = None, ""
                if ltype == "bool" and not holds:
                    term = None
                    break
                if ltype != "bool":
                    term = ast.Binary(q.pos, "=>" if q.kind == "forall" else "and", guard,
                                      term)
            if term is not None:
                terms.append(term)
        if not terms:
            return ast.Const(q.pos, q.kind == "forall", "bool")
        out = terms[0]
        for t in terms[1:]:
            out = ast.Binary(q.pos, op, out, t)
        return out

    def witness(self, q: ast.Quantifier, body: ast.Expr) -> ast.Expr:
        values: dict[str, ast.Expr] = {}
        for d in q.params:
            base, _ = self.prog.unrefined(d.type)
            leaves = self.prog.leaves(base)
            name = f"{q.kind}.{self.where(q.pos)}.{d.name}"
            if any(x.name == name for x in self.node.inputs):
                pass
            elif len(leaves) == 1:
                self.node.inputs.append(ast.Decl(d.pos, name, base, witness=True))
            else:  # a record, tuple or datatype: a witness input per leaf
                self.node.inputs += [ast.Decl(d.pos, name + suffix, t, witness=True)
                                     for suffix, t in leaves]
                adts.register_parts(self.node.arrays, name, leaves, self.prog)
            values[d.name] = ast.Var(d.pos, name)
        term = _substitute(body, values)
        for guard in self._guards(q, values):
            term = ast.Binary(q.pos, "=>" if q.kind == "forall" else "and", guard, term)
        return term


def _substitute(e: ast.Expr, values: dict[str, ast.Expr]) -> ast.Expr:
    """A copy of `e` with the variables (and record parts `x.f`) of `values` replaced."""
    def path(x: ast.Expr) -> str | None:
        parts = []
        while isinstance(x, ast.Field):
            parts.append(x.field)
            x = x.arg
        if not isinstance(x, ast.Var):
            return None
        return ".".join([x.name, *reversed(parts)])

    def repl(x: ast.Expr) -> ast.Expr | None:
        if isinstance(x, ast.Var | ast.Field):
            p = path(x)
            if p is not None and p in values:
                return copy.deepcopy(values[p])
        return None

    return rewrite(copy.deepcopy(e), repl)


def expand_quantifiers(prog: Program, node: ast.Node, text: str) -> None:
    """Expand (or give witnesses to) the quantifiers of `node`, in place."""
    ex = _Expander(prog, node, text)
    observed = {id(ob.expr) for ob in node.observers}
    for root, put in node_roots(node):
        if id(root) not in observed and _has_quantifier(root):
            put(ex.go(root, 0))
    ex.observing = True
    for ob in node.observers:
        if _has_quantifier(ob.expr):
            ob.expr = ex.go(ob.expr, 1 if ob.kind == "property" else -1)
