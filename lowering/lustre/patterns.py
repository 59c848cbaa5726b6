"""Kind 2 `match` on algebraic data types and enumerations (adts.py).

`match e with | C(x, _) : e1 | D(E(n)) : e2 | _ : e3 end` is a chain of `if`
on the constructor tags, the first case that matches giving the value:
`if e is C then e1 else if e is D(E(..)) then e2 else e3`, every case's
expression computed (they are pure). A pattern is a constructor applied to
patterns, a variable (bound to that part of the value, a composite one by its
leaves) or `_`. Kind 2 rejects a `match` that misses a value: so does this
one, with the usefulness check of pattern matrices (Maranget, "Warnings for
pattern matching", JFP 2007), naming a constructor no case covers.

Example::

    datatype Opt<T> = None | Some (v: T);
    node get(o: Opt<int>) returns (x: int)
    let x = match o with | Some(v) : v | None : -1 end; tel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.adts import Instance, _info_of_value, ctor_info, register_parts
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering

MAX_MATCH_WORK = 20000
"""Bound on the steps of the exhaustiveness check of one `match`."""


Binding = tuple[str, list[SSAValue], ast.TypeRef]


def _pattern(low: NodeLowering, p: ast.Pattern, vals: list[SSAValue], ref: ast.TypeRef | None,
             info: tuple[str, list[str], Instance | None] | None,
             binds: list[Binding]) -> SSAValue | None:
    """The condition under which `vals` (of type `ref`) match `p` (None: always),
    adding the variables `p` binds to `binds`."""
    if p.args is None and (info is None or p.name not in info[1]):
        if p.name != "_":
            if ref is None:
                raise LustreError(p.pos, f"cannot bind '{p.name}' here")
            binds.append((p.name, vals, ref))
        return None
    if info is None:
        raise LustreError(p.pos, f"'{p.name}' is not a constructor of this value's type")
    tname, names, inst = info
    if p.name not in names:
        raise LustreError(p.pos, f"'{p.name}' is not a constructor of '{tname}'")
    index = names.index(p.name)
    fields = inst.fields[index] if inst is not None else []
    subs = p.args or []
    if len(subs) != len(fields):
        raise LustreError(p.pos, f"constructor '{p.name}' has {len(fields)} field(s), the "
                          f"pattern gives {len(subs)}")
    cond = low.emit(arith.CmpiOp(vals[0], low.const(index, tname, p.pos), "eq"), p.pos)
    for sub, (_, ft), (start, end) in zip(subs, fields, inst.spans[index] if inst else []):
        c = _pattern(low, sub, vals[start:end], ft, ctor_info(low.prog, ft), binds)
        if c is not None:
            cond = low.emit(arith.AndIOp(cond, c), sub.pos)
    return cond


Saved = tuple[dict[str, SSAValue | None], dict[str, list[str] | None]]


def _bind(low: NodeLowering, binds: list[Binding]) -> Saved:
    """Make pattern variables visible (composite ones by their leaves); returns
    what they shadowed, for `_unbind`."""
    env: dict[str, SSAValue | None] = {}
    arrays: dict[str, list[str] | None] = {}
    for name, vals, ref in binds:
        parts = low.prog.leaves(ref)
        names = [name + s for s, _ in parts]
        for key in [name, *names]:
            env.setdefault(key, low.env.get(key))
            arrays.setdefault(key, low.ast.arrays.get(key))
        low.ast.arrays.pop(name, None)
        for leaf, v in zip(names, vals):
            low.env[leaf] = v
        if parts != [("", ref)]:
            register_parts(low.ast.arrays, name, parts, low.prog)
    return env, arrays


def _unbind(low: NodeLowering, saved: Saved) -> None:
    env, arrays = saved
    for key, value in env.items():
        if value is None:
            low.env.pop(key, None)
        else:
            low.env[key] = value
    for key, parts in arrays.items():
        if parts is None:
            low.ast.arrays.pop(key, None)
        else:
            low.ast.arrays[key] = parts


def lower_match(low: NodeLowering, e: ast.Match) -> list[SSAValue]:
    """`match e with | p1 : e1 | ... end`: `if p1 matches then e1 else ...`."""
    vals = low.expr(e.arg)
    try:
        info = _info_of_value(low, vals[0])
    except LustreError:
        raise LustreError(e.arg.pos, f"'match' needs a datatype or enumeration value, not "
                          f"{low.lt(vals[0])}") from None
    inst = info[2]
    if inst is not None and len(vals) != len(inst.leaves):
        raise LustreError(e.arg.pos, "'match' needs one datatype value")
    ref = inst.ref if inst is not None else ast.TypeRef(e.arg.pos, info[0])
    arms: list[tuple[SSAValue | None, list[SSAValue], int]] = []
    for pattern, body in e.cases:
        binds: list[Binding] = []
        cond = _pattern(low, pattern, vals, ref, info, binds)
        saved = _bind(low, binds)
        try:
            arms.append((cond, low.expr(body), body.pos))
        finally:
            _unbind(low, saved)
        if cond is None:
            break  # later cases are never taken
    _check_exhaustive(low, e, [p for p, _ in e.cases[:len(arms)]], ref)
    out = arms[-1][1]
    for cond, values, pos in reversed(arms[:-1]):
        assert cond is not None
        out = [low.emit(arith.SelectOp(cond, a, b), pos)
               for a, b in low._pairs(e, values, out)]
    return out


def _check_exhaustive(low: NodeLowering, e: ast.Match, patterns: list[ast.Pattern],
                      ref: ast.TypeRef) -> None:
    """Kind 2 rejects a `match` that misses a value: the usefulness check of
    pattern matrices (Maranget), bounded by MAX_MATCH_WORK steps."""
    work = [0]

    def info_of(t: ast.TypeRef | None):
        return None if t is None else ctor_info(low.prog, t)

    def covers(rows: list[list[ast.Pattern | None]], cols: list[ast.TypeRef | None]
               ) -> str | None:
        """None if the rows cover every value of the columns, else a value they miss."""
        work[0] += 1
        if work[0] > MAX_MATCH_WORK:
            raise LustreError(e.pos, "'match' too large to check for exhaustiveness")
        if not cols:
            return None if rows else "_"
        info = info_of(cols[0])

        def wild(p: ast.Pattern | None) -> bool:
            return p is None or (p.args is None and (info is None or p.name not in info[1]))

        if info is None:
            return covers([r[1:] for r in rows if wild(r[0])], cols[1:])
        _, names, inst = info
        for ci, cname in enumerate(names):
            fields = [ft for _, ft in inst.fields[ci]] if inst is not None else []
            spec: list[list[ast.Pattern | None]] = []
            for r in rows:
                if wild(r[0]):
                    spec.append([None] * len(fields) + r[1:])
                elif r[0] is not None and r[0].name == cname:
                    spec.append(list(r[0].args or []) + r[1:])
            missed = covers(spec, [*fields, *cols[1:]])
            if missed is not None:
                return cname if not fields else f"{cname}(...)"
        return None

    missed = covers([[p] for p in patterns], [ref])
    if missed is not None:
        raise LustreError(e.pos, f"'match' is not exhaustive: no case for {missed}")
