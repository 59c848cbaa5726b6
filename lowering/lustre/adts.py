"""Kind 2 algebraic data types, scalarized by the frontend like records.

`datatype Shape = Circle (r: real) | Rect (w: real, h: real);` declares a type
whose values are a constructor and its fields. A value of it is its scalar
leaves (lus stays scalar, `Program.leaves`): the constructor *tag*, named after
the variable and numbered like an enumeration's constructors (Circle = 0,
Rect = 1), then every constructor's fields in declaration order: `s`, `s.r`,
`s.w`, `s.h` (step-run's inputs `s=...`, `s.r=...`, ...). The fields of the
constructors a value is not built with are 0 / 0.0 / false (canonical): a
constructor application fills them so, and a node's inputs of such a type are
canonicalized on entry, so `=` and `<>` compare every leaf. A datatype whose
constructors have no fields is an enumeration.

- `C(e, ...)` builds a value, `C` (no fields) too; `C?(e)` tests the tag;
  `e.f` reads field `f` (0 / 0.0 / false under another constructor, where
  Kind 2 leaves it unconstrained);
- `match e with | C(x, _) : e1 | D(E(n)) : e2 | _ : e3 end` is a chain of
  `if` on the tags, patterns nested, fields bound to `x`, `n`; a `match` must
  be exhaustive (checked, a located error names what it misses; patterns.py);
- `datatype Opt<T> = None | Some (v: T);` is instantiated per use (`Opt<int>`,
  `Opt<Opt<int>>`: one enumeration of tags each); a constructor's type
  arguments are inferred from its fields' values or given, `None@<int>`;
- recursive datatypes (`Msg = Atom (a: int) | Pair (l: Msg, r: Msg)`) are
  rejected at their declaration: Kind 2 reads them as SMT-LIB inductive
  datatypes, whose values (an input `m: Msg` too) nest to any depth, and a
  lus value is a fixed number of scalars. A depth bound D, as sets have K
  slots, was not taken: a binary constructor needs 2^D copies of the fields,
  `Pair(m, m)` is one level deeper than `m` (every constructor would overflow
  the bound of its arguments' type), and the corpus programs' properties
  hold for every depth.

Example::

    datatype Opt<T> = None | Some (v: T);
    node f(i: int) returns (o: int);
    var x: Opt<int>;
    let
      x = if i > 0 then Some(i) else None@<int>;
      o = match x with | Some(v) : v | None : -1 end;
    tel
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from steplus.lowering.lustre import ast, sets
from steplus.lowering.lustre.transform import LustreError, _unsupported

if TYPE_CHECKING:
    from steplus.lowering.lustre.program import Program
    from steplus.lowering.lustre.to_lus import NodeLowering

BASE = ("int", "real", "bool")
PATH_PART = re.compile(r"\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]")
"""A component of a scalar leaf's path: `.f` (a field) or `[k]` (an element)."""


def component_starts(suffix: str) -> list[int]:
    """Where each component (`.f`, `[k]`) of a leaf's path suffix starts."""
    return [m.start() for m in PATH_PART.finditer(suffix)]


@dataclass
class Instance:
    """A datatype at given type arguments (`Opt<int>`): its tag enumeration is
    `prog.types[name]`; `leaves[0]` is the tag, `spans[c][f]` the index range
    in `leaves` of constructor c's field f."""

    name: str
    decl: ast.TypeDecl
    ref: ast.TypeRef  # a type naming this instance
    fields: list[list[tuple[str, ast.TypeRef]]]
    leaves: list[tuple[str, ast.TypeRef]]
    spans: list[list[tuple[int, int]]]


# -- declarations ----------------------------------------------------------------


def register(prog: Program, decls: list[ast.TypeDecl]) -> None:
    """Record the datatypes with fields or parameters (`prog.adts`) and their
    constructors (`prog.adt_ctors`); reject recursive ones, located."""
    for t in decls:
        if t.name in prog.adts or t.name in prog.types:
            raise LustreError(t.pos, f"type '{t.name}' is declared twice")
        prog.adts[t.name] = t
        seen: set[str] = set()
        for i, (c, fields) in enumerate(zip(t.ctors, t.payloads or [])):
            if c.name in prog.adt_ctors or c.name in prog.ctors:
                raise LustreError(c.pos, f"constructor '{c.name}' is declared twice")
            prog.adt_ctors[c.name] = (t.name, i)
            for f, pos, _ in fields:
                if f in seen:
                    raise LustreError(pos, f"field '{f}' is declared twice in datatype "
                                      f"'{t.name}'")
                seen.add(f)
    for t in decls:
        _check_not_recursive(prog, t)


