"""Lower Lustre node calls to `lus.instance`: plain, reset and activated calls.

- `f(a)` -> `lus.instance @f(a)`; in a reset variant `@g$reset` every instance
  is reset with it: `lus.instance @f$reset(a, %reset)`;
- `(restart f every r)(a)` / `f(a) every r` -> `lus.instance @f$reset(a, r)`;
- `(activate f every c)(a)` -> `lus.instance @f(a when c)` (results on `c`);
  with `initial default (d)` or as `condact(c, f(a), d)` the results are held
  on the caller's clock: `merge c res ((d fby out) when not c)`. A node without
  inputs is activated through its `$tick` variant, which takes a dummy input.

Example: `y = condact(c, Count(), 0);` lowers to the body of `@main`:

```text
lus.node @Count$tick(%tick: i1) -> (i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %p = lus.fby %c0 %n : i32
  %n = arith.addi %p, %c1 : i32
  lus.yield (%n : i32)
}
lus.node @main(%c: i1) -> (i32) {
  %true = arith.constant true
  %c0 = arith.constant 0 : i32
  %t = lus.when %c %true : i1
  %r = lus.instance @Count$tick(%t) : (i1) -> i32
  %h = lus.when not %c %prev : i32
  %y = lus.merge %c %r %h : i32
  %prev = lus.fby %c0 %y : i32
  lus.yield (%y : i32)
}
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from steplus.dialects import lus
from steplus.lowering.lustre import ast
from steplus.lowering.lustre.parser import LustreError
from steplus.lowering.lustre.program import NodeKey, mlir_type, type_name
from steplus.lowering.lustre.sized import instantiate

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering


def _condition(low: NodeLowering, e: ast.Expr) -> tuple[SSAValue, bool]:
    """An activation condition as (bool flow, negated)."""
    negated = False
    while isinstance(e, ast.Unary) and e.op == "not":
        negated, e = not negated, e.arg
    c = low.expr1(e)
    if type_name(c.type) != "bool":
        raise LustreError(e.pos, f"an activation condition must be bool, not "
                          f"{type_name(c.type)}")
    return c, negated


def lower_call(low: NodeLowering, e: ast.Call, values: list[SSAValue] | None = None
               ) -> list[SSAValue]:
    """A node instance; `values`, if given, are its arguments already lowered
    (the array iterators call a node once per element)."""
    if e.node in low.prog.sized_nodes:  # arrays sized by a `const` parameter
        if values is not None:
            raise LustreError(e.node_pos, f"unsupported construct: an iterator over "
                              f"'{e.node}', whose arrays are sized by a parameter")
        e = instantiate(low, e)
    callee = low.prog.nodes.get(e.node)
    if callee is None:
        raise LustreError(e.node_pos, f"unknown node '{e.node}'")
    args = values if values is not None else [v for a in e.args for v in low.expr(a)]
    params = [p for p in callee.inputs if not p.witness]  # witnesses: n$check only
    if len(args) != len(params):
        raise LustreError(e.pos, f"node '{e.node}' takes {len(params)} argument(s), "
                          f"got {len(args)}")
    for k, (a, p) in enumerate(zip(args, params)):
        want = low.prog.resolve_type(p.type)
        if low.lt(a) != want:
            raise LustreError(e.pos, f"argument {k + 1} of '{e.node}' must be "
                              f"{want}, not {low.lt(a)}")
    # lus passes the static parameters first.
    args = [a for a, p in zip(args, params) if p.static] + [
        a for a, p in zip(args, params) if not p.static]
    reset = low.reset
    if low.sampling is not None and reset is not None:
        reset = low.sample(reset, low.sampling, e.pos)
    if e.reset is not None:
        r = low.expr1(e.reset)
        if type_name(r.type) != "bool":
            raise LustreError(e.reset.pos, f"a reset condition must be bool, not "
                              f"{type_name(r.type)}")
        reset = r if reset is None else low.emit(arith.OrIOp(reset, r), e.pos)
    cond = _condition(low, e.activate) if e.activate is not None else None
    key = NodeKey(e.node, reset=reset is not None, tick=cond is not None and not params)
    extra = [reset] if reset is not None else []
    if key.tick:
        extra.append(low.const(True, "bool", e.pos))
    operands = args + extra
    if cond is not None:
        c, negated = cond
        operands = [low.emit(lus.WhenOp(v, condition=c, negated=negated), e.pos)
                    for v in operands]
    low.request(key)
    out_types = [mlir_type(low.prog.resolve_type(p.type)) for p in callee.outputs]
    inst = lus.InstanceOp(key.symbol, operands, out_types)
    low.block.add_op(inst)
    low.offsets[inst] = e.pos
    results: list[SSAValue] = list(inst.results)
    for r, p in zip(results, callee.outputs):
        low.tag(r, low.prog.resolve_type(p.type))
    if cond is None or e.default is None:
        return results
    return _hold(low, e, results, cond)


def _hold(low: NodeLowering, e: ast.Call, results: list[SSAValue],
          cond: tuple[SSAValue, bool]) -> list[SSAValue]:
    """Activated results held on the caller's clock, `default` before the first one."""
    defaults = [v for d in e.default or [] for v in low.expr(d)]
    if len(defaults) != len(results):
        raise LustreError(e.pos, f"node '{e.node}' has {len(results)} output(s) but "
                          f"{len(defaults)} default value(s)")
    c, negated = cond
    out = []
    for r, d in zip(results, defaults):
        if low.lt(d) != low.lt(r):
            raise LustreError(e.pos, f"default value of type {low.lt(d)} for an "
                              f"output of type {low.lt(r)}")
        prev = lus.FbyOp(d, d)
        low.emit(prev, e.pos)
        held = low.emit(lus.WhenOp(prev.result, condition=c, negated=not negated), e.pos)
        t, f = (held, r) if negated else (r, held)
        merged = low.emit(lus.MergeOp(t, f, condition=c), e.pos)
        prev.operands[1] = merged
        out.append(merged)
    return out
