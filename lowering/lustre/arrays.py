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


def lower_array(low: NodeLowering, e: ast.Expr) -> list[SSAValue]:
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