def _mentions(prog: Program, ref: ast.TypeRef, depth: int = 0) -> list[tuple[str, int]]:
    """The datatypes a type refers to (through aliases, arrays, records, tuples
    and type arguments), each with the offset of the reference."""
    if depth > 64:
        return []
    out: list[tuple[str, int]] = []
    if ref.name in prog.adts:
        out.append((ref.name, ref.pos))
    elif ref.name in prog.types and (alias := prog.types[ref.name].alias) is not None:
        out += _mentions(prog, alias, depth + 1)
    for sub in [ref.elem, *(t for _, t in ref.fields or []), *(ref.items or []),
                *(ref.args or [])]:
        if sub is not None:
            out += _mentions(prog, sub, depth + 1)
    return out


def _check_not_recursive(prog: Program, t: ast.TypeDecl) -> None:
    stack = [(t.name, 0)]
    seen: set[str] = set()
    while stack:
        name, depth = stack.pop()
        decl = prog.adts[name]
        for ci, fields in enumerate(decl.payloads or []):
            for f, pos, ft in fields:
                for other, _ in _mentions(prog, ft):
                    if other == t.name:
                        where = pos if name == t.name else t.pos
                        raise LustreError(where, _unsupported(
                            f"recursive algebraic data types ('{t.name}' through "
                            f"'{decl.ctors[ci].name}.{f}': Kind 2's values of them nest to "
                            "any depth, a steplus value is a fixed number of scalars)"))
                    if other not in seen and depth < 64:
                        seen.add(other)
                        stack.append((other, depth + 1))


# -- types -----------------------------------------------------------------------


def substitute(ref: ast.TypeRef, mapping: dict[str, ast.TypeRef]) -> ast.TypeRef:
    """A copy of `ref` with the type parameters of `mapping` replaced."""
    if not mapping:
        return ref
    if ref.name in mapping and not ref.args:
        return copy.deepcopy(mapping[ref.name])
    out = copy.copy(ref)
    if ref.elem is not None:
        out.elem = substitute(ref.elem, mapping)
    if ref.fields is not None:
        out.fields = [(f, substitute(t, mapping)) for f, t in ref.fields]
    if ref.items is not None:
        out.items = [substitute(t, mapping) for t in ref.items]
    if ref.args is not None:
        out.args = [substitute(t, mapping) for t in ref.args]
    return out


def concrete(prog: Program, ref: ast.TypeRef, depth: int = 0) -> ast.TypeRef:
    """`ref` with aliases that take type parameters (`type P<T> = ...`)
    applied to their arguments (the other aliases are kept)."""
    if depth > 64:
        raise LustreError(ref.pos, "type nested too deeply (or recursive)")
    decl = prog.types.get(ref.name)
    if ref.args is not None and decl is not None and decl.alias is not None:
        if len(ref.args) != len(decl.params):
            raise LustreError(ref.pos, f"type '{ref.name}' takes {len(decl.params)} type "
                              f"argument(s), not {len(ref.args)}")
        body = substitute(decl.alias, dict(zip(decl.params, ref.args)))
        return concrete(prog, body, depth + 1)
    if decl is not None and decl.params and ref.args is None:
        raise LustreError(ref.pos, f"type '{ref.name}' needs type arguments")
    return ref


def plain(prog: Program, ref: ast.TypeRef) -> ast.TypeRef:
    """`ref` without refinements and aliases (a structural type or a name)."""
    for _ in range(64):
        ref = concrete(prog, ref)
        if ref.name == "|" and ref.elem is not None:
            ref = ref.elem
        elif ref.name in prog.types and (alias := prog.types[ref.name].alias) is not None \
                and not prog.types[ref.name].params:
            ref = alias
        else:
            return ref
    raise LustreError(ref.pos, "type defined in terms of itself")


