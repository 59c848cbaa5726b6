"""Arrays of the Lustre frontend, scalarized: an array of n elements is n lus
values (lus and sync stay scalar).

`Program.scalarize` turns an array variable `a: int^3` into the variables
`a[0]`, `a[1]`, `a[2]` (SSA names `a.0` ...; step-run's inputs `a.0=...`), so
a reference to `a` is its three values and `a = e` defines them. Then:

- `[e0, e1, e2]` is the elements' values, `e ^ n` n copies of e's;
- `a[k]` with a constant k is element k (out of bounds: an error); with a
  variable index `i`, `if i = 0 then a[0] else if i = 1 then a[1] ...`, the
  last element for an index out of bounds (where Lustre leaves it undefined);
  `a[j..k]` (constants) the elements j to k;
- `pre`, `->`, `fby`, `if`, `when`, `merge` and node arguments and results
  work element-wise, as on tuples;
- Heptagon's `map<<f, n>>(a, b)` instantiates `f` n times, on `a[i], b[i]`
  (a scalar argument is passed to every instance), its results the arrays
  of the instances' outputs; `fold<<f, n>>(a, init)` chains
  `acc = f(a[i], acc)` from `init`.

Example::

    node sum3(a: int^3) returns (s: int) let s = fold<<add, 3>>(a, 0); tel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.calls import lower_call
from steplus.lowering.lustre.program import MAX_ARRAY
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering


def _constant_int(low: NodeLowering, e: ast.Expr, what: str) -> int:
    v, t = low.prog.fold(e, low.local_consts)
    if t != "int" or not isinstance(v, int):
        raise LustreError(e.pos, f"{what} must be an int constant, not {t}")
    return v


def _size(low: NodeLowering, e: ast.Expr) -> int:
    n = _constant_int(low, e, "an array size")
    if not 1 <= n <= MAX_ARRAY:
        raise LustreError(e.pos, f"an array size must be from 1 to {MAX_ARRAY}, not {n}")
    return n


def path_of(low: NodeLowering, e: ast.Expr) -> str | None:
    """The variable part an expression names (`r.f`, `l[2].x`), if it names one."""
    if isinstance(e, ast.Var):
        return e.name if e.name in low.env or e.name in low.ast.arrays else None
    if isinstance(e, ast.Field):
        p = path_of(low, e.arg)
        return None if p is None else f"{p}.{e.field}"
    if isinstance(e, ast.Index) and e.hi is None:
        p = path_of(low, e.arg)
        if p is None:
            return None
        try:
            return f"{p}[{_constant_int(low, e.index, 'an index')}]"
        except LustreError:
            return None
    return None


def _read_path(low: NodeLowering, path: str, pos: int) -> list[SSAValue] | None:
    if path in low.ast.arrays:
        return [low.var(ast.Var(pos, n)) for n in low.ast.arrays[path]]
    if path in low.env:
        return [low.var(ast.Var(pos, path))]
    return None


def define_by_index(low: NodeLowering, eq: ast.Equation, base: str | None = None,
                    index: list[str] | None = None) -> None:
    """Kind 2's `A[i] = e`: `A[k] = e` with `i` the constant k, for each k
    (`A[i][j] = e`: each `A[k][l]`, i = k and j = l)."""
    name = eq.lhs[0]
    base = name.name if base is None else base
    if index is None:
        index = [eq.index] if isinstance(eq.index, str) else list(eq.index or [])
    var = index[0]
    count = 0
    while f"{base}[{count}]" in low.ast.arrays or f"{base}[{count}]" in low.env:
        count += 1
    if count == 0:
        raise LustreError(name.pos, f"'{base}' is not an array")
    saved = low.local_consts.get(var)
    try:
        for k in range(count):
            low.local_consts[var] = ast.ConstDecl(eq.pos, var, None, ast.Const(eq.pos, k, "int"))
            if len(index) > 1:
                define_by_index(low, eq, f"{base}[{k}]", index[1:])
                continue
            values = low.expr(eq.rhs)
            lhs = low.expand_lhs([ast.Name(name.pos, f"{base}[{k}]")])
            if len(values) != len(lhs):
                raise LustreError(eq.pos, f"{len(lhs)} variable(s) defined by an "
                                  f"expression with {len(values)} value(s)")
            for n, v in zip(lhs, values):
                low.define(n, v)
    finally:
        if saved is None:
            low.local_consts.pop(var, None)
        else:
            low.local_consts[var] = saved


def lower_array(low: NodeLowering, e: ast.Expr) -> list[SSAValue]:
    if isinstance(e, ast.Field | ast.Index) and (p := path_of(low, e)) is not None:
        vals = _read_path(low, p, e.pos)
        if vals is not None:
            return vals
        if isinstance(e, ast.Field):
            raise LustreError(e.pos, f"no field '{e.field}' in '{p.rsplit('.', 1)[0]}'")
    if isinstance(e, ast.Field):
        raise LustreError(e.pos, "unsupported construct: field access on an expression "
                          "(only on variables)")
    if isinstance(e, ast.RecordLit):
        return _record(low, e)
    if isinstance(e, ast.RecordUpdate):
        return _update(low, e)
    if isinstance(e, ast.ArrayLit):
        return [v for item in e.items for v in low.expr(item)]
    if isinstance(e, ast.Repeat):
        return low.expr(e.arg) * _size(low, e.count)
    if isinstance(e, ast.Index):
        return _index(low, e)
    assert isinstance(e, ast.Iterate)
    return _iterate(low, e)


def _index(low: NodeLowering, e: ast.Index) -> list[SSAValue]:
    vals = low.expr(e.arg)
    n = len(vals)
    if e.hi is not None:
        lo, hi = (_constant_int(low, x, "a slice bound") for x in (e.index, e.hi))
        if not 0 <= lo <= hi < n:
            raise LustreError(e.pos, f"slice [{lo}..{hi}] out of the bounds of an array of {n}")
        return vals[lo:hi + 1]
    try:
        k = _constant_int(low, e.index, "an index")
    except LustreError:
        k = None
    if k is not None:
        if not 0 <= k < n:
            raise LustreError(e.index.pos, f"index {k} out of the bounds of an array of {n}")
        return [vals[k]]
    i = low.expr1(e.index)
    low._want(e.index, i, "int", "an array index")
    out = vals[-1]
    for k in reversed(range(n - 1)):
        test = low.emit(arith.CmpiOp(i, low.const(k, "int", e.pos), "eq"), e.pos)
        out = low.emit(arith.SelectOp(test, vals[k], out), e.pos)
    return [out]


def _record(low: NodeLowering, e: ast.RecordLit) -> list[SSAValue]:
    fields = low.prog.record_fields(ast.TypeRef(e.pos, e.type))
    if fields is None:
        raise LustreError(e.pos, f"'{e.type}' is not a record type")
    given = {}
    for name, pos, x in e.inits:
        if name in given:
            raise LustreError(pos, f"field '{name}' is given twice")
        given[name] = (pos, x)
    out: list[SSAValue] = []
    for name, ftype in fields:
        if name not in given:
            raise LustreError(e.pos, f"field '{name}' of '{e.type}' is missing")
        pos, x = given.pop(name)
        vals = low.expr(x)
        if len(vals) != len(low.prog.leaves(ftype)):
            raise LustreError(pos, f"field '{name}' takes {len(low.prog.leaves(ftype))} "
                              f"value(s), not {len(vals)}")
        out.extend(vals)
    for name, (pos, _) in given.items():
        raise LustreError(pos, f"'{e.type}' has no field '{name}'")
    return out


def _update(low: NodeLowering, e: ast.RecordUpdate) -> list[SSAValue]:
    p = path_of(low, e.arg)
    if p is not None and p in low.ast.arrays:
        leaves = low.ast.arrays[p]
        vals = dict(zip(leaves, _read_path(low, p, e.pos) or []))
    else:  # a constant of a composite type: its leaves by their path suffixes
        decl = (low.local_consts.get(e.arg.name) or low.prog.consts.get(e.arg.name)
                if isinstance(e.arg, ast.Var) else None)
        if decl is None or decl.type is None:
            raise LustreError(e.pos, "unsupported construct: record update of an expression "
                              "(only of a record variable or constant)")
        p = ""
        leaves = [s for s, _ in low.prog.leaves(decl.type)]
        vals = dict(zip(leaves, low.expr(e.arg)))
    shown = p or getattr(e.arg, "name", "")
    for name, pos, x in e.updates:
        target = p + name if name.startswith("[") else f"{p}.{name}"
        parts = [leaf for leaf in leaves if leaf == target
                 or leaf.startswith((target + ".", target + "["))]
        if not parts:
            if name.startswith("["):
                raise LustreError(pos, f"index {name[1:-1]} out of the bounds of '{shown}'")
            raise LustreError(pos, f"no field '{name}' in '{shown}'")
        new = low.expr(x)
        if len(new) != len(parts):
            raise LustreError(pos, f"field '{name}' takes {len(parts)} value(s), not {len(new)}")
        vals.update(zip(parts, new))
    return [vals[leaf] for leaf in leaves]


def _iterate(low: NodeLowering, e: ast.Iterate) -> list[SSAValue]:
    n = _size(low, e.size)
    callee = low.prog.nodes.get(e.node)
    if callee is None:
        raise LustreError(e.node_pos, f"unknown node '{e.node}'")
    call = ast.Call(e.pos, e.node, e.node_pos, [])
    if e.kind == "fold":
        if len(e.args) < 2:
            raise LustreError(e.pos, "fold<<f, n>>(array..., init) takes an array and an "
                              "initial accumulator")
        arrays = [low.expr(a) for a in e.args[:-1]]
        acc = low.expr(e.args[-1])
        for k in range(n):
            acc = lower_call(low, call, [*_elements(e, arrays, k, n), *acc])
        return acc
    arrays = [low.expr(a) for a in e.args]
    results = [lower_call(low, call, _elements(e, arrays, k, n)) for k in range(n)]
    outs = len(results[0])
    return [results[k][j] for j in range(outs) for k in range(n)]


def _elements(e: ast.Iterate, arrays: list[list[SSAValue]], k: int, n: int) -> list[SSAValue]:
    """Element k of each array argument (a one-value argument goes to every instance)."""
    out = []
    for a, vals in zip(e.args, arrays):
        if len(vals) == n:
            out.append(vals[k])
        elif len(vals) == 1:
            out.append(vals[0])
        else:
            raise LustreError(a.pos, f"{e.kind}<<{e.node}, {n}>> takes arrays of {n} "
                              f"elements, not of {len(vals)}")
    return out
