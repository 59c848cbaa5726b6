"""`pre`, `->` and `fby` inside a Kind 2 `when` block run on the block's clock.

Kind 2 runs each branch of `when c then eqs [else eqs] end` as a node
activated on its condition (`c`, `not c`): the variables a branch reads are
sampled on that clock, so `pre x` in the `then` branch is the value `x` had
at the previous tick where `c` held, `a -> b` is `a` at the first such tick.
`frames.py` puts an equation `x = e` of one variable whose `e` holds a
`pre`, `->` or `fby` (or calls a node) into the block's merge,
`x = merge(c; e; e')` with the branch on its clock (`ast.Merge.clocked`,
`to_lus.branch`).

A `pre` is undefined at the first tick of its clock (Kind 2: any value of
its type). One inside such an equation that no `->` guards and whose argument
is a declared variable reads the oracle input `pre.L.C` there
(`undefined.py`'s name: step-run defaults it to 0 / 0.0 / false, `--check`
draws it): `pre x` becomes `pre.L.C -> pre x`, both on the branch's clock.

A node call with several results, `x, y = f(a)`, runs on the branch's clock
the same way: `(x$1, y$2) = f(a when c)` into locals declared on that clock
(`not c` in the `else` branch), which the block's merge reads.

Example::

    frame (m) m = 0;
    let when b then m = pre m + 1; else m = pre m; end tel
    -- m counts the ticks of b; at the first tick of b (of not b) pre m is pre.L.C
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.oracles import rewrite
from steplus.lowering.lustre.program import walk


def temporal(e: ast.Expr) -> bool:
    """`e` holds a `pre`, `->` or `fby`."""
    return any(isinstance(x, ast.Unary) and x.op == "pre" or
               isinstance(x, ast.Binary) and x.op in ("->", "fby") for x in walk(e))


def first_activation(e: ast.Expr, types: dict[str, ast.Decl], text: str) -> ast.Expr:
    """`e` with each unguarded `pre x` (x declared in `types`) read from the
    oracle `pre.L.C` at the first tick of its clock (see the module doc)."""
    guarded: set[int] = set()
    for x in walk(e):
        if isinstance(x, ast.Binary) and x.op == "->":
            guarded.update(id(y) for y in walk(x.rhs))
    done: set[int] = set()

    def repl(x: ast.Expr) -> ast.Expr | None:
        if not (isinstance(x, ast.Unary) and x.op == "pre" and isinstance(x.arg, ast.Var)
                and x.arg.name in types) or id(x) in guarded or id(x) in done:
            return None
        done.add(id(x))
        line = text.count("\n", 0, x.pos) + 1
        col = x.pos - (text.rfind("\n", 0, x.pos) + 1) + 1
        oracle = ast.Any(x.pos, copy.deepcopy(types[x.arg.name].type), name=f"pre.{line}.{col}")
        return ast.Binary(x.pos, "->", oracle, x)

    return rewrite(e, repl)


def tuple_call(eq: ast.Equation, runs: Callable[[str], bool], types: dict[str, ast.Decl],
               inputs: list[ast.Decl]) -> bool:
    """`x, y = f(a, ...)`: several declared variables, one call of a node with
    arguments (`runs(f)`)."""
    ins = {d.name for d in inputs}
    return len(eq.lhs) > 1 and eq.index is None and isinstance(eq.rhs, ast.Call) and \
        runs(eq.rhs.node) and bool(eq.rhs.args) and eq.rhs.activate is None and \
        eq.rhs.reset is None and all(n.name in types and n.name not in ins for n in eq.lhs)


def clocked_call(eq: ast.Equation, side: tuple[str, bool], fresh: Callable[[str, int], str],
                 locals_: list[ast.Decl], lasts: Callable[[ast.Expr], ast.Expr]
                 ) -> ast.Equation:
    """`x, y = f(a)` on the branch `side` (guard, taken when it is True/False):
    `(x$1, y$2) = f(a when [not] guard)`, the new locals declared on that clock."""
    call = eq.rhs
    assert isinstance(call, ast.Call)
    guard, tag = side
    names = []
    for n in eq.lhs:
        names.append(ast.Name(n.pos, fresh(n.name, eq.pos)))
        locals_[-1].clock = ast.Clock(eq.pos, guard, tag)  # the local `fresh` declared
    args: list[ast.Expr] = [ast.When(a.pos, lasts(a), ast.Clock(a.pos, guard, tag))
                            for a in call.args]
    return ast.Equation(eq.pos, names, dataclasses.replace(call, args=args))
