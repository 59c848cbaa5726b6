"""Merges and `current` in the Lustre lowering (`to_lus.NodeLowering`): `merge c
(true -> a) (false -> b)` on a bool or an enum clock (Kind 2's `merge(c; a; b)`
with branches put on their clocks: `branch`; a Kind 2 `when` block's merge with
`pre`, `->`, `fby` in a branch run there, `when_clock.py`), and `current x` on a
declared or written clock.

Example::

    y = merge c (true -> x when c) (false -> 0 when not c);   -- merge(low, e)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from steplus.dialects import lus
from steplus.lowering.lustre import ast
from steplus.lowering.lustre.program import type_name, walk
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import ClockSpec, NodeLowering


def merge(low: NodeLowering, e: ast.Merge) -> list[SSAValue]:
    """`merge c (tag -> e) ...`: each case once, one value per branch result."""
    if e.var not in low.env:
        raise LustreError(e.var_pos, f"unknown clock variable '{e.var}'")
    ltype = low.ltypes.get(e.var, type_name(low.env[e.var].type))
    tags: list[bool | str] = [True, False] if ltype == "bool" else (
        list[bool | str](low.prog.ctor_names(ltype)) if low.prog.is_enum(ltype) else [])
    if not tags:
        raise LustreError(e.var_pos, f"cannot merge on '{e.var}' of type {ltype}")
    branches: dict[bool | str, list[SSAValue]] = {}
    for tag, pos, expr in e.cases:
        if tag not in tags or tag in branches:
            why = "appears twice" if tag in branches else f"is not a value of {ltype}"
            shown = str(tag).lower() if isinstance(tag, bool) else tag
            raise LustreError(pos, f"merge case '{shown}' {why}")
        spec = (e.var, tag if isinstance(tag, bool) else tags.index(tag))
        branches[tag] = branch(low, expr, spec, e.clocked) if e.implicit else \
            low.expr(expr)
    missing = [str(t).lower() if isinstance(t, bool) else t for t in tags
               if t not in branches]
    if missing:
        raise LustreError(e.pos, f"merge on '{e.var}' misses case(s) {', '.join(missing)}")
    arity = {len(v) for v in branches.values()}
    if len(arity) != 1:
        raise LustreError(e.pos, "merge branches have different arities")
    out = []
    for k in range(arity.pop()):
        vals = [branches[t][k] for t in tags]
        if len({low.lt(v) for v in vals}) != 1:
            raise LustreError(e.pos, "merge branches have different types")
        if ltype == "bool":
            out.append(low.emit(lus.MergeOp(vals[0], vals[1],
                                             condition=low.env[e.var]), e.pos))
            continue
        out.append(low.merge_chain(e.var, vals, e.pos))
    return out


def branch(low: NodeLowering, expr: ast.Expr, spec: ClockSpec, clocked: bool = False
           ) -> list[SSAValue]:
    """A branch of Kind 2's `merge(c; a; b)`. Without any `when`, `merge`,
    activation or variable declared on a clock inside, it is implicitly on
    the branch's clock: with node calls inside (or, `clocked`, the branch
    of a Kind 2 `when` block, a `pre`, `->` or `fby`), its variables are
    sampled (the calls, `pre`s and arrows run on that clock only);
    otherwise it is computed on the merge's clock and sampled."""
    sub = list(walk(expr))
    if any(isinstance(x, ast.When | ast.Merge) or
           (isinstance(x, ast.Call) and x.activate is not None) or
           (isinstance(x, ast.Var) and x.name in low.decls
            and low.decls[x.name].clock is not None) for x in sub):
        return low.expr(expr)
    if any(isinstance(x, ast.Call) or clocked and (
            isinstance(x, ast.Unary) and x.op == "pre" or
            isinstance(x, ast.Binary) and x.op in ("->", "fby")) for x in sub):
        saved, low.sampling = low.sampling, spec
        try:
            return low.expr(expr)
        finally:
            low.sampling = saved
    return [low.sample(v, spec, expr.pos) for v in low.expr(expr)]


def current(low: NodeLowering, e: ast.Unary, v: SSAValue) -> SSAValue:
    """`current x` on a declared or explicit bool clock; 0/false before the first tick."""
    arg = e.arg
    clock = arg.clock if isinstance(arg, ast.When) else None
    if isinstance(arg, ast.Var) and arg.name in low.decls:
        clock = low.decls[arg.name].clock
    if clock is None:
        raise LustreError(e.pos, "unsupported construct: 'current' of an expression whose "
                          "clock is not declared (write 'current (x when c)' or "
                          "declare 'x: t when c')")
    var, tag = low.clock_spec(clock)
    if not isinstance(tag, bool):
        raise LustreError(e.pos, "unsupported construct: 'current' on an enumerated clock")
    zero = low.const({"real": 0.0, "bool": False}.get(low.lt(v), 0), low.lt(v), e.pos)
    prev = lus.FbyOp(zero, zero)
    held = low.emit(lus.WhenOp(low.emit(prev, e.pos), condition=low.env[var],
                                negated=tag), e.pos)
    t, f = (v, held) if tag else (held, v)
    out = low.emit(lus.MergeOp(t, f, condition=low.env[var]), e.pos)
    prev.operands[1] = out
    return out
