"""Program-level tables of a Lustre source: types, enum constructors, constants,
node signatures and the instantiation graph.

Types map to MLIR as `int` -> i32, `real`/`float` -> f32, `bool` -> i1, and an
enumeration `type t = enum {A, B, C}` -> i32 with its constructors numbered in
declaration order (A = 0, B = 1, C = 2). Constants are folded at compile time.

Example::

    prog = Program(parse_program("type t = enum {A, B}; const N: int = 2 * 3;"))
    assert prog.const_value("N", 0) == (6, "int")
    assert prog.ctors["B"] == ("t", 1)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, IntegerType, f32, i1, i32
from xdsl.ir import Attribute, Operation

from steplus.lowering.lustre import adts, ast, sets, sized
from steplus.lowering.lustre.machine_ints import MACHINE_INTS
from steplus.lowering.lustre.grammar import renamed
from steplus.lowering.lustre.parser import LustreError

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
_MAX_CONST_DEPTH = 200
_COMPONENT = adts.PATH_PART
MAX_ARRAY = 4096
"""Largest array size (arrays are scalarized: one lus value per element)."""


@dataclass(frozen=True)
class NodeKey:
    """A lowered variant of a Lustre node: `reset` adds a reset input, `tick` a
    dummy input so that an input-less node can be activated on a clock,
    `observe` the node's assumptions and properties as extra bool outputs
    (`n$check`, what `step-run --check` runs)."""

    name: str
    reset: bool = False
    tick: bool = False
    observe: bool = False  # `n$check`: the outputs, then one bool per observer

    @property
    def symbol(self) -> str:
        return (self.name + ("$reset" if self.reset else "") + ("$tick" if self.tick else "")
                + ("$check" if self.observe else ""))


def mlir_type(ltype: str) -> Attribute:
    """The MLIR type of a Lustre type (enums and datatype tags are i32, Kind 2
    machine integers `intN` / `uintN` are iN)."""
    if ltype in MACHINE_INTS:
        return IntegerType(MACHINE_INTS[ltype][0])
    return {"int": i32, "real": f32, "bool": i1}.get(ltype, i32)


def type_name(t: Attribute) -> str:
    if isinstance(t, IntegerType):
        return "bool" if t.width.data == 1 else "int"
    return "real" if isinstance(t, Float32Type) else str(t)


def children(e: ast.Expr) -> Iterator[ast.Expr]:
    """The sub-expressions of an expression."""
    if isinstance(e, ast.Unary):
        yield e.arg
    elif isinstance(e, ast.Binary):
        yield from (e.lhs, e.rhs)
    elif isinstance(e, ast.If):
        yield from (e.cond, e.then, e.other)
    elif isinstance(e, ast.When):
        yield e.arg
    elif isinstance(e, ast.Merge):
        yield from (c[2] for c in e.cases)
    elif isinstance(e, ast.Tuple):
        yield from e.items
    elif isinstance(e, ast.ArrayLit):
        yield from e.items
    elif isinstance(e, ast.Repeat):
        yield from (e.arg, e.count)
    elif isinstance(e, ast.Index):
        yield from (e.arg, e.index) if e.hi is None else (e.arg, e.index, e.hi)
    elif isinstance(e, ast.Iterate):
        yield from e.args
    elif isinstance(e, ast.Quantifier):
        yield e.body
    elif isinstance(e, ast.Field):
        yield e.arg
    elif isinstance(e, ast.RecordLit):
        yield from (x for _, _, x in e.inits)
    elif isinstance(e, ast.RecordUpdate):
        yield e.arg
        yield from (x for _, _, x in e.updates)
    elif isinstance(e, ast.Match):
        yield e.arg
        yield from (x for _, x in e.cases)
    elif isinstance(e, ast.Tester | ast.Ascription | ast.BitExtract):
        yield e.arg
    elif isinstance(e, ast.BitConcat):
        yield from (e.lhs, e.rhs)
    elif isinstance(e, ast.Call):
        yield from e.args
        for extra in (e.reset, e.activate):
            if extra is not None:
                yield extra
        yield from e.default or ()


def equation_exprs(eq: ast.Equation | ast.Automaton) -> Iterator[ast.Expr]:
    """The expressions of an equation, or of every state of an automaton."""
    if isinstance(eq, ast.Equation):
        yield eq.rhs
        return
    for state in eq.states:
        for inner in state.equations:
            yield inner.rhs
        for esc in [*state.until, *state.unless]:
            yield esc.cond


def walk(e: ast.Expr) -> Iterator[ast.Expr]:
    """Every sub-expression, iteratively (deep expressions are fine)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(children(x))