def canonical(prog: Program, ref: ast.TypeRef, depth: int = 0) -> str:
    """The name of a type, aliases and refinements aside (`Opt<int>`)."""
    if depth > 32:
        raise LustreError(ref.pos, "type nested too deeply (or recursive)")
    ref = plain(prog, ref)
    if ref.bounds is not None:
        return "int"
    if ref.name == "^" and ref.elem is not None and ref.size is not None:
        n, _ = prog.fold(ref.size)
        return f"{canonical(prog, ref.elem, depth + 1)}^{n}"
    if ref.fields is not None:
        return "{" + "; ".join(f"{f}: {canonical(prog, t, depth + 1)}"
                               for f, t in ref.fields) + "}"
    if ref.items is not None:
        return "[" + ", ".join(canonical(prog, t, depth + 1) for t in ref.items) + "]"
    if ref.name in prog.adts:
        decl = prog.adts[ref.name]
        args = ref.args or []
        if len(args) != len(decl.params):
            raise LustreError(ref.pos, f"datatype '{ref.name}' takes {len(decl.params)} type "
                              f"argument(s), not {len(args)}")
        if not args:
            return ref.name
        return f"{ref.name}<{', '.join(canonical(prog, a, depth + 1) for a in args)}>"
    if ref.name in ("set", "map") and ref.args is not None:  # Kind 2 sets and maps
        return f"{ref.name}<{', '.join(canonical(prog, a, depth + 1) for a in ref.args)}>"
    if ref.args is not None:
        raise LustreError(ref.pos, f"type '{ref.name}' takes no type arguments")
    return ref.name


def instance(prog: Program, ref: ast.TypeRef, depth: int = 0) -> Instance | None:
    """The datatype instance a (value) type names, created on first use; None
    for any other type."""
    if ref.tag:
        return None
    ref = plain(prog, ref)
    if ref.name not in prog.adts:
        return None
    name = canonical(prog, ref)
    known = instance_named(prog, name)
    if known is not None:
        return known
    decl = prog.adts[ref.name]
    mapping = dict(zip(decl.params, ref.args or []))
    fields = [[(f, substitute(ft, mapping)) for f, _, ft in cfields]
              for cfields in decl.payloads or []]
    tag = ast.TypeRef(ref.pos, name, tag=True)
    if name not in prog.types:
        prog.types[name] = ast.TypeDecl(decl.pos, name, ctors=list(decl.ctors))
    leaves: list[tuple[str, ast.TypeRef]] = [("", tag)]
    spans: list[list[tuple[int, int]]] = []
    for cfields in fields:
        spans.append([])
        for f, ft in cfields:
            start = len(leaves)
            leaves += [(f".{f}{s}", t) for s, t in prog.leaves(ft, depth + 1)]
            spans[-1].append((start, len(leaves)))
    inst = Instance(name, decl, ast.TypeRef(ref.pos, ref.name, args=ref.args), fields,
                    leaves, spans)
    prog.adt_instances[name] = cast("Any", inst)
    return inst


def instance_named(prog: Program, name: str) -> Instance | None:
    """The datatype instance of that name, if created."""
    return cast("Instance | None", prog.adt_instances.get(name))


def ctor_info(prog: Program, ref: ast.TypeRef) -> tuple[str, list[str], Instance | None] | None:
    """(type name, constructor names, instance if it has fields) of a datatype
    or enumeration type, else None."""
    inst = instance(prog, ref)
    if inst is not None:
        return inst.name, [c.name for c in inst.decl.ctors], inst
    try:
        name = prog.resolve_type(ref)
    except LustreError:
        return None
    if prog.is_enum(name):
        return name, prog.ctor_names(name), None
    return None


def _info_of_value(low: NodeLowering, v: SSAValue) -> tuple[str, list[str], Instance | None]:
    t = low.lt(v)
    inst = instance_named(low.prog, t)
    if inst is not None:
        return t, [c.name for c in inst.decl.ctors], inst
    if low.prog.is_enum(t):
        return t, low.prog.ctor_names(t), None
    raise LustreError(0, "")


def zero(low: NodeLowering, ref: ast.TypeRef, pos: int) -> SSAValue:
    t = low.prog.resolve_type(ref)
    return low.const({"real": 0.0, "bool": False}.get(t, 0), t, pos)


# -- expressions -----------------------------------------------------------------


def is_ctor(low: NodeLowering, name: str) -> bool:
    return name in low.prog.adt_ctors and name not in low.env and name not in low.ast.arrays


