"""Kind 2's nondeterministic values, run as oracles: extra named inputs.

Kind 2 gives `any`, free constants and imported nodes a verification meaning
(any value the types and contracts allow). To run a program, steplus makes
each such value an *oracle*: an extra input of the node, named after what it
stands for, that the user feeds with `--input` like any other and that
`step-run --check` draws at random within its type (an enum's constructors, a
subrange) and checks against its constraints (a refinement predicate, an
imported node's guarantees) as assumptions:

- `any T`, `any { x: T | p }`, `any@<T>` at line L, column C: an input
  `any.L.C` of type T, a new value each tick;
- `choose { x: T | p }` at L:C: an input `choose.L.C`, Kind 2's function of
  the variables p reads: held (a constant) if p reads none, else assumed to
  keep its value from one tick to the next while they keep theirs (equal
  arguments at ticks further apart are not tied);
- a free constant `const c: T;` (global, or local to a node): an input `c`
  *held*: its value at the first tick (and after a reset) for the whole run;
  a global one is one value for the whole program, passed down by name to
  every instance that reads it;
- an instance `f(a)` at L:C of an imported node `node imported f(x: t)
  returns (y: u);` is replaced by the input `f.L.C.y` of the caller (one per
  output), with f's contract inlined: its guarantees (and modes) become
  assumptions of the caller on those inputs, its assumptions properties of
  the caller (the call must respect them); run on its own, `f`'s outputs are
  the inputs `y.oracle` and its guarantees are assumptions;
- an instance `g(a)` at L:C of a node `g` that has oracles of its own passes
  the caller's inputs `g.L.C.o` (one per oracle `o` of g, per instance) and
  the global free constants g reads.

Example::

    node counter() returns (y: int);
    let y = any int -> pre y + 1; tel      -- @counter(%any.2.9: i32) -> (i32)
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from steplus.dialects import lus
from steplus.lowering.lustre import adts, ast, contract_params
from steplus.lowering.lustre.grammar import renamed
from steplus.lowering.lustre.transform import LustreError, _unsupported

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering

MAX_ORACLES = 4096
"""Most oracle inputs of one node (instances multiply them)."""


def hold(low: NodeLowering, v: SSAValue, pos: int) -> SSAValue:
    """A held oracle (a free constant): `h = v -> pre h` (restarted with the node)."""
    pre = lus.PreOp(v)
    first = lus.MergeOp(v, low.emit(pre, pos), word="1(0)")
    out = low._restart(low.emit(first, pos), v, pos)
    pre.operands[0] = out
    return out


def _children(x: object) -> Iterator[tuple[ast.Expr, str, int | None, Callable]]:
    """The expression children of an AST object, with a setter each."""
    if not dataclasses.is_dataclass(x):
        return
    for f in dataclasses.fields(x):
        v = getattr(x, f.name)
        if isinstance(v, ast.Expr):
            yield v, f.name, None, lambda new, x=x, n=f.name: setattr(x, n, new)
        elif isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, ast.Expr):
                    yield item, f.name, i, lambda new, v=v, i=i: v.__setitem__(i, new)
                elif isinstance(item, tuple) and item and isinstance(item[-1], ast.Expr):
                    yield (item[-1], f.name, i,
                           lambda new, v=v, i=i: v.__setitem__(i, (*v[i][:-1], new)))


def rewrite(root: ast.Expr, fn: Callable[[ast.Expr], ast.Expr | None]) -> ast.Expr:
    """Apply `fn` to every sub-expression, top-down, iteratively; where it
    returns an expression, that replaces the sub-expression (whose own
    sub-expressions are then visited)."""
    new = fn(root)
    root = root if new is None else new
    stack: list[object] = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, ast.Quantifier):
            for d in x.params:
                stack.extend(_type_exprs(d.type))
        for child, _, _, put in _children(x):
            repl = fn(child)
            if repl is not None:
                put(repl)
                child = repl
            stack.append(child)
    return root


def _type_exprs(ref: ast.TypeRef | None) -> list[ast.Expr]:
    out: list[ast.Expr] = []
    stack = [ref]
    while stack:
        t = stack.pop()
        if t is None:
            continue
        if t.refine is not None:
            out.append(t.refine[1])
        if t.bounds is not None:
            out.extend(b for b in t.bounds if b is not None)
        if t.size is not None:
            out.append(t.size)
        stack.append(t.elem)
        stack.extend(ft for _, ft in t.fields or [])
    return out


def node_roots(node: ast.Node) -> list[tuple[ast.Expr, Callable[[ast.Expr], None]]]:
    """Every top-level expression of a node, with a setter."""
    out: list[tuple[ast.Expr, Callable[[ast.Expr], None]]] = []

    def eq_roots(eq: ast.Equation) -> None:
        out.append((eq.rhs, lambda new, eq=eq: setattr(eq, "rhs", new)))

    for eq in node.equations:
        if isinstance(eq, ast.Equation):
            eq_roots(eq)
            continue
        if not isinstance(eq, ast.Automaton):
            continue  # blocks: desugared first (frames.py)
        for state in eq.states:
            for inner in state.equations:
                eq_roots(inner)
            for esc in [*state.until, *state.unless]:
                out.append((esc.cond, lambda new, esc=esc: setattr(esc, "cond", new)))
    for ob in node.observers:
        out.append((ob.expr, lambda new, ob=ob: setattr(ob, "expr", new)))
    for m in node.modes:
        out.append((node.modes[m], lambda new, m=m: node.modes.__setitem__(m, new)))
    for c in node.consts:
        out.append((c.value, lambda new, c=c: setattr(c, "value", new)))
    return out


def _all_exprs(node: ast.Node, types: dict[str, ast.TypeDecl]) -> Iterator[ast.Expr]:
    """Every sub-expression of a node, and of the types of its variables
    (refinement predicates, through aliases)."""
    seen: set[int] = set()
    stack: list[object] = [r for r, _ in node_roots(node)]
    refs = [d.type for d in [*node.inputs, *node.outputs, *node.locals]]
    named: set[str] = set()
    while refs:
        t = refs.pop()
        stack.extend(_type_exprs(t))
        for sub in _type_refs(t):
            if sub.name in types and sub.name not in named:
                named.add(sub.name)
                alias = types[sub.name].alias
                if alias is not None:
                    refs.append(alias)
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, ast.Expr):
            yield x
        if isinstance(x, ast.Quantifier):
            for d in x.params:
                stack.extend(_type_exprs(d.type))
        stack.extend(c for c, _, _, _ in _children(x))


def _all_exprs_of(e: ast.Expr) -> Iterator[ast.Expr]:
    stack: list[ast.Expr] = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(c for c, _, _, _ in _children(x))


def _type_refs(ref: ast.TypeRef) -> Iterator[ast.TypeRef]:
    stack = [ref]
    while stack:
        t = stack.pop()
        yield t
        if t.elem is not None:
            stack.append(t.elem)
        stack.extend(ft for _, ft in t.fields or [])


class _Oracles:
    """The oracle pass over one program (see the module docstring)."""

    def __init__(self, prog: ast.Program, text: str):
        self.prog, self.text = prog, text
        self.free = {c.name: c for c in prog.consts if isinstance(c.value, ast.Any)}
        prog.consts[:] = [c for c in prog.consts if c.name not in self.free]
        self.nodes = {n.name: n for n in prog.nodes}
        self.types = {t.name: t for t in prog.types}
        # node -> its oracle inputs, in order: (name, shared by name?)
        self.extra: dict[str, list[tuple[str, bool]]] = {}
        self._derived_consts: dict[str, ast.ConstDecl] | None = None
        # imported node -> its signature and contract as declared (inlined at calls)
        self.contracts = {n.name: copy.deepcopy(
            (n.inputs, n.outputs, n.locals, n.consts, n.equations, n.observers))
            for n in prog.nodes if n.imported}

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return f"{line}.{col}"

    def run(self) -> None:
        for node in self._post_order():
            self.node(node)

    def _calls(self, node: ast.Node) -> Iterator[ast.Call | ast.Iterate]:
        for x in _all_exprs(node, {}):
            if isinstance(x, ast.Call | ast.Iterate):
                yield x

    def _post_order(self) -> list[ast.Node]:
        order: list[ast.Node] = []
        state: dict[str, int] = {}
        for root in self.prog.nodes:
            if root.name in state:
                continue
            stack: list[tuple[ast.Node, Iterator[ast.Call | ast.Iterate]]] = [
                (root, self._calls(root))]
            state[root.name] = 1
            while stack:
                node, calls = stack[-1]
                nxt = next(calls, None)
                if nxt is None:
                    stack.pop()
                    state[node.name] = 2
                    order.append(node)
                    continue
                callee = self.nodes.get(nxt.node)
                if callee is not None and callee.name not in state:
                    state[callee.name] = 1
                    stack.append((callee, self._calls(callee)))
        return order  # a recursive program is reported by Program

    # -- one node -----------------------------------------------------------------
    def _derived(self) -> dict[str, ast.ConstDecl]:
        """The global constants whose value reads a free constant (transitively)."""
        consts = {c.name: c for c in self.prog.consts}
        reads = {c.name: {x.name for x in _all_exprs_of(c.value) if isinstance(x, ast.Var)}
                 for c in self.prog.consts}
        derived: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, names in reads.items():
                if name not in derived and names & (set(self.free) | derived):
                    derived.add(name)
                    changed = True
        return {n: consts[n] for n in derived}

    def _inline_derived(self, node: ast.Node) -> None:
        """A constant computed from a free constant is its expression where it
        is read (the free constant is an input: nothing folds it)."""
        if self._derived_consts is None:
            self._derived_consts = self._derived()
        derived = self._derived_consts
        if not derived:
            return
        shadow = {d.name for d in [*node.inputs, *node.outputs, *node.locals]}
        shadow |= {c.name for c in node.consts}

        def repl(e: ast.Expr, depth: int = 0) -> ast.Expr | None:
            if isinstance(e, ast.Var) and e.name in derived and e.name not in shadow:
                if depth > 32:
                    raise LustreError(e.pos, f"constant '{e.name}' is defined in terms "
                                      "of itself")
                value = copy.deepcopy(derived[e.name].value)
                return rewrite(value, lambda x: repl(x, depth + 1))
            return None

        for root, put in node_roots(node):
            put(rewrite(root, repl))

    def node(self, node: ast.Node) -> None:
        extra: list[tuple[str, bool]] = []
        self.extra[node.name] = extra
        for root, put in node_roots(node):
            put(rewrite(root, lambda e, node=node: self._inline(node, e)))
        self._inline_derived(node)
        # local free constants: held, per instance
        for c in [c for c in node.consts if isinstance(c.value, ast.Any)]:
            node.consts.remove(c)
            self._input(node, c.name, _free_type(c), c.pos, held=True)
            extra.append((c.name, False))
        # global free constants read by the node (or its types): held, shared
        declared = {d.name for d in [*node.inputs, *node.outputs, *node.locals]}
        declared |= {c.name for c in node.consts}
        used = {x.name for x in _all_exprs(node, self.types) if isinstance(x, ast.Var)}
        for name in sorted(used - declared):
            if name in self.free:
                c = self.free[name]
                self._input(node, name, _free_type(c), c.pos, held=True)
                extra.append((name, True))
        anys: dict[int, str] = {}

        def replace(e: ast.Expr) -> ast.Expr | None:
            if isinstance(e, ast.Any):
                if id(e) not in anys:
                    anys[id(e)] = e.name or \
                        f"{'choose' if e.choose else 'any'}.{self.where(e.pos)}"
                    args = self._choose_args(node, e) if e.choose else None
                    self._input(node, anys[id(e)], e.type, e.pos, held=args == [])
                    extra.append((anys[id(e)], False))
                    if args:
                        self._choose_function(node, e, anys[id(e)], args)
                return ast.Var(e.pos, anys[id(e)])
            if isinstance(e, ast.Call | ast.Iterate):
                self._pass_oracles(node, e)
            return None

        done: set[int] = set()

        def once(e: ast.Expr) -> ast.Expr | None:
            if isinstance(e, ast.Call | ast.Iterate):
                if id(e) in done:
                    return None
                done.add(id(e))
            return replace(e)

        for root, put in node_roots(node):
            put(rewrite(root, once))
        for d in [*node.inputs, *node.outputs, *node.locals]:  # `x: {v: int | v > f(y)}`
            for t in _type_refs(d.type):
                if t.refine is not None:
                    t.refine = (t.refine[0], rewrite(t.refine[1], once))
        if node.imported:
            self._imported_body(node)

    def _choose_args(self, node: ast.Node, e: ast.Any) -> list[str]:
        """The variables of the node that `choose { x: T | p }` reads in p."""
        if e.type.refine is None:
            return []
        bound, pred = e.type.refine
        names = {d.name for d in [*node.inputs, *node.outputs, *node.locals]}
        seen: list[str] = []
        stack: list[object] = [pred]
        while stack:
            x = stack.pop()
            if isinstance(x, ast.Var) and x.name != bound and x.name in names \
                    and x.name not in seen:
                seen.append(x.name)
            stack.extend(c for c, _, _, _ in _children(x))
        return sorted(seen)

    def _choose_function(self, node: ast.Node, e: ast.Any, name: str, args: list[str]) -> None:
        """Kind 2's `choose` is a function of its arguments: assume the oracle
        keeps its value while they keep theirs (from one tick to the next)."""
        same: ast.Expr = ast.Const(e.pos, True, "bool")
        for a in args:
            same = ast.Binary(e.pos, "and", same, ast.Binary(
                e.pos, "=", ast.Var(e.pos, a), ast.Unary(e.pos, "pre", ast.Var(e.pos, a))))
        kept = ast.Binary(e.pos, "=", ast.Var(e.pos, name),
                          ast.Unary(e.pos, "pre", ast.Var(e.pos, name)))
        node.observers.append(ast.Observer(
            e.pos, "assume", f"{name} is a function of {', '.join(args)}",
            ast.Binary(e.pos, "->", ast.Const(e.pos, True, "bool"),
                       ast.Binary(e.pos, "=>", same, kept))))

    def _input(self, node: ast.Node, name: str, ty: ast.TypeRef, pos: int,
               held: bool = False) -> None:
        if any(d.name == name for d in [*node.inputs, *node.outputs, *node.locals]):
            raise LustreError(pos, f"the oracle input '{name}' of node '{node.name}' "
                              "clashes with a variable of that name")
        if len(self.extra[node.name]) >= MAX_ORACLES:
            raise LustreError(pos, f"node '{node.name}' has more than {MAX_ORACLES} oracle "
                              "inputs (any, free constants, imported nodes, with its instances')")
        node.inputs.append(ast.Decl(pos, name, ty, held=held))

    def _pass_oracles(self, node: ast.Node, call: ast.Call | ast.Iterate) -> None:
        """An instance of a node with oracles: the caller's inputs for them."""
        extra = self.extra.get(call.node, [])
        if not extra:
            return
        if isinstance(call, ast.Iterate):
            raise LustreError(call.node_pos, _unsupported(
                f"'{call.kind}' of a node with oracles ('{call.node}' has "
                f"{extra[0][0]})"))
        callee = self.nodes[call.node]
        if callee.rec:  # unrolled per constant argument: an oracle is no constant (and a
            # call of itself grew the list iterated below: KeyError 's.2.35.pre.2.31')
            raise LustreError(call.pos, _unsupported(
                f"a recursive function ('rec') with an oracle input ('{call.node}' has "
                f"{extra[0][0]}: an undefined 'pre', 'any' or a free constant; write "
                "'v -> pre ...')"))
        types = {d.name: d.type for d in callee.inputs}
        if callee.tparams:  # the oracles' types at this call's type arguments
            params = [d for d in callee.inputs if (d.name, False) not in extra]
            mapping = contract_params.bind(call.node, callee.tparams, call.targs, params,
                                           call.args, node, call.node_pos, what="node")
            types = {n: adts.substitute(t, mapping) for n, t in types.items()}
        prefix = f"{call.node}.{self.where(call.node_pos)}"
        for name, shared in extra:
            if shared:
                if not any(d.name == name for d in node.inputs):
                    c = self.free[name]
                    self._input(node, name, _free_type(c), c.pos, held=True)
                    self.extra[node.name].append((name, True))
                call.args.append(ast.Var(call.pos, name))
                continue
            mine = f"{prefix}.{name}"
            self._input(node, mine, types[name], call.pos)
            self.extra[node.name].append((mine, False))
            call.args.append(ast.Var(call.pos, mine))

    # -- imported nodes -------------------------------------------------------------
    def _inline(self, node: ast.Node, e: ast.Expr) -> ast.Expr | None:
        """An instance of an imported node: its outputs become oracle inputs of
        `node`, its contract is inlined (guarantees assumed, assumptions checked)."""
        if not isinstance(e, ast.Call):
            return None
        f = self.nodes.get(e.node)
        if f is None or not f.imported:
            return None
        if e.reset is not None or e.activate is not None:
            raise LustreError(e.pos, _unsupported(
                f"restart or activate of the imported node '{f.name}'"))
        inputs, outputs, ghosts, consts, equations, observers = copy.deepcopy(
            self.contracts[f.name])
        if len(e.args) != len(inputs):
            raise LustreError(e.pos, f"node '{f.name}' takes {len(inputs)} argument(s), "
                              f"got {len(e.args)}")
        prefix = f"{f.name}.{self.where(e.node_pos)}"
        mapping: dict[str, str] = {}
        for p, a in zip(inputs, e.args, strict=True):
            if isinstance(a, ast.Var):
                mapping[p.name] = a.name
                continue
            mapping[p.name] = f"{prefix}.{p.name}"
            node.locals.append(ast.Decl(a.pos, mapping[p.name], p.type))
            node.equations.append(ast.Equation(a.pos, [ast.Name(a.pos, mapping[p.name])], a))
        for o in outputs:
            mapping[o.name] = f"{prefix}.{o.name}"
            self._input(node, mapping[o.name], o.type, e.pos)
            self.extra[node.name].append((mapping[o.name], False))
        for d in ghosts:  # contract ghost variables
            mapping[d.name] = f"{prefix}.{d.name}"
            node.locals.append(ast.Decl(d.pos, mapping[d.name], d.type))
        for c in consts:
            mapping[c.name] = f"{prefix}.{c.name}"
            node.consts.append(ast.ConstDecl(c.pos, mapping[c.name], c.type,
                                             renamed(c.value, mapping)))
        for eq in equations:
            if isinstance(eq, ast.Equation):
                node.equations.append(ast.Equation(
                    eq.pos, [ast.Name(n.pos, mapping.get(n.name, n.name)) for n in eq.lhs],
                    renamed(eq.rhs, mapping)))
        for ob in observers:
            kind = "assume" if ob.kind == "property" else "property"
            name = ob.name or "contract"
            node.observers.append(ast.Observer(
                ob.pos, kind, f"{f.name} at {self.where(e.pos).replace('.', ':')}: {name}",
                renamed(ob.expr, mapping)))
        outs: list[ast.Expr] = [ast.Var(e.pos, mapping[o.name]) for o in outputs]
        return outs[0] if len(outs) == 1 else ast.Tuple(e.pos, outs)

    def _imported_body(self, node: ast.Node) -> None:
        """An imported node run on its own: `y = y.oracle`; its guarantees are
        assumptions on those oracles."""
        for o in node.outputs:
            name = f"{o.name}.oracle"
            self._input(node, name, o.type, o.pos)
            node.equations.append(ast.Equation(o.pos, [ast.Name(o.pos, o.name)],
                                               ast.Var(o.pos, name)))
        for ob in node.observers:
            ob.kind = "assume"


def _free_type(c: ast.ConstDecl) -> ast.TypeRef:
    """The type of a free constant `const c: t;`."""
    if c.type is not None:
        return c.type
    assert isinstance(c.value, ast.Any)
    return c.value.type


def add_oracles(prog: ast.Program, text: str) -> None:
    """Make the `any` values, free constants and imported nodes of a parsed
    program oracle inputs (in place); see the module docstring."""
    _Oracles(prog, text).run()