class Program:
    """Global tables of a parsed program, with validation of names."""

    def __init__(self, prog: ast.Program, dialect: str = "lustre"):
        self.ast = prog
        self.dialect = dialect  # "lustre" (Kind 2), "lustre-v6" or "heptagon"
        # the Lustre types of the parts of the `pre` each lus.pre is lowered
        # from (undefined.py's oracles)
        self.pre_ltypes: dict[Operation, list[str]] = {}
        self.types: dict[str, ast.TypeDecl] = {}
        self.ctors: dict[str, tuple[str, int]] = {}
        self.consts: dict[str, ast.ConstDecl] = {}
        self.nodes: dict[str, ast.Node] = {}
        # folded constants by id() of their declaration; the declaration is kept
        # with its value, so that its id cannot be reused by another one
        self._const_values: dict[str, tuple[object, str, ast.ConstDecl]] = {}
        self._folding: set[str] = set()
        # Kind 2 datatypes with fields or type parameters (adts.py), their
        # constructors (type, index) and their instances by name (`Opt<int>`)
        self.adts: dict[str, ast.TypeDecl] = {}
        self.adt_ctors: dict[str, tuple[str, int]] = {}
        self.adt_instances: dict[str, adts.Instance] = {}
        for t in prog.types:
            if t.payloads is not None:
                continue
            self._unique(self.types, t.name, t, t.pos, "type")
            for i, c in enumerate(t.ctors):
                if c.name in self.ctors:
                    raise LustreError(c.pos, f"enum constructor '{c.name}' is declared twice")
                self.ctors[c.name] = (t.name, i)
        adts.register(self, [t for t in prog.types if t.payloads is not None])
        for c in prog.consts:
            self._unique(self.consts, c.name, c, c.pos, "constant")
        for n in prog.nodes:
            self._unique(self.nodes, n.name, n, n.pos, "node")
        # Kind 2 polymorphic nodes: scalarized per instance (poly.py)
        for n in prog.nodes:
            if n.tparams and not adts.signature_uses_params(n):
                n.tparams = []  # `node M<T2>(x: int) ...`: one instance, lowered as it is
        self.poly_nodes = {n.name: n for n in prog.nodes if n.tparams}
        # Kind 2 nodes with arrays sized by a `const` parameter: per call (sized.py)
        # and Kind 2 recursive functions: per call's constant arguments (sized.py)
        self.sized_nodes = {n.name: n for n in prog.nodes
                            if not n.tparams and (n.rec or sized.size_params(n))}
        self.sized_instances: set[str] = set()
        # the observers a node's types add (set by the importer; sized.py calls it per instance)
        self.add_observers: Callable[[ast.Node], None] = lambda node: None
        self.rec_instances: dict[str, int] = {}  # recursive function -> instances
        self.rec_callers: dict[str, str] = {}  # a recursive instance -> the node that made it
        for n in prog.nodes:
            if n.rec and n.tparams:
                raise LustreError(n.pos, "unsupported construct: polymorphic recursive "
                                  "functions ('rec' with type parameters)")
        for n in prog.nodes:
            if not n.tparams and n.name not in self.sized_nodes:
                self.scalarize(n)
        self._check_no_recursion()

    @staticmethod
    def _unique(table: dict, name: str, value: object, pos: int, what: str) -> None:
        if name in table:
            raise LustreError(pos, f"{what} '{name}' is declared twice")
        table[name] = value

    # -- types -------------------------------------------------------------------
    def resolve_type(self, ref: ast.TypeRef) -> str:
        """`int`, `real`, `bool` or the name of an enumeration."""
        seen: set[str] = set()
        while ref.name not in ("int", "real", "bool") and ref.name not in MACHINE_INTS:
            if ref.tag:
                return ref.name
            if (coll := sets.coll_of_type(self, ref)) is not None:
                return coll.name
            if ref.args is not None or ref.name in self.adts:
                inst = adts.instance(self, ref)
                if inst is not None:
                    return inst.name
                ref = adts.concrete(self, ref)
                continue
            if ref.name == "|" and ref.elem is not None:
                ref = ref.elem
                continue
            if ref.name in ("^", "{}"):
                raise LustreError(ref.pos, "unsupported construct: arrays and records here "
                                  "(they are node variables, parameters and expressions)")
            decl = self.types.get(ref.name)
            if decl is None:
                raise LustreError(ref.pos, f"unknown type '{ref.name}'")
            if decl.alias is None:
                return decl.name
            if ref.name in seen:
                raise LustreError(ref.pos, f"type '{ref.name}' is defined in terms of itself")
            seen.add(ref.name)
            ref = decl.alias
        return ref.name

    def unrefined(self, ref: ast.TypeRef) -> tuple[ast.TypeRef, list[tuple[str, ast.Expr]]]:
        """A type without its refinements (through aliases), and those
        refinements (variable, predicate), outermost first."""
        preds: list[tuple[str, ast.Expr]] = []
        seen: set[str] = set()
        while True:
            if ref.name == "|" and ref.elem is not None and ref.refine is not None:
                preds.append(ref.refine)
                ref = ref.elem
            elif (ref.name in self.types and ref.name not in seen
                  and (alias := self.types[ref.name].alias) is not None):
                seen.add(ref.name)
                if alias.name != "|" and not any(
                        a.name == "|" for a in self._alias_chain(alias)):
                    return ref, preds
                ref = alias
            else:
                return ref, preds

    def _alias_chain(self, ref: ast.TypeRef) -> list[ast.TypeRef]:
        out, seen = [ref], set()
        while ref.name in self.types and ref.name not in seen:
            seen.add(ref.name)
            alias = self.types[ref.name].alias
            if alias is None:
                break
            out.append(alias)
            ref = alias
        return out

    def array_shape(self, ref: ast.TypeRef) -> tuple[int, ast.TypeRef] | None:
        """(size, element type) of an array type `t ^ n` (through aliases), else None."""
        ref = self.unrefined(ref)[0]
        seen: set[str] = set()
        while ref.name != "^" and ref.name in self.types and ref.name not in seen:
            seen.add(ref.name)
            alias = self.types[ref.name].alias
            if alias is None:
                return None
            ref = alias
        if ref.name != "^" or ref.elem is None or ref.size is None:
            return None
        try:
            n, t = self.fold(ref.size)
        except LustreError as e:
            if e.message.startswith("unknown constant"):  # known only at run time
                what = f" ('{ref.size.name}')" if isinstance(ref.size, ast.Var) else ""
                raise LustreError(ref.size.pos, "unsupported construct: arrays sized by a "
                                  "free constant without a value (step-run --const NAME=VALUE "
                                  f"gives one) or by an input{what}") from None
            raise
        if t != "int" or not 1 <= int(n) <= MAX_ARRAY:
            raise LustreError(ref.size.pos, f"an array size must be an int constant from 1 "
                              f"to {MAX_ARRAY}, not {n}")
        return int(n), ref.elem

    def record_fields(self, ref: ast.TypeRef) -> list[tuple[str, ast.TypeRef]] | None:
        """The fields of a record type (through aliases), else None."""
        ref = self.unrefined(ref)[0]
        seen: set[str] = set()
        while ref.fields is None and ref.name in self.types and ref.name not in seen:
            seen.add(ref.name)
            alias = self.types[ref.name].alias
            if alias is None:
                return None
            ref = alias
        return ref.fields

    def leaves(self, ref: ast.TypeRef, depth: int = 0) -> list[tuple[str, ast.TypeRef]]:
        """The scalar parts of a type as (path suffix, scalar type): `("", int)`
        for an int, `("[0]", ...)` ... for an array, `(".f", ...)` for a record."""
        if depth > 32:
            raise LustreError(ref.pos, "type nested too deeply (or recursive)")
        ref = adts.concrete(self, ref)
        coll = sets.coll_of_type(self, adts.plain(self, ref), depth)
        if coll is not None:  # Kind 2 sets and maps (sets.py)
            return coll.leaves
        inst = adts.instance(self, ref, depth)
        plain = self.unrefined(ref)[0]
        while plain.items is None and plain.name in self.types and \
                (alias := self.types[plain.name].alias) is not None:
            plain = self.unrefined(alias)[0]
        shape = None if inst is not None or plain.items is not None else self.array_shape(ref)
        if inst is not None:
            out = inst.leaves
        elif plain.items is not None:  # a tuple type `[int, bool]`
            out = [(f"[{i}]{s}", t) for i, it in enumerate(plain.items)
                   for s, t in self.leaves(it, depth + 1)]
        elif shape is not None:
            n, elem = shape
            inner = self.leaves(elem, depth + 1)
            out = [(f"[{i}]{s}", t) for i in range(n) for s, t in inner]
        else:
            fields = self.record_fields(ref)
            if fields is None:
                return [("", ref)]
            out = [(f".{f}{s}", t) for f, ft in fields for s, t in self.leaves(ft, depth + 1)]
        if len(out) > MAX_ARRAY:
            raise LustreError(ref.pos, f"a value of more than {MAX_ARRAY} scalars")
        return out

    def scalarize(self, node: ast.Node) -> None:
        """Replace the array and record variables of `node` by their scalar
        leaves `a[0]`, `r.f` ... (every composite part recorded in
        `node.arrays`): lus stays scalar."""
        def refinements(path: str, ref: ast.TypeRef, kind: str, depth: int = 0) -> None:
            """Record the refinement predicates on `path` and its parts."""
            base, preds = self.unrefined(ref)
            for var, pred in preds:
                node.refinements.append((path, kind, renamed(pred, {var: path})))
            if depth > 32:
                return
            shape = self.array_shape(base)
            if shape is not None:
                for i in range(shape[0]):
                    refinements(f"{path}[{i}]", shape[1], kind, depth + 1)
            for f, ft in self.record_fields(base) or []:
                refinements(f"{path}.{f}", ft, kind, depth + 1)

        def expand(decls: list[ast.Decl], kind: str) -> list[ast.Decl]:
            out = []
            for d in decls:
                parts = self.leaves(d.type)  # first: it bounds the parts refinements walks
                refinements(d.name, d.type, kind)
                node.guards.update(adts.leaf_guards(self, d.name, parts))
                if parts == [("", d.type)]:
                    out.append(d)
                    continue
                for suffix, t in parts:
                    leaf = d.name + suffix
                    adts.tag_part(node.arrays, leaf, suffix, t, self)
                    for cut in [m.start() for m in _COMPONENT.finditer(suffix)][1:]:
                        node.arrays.setdefault(d.name + suffix[:cut], []).append(leaf)
                    node.arrays.setdefault(d.name, []).append(leaf)
                    out.append(ast.Decl(d.pos, leaf, t, d.clock, d.static, d.held))
            return out
        node.inputs = expand(node.inputs, "input")
        node.outputs = expand(node.outputs, "output")
        node.locals = expand(node.locals, "local")

    def int_range(self, ref: ast.TypeRef) -> tuple[int, int] | None:
        """The bounds of a (possibly aliased) `subrange [lo, hi] of int`, with
        `*` as the int limits (also under a refinement `subtype {v: t | p}`);
        None for any other type."""
        seen: set[str] = set()
        while ref.bounds is None and (ref.name in self.types and ref.name not in seen
                                      or ref.name == "|" and ref.elem is not None):
            if ref.name == "|" and ref.elem is not None:
                ref = ref.elem
                continue
            seen.add(ref.name)
            alias = self.types[ref.name].alias
            if alias is None:
                return None
            ref = alias
        if ref.bounds is None:
            return None
        out = []
        for b, default in zip(ref.bounds, (INT_MIN, INT_MAX)):
            if b is None:
                out.append(default)
                continue
            v, t = self.fold(b)
            if t != "int":
                raise LustreError(b.pos, f"a subrange bound must be int, not {t}")
            out.append(int(v))
        if out[0] > out[1]:
            raise LustreError(ref.pos, f"empty subrange [{out[0]}, {out[1]}]")
        return out[0], out[1]

    def is_enum(self, name: str) -> bool:
        """An enumeration (or the tags of a datatype), not an alias or a scalar."""
        decl = self.types.get(name)
        return decl is not None and decl.alias is None and bool(decl.ctors)

    def enum_size(self, name: str) -> int:
        return len(self.types[name].ctors)

    def ctor_names(self, name: str) -> list[str]:
        return [c.name for c in self.types[name].ctors]

    # -- constants ---------------------------------------------------------------
    def const_value(self, name: str, pos: int,
                    local: dict[str, ast.ConstDecl] | None = None) -> tuple[object, str]:
        """The folded value and Lustre type of a constant (or enum constructor)."""
        decl = (local or {}).get(name) or self.consts.get(name)
        if decl is None:
            if name in self.ctors:
                return self.ctors[name][1], self.ctors[name][0]
            raise sized.NotConstantError(pos, f"unknown constant '{name}'")
        key = f"{id(decl)}"
        if key in self._const_values:
            value, ltype, _ = self._const_values[key]
            return value, ltype
        if key in self._folding or len(self._folding) > _MAX_CONST_DEPTH:
            raise LustreError(decl.pos, f"constant '{name}' is defined in terms of itself")
        self._folding.add(key)
        try:
            value, ltype = self.fold(decl.value, local)
        finally:
            self._folding.discard(key)
        if decl.type is not None:
            want = self.resolve_type(decl.type)
            if want != ltype:
                raise LustreError(decl.value.pos, f"constant '{name}' is declared {want} "
                                  f"but its value is {ltype}")
        self._const_values[key] = (value, ltype, decl)
        return value, ltype

    def fold(self, e: ast.Expr, local: dict[str, ast.ConstDecl] | None = None
             ) -> tuple[object, str]:
        """Evaluate a constant expression."""
        if isinstance(e, ast.Unary) and e.op == "-" and isinstance(e.arg, ast.Const) \
                and e.arg.kind == "int":  # -2147483648: INT_MIN, of no positive literal
            return _wrap_int(-int(e.arg.value), e.pos), "int"
        if isinstance(e, ast.Const):
            if e.kind == "int" and not INT_MIN <= int(e.value) <= INT_MAX:
                raise LustreError(e.pos, f"integer literal {e.value} does not fit in int "
                                  f"(32-bit: {INT_MIN} to {INT_MAX})")
            return e.value, e.kind
        if isinstance(e, ast.Var):
            return self.const_value(e.name, e.pos, local)
        if isinstance(e, ast.Unary) and e.op in ("-", "not", "int", "real"):
            v, t = self.fold(e.arg, local)
            return _fold_unary(e, v, t)
        if isinstance(e, ast.Binary) and e.op not in ("->", "fby"):
            a, ta = self.fold(e.lhs, local)
            b, tb = self.fold(e.rhs, local)
            return _fold_binary(e, a, ta, b, tb)
        if isinstance(e, ast.If):
            c, tc = self.fold(e.cond, local)
            if tc != "bool":
                raise LustreError(e.cond.pos, "the condition of 'if' must be bool")
            return self.fold(e.then if c else e.other, local)
        raise sized.NotConstantError(e.pos, "not a constant expression")

    # -- nodes ------------------------------------------------------------------
    def _check_no_recursion(self) -> None:
        calls = {
            name: [c for eq in n.equations for e in equation_exprs(eq) for c in walk(e)
                   if isinstance(c, ast.Call | ast.Iterate)]
            for name, n in self.nodes.items()
        }
        state: dict[str, int] = {}  # 1 visiting, 2 done
        for root in self.nodes:
            stack: list[tuple[str, int]] = [(root, 0)]
            while stack:
                name, i = stack.pop()
                if i == 0:
                    if state.get(name) == 2:
                        continue
                    state[name] = 1
                sites = calls[name]
                if i < len(sites):
                    stack.append((name, i + 1))
                    callee = sites[i].node
                    if callee not in self.nodes:
                        continue  # reported when the call is lowered
                    if state.get(callee) == 1 and self.nodes[callee].rec:
                        continue  # `function rec`: unrolled per constant argument
                    if state.get(callee) == 1:
                        raise LustreError(sites[i].node_pos,
                                          f"recursive instantiation of node '{callee}' "
                                          "is not supported")
                    if state.get(callee) != 2:
                        stack.append((callee, 0))
                else:
                    state[name] = 2