def construct(low: NodeLowering, name: str, pos: int, targs: list[ast.TypeRef] | None,
              args: list[ast.Expr]) -> list[SSAValue]:
    """`C(e, ...)`, `C`, `C@<t>(e, ...)`: the tag, then every constructor's
    fields (those of C from the arguments, the others 0 / 0.0 / false)."""
    prog = low.prog
    tname, index = prog.adt_ctors[name]
    decl = prog.adts[tname]
    cfields = (decl.payloads or [])[index]
    if len(args) != len(cfields):
        raise LustreError(pos, f"constructor '{name}' takes {len(cfields)} argument(s), "
                          f"got {len(args)}")
    values = [low.expr(a) for a in args]
    if targs is None and decl.params:
        targs = _infer(low, name, pos, decl, cfields, values)
    if targs is not None and len(targs) != len(decl.params):
        raise LustreError(pos, f"constructor '{name}' of '{tname}' takes "
                          f"{len(decl.params)} type argument(s), not {len(targs)}")
    inst = instance(prog, ast.TypeRef(pos, tname, args=targs))
    assert inst is not None
    out = [low.const(index, inst.name, pos)]
    for ci, spans in enumerate(inst.spans):
        for fi, (start, end) in enumerate(spans):
            leaves = inst.leaves[start:end]
            if ci != index:
                out += [zero(low, t, pos) for _, t in leaves]
                continue
            given = values[fi]
            f = inst.fields[ci][fi][0]
            if len(given) != len(leaves):
                raise LustreError(args[fi].pos, f"field '{f}' of '{name}' takes "
                                  f"{len(leaves)} value(s), not {len(given)}")
            for v, (_, t) in zip(given, leaves):
                want = prog.resolve_type(t)
                if low.lt(v) != want:
                    raise LustreError(args[fi].pos, f"field '{f}' of '{name}' must be "
                                      f"{want}, not {low.lt(v)}")
            out += given
    return out


def _infer(low: NodeLowering, name: str, pos: int, decl: ast.TypeDecl,
           cfields: list[tuple[str, int, ast.TypeRef]], values: list[list[SSAValue]]
           ) -> list[ast.TypeRef]:
    """The type arguments of a constructor, from its fields typed by a bare
    parameter (`Some (v: T)` applied to an int: T = int)."""
    found: dict[str, ast.TypeRef] = {}
    for (_, _, ft), vals in zip(cfields, values):
        if ft.name in decl.params and not ft.args and ft.name not in found and vals:
            t = low.lt(vals[0])
            if t in low.prog.adt_instances:
                inst = low.prog.adt_instances[t]
                if len(vals) == len(inst.leaves):
                    found[ft.name] = inst.ref
            elif len(vals) == 1:
                found[ft.name] = ast.TypeRef(pos, t)
    missing = [p for p in decl.params if p not in found]
    if missing:
        raise LustreError(pos, f"cannot infer the type of '{missing[0]}' in '{name}': write "
                          f"{name}@<{', '.join(decl.params)}> with the types")
    return [found[p] for p in decl.params]


def tester(low: NodeLowering, e: ast.Tester) -> SSAValue:
    """`C?(e)`: the tag of e is C."""
    vals = low.expr(e.arg)
    try:
        tname, names, _ = _info_of_value(low, vals[0])
    except LustreError:
        raise LustreError(e.arg.pos, f"'{e.ctor}?' tests a datatype value, not "
                          f"{low.lt(vals[0])}") from None
    if e.ctor not in names:
        raise LustreError(e.pos, f"'{e.ctor}' is not a constructor of '{tname}'")
    return low.emit(arith.CmpiOp(vals[0], low.const(names.index(e.ctor), tname, e.pos), "eq"),
                    e.pos)


def register_parts(arrays: dict[str, list[str]], name: str,
                   parts: list[tuple[str, ast.TypeRef]], prog: Program) -> None:
    """The composite parts of variable `name` (its leaves `parts`) in `arrays`:
    `name` and every array, record or datatype part of it -> its leaves (a
    datatype part's first leaf is its tag, named like the part)."""
    for suffix, t in parts:
        leaf = name + suffix
        tag_part(arrays, leaf, suffix, t, prog)
        for cut in component_starts(suffix)[1:]:
            arrays.setdefault(name + suffix[:cut], []).append(leaf)
        arrays.setdefault(name, []).append(leaf)


def tag_part(arrays: dict[str, list[str]], leaf: str, suffix: str, t: ast.TypeRef,
             prog: Program) -> None:
    """A datatype part inside a composite value (`o.val` of `o`) is the part
    whose first leaf is its tag, named like it: `arrays[o.val]` starts with it."""
    inst = prog.adt_instances.get(t.name) if t.tag and suffix else None
    if inst is not None and len(inst.leaves) > 1 or t.tag and suffix and \
            sets.coll_named(prog, t.name) is not None:  # a set or map part (sets.py)
        arrays.setdefault(leaf, []).append(leaf)


