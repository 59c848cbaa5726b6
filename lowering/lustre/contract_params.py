"""Kind 2 contract declarations with type parameters, instantiated per import
(and the type arguments of a polymorphic node's call, for its oracles).

`contract C<T>(i: T) returns (o: T); let guarantee o = i; tel` is imported as
`import C@<int>(x) returns (y);` (the type arguments given) or
`import C(x) returns (y);` (inferred from the declared types of the variables
passed for parameters of type `T`). The import then reads C's items with `T`
replaced in the types of C's parameters and ghost variables (`contracts._import`).

Example::

    contract C<Y>(i: Y) returns (out: Y);
    let guarantee true -> (out = (pre i)); tel
    node N(x: int) returns (y: int)
    (*@contract import C@<int>(x) returns (y); *)
    let y = x -> pre x; tel
"""

from __future__ import annotations

from steplus.lowering.lustre import adts, ast
from steplus.lowering.lustre.transform import LustreError


def bind(name: str, tparams: list[str], targs: list[ast.TypeRef] | None,
         params: list[ast.Decl], args: list[ast.Expr], node: ast.Node,
         pos: int, what: str = "contract") -> dict[str, ast.TypeRef]:
    """The type of each type parameter of contract `name` at an import (at
    `pos`) into `node` (or of node `name` at a call, `what` "node"): the
    arguments given, or inferred from the variables passed for parameters
    whose type is a bare type parameter."""
    if targs is not None:
        if len(targs) != len(tparams):
            raise LustreError(pos, f"{what} '{name}' takes {len(tparams)} type "
                              f"argument(s), not {len(targs)}")
        return dict(zip(tparams, targs))
    if not tparams:
        return {}
    declared = {d.name: d.type for d in [*node.inputs, *node.outputs, *node.locals]}
    found: dict[str, ast.TypeRef] = {}
    for p, a in zip(params, args):
        if p.type.name in tparams and not p.type.args and p.type.name not in found \
                and isinstance(a, ast.Var) and a.name in declared:
            found[p.type.name] = declared[a.name]
    missing = [t for t in tparams if t not in found]
    if missing:
        spelled = f"{'import ' if what == 'contract' else ''}{name}@<{', '.join(tparams)}>"
        raise LustreError(pos, f"cannot infer the type of '{missing[0]}' in {what} "
                          f"'{name}': write {spelled}(...) with the types")
    return found


def instantiated(decls: list[ast.Decl], mapping: dict[str, ast.TypeRef]) -> list[ast.Decl]:
    """Copies of `decls` with the type parameters of `mapping` replaced."""
    if not mapping:
        return decls
    return [ast.Decl(d.pos, d.name, adts.substitute(d.type, mapping), d.clock, d.static,
                     d.held) for d in decls]