def _wrap_int(v: int, pos: int) -> int:
    if not INT_MIN <= v <= INT_MAX:
        raise LustreError(pos, f"constant expression overflows int (32-bit): {v}")
    return v


def _fold_unary(e: ast.Unary, v: object, t: str) -> tuple[object, str]:
    if e.op == "-" and t in ("int", "real"):
        return (_wrap_int(-int(v), e.pos) if t == "int" else -float(v)), t
    if e.op == "not" and t == "bool":
        return (not v), "bool"
    if e.op == "int" and t in ("int", "real"):
        return _wrap_int(int(v), e.pos), "int"
    if e.op == "real" and t in ("int", "real"):
        return float(v), "real"
    raise LustreError(e.pos, f"'{e.op}' cannot be applied to {t}")


def _fold_binary(e: ast.Binary, a, ta: str, b, tb: str) -> tuple[object, str]:
    if ta != tb:
        raise LustreError(e.pos, f"'{e.op}' mixes {ta} and {tb}")
    op = e.op
    if op in ("=", "<>"):
        return ((a == b) == (op == "=")), "bool"
    if op in ("<", "<=", ">", ">=") and ta in ("int", "real"):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op], "bool"
    if op in ("and", "or", "xor", "=>") and ta == "bool":
        return {"and": a and b, "or": a or b, "xor": a != b, "=>": (not a) or b}[op], "bool"
    if op in ("+", "-", "*", "/", "div", "mod") and ta in ("int", "real"):
        if op in ("/", "div", "mod") and b == 0:
            raise LustreError(e.pos, "division by zero in a constant expression")
        if ta == "real":
            if op in ("div", "mod"):
                raise LustreError(e.pos, f"'{op}' needs int operands")
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op], "real"
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # truncated
        r = a - q * b
        v = {"+": a + b, "-": a - b, "*": a * b, "/": q, "div": q, "mod": r}[op]
        return _wrap_int(v, e.pos), "int"
    raise LustreError(e.pos, f"'{op}' cannot be applied to {ta}")
