"""The scalar bodies of `linalg.generic`s -> expression trees over step library functions.

A body is read into a tree of tuples: `("in", i)` (the i-th input), `("const",
c)` (a scalar constant, from the body or from outside it), and `(kind, *args)`
for `arith.addf/subf/mulf/divf/negf/maximumf/maxnumf`, `math.exp/rsqrt/sqrt`,
`math.fpowi`/`math.powf` by 2, `arith.select` of an `arith.cmpf` between the
two values it selects from (torch-mlir's relu and clamp: `max`/`min`), a 0/1 mask
of an `arith.cmpf` (`arith.uitofp` of it, `arith.select` of 1.0 and 0.0: the
library's `eq`/`ne`/`lt`/`le`/`gt`/`ge`, `gt_scalar[c]` with a constant), the
`arith.truncf`/`extf` of a constant and the
`arith.extf` of an input (bf16 -> f32: tiles compute in f32).
`match_functions` then rewrites torch's idioms into library calls: sigmoid
(`1 / (1 + exp(-x))`), silu (`x * sigmoid(x)`, `x / (1 + exp(-x))`), exact GELU
(`x * 0.5 * (1 + erf(x * 0.70710678))`), and an
operation with one scalar constant into a parametric function
(`x + 1e-06` -> `("add_scalar[1e-06]", x)`, `x / 16` -> `div_scalar[16.0]`).

Example: torch-mlir's body of `x.pow(2)` (`math.fpowi %in, %c2_i64`) gives
`("square", ("in", 0))`; `x + eps` with `eps` an f64 constant truncated to
f32 gives `("add_scalar[9.999999974752427e-07]", ("in", 0))`.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue

from steplus.dialects.semantics.arith import FLOAT_BINARY, UNARY
from steplus.dialects.semantics.domain import BINARY, COMPARE
from steplus.dialects.step.functions import COMPARES, get_function, member_name
from steplus.utils.diagnostics import OpDiagnosticError

_NAN_AGNOSTIC = {"maxnum": "max", "minnum": "min"}  # tiles hold no NaN: maxnumf is max
# A body op lowers to the step library function named by its kind in the op-semantics registry
# (dialects/semantics/arith.py: arith.addf is "add", math.exp "exp"), when the library has one;
# a power is read as a square (below).
BODY: dict[type[Operation], str] = {
    cls: _NAN_AGNOSTIC.get(kind, kind) for cls, kind in {**FLOAT_BINARY, **UNARY, math.FPowIOp: "pow"}.items()
    if kind == "pow" or get_function(_NAN_AGNOSTIC.get(kind, kind)) is not None}
SUPPORTED_BODY = ("arith.addf, arith.subf, arith.mulf, arith.divf, arith.negf, "
                  "arith.maximumf, arith.minimumf, math.exp, math.rsqrt, math.erf, math.tanh, "
                  "math.fpowi/powf by 2, arith.cmpf as a 0/1 mask (arith.uitofp, "
                  "arith.select of 1.0 and 0.0)")
# an operation with a scalar constant operand: (kind, constant first?) -> family
SCALAR = {("add", False): "add_scalar", ("add", True): "add_scalar",
          ("mul", False): "mul_scalar", ("mul", True): "mul_scalar",
          ("sub", False): "sub_scalar", ("sub", True): "rsub_scalar",
          ("div", False): "div_scalar", ("div", True): "rdiv_scalar",
          ("max", False): "max_scalar", ("max", True): "max_scalar",
          ("min", False): "min_scalar", ("min", True): "min_scalar"}


def _const(value, op) -> float:
    v = float(value)
    if not np.isfinite(v):
        raise OpDiagnosticError(op, f"a non-finite scalar constant ({v}) in an element-wise op")
    return v


def body_tree(op: linalg.GenericOp, env: dict, n_out: int = 1,
              consts: dict | None = None) -> list[tuple]:
    """The trees of the first `n_out` values the body yields (only the ops they
    depend on are read: a max reduction's unused index is not); the output block
    arguments are `("out", j)`; `consts`: inputs that are scalars (a 0-D tensor
    constant), by position, read as `("const", c)`."""
    block = op.body.block
    n_in = len(op.inputs)
    consts = consts or {}
    trees: dict[SSAValue, tuple] = {
        a: ("const", _const(consts[i], op)) if i in consts else
        ("in", i) if i < n_in else ("out", i - n_in) for i, a in enumerate(block.args)}
    yields = [o for o in block.ops if isinstance(o, linalg.YieldOp)]
    if not yields:
        raise OpDiagnosticError(op, "linalg.generic body without linalg.yield")
    vals = list(yields[0].operands)[:n_out]
    if len(vals) < n_out:
        raise OpDiagnosticError(op, "linalg.generic yields fewer values than it has results")
    return [_tree(op, v, trees, env, 0) for v in vals]


def _fill(v: SSAValue) -> tuple | None:
    """A `where`'s branch that is an infinite constant (`masked_fill(m, float('-inf'))`):
    the library's `where_then[-inf]` copies it, exact in every float dtype; an infinity
    anywhere else in a body is refused (`_const`)."""
    c = v.owner
    if isinstance(c, arith.ConstantOp) and isinstance(c.value, FloatAttr) and \
            bool(np.isinf(c.value.value.data)):
        return ("const", float(c.value.value.data))
    return None


MAX_DEPTH = 200  # a body deeper than this is refused (bounded recursion)


def _tree(op: linalg.GenericOp, v: SSAValue, trees: dict, env: dict, depth: int) -> tuple:
    if v in trees:
        return trees[v]
    if isinstance(env.get(v), float):
        return ("const", env[v])
    inner = v.owner
    if not isinstance(inner, Operation) or inner.parent_block() is not op.body.block:
        raise OpDiagnosticError(op, "a linalg.generic body reads a value from outside the "
                                    "body that is not a scalar constant")
    if depth > MAX_DEPTH:
        raise OpDiagnosticError(op, f"a linalg.generic body deeper than {MAX_DEPTH} ops")
    if isinstance(inner, arith.ConstantOp) and isinstance(inner.value, (FloatAttr, IntegerAttr)):
        t: tuple = ("const", _const(inner.value.value.data, op))
    elif isinstance(inner, (arith.TruncFOp, arith.ExtFOp)):
        val = _tree(op, inner.operands[0], trees, env, depth + 1)
        if val[0] != "const" and (isinstance(inner, arith.ExtFOp) or
                                  isinstance(inner.result.type, Float32Type)):
            # widening (bf16 -> f32, f32 -> f64) or narrowing back to f32 (torch-mlir's f64
            # LayerNorm statistics): tiles compute in f32 at least, the values are the same
            # up to rounding
            t = val
            trees[v] = t
            return t
        if val[0] != "const":
            raise OpDiagnosticError(op, f"'{inner.name}' of a value that is not a scalar "
                                        "constant (mixed precision inside an element-wise op "
                                        "is not supported)")
        t = ("const", float(np.float32(val[1])) if isinstance(inner, arith.TruncFOp)
             else val[1])
    elif _compare_of(inner, trees, env, op, depth) is not None:
        # `select(cmpf(pred, a, b), 1.0, 0.0)`, `uitofp(cmpf(...))`: a 0/1 mask (torch's
        # `(x > c).float()`); the library's compare functions
        kind, cmp = _compare_of(inner, trees, env, op, depth) or ("", inner)
        t = (kind, *(_tree(op, a, trees, env, depth + 1) for a in cmp.operands))
    elif isinstance(inner, arith.SelectOp) and _select_kind(inner) is not None:
        kind = _select_kind(inner)  # torch-mlir's relu / clamp: select(x > c, x, c)
        t = (kind, *(_tree(op, a, trees, env, depth + 1) for a in inner.operands[1:]))
    elif isinstance(inner, arith.SelectOp) and isinstance(cmp := inner.operands[0].owner,
                                                           arith.CmpfOp) \
            and cmp.predicate.value.data in _CMPF:
        # torch.where(x REL y, a, b) / masked_fill: the library's `where` of the compare's mask
        mask = (_CMPF[cmp.predicate.value.data],
                *(_tree(op, a, trees, env, depth + 1) for a in cmp.operands))
        t = ("where", mask, *(_fill(a) or _tree(op, a, trees, env, depth + 1)
                              for a in inner.operands[1:]))
    else:
        kind = BODY.get(type(inner))
        if kind is None:
            raise OpDiagnosticError(op, f"'{inner.name}' in a linalg.generic body has no step "
                                        f"library function (supported: {SUPPORTED_BODY})")
        args = [_tree(op, a, trees, env, depth + 1) for a in inner.operands]
        if kind == "pow":
            if args[1] != ("const", 2.0):
                shown = args[1][1] if args[1][0] == "const" else "a tensor"
                raise OpDiagnosticError(op, f"'{inner.name}' by {shown}: only the square "
                                            "(x.pow(2)) has a step library function")
            kind, args = "square", args[:1]
        t = (kind, *args)
    trees[v] = t
    return t


# arith.cmpf predicates (MLIR's numbering): ogt 2, oge 3, olt 4, ole 5, ugt 9, uge 10,
# ult 11, ule 12
_GREATER, _LESS = {2, 3, 9, 10}, {4, 5, 11, 12}


# arith.cmpf predicate -> the library's compare (ordered and unordered alike: tiles hold no NaN)
_CMPF = {1: "eq", 8: "eq", 2: "gt", 9: "gt", 3: "ge", 10: "ge", 4: "lt", 11: "lt", 5: "le",
         12: "le", 6: "ne", 13: "ne"}
_NOT = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}
_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}  # c REL x


def _compare_of(inner: Operation, trees: dict, env: dict, op, depth: int):
    """(the compare's library name, the `arith.cmpf`) when `inner` makes a 0/1 float mask of
    it: `arith.uitofp` of the `i1`, or `arith.select` of constants 1 and 0 (either way
    round: `select(c, 0, 1)` is the negated compare); None otherwise."""
    if isinstance(inner, arith.UIToFPOp):
        cmp = inner.operands[0].owner
        if isinstance(cmp, arith.CmpfOp) and cmp.predicate.value.data in _CMPF:
            return _CMPF[cmp.predicate.value.data], cmp
        return None
    if not isinstance(inner, arith.SelectOp):
        return None
    cmp = inner.operands[0].owner
    if not isinstance(cmp, arith.CmpfOp) or cmp.predicate.value.data not in _CMPF:
        return None
    t, f = (_tree(op, a, trees, env, depth + 1) if a in trees or isinstance(env.get(a), float)
            or isinstance(a.owner, arith.ConstantOp) else ("?",) for a in inner.operands[1:])
    kind = _CMPF[cmp.predicate.value.data]
    if (t, f) == (("const", 1.0), ("const", 0.0)):
        return kind, cmp
    if (t, f) == (("const", 0.0), ("const", 1.0)):
        return _NOT[kind], cmp
    return None


def _select_kind(sel: arith.SelectOp) -> str | None:
    """"max"/"min" for `select(cmpf(pred, a, b), a, b)` (also with the operands of the
    select swapped), None otherwise."""
    cond = sel.operands[0].owner
    if not isinstance(cond, arith.CmpfOp):
        return None
    pred = cond.predicate.value.data
    a, b = cond.operands
    t, f = sel.operands[1:]
    if (t, f) == (a, b):
        return "max" if pred in _GREATER else "min" if pred in _LESS else None
    if (t, f) == (b, a):
        return "min" if pred in _GREATER else "max" if pred in _LESS else None
    return None


def _sigmoid_of(t: tuple) -> tuple | None:
    """x if `t` is 1 / (1 + exp(-x)) (either operand order of the add)."""
    if t[0] != "div" or t[1] != ("const", 1.0):
        return None
    den = t[2]
    if den[0] != "add":
        return None
    for e, one in ((den[1], den[2]), (den[2], den[1])):
        if one == ("const", 1.0) and e[0] == "exp" and e[1][0] == "neg":
            return e[1][1]
    return None


_HALF, _SQRT1_2 = member_name("mul_scalar", 0.5), 0.7071067811865476
_ONE = member_name("add_scalar", 1.0)


def _param(t: tuple, family: str) -> float | None:
    name, _, rest = t[0].partition("[")
    return float(rest.rstrip("]")) if name == family and rest else None


def _erf_arg(t: tuple) -> tuple | None:
    """x if `t` is erf(x / sqrt(2)) (as `mul_scalar[0.7071...]` or `div_scalar[1.414...]`)."""
    if t[0] != "erf":
        return None
    e = t[1]
    c, d = _param(e, "mul_scalar"), _param(e, "div_scalar")
    if c is not None and abs(c - _SQRT1_2) < 1e-7 or d is not None and abs(d - 2 ** 0.5) < 1e-6:
        return e[1]
    return None


def _gelu_of(sub: tuple) -> tuple | None:
    """x if the operands of a product are torch's exact GELU: `x * 0.5` and `1 + erf(x /
    sqrt(2))` (PyTorch's decomposition), or `x` and `(erf(x / sqrt(2)) + 1) * 0.5`
    (torch-mlir's); the constants rounded to f32 or not."""
    for a, b in (sub, sub[::-1]):
        if a[0] == _HALF and b[0] == _ONE and _erf_arg(b[1]) == a[1]:
            return a[1]
        if b[0] == _HALF and b[1][0] == _ONE and _erf_arg(b[1][1]) == a:
            return a
    return None


_MASK_OF = {member_name("ne_scalar", 0.0): False, member_name("eq_scalar", 0.0): True}


def _where_of(m: tuple, a: tuple, b: tuple) -> tuple:
    """`where(m, a, b)` (m a mask tree): the compare `m != 0` is the `where`'s own test (`m ==
    0` swaps the branches); a constant branch is a `where_then[c]` / `where_else[c]`, two tiles
    the sum of both with 0; two constants `b + (a - b) m` of a 0/1 compare."""
    if m[0] in _MASK_OF:
        m, (a, b) = m[1], ((b, a) if _MASK_OF[m[0]] else (a, b))
    if a[0] == "const" and b[0] == "const":  # a 0/1 mask: b + (a - b) m
        if m[0].partition("[")[0].removesuffix("_scalar") not in _FLIP or \
                not np.isfinite(a[1] - b[1]):
            return ("where", m, a, b)  # refused by the emitter: no tile for a constant
        return (member_name("add_scalar", b[1]), (member_name("mul_scalar", a[1] - b[1]), m))
    if a[0] == "const":
        return (member_name("where_then", a[1]), m, b)
    if b[0] == "const":
        return (member_name("where_else", b[1]), m, a)
    # two tiles: `a` kept where m holds plus `b` where it does not (exact: one of the two
    # terms is 0; the library's functions have at most two tile operands)
    return ("add", (member_name("where_else", 0.0), m, a), (member_name("where_then", 0.0), m, b))


def match_functions(t: tuple, op) -> tuple:
    """Rewrite the sigmoid and silu idioms and the scalar operations of an
    expression tree into library calls (`op`: where errors are located)."""
    if t[0] in ("in", "out", "const"):
        return t
    x = _sigmoid_of(t)
    if x is not None:
        return ("sigmoid", match_functions(x, op))
    if t[0] == "div" and t[2][0] == "add":  # x / (1 + exp(-x))
        den = t[2]
        for e, one in ((den[1], den[2]), (den[2], den[1])):
            if one == ("const", 1.0) and e[0] == "exp" and e[1][0] == "neg" and e[1][1] == t[1]:
                return ("silu", match_functions(t[1], op))
    sub = tuple(match_functions(s, op) for s in t[1:])
    if t[0] == "where":
        return _where_of(*sub)
    if t[0] == "mul":
        for a, b in (sub, sub[::-1]):
            if b[0] == "sigmoid" and b[1] == a:
                return ("silu", a)
        gelu = _gelu_of(sub)
        if gelu is not None:
            return ("gelu", gelu)
    if len(sub) == 2 and t[0] in _FLIP and any(x[0] == "const" for x in sub):
        if all(x[0] == "const" for x in sub):
            return ("const", float(COMPARE[COMPARES[t[0]]](sub[0][1], sub[1][1])))
        first = sub[0][0] == "const"  # c REL x is x FLIP(REL) c
        c, x = (sub[0][1], sub[1]) if first else (sub[1][1], sub[0])
        return (member_name(f"{_FLIP[t[0]] if first else t[0]}_scalar", c), x)
    if len(sub) == 2 and (t[0], True) in SCALAR:
        consts = [s[0] == "const" for s in sub]
        if consts == [True, True]:
            with np.errstate(all="ignore"):
                v = BINARY[t[0]](sub[0][1], sub[1][1])  # the registry's meaning of the op
            return ("const", _const(v, op))
        if any(consts):
            first = consts[0]
            c, x = (sub[0][1], sub[1]) if first else (sub[1][1], sub[0])
            return (member_name(SCALAR[(t[0], first)], c), x)
    return (t[0], *sub)
