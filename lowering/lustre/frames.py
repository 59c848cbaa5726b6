"""Kind 2's imperative blocks, desugared to equations: frame blocks, `if`/`when`
blocks, `last`, and the lazy conditional `when c then a else b`.

- `if c then eqs [else eqs] fi` defines each variable of its branches as
  `x = if c then x_then else x_else`; every equation of a branch is computed at
  every tick (as Kind 2's desugaring to `ite` does: `pre` and node calls inside
  see every tick) into a local, and the guard `c` is computed once per tick
  (one local `if.L.C`), so every variable of the block takes the same branch.
  Outside a frame block, every branch must define every variable of the block.
- `when c then eqs [else eqs] end` is the same, except that a node call runs
  on the clock of `c` (of `not c` in the else branch), as Kind 2 runs it:
  an equation `x = e` (one variable) where `e` calls a node makes `x =
  merge(c; e; e')`, `e` on its branch's clock, so the instance's state is
  frozen while its branch is not taken (`activate`). So does an equation
  `x = e` whose `e` holds a `pre`, `->` or `fby`: they run on the branch's
  clock, a `pre` undefined at its first tick read from an oracle
  (`when_clock.py`). Node calls and temporal operators appear only in such
  equations, in a `when` block not nested in another.
- `frame (x, y) init-eqs let body tel`: the body is equations and blocks. A
  variable of the frame that the branch taken does not define keeps its
  previous value, `last x`; `last x` is the initialization `x = i;` at the
  first tick (`i -> pre x`; without an initialization, an oracle `any.L.C`, see
  oracles.py). The initialization is used only there: a branch that defines
  `x` at the first tick gives its value (so a `pre` in it is read
  uninitialized there, an initialization error as anywhere in steplus).
- `when c then a else b` (an expression) is Kind 2's `merge(c; a; b)` on a
  local `when.L.C = c`: node calls in a branch run only when it is taken.
- `check reachable e from m within n` (`at k`: both) is an observer of kind
  `reachable`, `e and m <= t and t <= n` with t the tick (a local counter):
  `step-run --check` reports the first tick where it holds (a witness).

Example::

    frame (y) y = 0;              -- y = if m then y$1 else (0 -> pre y)
    let if m then y = last y + 1; fi tel
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from steplus.lowering.lustre import ast, when_clock
from steplus.lowering.lustre.grammar import renamed as _renamed
from steplus.lowering.lustre.oracles import node_roots, rewrite
from steplus.lowering.lustre.program import walk
from steplus.lowering.lustre.transform import LustreError, _unsupported

Item = ast.Equation | ast.IfBlock | ast.Frame


class _Blocks:
    def __init__(self, node: ast.Node, text: str, imported: set[str],
                 nodes: set[str] | None = None):
        self.node, self.text, self.imported = node, text, imported
        self.nodes = nodes  # the program's nodes: a call of another name builds a datatype
        self.types = {d.name: d for d in [*node.inputs, *node.outputs, *node.locals]}
        self.out: list[ast.Equation | ast.Automaton] = []
        self.count = 0

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return f"{line}.{col}"

    def local(self, name: str, like: str, pos: int) -> str:
        self.node.locals.append(ast.Decl(pos, name, copy.deepcopy(self.types[like].type)))
        return name

    def fresh(self, x: str, pos: int) -> str:
        self.count += 1
        return self.local(f"{x}${self.count}", x, pos)

    def run(self) -> None:
        for eq in self.node.equations:
            if isinstance(eq, ast.Frame):
                self.frame(eq)
            elif isinstance(eq, ast.IfBlock):
                for x, v in self.items([eq], None).items():
                    self.out.append(ast.Equation(eq.pos, [ast.Name(eq.pos, x)], v))
            else:
                self.out.append(eq)
        self.node.equations = list(self.out)
        for root, put in node_roots(self.node):
            put(rewrite(root, self.lazy))
        self.reach_bounds()

    def reach_bounds(self) -> None:
        """`check reachable e from m within n`: `e and m <= t and t <= n`, t the
        tick (a local counter `reach.tick`, 0 at the first tick)."""
        tick = "reach.tick"
        for ob in self.node.observers:
            if ob.kind != "reachable" or ob.bounds is None or ob.bounds == (None, None):
                continue
            if tick not in self.types:
                self.types[tick] = ast.Decl(ob.pos, tick, ast.TypeRef(ob.pos, "int"))
                self.node.locals.append(self.types[tick])
                t = ast.Var(ob.pos, tick)
                self.node.equations.append(ast.Equation(ob.pos, [ast.Name(ob.pos, tick)], ast.Binary(
                    ob.pos, "->", ast.Const(ob.pos, 0, "int"), ast.Binary(
                        ob.pos, "+", ast.Unary(ob.pos, "pre", t), ast.Const(ob.pos, 1, "int")))))
            lo, hi = ob.bounds
            for op, bound in (("<=", lo), (">=", hi)):
                if bound is not None:
                    ob.expr = ast.Binary(ob.pos, "and", ob.expr, ast.Binary(
                        ob.pos, op, ast.Const(ob.pos, bound, "int"), ast.Var(ob.pos, tick)))

    def lazy(self, e: ast.Expr) -> ast.Expr | None:
        if isinstance(e, ast.Unary) and e.op == "last":
            raise LustreError(e.pos, "'last' outside a frame block (Kind 2's 'last x' is "
                              "the previous value of a variable of a frame block)")
        if not (isinstance(e, ast.If) and e.lazy):
            return None
        name = f"when.{self.where(e.pos)}"
        self.node.locals.append(ast.Decl(e.pos, name, ast.TypeRef(e.pos, "bool")))
        self.node.equations.append(ast.Equation(e.pos, [ast.Name(e.pos, name)], e.cond))
        return ast.Merge(e.pos, name, e.cond.pos, [(True, e.then.pos, e.then),
                                                    (False, e.other.pos, e.other)],
                         implicit=True)

    # -- blocks ---------------------------------------------------------------------
    def items(self, items: list[Item], frame: Callable[[str, int], ast.Expr] | None,
              when: int | None = None, on_clock: set[str] | None = None,
              branch_of: tuple[str, bool] | None = None) -> dict[str, ast.Expr]:
        """The value of each variable the items define; `frame(x, pos)` gives a
        frame variable's `last x` (None: outside a frame block); `when` the
        position of an enclosing `when` block. `on_clock` (the items of a `when`
        block not nested in another): an equation `x = e` whose `e` calls a node
        (and has no `pre`, `->`, `fby`) is not hoisted: `e` goes into the block's
        merge, on the block's clock, and `x` joins `on_clock`; `branch_of` is that
        block's guard and branch (`x, y = f(a)` on it: when_clock.py)."""
        vals: dict[str, ast.Expr] = {}

        def put(x: str, v: ast.Expr, pos: int) -> None:
            if x in vals:
                raise LustreError(pos, f"variable '{x}' is defined twice in this block")
            vals[x] = v

        for it in items:
            if isinstance(it, ast.Observer) or not isinstance(it, Item):
                raise LustreError(getattr(it, "pos", 0) or 0, _unsupported(
                    "properties and annotations inside Kind 2 'if', 'when' and frame blocks"))
            if isinstance(it, ast.Frame):
                raise LustreError(it.pos, _unsupported("nested Kind 2 frame blocks"))
            if isinstance(it, ast.Equation):
                if on_clock is not None and len(it.lhs) == 1 and it.index is None and \
                        self._calls_only(it.rhs) and it.lhs[0].name in self.types:
                    rhs = when_clock.first_activation(it.rhs, self.types, self.text)
                    put(it.lhs[0].name, self.lasts(rhs, frame), it.pos)
                    on_clock.add(it.lhs[0].name)
                    continue
                if on_clock is not None and branch_of is not None and \
                        when_clock.tuple_call(it, self._runs, self.types, self.node.inputs):
                    call_eq = when_clock.clocked_call(it, branch_of, self.fresh, self.node.locals,
                                                      lambda e: self.lasts(e, frame))
                    self.out.append(call_eq)
                    for n, v in zip(it.lhs, call_eq.lhs):
                        put(n.name, ast.Var(n.pos, v.name), n.pos)
                        on_clock.add(n.name)
                    continue
                if when is not None:
                    self.check_when(it.rhs, when)
                names = [n.name for n in it.lhs]
                for n in it.lhs:
                    if n.name not in self.types or any(d.name == n.name
                                                       for d in self.node.inputs):
                        raise LustreError(n.pos, f"cannot define '{n.name}': it is "
                                          f"{'an input' if n.name in self.types else 'not declared'}")
                hoisted = {x: self.fresh(x, it.pos) for x in names}
                rhs = self.lasts(it.rhs, frame)
                if it.index is not None:  # `A[i] = ... A[i - 1] ...`: this branch's A
                    rhs = _renamed(rhs, hoisted)
                self.out.append(ast.Equation(it.pos, [ast.Name(it.pos, hoisted[x])
                                                      for x in names], rhs, index=it.index))
                for n in it.lhs:
                    put(n.name, ast.Var(n.pos, hoisted[n.name]), n.pos)
                continue
            inner = it.pos if it.when else when
            if inner is not None:
                self.check_when(it.cond, inner)
            guard = f"{'when' if it.when else 'if'}.{self.where(it.pos)}"
            self.node.locals.append(ast.Decl(it.pos, guard, ast.TypeRef(it.pos, "bool")))
            self.out.append(ast.Equation(it.pos, [ast.Name(it.pos, guard)],
                                         self.lasts(it.cond, frame)))
            clocked: set[str] | None = set() if it.when and when is None else None
            then = self.items(it.then, frame, inner, clocked, (guard, True))
            other = self.items(it.other, frame, inner, clocked, (guard, False))
            for x in [*then, *(x for x in other if x not in then)]:
                branches = []
                for side in (then, other):
                    if x in side:
                        branches.append(side[x])
                    elif frame is not None:
                        branches.append(frame(x, it.pos))
                    else:
                        raise LustreError(it.pos, f"'{x}' is defined in one branch of this "
                                          f"'{'when' if it.when else 'if'}' block only "
                                          "(outside a frame block every branch must define it)")
                if clocked and x in clocked:  # a node call: run on the block's clock
                    put(x, ast.Merge(it.pos, guard, it.cond.pos, [
                        (True, branches[0].pos, branches[0]),
                        (False, branches[1].pos, branches[1])], implicit=True, clocked=True),
                        it.pos)
                    continue
                put(x, ast.If(it.pos, ast.Var(it.pos, guard), branches[0], branches[1]), it.pos)
        return vals

    def _calls_only(self, e: ast.Expr) -> bool:
        """`e` calls a node (not an imported one) or holds a `pre`, `->`, `fby`:
        it runs on the block's clock (when_clock.py)."""
        return when_clock.temporal(e) or any(isinstance(x, ast.Call) and self._runs(x.node)
                                             for x in walk(e))

    def _runs(self, name: str) -> bool:
        """A call of `name` runs a node (not an imported one, nor a constructor)."""
        return name not in self.imported and (self.nodes is None or name in self.nodes)

    def check_when(self, e: ast.Expr, pos: int) -> None:
        for x in walk(e):
            if isinstance(x, ast.Call) and self._runs(x.node) or \
                    isinstance(x, ast.Unary) and x.op == "pre" or \
                    isinstance(x, ast.Binary) and x.op in ("->", "fby"):
                raise LustreError(x.pos, _unsupported(
                    "'pre', '->', 'fby' and node calls inside a Kind 2 'when' block other "
                    "than in an equation 'x = e' of one variable, in a block not nested in "
                    "another (they run on its clock; use an 'if' block)"))

    def lasts(self, e: ast.Expr, frame: Callable[[str, int], ast.Expr] | None) -> ast.Expr:
        """`e` with `last x` read as the frame's `last x`."""
        def repl(x: ast.Expr) -> ast.Expr | None:
            if not (isinstance(x, ast.Unary) and x.op == "last"):
                return None
            root = x.arg
            while isinstance(root, ast.Index | ast.Field):
                root = root.arg
            if frame is None or not isinstance(root, ast.Var):
                raise LustreError(x.pos, "'last' applies to a variable of the frame block "
                                  "around it")
            var = frame(root.name, x.pos)
            if root is x.arg:
                return var
            arg = copy.deepcopy(x.arg)
            inner = arg
            while isinstance(inner, ast.Index | ast.Field):
                if not isinstance(inner.arg, ast.Index | ast.Field):
                    inner.arg = var  # the root variable: its `last`
                    break
                inner = inner.arg
            return arg
        return rewrite(e, repl)

    # -- frame blocks -------------------------------------------------------------
    def frame(self, f: ast.Frame) -> None:
        names = [n.name for n in f.names]
        for n in f.names:
            if n.name not in self.types or any(d.name == n.name for d in self.node.inputs):
                raise LustreError(n.pos, f"'{n.name}' in a frame block must be an output or "
                                  "a local of the node")
        init: dict[str, ast.Expr] = {}
        for eq in f.init:
            if not isinstance(eq, ast.Equation):
                raise LustreError(getattr(eq, "pos", f.pos), _unsupported(
                    "blocks and properties among a frame block's initializations"))
            renamed = {}
            for n in eq.lhs:
                if n.name not in names:
                    raise LustreError(n.pos, f"'{n.name}' is initialized but not in the frame")
                renamed[n.name] = self.local(f"{n.name}$init", n.name, n.pos)
                init[n.name] = ast.Var(n.pos, renamed[n.name])
            rhs = self.lasts(eq.rhs, None) if _has_last(eq.rhs) else eq.rhs
            self.out.append(ast.Equation(eq.pos, [ast.Name(n.pos, renamed[n.name])
                                                  for n in eq.lhs],
                                         _renamed(rhs, renamed) if eq.index else rhs,
                                         index=eq.index))
        lasts: dict[str, str] = {}

        def last(x: str, pos: int) -> ast.Expr:
            if x not in names:
                raise LustreError(pos, f"'{x}' is not a variable of this frame block")
            if x not in lasts:
                at = next(n.pos for n in f.names if n.name == x)
                first = init.get(x) or ast.Any(at, copy.deepcopy(self.types[x].type))
                lasts[x] = self.local(f"{x}$last", x, at)
                self.out.append(ast.Equation(at, [ast.Name(at, lasts[x])], ast.Binary(
                    at, "->", first, ast.Unary(at, "pre", ast.Var(at, x)))))
            return ast.Var(pos, lasts[x])

        vals = self.items(f.body, last)
        for x in vals:
            if x not in names:
                raise LustreError(f.pos, f"'{x}' is defined in the frame block but not "
                                  "listed in 'frame (...)'")
        for n in f.names:
            body = vals.get(n.name) or last(n.name, n.pos)
            self.out.append(ast.Equation(n.pos, [ast.Name(n.pos, n.name)], body))


def _has_last(e: ast.Expr) -> bool:
    return any(isinstance(x, ast.Unary) and x.op == "last" for x in walk(e))


def desugar_blocks(prog: ast.Program, text: str) -> None:
    """Desugar the frame blocks, `if`/`when` blocks, `last` and lazy
    conditionals of every node, in place (see the module docstring)."""
    imported = {n.name for n in prog.nodes if n.imported}
    nodes = {n.name for n in prog.nodes}
    for node in prog.nodes:
        _Blocks(node, text, imported, nodes).run()
