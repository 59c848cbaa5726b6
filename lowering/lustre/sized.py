"""Kind 2 nodes whose arrays are sized by a `const` node parameter, and Kind 2
recursive functions (`function rec`), monomorphized per constant argument.

`node f(const n: int; x: int^n) returns (y: int^n)` cannot be scalarized
before `n` is known. Like a polymorphic node (`poly.py`) it is not lowered on
its own; each call `f(3, a)` whose size arguments are compile-time constants
instantiates `f$n_3` (a negative size is written `m`: `f$n_m3`, never a valid
array size anyway), a copy of `f` where every read of `n` is the constant and
`n` is no parameter any more, lowered at its first use. A size argument that
is not a compile-time constant (a flow, an input) is a located error naming
the parameter.

A node is *sized* when one of its `const` parameters appears in an array size
(`t ^ n`), a subrange bound, a repetition `e ^ n` or an iterator's size
(`map<<f, n>>`) anywhere in the node.

A recursive function `function rec f(n: int) returns (m: int)` is
instantiated the same way at the constant values of *all* its arguments:
`f(5)` is `f$n_5`, a copy with `n` the constant 5, where a lazy `when c then
a else b` (or an `if`) whose condition is now constant keeps only its branch;
the recursive calls in it instantiate `f$n_4` ... The depth is thus a
compile-time constant, unrolled up to 64 instances of one function (a located
error past it); a call with an argument that is no compile-time constant is a
located error naming the construct.

Example::

    node slide(const n: int; s: int) returns (ok: bool^n);  -- not lowered
    node top(s: int) returns (ok: bool^3);
    let ok = slide(3, s); tel                               -- slide$n_3
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.oracles import node_roots, rewrite
from steplus.lowering.lustre.transform import F32_MAX, LustreError, _unsupported

if TYPE_CHECKING:
    from steplus.lowering.lustre.program import Program
    from steplus.lowering.lustre.to_lus import NodeLowering

MAX_INSTANCES = 1000
"""Instances of sized nodes one program may create."""


class NotConstantError(LustreError):
    """`Program.fold` of an expression that is no constant (a flow, an unknown
    name), as opposed to a constant it cannot fold (out of range, division by 0)."""
MAX_UNROLL = 64
"""Instances of one recursive function (one per constant argument) a program may create."""
MAX_DEPTH = 64
"""Levels a recursive call with non-constant arguments is unrolled to (`_by_depth`)."""
_DEPTH = re.compile(r"\$depth_(\d+)$")


def _objects(root: object) -> Iterator[object]:
    """Every dataclass object and list reachable from `root` (iteratively)."""
    stack: list[object] = [root]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, list | tuple | dict):
            stack.extend(x.values() if isinstance(x, dict) else x)
            continue
        if not dataclasses.is_dataclass(x) or isinstance(x, type):
            continue
        yield x
        stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))


def _names(e: ast.Expr | None) -> set[str]:
    return {x.name for x in _objects(e) if isinstance(x, ast.Var)} if e is not None else set()


def size_params(node: ast.Node) -> list[str]:
    """The `const` parameters of `node` that size something (see the module doc)."""
    statics = {d.name for d in node.inputs if d.static}
    if not statics:
        return []
    used: set[str] = set()
    for x in _objects([node.inputs, node.outputs, node.locals, node.equations,
                       node.observers, node.modes, node.consts]):
        if isinstance(x, ast.TypeRef):
            used |= _names(x.size)
            for b in x.bounds or ():
                used |= _names(b)
        elif isinstance(x, ast.Repeat):
            used |= _names(x.count)
        elif isinstance(x, ast.Iterate):
            used |= _names(x.size)
    return [d.name for d in node.inputs if d.static and d.name in used]


def _replace_vars(root: object, values: dict[str, ast.Const]) -> None:
    """Replace every read of a name of `values` by its constant, in place."""
    def const(v: object) -> object:
        if isinstance(v, ast.Var) and v.name in values:
            return dataclasses.replace(values[v.name], pos=v.pos)
        if isinstance(v, tuple) and v and isinstance(v[-1], ast.Var) and v[-1].name in values:
            return (*v[:-1], const(v[-1]))  # a (name, pos, expr) item
        if isinstance(v, tuple) and any(isinstance(b, ast.Var) for b in v):
            return tuple(const(b) for b in v)  # subrange bounds
        return v

    for x in list(_objects(root)):
        for name, v in list(vars(x).items()):
            if isinstance(v, list):
                v[:] = [const(item) for item in v]
            else:
                new = const(v)
                if new is not v:
                    setattr(x, name, new)


def _fold_branches(prog: Program, node: ast.Node) -> None:
    """Kind 2's lazy `when c then a else b` (a merge on the local `c`) whose
    condition is now a constant: the branch it takes, alone (so a recursive
    call in the other branch is not unrolled)."""
    consts = {c.name: c for c in node.consts}
    conds: dict[str, bool] = {}
    for eq in node.equations:
        if isinstance(eq, ast.Equation) and len(eq.lhs) == 1 and eq.index is None:
            try:
                v, t = prog.fold(eq.rhs, consts)
            except LustreError:
                continue
            if t == "bool":
                conds[eq.lhs[0].name] = bool(v)

    def pick(e: ast.Expr) -> ast.Expr | None:
        if isinstance(e, ast.Merge) and e.implicit and e.var in conds:
            return next((x for c, _, x in e.cases if c is conds[e.var]), None)
        return None

    if conds:
        for root, put in node_roots(node):
            put(rewrite(root, pick))


def _instance_name(name: str, values: list[tuple[str, object]]) -> str:
    parts = [f"{p}_{str(v).replace('-', 'm')}" for p, v in values]
    return name + "$" + "_".join(parts)


def instantiate(low: NodeLowering, e: ast.Call) -> ast.Call:
    """The call `e` of a sized node, made a call of its instance at the sizes
    `e` gives (created, scalarized and registered on first use)."""
    prog: Program = low.prog
    node = prog.sized_nodes[e.node]
    params = [p for p in node.inputs if not p.witness]
    if len(e.args) != len(params):
        raise LustreError(e.pos, f"node '{e.node}' takes {len(params)} argument(s), "
                          f"got {len(e.args)}")
    values: list[tuple[str, object]] = []
    consts: dict[str, ast.Const] = {}
    rest: list[ast.Expr] = []
    for p, a in zip(params, e.args):
        if not (p.static or node.rec):
            rest.append(a)
            continue
        try:
            v, t = prog.fold(a, low.local_consts)
        except NotConstantError:
            if node.rec and node.decreases is not None:
                return _by_depth(low, e, node)
            if node.rec:
                raise LustreError(a.pos, _unsupported(
                    f"recursive functions ('rec') called with an argument that is not a "
                    f"compile-time constant ('{p.name}' of '{e.node}'): they are unrolled "
                    "per constant argument")) from None
            raise LustreError(a.pos, f"the size parameter '{p.name}' of node '{e.node}' "
                              "must be a compile-time constant here (a literal or a "
                              "constant expression): its arrays are sized by it") from None
        except LustreError as err:  # a constant, out of range (2^31) or not foldable (1 / 0)
            raise LustreError(err.pos, f"the {'' if node.rec else 'size '}parameter "
                              f"'{p.name}' of '{e.node}': {err.message}") from None
        want = prog.resolve_type(p.type)
        if t != want:
            raise LustreError(a.pos, f"the parameter '{p.name}' of '{e.node}' is {want}, "
                              f"not {t}")
        if not isinstance(v, bool | int | float):
            raise LustreError(a.pos, f"the parameter '{p.name}' of '{e.node}' must be a "
                              "scalar constant")
        values.append((p.name, v))
        consts[p.name] = ast.Const(a.pos, v, t)
    inst = _instance_name(e.node, values)
    if node.rec and inst in prog.nodes:
        _check_no_cycle(prog, low.ast.name, inst, e, values)
    if inst not in prog.nodes:
        if len(prog.sized_instances) >= MAX_INSTANCES:
            raise LustreError(e.pos, f"more than {MAX_INSTANCES} instances of nodes sized "
                              "by a parameter")
        if node.rec:
            unrolled = prog.rec_instances.get(e.node, 0) + 1
            if unrolled > MAX_UNROLL:
                raise LustreError(e.pos, f"the recursive function '{e.node}' is unrolled past "
                                  f"{MAX_UNROLL} instances (one per constant argument): its "
                                  "recursion does not stop at a compile-time constant here")
            prog.rec_instances[e.node] = unrolled
            prog.rec_callers[inst] = low.ast.name
        copied = copy.deepcopy(node)
        copied.inputs = [d for d in copied.inputs if not (d.static or node.rec)]
        _replace_vars(copied, consts)
        copied.name, copied.rec = inst, False
        _fold_branches(prog, copied)
        prog.nodes[inst] = copied
        prog.sized_instances.add(inst)
        prog.scalarize(copied)
        prog.add_observers(copied)
        if copied.observers:  # its contract and properties: `f$n_3$check` (step-run --check)
            low.request_check(inst)
    return dataclasses.replace(e, node=inst, args=rest)


def _check_no_cycle(prog: Program, caller: str, inst: str, e: ast.Call,
                    values: list[tuple[str, object]]) -> None:
    """A located error if `caller` was itself made (through recursive instances)
    by `inst`: the call repeats an enclosing call's constant arguments, so the
    recursion never reaches its base case."""
    chain, here = [caller], caller
    while here != inst and here in prog.rec_callers:  # a tree: each instance made once
        here = prog.rec_callers[here]
        chain.append(here)
    if here != inst or any(isinstance(v, float) and abs(v) > F32_MAX for _, v in values):
        return  # no cycle; or a real past f32 (1e39 - 1.0 is 1e39), reported where the instance reads it
    args = ", ".join(f"{p} = {str(v).lower() if isinstance(v, bool) else v}" for p, v in values)
    path = " -> ".join(f"'{n}'" for n in [*reversed(chain), inst])
    raise LustreError(e.pos, f"the recursive function '{e.node}' calls itself with the same "
                      f"constant arguments ({args}): its recursion never ends ({path})")


# -- recursive calls with non-constant arguments: unrolled by depth -----------------

def _by_depth(low: NodeLowering, e: ast.Call, node: ast.Node) -> ast.Call:
    """A call of the recursive function `node` whose arguments are flows: a call
    of `f$depth_K`, a copy of f (arguments kept) whose recursive calls are of
    level K - 1; from the caller, level MAX_DEPTH - 1; past level 0, `f$depth_end`,
    whose results are 0 / 0.0 / false. The caller assumes the call's `decreases`
    measure below MAX_DEPTH (`depth_assumptions`), so within the assumptions
    (`step-run --check`) the recursion ends before `f$depth_end`."""
    prog: Program = low.prog
    here = _DEPTH.search(low.ast.name)
    level = MAX_DEPTH - 1 if here is None else int(here.group(1)) - 1
    inst = f"{e.node}$depth_{level}" if level >= 0 else f"{e.node}$depth_end"
    if inst not in prog.nodes:
        calls = [x for x in _objects(node.equations) if isinstance(x, ast.Call)
                 and x.node in prog.sized_nodes and prog.sized_nodes[x.node].rec]
        if len(calls) > 1:  # the instances would double per level: 2^64
            raise LustreError(e.pos, _unsupported(
                f"a recursive function ('rec') making {len(calls)} recursive calls "
                f"('{e.node}') called with arguments that are not compile-time constants: "
                "only one recursive call per function is unrolled by depth"))
        copied = copy.deepcopy(node)
        copied.name, copied.rec, copied.observers, copied.modes = inst, False, [], {}
        if level < 0:
            copied.locals, copied.equations = [], []
            for d in copied.outputs:
                t = prog.resolve_type(d.type)
                if t not in ("int", "real", "bool"):
                    raise LustreError(e.pos, _unsupported(
                        f"a recursive function ('rec') with a result of type {t} called with "
                        "arguments that are not compile-time constants"))
                zero = {"int": 0, "real": 0.0, "bool": False}[t]
                copied.equations.append(ast.Equation(d.pos, [ast.Name(d.pos, d.name)],
                                                     ast.Const(d.pos, zero, t)))
        prog.nodes[inst] = copied
        prog.sized_instances.add(inst)
        prog.scalarize(copied)
    return dataclasses.replace(e, node=inst)


DEPTH_NAME = re.compile(r"recursion of '(.*)' within ([0-9]+) levels \(its decreases "
                        r"measure below [0-9]+\)")
"""The name of a depth assumption (`depth_assumptions`): the function, the levels."""


def depth_name(function: str) -> str:
    """The name of the assumption that a call of `function` stays within its levels."""
    return (f"recursion of '{function}' within {MAX_DEPTH} levels (its decreases "
            f"measure below {MAX_DEPTH})")


def depth_observers_of(observers: list[tuple[str, str, int]]
                       ) -> list[tuple[int, str, str, int, int]]:
    """The depth assumptions among a check node's observers (kind, name, source
    offset of the call): (index among them, "recursion", function, levels, offset).
    A plain run watches them (`tools/lus_check.CapacityWatch`): past its levels
    the unrolled recursion would read `f$depth_end`'s zeros."""
    out: list[tuple[int, str, str, int, int]] = []
    for j, (kind, name, pos) in enumerate(observers):
        m = DEPTH_NAME.fullmatch(name)
        if kind == "assume" and m is not None:
            out.append((j, "recursion", m.group(1), int(m.group(2)), pos))
    return out


