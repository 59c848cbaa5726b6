"""The capacity observers of Kind 2 sets and maps (`sets.py`): where a set or
map the program names can need more than its K slots.

Each set or map input is assumed to hold at most K/2 elements (so that the
union of two inputs fits), and so is each set or map nested in a valid slot
of it (`$small`); each set or map output and local that can grow is
a property `capacity of set 's' (8 elements)`, which `step-run --check`
evaluates before the node's other properties and reports at the declaration.
The property reads the header of the value and, under each valid slot, the
headers of the sets and maps nested in it (`$fits`): one property per
variable, however deeply its sets nest.

A variable *can grow* when its definition holds a literal with elements, a
`+` (a union, or arithmetic: not told apart here), an update `[k := v]`, a
node call (a callee's result), a global constant, or a variable that can; it
cannot when it only copies, delays, selects or shrinks values that cannot
(`pre s`, `s -> t`, `if c then s else t`, `s - t`, `m[k]`, an input, `{}`):
their headers are those of variables checked already. The frontend's own
locals (`y$1`, `y$init`, `y$last` of a frame block: `$` in the name) are not
visible to the user: they are followed through, never checked themselves.
A variable whose definition is not one equation (an automaton, an element
definition `A[i] = e`) is checked.

Example::

    node C(x: int) returns (s, t: set<int>);
    let
      s = {x} -> pre s + {x};                  -- capacity of set 's' (8 elements)
      t = if x > 0 then pre s else {}@<int>;   -- no property: t cannot grow
    tel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.program import walk
from steplus.lowering.lustre.set_types import EMPTY_MAP, FITS, SET_LIT, SMALL, Coll, coll_named

if TYPE_CHECKING:
    from steplus.lowering.lustre.program import Program


def capacity_name(c: Coll, var: str) -> str:
    """The name of the capacity property of `var` (`set_values.CAPACITY_NAME` reads it)."""
    return f"capacity of {c.kind} '{var}' ({c.cap} elements)"


class _Growth:
    """Which variables of a node can hold more elements than the values they
    are computed from (see the module docstring)."""

    def __init__(self, prog: Program, node: ast.Node):
        self.declared = {d.name for d in [*node.inputs, *node.outputs, *node.locals]}
        self.consts = set(prog.consts) | {c.name for c in node.consts}
        self.inputs = {d.name for d in node.inputs}
        self.defs: dict[str, ast.Expr | None] = {}
        for eq in node.equations:
            if not isinstance(eq, ast.Equation) or eq.index is not None:
                continue
            for name in eq.lhs:  # one equation each; a tuple's parts: conservative
                self.defs[name.name] = eq.rhs if len(eq.lhs) == 1 else None
        self.memo: dict[str, bool] = {}

    def var(self, name: str) -> bool:
        if name in self.inputs:
            return False  # assumed within K/2
        if name in self.memo:
            return self.memo[name]
        if name not in self.defs:
            return True  # defined otherwise (an automaton, `A[i] = e`): checked
        self.memo[name] = False  # a cycle (through `pre`) adds nothing by itself
        rhs = self.defs[name]
        self.memo[name] = rhs is None or self.expr(rhs)
        return self.memo[name]

    def expr(self, e: ast.Expr, depth: int = 0) -> bool:
        """Can the value of `e` hold more elements than the values it reads?
        Only the operands whose sets reach the result are followed (an `if`'s
        branches, a difference's left side, a map read's map); any other
        expression is searched whole for a growing construct."""
        if depth > 200:
            return True  # deep: assume it can
        if isinstance(e, ast.Var):
            return self._var_ref(e)
        if isinstance(e, ast.If):
            return self.expr(e.then, depth + 1) or self.expr(e.other, depth + 1)
        if isinstance(e, ast.Unary) and e.op == "pre" or isinstance(e, ast.When):
            return self.expr(e.arg, depth + 1)
        if isinstance(e, ast.Binary) and e.op in ("->", "fby"):
            return self.expr(e.lhs, depth + 1) or self.expr(e.rhs, depth + 1)
        if isinstance(e, ast.Binary) and e.op in ("-", "*"):
            return self.expr(e.lhs, depth + 1)  # a difference, an intersection: within lhs
        if isinstance(e, ast.Index) and e.hi is None:
            return self.expr(e.arg, depth + 1)  # m[k]: a value of m
        if isinstance(e, ast.Merge):
            return any(self.expr(x, depth + 1) for _, _, x in e.cases)
        for x in walk(e):
            if isinstance(x, ast.Call) and (x.node != SET_LIT or x.args):
                return True  # a node call, or a literal with elements
            if isinstance(x, ast.Binary) and x.op == "+" or isinstance(x, ast.RecordUpdate):
                return True
            if isinstance(x, ast.Var) and self._var_ref(x):
                return True
        return False

    def _var_ref(self, x: ast.Var) -> bool:
        if x.name in (SET_LIT, EMPTY_MAP):
            return False  # `{}@<T>`, `map[]@<K, V>`
        if x.name not in self.declared:
            return x.name in self.consts  # a constant: its expression; else a constructor
        return "$" in x.name and self.var(x.name)  # the frontend's local, followed


def capacity_observers(prog: Program, node: ast.Node) -> None:
    """`capacity of 'x'`: each set or map output and local that can grow not
    overflowed, nested sets included (a property `step-run --check` evaluates
    before the node's others), and each input of at most K/2 elements (an
    assumption: the union of two inputs fits)."""
    found: list[ast.Observer] = []
    growth = _Growth(prog, node)
    colls: set[str] = set()
    for d in [*node.inputs, *node.outputs, *node.locals]:
        c = coll_named(prog, d.type.name) if d.type.tag else None
        if c is None or d.name not in node.arrays:
            continue
        parts = d.name.split(".")
        if any(".".join(parts[:k]) in colls for k in range(1, len(parts))):
            continue  # a set nested in a set or map: its parent's observer covers it
        colls.add(d.name)
        if d in node.inputs:
            test = ast.Call(d.pos, SMALL, d.pos, [ast.Var(d.pos, d.name)])
            found.append(ast.Observer(d.pos, "assume", f"capacity of input '{d.name}' "
                                      f"(at most {c.cap // 2} elements)", test))
            continue
        if "$" in d.name or not growth.var(d.name):
            continue
        test = ast.Call(d.pos, FITS, d.pos, [ast.Var(d.pos, d.name)])
        found.append(ast.Observer(d.pos, "property", capacity_name(c, d.name), test))
    node.observers[0:0] = found


__all__ = ["capacity_name", "capacity_observers"]