def canonicalize_inputs(low: NodeLowering) -> None:
    """A node's datatype inputs with the fields of the constructors they are
    not built with set to 0 / 0.0 / false (what constructor applications give),
    so that `=` may compare every leaf."""
    prog = low.prog
    for d in low.ast.inputs:
        inst = prog.adt_instances.get(d.type.name) if d.type.tag else None
        if inst is None or len(inst.leaves) == 1 or d.name not in low.env:
            continue
        for ci, spans in enumerate(inst.spans):
            for start, end in spans:
                for suffix, t in inst.leaves[start:end]:
                    leaf = d.name + suffix
                    if leaf not in low.env:
                        continue
                    is_c = low.emit(arith.CmpiOp(low.env[d.name],
                                                 low.const(ci, inst.name, d.pos), "eq"), d.pos)
                    low.env[leaf] = low.emit(arith.SelectOp(is_c, low.env[leaf],
                                                            zero(low, t, d.pos)), d.pos)


def leaf_guards(prog: Program, name: str, parts: list[tuple[str, ast.TypeRef]]
                ) -> dict[str, list[tuple[str, str]]]:
    """For the leaves of variable `name` inside a datatype's constructor
    fields: the (tag leaf, constructor) pairs under which each exists,
    outermost first (a subrange field is checked only there)."""
    guards: dict[str, list[tuple[str, str]]] = {}
    for i, (suffix, t) in enumerate(parts):
        inst = prog.adt_instances.get(t.name) if t.tag else None
        if inst is None:
            continue
        for ci, spans in enumerate(inst.spans):
            for start, end in spans:
                for s, _ in parts[i + start:i + end]:
                    guards.setdefault(name + s, []).append((name + suffix,
                                                            inst.decl.ctors[ci].name))
    return guards


_COMPOSITE_VALUES = (ast.ArrayLit, ast.Repeat, ast.RecordLit, ast.Tuple)


def composite_const(prog: Program, decl: ast.ConstDecl) -> bool:
    """A constant of an array, record, tuple or datatype type: not folded to
    one value but lowered where it is used (`const a: int^3 = [1, 5, 9];`)."""
    if decl.type is not None:
        leaves = prog.leaves(decl.type)
        return len(leaves) > 1 or leaves[0][1].tag
    v = decl.value
    return isinstance(v, _COMPOSITE_VALUES) or (
        isinstance(v, ast.Var | ast.Call) and (v.name if isinstance(v, ast.Var) else v.node)
        in prog.adt_ctors)


def inline_const(low: NodeLowering, decl: ast.ConstDecl) -> list[SSAValue]:
    inlining: set[int] = low.__dict__.setdefault("_inlining", set())
    if id(decl) in inlining:
        raise LustreError(decl.pos, f"constant '{decl.name}' is defined in terms of itself")
    for x in walk_vars(decl.value):
        if x in low.env or x in low.ast.arrays:
            raise LustreError(decl.value.pos, f"the value of constant '{decl.name}' reads "
                              f"variable '{x}'")
    inlining.add(id(decl))
    try:
        values = low.expr(decl.value)
    finally:
        inlining.discard(id(decl))
    if decl.type is not None:
        want = [low.prog.resolve_type(t) for _, t in low.prog.leaves(decl.type)]
        got = [low.lt(v) for v in values]
        if want != got:
            raise LustreError(decl.value.pos, f"constant '{decl.name}' is declared "
                              f"{canonical(low.prog, decl.type)} but its value does not "
                              "have that type")
    return values


def walk_vars(e: ast.Expr) -> list[str]:
    """The names of the variables (and constants) an expression reads."""
    out: list[str] = []
    stack: list[object] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ast.Var):
            out.append(x.name)
        if isinstance(x, list | tuple):
            stack.extend(x)
        elif isinstance(x, ast.Expr):
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))
    return out


def signature_uses_params(node: ast.Node) -> bool:
    """Whether a type parameter of `node` appears in the type of a variable
    (a polymorphic node, poly.py)."""
    stack: list[ast.TypeRef] = [d.type for d in [*node.inputs, *node.outputs, *node.locals]]
    while stack:
        t = stack.pop()
        if t.name in node.tparams:
            return True
        stack += [x for x in [t.elem, *(ft for _, ft in t.fields or []), *(t.items or []),
                              *(t.args or [])] if x is not None]
    return False
