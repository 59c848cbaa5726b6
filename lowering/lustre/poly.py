"""Kind 2 polymorphic nodes, monomorphized: `node f<T>(x: T) returns (y: T)`
is lowered once per list of type arguments it is used at, as the node
`f$int` (`f$Opt_int_` for `Opt<int>`: the type's name with every character
other than a letter, digit or `_` replaced by `_`).

A call gives the type arguments, `f@<int>(x)` (`g@<int; bool>(a, b)`), or
leaves them to be inferred from the arguments' types, `f(x)` (a parameter of
type `T` given an int: T = int). A polymorphic node is not lowered on its own
(there is nothing to run before its types are known); its instances are, and
are type-checked then, at their first use.

Example::

    node Poly<T>(x: T) returns (y: T) let y = x -> pre x; tel
    node M(a: int; b: bool) returns (c: int; d: bool)
    let c = Poly@<int>(a); d = Poly(b); tel      -- instances Poly$int, Poly$bool
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from steplus.lowering.lustre import adts, ast, machine_ints
from steplus.lowering.lustre.calls import lower_call
from steplus.lowering.lustre.patterns import lower_match
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.program import Program
    from steplus.lowering.lustre.to_lus import NodeLowering

MAX_INSTANCES = 1000
"""Instances of polymorphic nodes one program may create."""


def instance_name(prog: Program, name: str, targs: list[ast.TypeRef]) -> str:
    """The node `name` at `targs`, created (scalarized, registered) on first use."""
    node = prog.poly_nodes[name]
    if len(targs) != len(node.tparams):
        raise LustreError(targs[0].pos if targs else node.pos,
                          f"node '{name}' takes {len(node.tparams)} type argument(s), "
                          f"not {len(targs)}")
    names = [adts.canonical(prog, t) for t in targs]
    inst = name + "".join("$" + re.sub(r"[^A-Za-z0-9_]", "_", n) for n in names)
    if inst in prog.nodes:
        return inst
    if len(prog.nodes) > MAX_INSTANCES + len(prog.ast.nodes):
        raise LustreError(node.pos, f"more than {MAX_INSTANCES} instances of polymorphic "
                          "nodes")
    copied = copy.deepcopy(node)
    _substitute(copied, dict(zip(node.tparams, targs)))
    copied.name, copied.tparams = inst, []
    prog.nodes[inst] = copied
    prog.scalarize(copied)
    return inst


def _substitute(root: object, mapping: dict[str, ast.TypeRef]) -> None:
    """Replace the type parameters in every type of a node, in place."""
    stack: list[object] = [root]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, list | tuple):
            stack.extend(x)
            continue
        if not dataclasses.is_dataclass(x) or isinstance(x, ast.TypeRef | type):
            continue
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            if isinstance(v, ast.TypeRef):
                setattr(x, f.name, adts.substitute(v, mapping))
            elif f.name == "targs" and v is not None:
                setattr(x, f.name, [adts.substitute(t, mapping) for t in v])
            elif isinstance(v, list | tuple) or dataclasses.is_dataclass(v):
                stack.append(v)


def _type_of(low: NodeLowering, vals: list[SSAValue], pos: int) -> ast.TypeRef | None:
    """The type of an argument's values, for inference: a scalar or a datatype."""
    if not vals:
        return None
    t = low.lt(vals[0])
    inst = low.prog.adt_instances.get(t)
    if inst is not None:
        return inst.ref if len(vals) == len(inst.leaves) else None
    return ast.TypeRef(pos, t) if len(vals) == 1 else None


def lower_poly_call(low: NodeLowering, e: ast.Call) -> list[SSAValue]:
    """A call of a polymorphic node: its instance at the given or inferred types."""
    node = low.prog.poly_nodes[e.node]
    values = [low.expr(a) for a in e.args]
    targs = e.targs
    if targs is None:
        found: dict[str, ast.TypeRef] = {}
        for p, vals, a in zip(node.inputs, values, e.args):
            if p.type.name in node.tparams and not p.type.args and p.type.name not in found:
                t = _type_of(low, vals, a.pos)
                if t is not None:
                    found[p.type.name] = t
        missing = [t for t in node.tparams if t not in found]
        if missing:
            raise LustreError(e.pos, f"cannot infer the type of '{missing[0]}' in "
                              f"'{e.node}': write {e.node}@<{', '.join(node.tparams)}> with "
                              "the types")
        targs = [found[t] for t in node.tparams]
    inst = instance_name(low.prog, e.node, targs)
    call = dataclasses.replace(e, node=inst, targs=None)
    return lower_call(low, call, [v for vals in values for v in vals])


def lower_expr(low: NodeLowering, e: ast.Expr) -> list[SSAValue] | None:
    """The Kind 2 data type expressions of a node (None for any other):
    constructor applications, `C?(e)` and constants of composite types
    (adts.py), `match` (patterns.py), calls of polymorphic nodes, `(e : t)`."""
    if isinstance(e, ast.Match):
        return lower_match(low, e)
    if isinstance(e, ast.BitConcat | ast.BitExtract):
        return [machine_ints.bits_op(low, e)]
    if isinstance(e, ast.Tester):
        return [adts.tester(low, e)]
    if isinstance(e, ast.Ascription):
        values = low.expr(e.arg)
        want = [low.prog.resolve_type(t) for _, t in low.prog.leaves(e.type)]
        if [low.lt(v) for v in values] != want:
            raise LustreError(e.pos, f"the expression is not of type "
                              f"{adts.canonical(low.prog, e.type)}")
        return values
    if isinstance(e, ast.Var) and e.targs is None and e.name not in low.env \
            and e.name not in low.ast.arrays:
        decl = low.local_consts.get(e.name) or low.prog.consts.get(e.name)
        if decl is not None and adts.composite_const(low.prog, decl):
            return adts.inline_const(low, decl)
    if isinstance(e, ast.Var) and (e.targs is not None or adts.is_ctor(low, e.name)):
        if e.name not in low.prog.adt_ctors:
            raise LustreError(e.pos, f"'{e.name}' is not a constructor of a datatype: it "
                              "takes no type arguments")
        return adts.construct(low, e.name, e.pos, e.targs, [])
    if isinstance(e, ast.Call) and e.node in low.prog.poly_nodes:
        return lower_poly_call(low, e)
    if isinstance(e, ast.Call) and e.targs is not None and e.node in low.prog.nodes:
        raise LustreError(e.node_pos, f"node '{e.node}' takes no type arguments")
    if isinstance(e, ast.Call) and e.node in low.prog.adt_ctors \
            and e.node not in low.prog.nodes:
        if e.reset is not None or e.activate is not None:
            raise LustreError(e.pos, f"'{e.node}' is a constructor, not a node")
        return adts.construct(low, e.node, e.pos, e.targs, e.args)
    return None