def depth_assumptions(prog: Program, node: ast.Node) -> None:
    """Each call in `node` of a recursive function with a `decreases` measure
    whose arguments are not all compile-time constants: an assumption of `node`,
    the measure at the call's arguments below MAX_DEPTH (so the call's recursion
    stays within its unrolled levels; Kind 2 proves that the measure decreases at
    each recursive call)."""
    if node.rec:
        return
    consts = {c.name: c for c in node.consts}
    found: list[ast.Observer] = []
    for x in _objects([r for r, _ in node_roots(node)]):  # equations, observers, modes
        if not isinstance(x, ast.Call) or x.node not in prog.sized_nodes:
            continue
        f = prog.sized_nodes[x.node]
        if not f.rec or f.decreases is None:
            continue
        try:
            for a in x.args:
                prog.fold(a, consts)
            continue  # constant: unrolled per value
        except NotConstantError:
            pass
        except LustreError:
            continue  # reported where the call is lowered
        params = [p.name for p in f.inputs if not p.witness]
        values = dict(zip(params, x.args))
        measure = copy.deepcopy(f.decreases)
        reads = {id(v) for v in _objects(measure)
                 if isinstance(v, ast.Var) and v.name in values}  # f's parameters
        measure = rewrite(measure, lambda v, reads=reads, values=values: copy.deepcopy(
            values[v.name]) if id(v) in reads and isinstance(v, ast.Var) else None)
        name = depth_name(x.node)
        found.append(ast.Observer(x.pos, "assume", name, ast.Binary(
            x.pos, "<", measure, ast.Const(x.pos, MAX_DEPTH, "int"))))
    node.observers.extend(found)
