"""`isel-verify`: prove with z3 that isel's result equals the input program.

For every function, the pass runs `isel` (same options) on a copy, evaluates
both versions symbolically (`symbolic`) on the function's (small) shapes and
asks z3 for an input on which some output element differs.  `unsat` proves the
mapping; a counterexample is an error located at the function.  Arithmetic is
abstracted by uninterpreted functions (`arith=uf`, the default: FlexASR and
HLSCNN numerics; sigmoid, tanh, exp, reciprocal, rsqrt and subtraction are
uninterpreted functions too, so the fused FlexASR mappings — LSTM cell, layer
norm, attention — are proved up to commutativity of + and ·) or exact 32-bit bit-vectors (`arith=bv`, VTA integers).

Example:

```
step-opt -p 'isel-verify{targets=flexasr}' small_maxpool.mlir
small_maxpool.mlir:2:1: remark: isel-verify: @f: 2 invocations (flexasr=2) equivalent to the input on all 16 outputs (z3: unsat)
```
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import z3
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass

from steplus.passes.diagnostics import OpDiagnosticError, emit
from steplus.passes.isel import _parse_targets, select_function
from steplus.passes.isel import symbolic as S

MAX_ELEMENTS = 30000
_UF_UNARY = {"tosa.sigmoid": "sigmoid", "tosa.tanh": "tanh", "tosa.exp": "exp", "tosa.reciprocal": "recip",
             "tosa.rsqrt": "rsqrt"}


class _Eval:
    def __init__(self, ctx: S.Ctx):
        self.ctx = ctx

    def run(self, fn: func.FuncOp, inputs):
        block = fn.body.blocks[0]
        env = dict(zip(block.args, inputs))
        for op in block.ops:
            if op.name == "func.return":
                return [env[v] for v in op.operands]
            res = self.eval(op, [env[v] for v in op.operands])
            for r, v in zip(op.results, res):
                env[r] = v
        raise OpDiagnosticError(fn, "isel-verify: function without func.return")

    @staticmethod
    def _vals(op):
        p = op.properties
        return list((p.get("value") or p.get("values")).get_values())

    def eval(self, op, a):
        n = op.name
        p = op.properties
        shape = tuple(op.results[0].type.get_shape()) if op.results and hasattr(op.results[0].type, "get_shape") else ()
        if n in ("arith.constant", "tosa.const") and "values" in p and not str(
                op.results[0].type.element_type).startswith("f"):
            return [None]  # tosa.mul's shift
        if n in ("arith.constant", "tosa.const") and len(set(self._vals(op))) == 1 and set(self._vals(op)) != {0.0}:
            arr = np.empty(shape, dtype=object)
            arr[...] = S.Sym(self.ctx.const(float(self._vals(op)[0])), self.ctx)
            return [arr]
        if n in ("arith.constant", "tosa.const"):
            vals = list(self._vals(op))
            arr = np.empty(shape, dtype=object)
            arr[...] = S.Sym(self.ctx.const(0), self.ctx) if set(vals) == {0.0} or set(vals) == {0} else None
            if not (set(vals) <= {0, 0.0}):
                raise OpDiagnosticError(op, "isel-verify: only zero constants are supported")
            return [arr]
        if n in ("tensor.empty", "tosa.const_shape"):
            return [None]
        if n == "linalg.matmul":
            y = S.matmul(a[0], a[1])
            return [y + a[2]]
        if n == "linalg.transpose":
            return [a[0].transpose(tuple(p["permutation"].get_values()))]
        if n == "tosa.reshape":
            return [a[0].reshape(shape)]
        if n in ("tosa.add", "linalg.add"):
            return [a[0] + a[1]]
        if n == "tosa.mul":
            return [a[0] * a[1]]
        if n == "tosa.sub":
            return [a[0] - a[1]]
        if n in _UF_UNARY:
            return [S.unary(_UF_UNARY[n], a[0])]
        if n == "tosa.reduce_sum" and p["axis"].value.data == 1 and a[0].ndim == 2:
            return [S.row_sums(a[0])]
        if n == "tosa.concat":
            return [np.concatenate(a, axis=p["axis"].value.data)]
        if n == "tensor.extract_slice":
            offs = tuple(p["static_offsets"].get_values())
            return [a[0][tuple(slice(o, o + k) for o, k in zip(offs, shape))]]
        if n == "tosa.max_pool2d":
            win = S.windows_nhwc(a[0], tuple(p["kernel"].get_values()), tuple(p["stride"].get_values()),
                                 tuple(p["pad"].get_values()))
            return [S.reduce_rows_max(win).reshape(shape)]
        if n == "tosa.reduce_max":
            return [S.reduce_rows_max(np.moveaxis(a[0], p["axis"].value.data, 0)).reshape(shape)]
        if n == "linalg.conv_2d_nchw_fchw":
            return [S.conv2d(a[0], a[1], tuple(p["strides"].get_values())) + a[2]]
        if n == "ila.windows":
            return [S.windows_nhwc(a[0], tuple(p["kernel"].get_values()), tuple(p["stride"].get_values()),
                                   tuple(p["pad"].get_values()))]
        if n == "ila.im2col":
            from steplus.runtime.ila.host import im2col_nchw

            return [im2col_nchw(a[0], tuple(p["kernel"].get_values()), tuple(p["stride"].get_values()))]
        if n == "ila.invoke":
            attrs = {k: tuple(v.get_values()) for k, v in op.attributes.items() if hasattr(v, "get_values")}
            attrs |= {k: v.value.data for k, v in op.attributes.items() if k == "epsilon"}
            return [S.accel_spec(p["callee"].data, a, attrs).reshape(shape)]
        raise OpDiagnosticError(op, f"isel-verify: no symbolic semantics for '{n}'")


def prove(fn_ref: func.FuncOp, fn_sel: func.FuncOp, mode: str):
    """(status, n_outputs): 'unsat' proves equality of every output element."""
    ctx = S.Ctx(mode)
    args = fn_ref.body.blocks[0].args
    total = sum(int(np.prod(a.type.get_shape())) for a in args)
    if total > MAX_ELEMENTS:
        raise OpDiagnosticError(fn_ref, f"isel-verify: {total} input elements exceed {MAX_ELEMENTS}; "
                                        "verify at small shapes")
    inputs = [S.tensor(ctx, a.name_hint or f"arg{a.index}", a.type.get_shape()) for a in args]
    ref = _Eval(ctx).run(fn_ref, inputs)
    sel = _Eval(ctx).run(fn_sel, inputs)
    diffs = []
    for r, s in zip(ref, sel):
        for x, y in zip(np.asarray(r).reshape(-1), np.asarray(s).reshape(-1)):
            if x is S.PAD or y is S.PAD:
                if x is not y:
                    diffs.append(z3.BoolVal(True))  # padding leaked into an output
            elif x is not y and not z3.eq(x.t, y.t):
                diffs.append(x.t != y.t)
    n = sum(np.asarray(r).size for r in ref)
    if not diffs:
        return "unsat", n
    solver = z3.Solver()
    solver.add(z3.Or(*diffs))
    return str(solver.check()), n


@dataclass(frozen=True)
class IselVerifyPass(ModulePass):
    """Prove with z3 that isel preserves each function's meaning (small shapes)."""

    name = "isel-verify"

    targets: tuple[str, ...] = ("flexasr", "hlscnn", "vta")
    mode: str = "flexible"
    arith: str = "uf"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.arith not in ("uf", "bv"):
            raise OpDiagnosticError(op, f"isel-verify: arith must be 'uf' or 'bv', got '{self.arith}'")
        targets = _parse_targets(self.targets, op)
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            sel = fn.clone()
            select_function(sel, targets, self.mode == "flexible")
            calls = Counter(o.callee.data.split(".")[0] for o in sel.walk() if o.name == "ila.invoke")
            status, n = prove(fn, sel, self.arith)
            name = fn.sym_name.data
            if status != "unsat":
                raise OpDiagnosticError(fn, f"isel-verify: @{name}: selected program differs from the input "
                                            f"(z3: {status})")
            per = ",".join(f"{k}={v}" for k, v in sorted(calls.items())) or "none"
            emit(fn, "remark", f"isel-verify: @{name}: {sum(calls.values())} invocations ({per}) equivalent "
                               f"to the input on all {n} outputs (z3: unsat)")
