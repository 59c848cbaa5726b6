"""Symbolic (z3) semantics of tensor IR and of accelerator functions.

Tensors are numpy object arrays of `Sym` scalars.  In `uf` mode the scalars
are z3 reals and `+`/`*` are uninterpreted functions `fadd`/`fmul` (`*` commutative
by argument ordering; a sum is folded over its summands sorted, so `+` is associative
and commutative, with `x + 0 = x`; `1/(1+exp(-x))` is `sigmoid(x)`): the accelerators' custom numerics
(AdaptivFloat, fixed point) are abstracted, so a proof checks the mapping's
indexing, layout and reduction structure.  `max` is interpreted (it is exact on
every target).  In `bv` mode scalars are 32-bit bit-vectors with native
wrap-around arithmetic (VTA's int32 accumulation).

`SymbolicDomain(ctx)` is the value domain of the op-semantics table
(`dialects/semantics`) that isel-verify evaluates programs in: where an
operand is symbolic, its primitives build terms (other operations, e.g. index
arithmetic in a `linalg.generic` body, stay concrete numpy).  `accel_spec` is
the abstract meaning of each accelerator function.

Example: `TensorSemantics(SymbolicDomain(Ctx("uf"))).run_block(block, {arg: tensor(ctx, "x", shape)})`
returns the outputs as object arrays of z3 terms over inputs `x_0, x_1, ...`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import z3

from steplus.dialects.semantics.domain import NumpyDomain
from steplus.dialects.semantics.registry import SemanticsError
from steplus.utils.layouts import im2col_nchw

# a z3 expression (z3's type stubs do not type its arithmetic operators)
Term = Any


class Sym:
    """A scalar term; `None`-valued padding is represented by `PAD`.

    In `uf` mode a sum is kept as its summands (`parts`) and built as a z3 term only when something
    reads it (`t`): a left fold of `fadd` over the summands sorted by term id, so sums equal up to
    associativity and commutativity are the same term (torch adds an LSTM's two biases to its two
    GEMMs, FlexASR's spec adds their sum), and a dot product's partial sums are never built."""

    __slots__ = ("_t", "ctx", "parts")

    def __init__(self, t: Term, ctx: Ctx, parts: tuple[Sym, ...] | None = None):
        self._t, self.ctx, self.parts = t, ctx, parts

    @property
    def t(self) -> Term:
        if self._t is None:
            assert self.parts is not None
            self._t = self.ctx.sum_of(self.parts)
        return self._t

    def _zero(self) -> bool:
        if self.parts is not None:
            return False
        return z3.is_rational_value(self.t) and self.t.as_fraction() == 0 if self.ctx.mode == "uf" else \
            (z3.is_bv_value(self.t) and self.t.as_long() == 0)

    def __add__(self, o: Any) -> Sym:
        if o is PAD or o is None:
            return self
        if self._zero():
            return o
        if o._zero():
            return self
        if self.ctx.mode == "uf":
            self.ctx.step()
            return Sym(None, self.ctx, (self.parts or (self,)) + (o.parts or (o,)))
        return Sym(self.ctx.add(self.t, o.t), self.ctx)

    __radd__ = __add__

    def __mul__(self, o: Sym) -> Sym:
        return Sym(self.ctx.mul(self.t, o.t), self.ctx)

    __rmul__ = __mul__

    def __sub__(self, o: Sym) -> Sym:
        return Sym(self.ctx.fn("fsub", 2)(self.t, o.t) if self.ctx.mode == "uf" else self.t - o.t, self.ctx)


PAD = object()

# the uninterpreted functions the accelerator specifications (`accel_spec`) are written with
SPEC_FUNCTIONS = frozenset({"fsub", "sigmoid", "tanh", "exp", "recip", "rsqrt"})


def smax(a: Any, b: Any) -> Any:
    if a is PAD:
        return b
    if b is PAD:
        return a
    ctx = a.ctx
    ctx.step()
    return Sym(z3.If(a.t > b.t, a.t, b.t), ctx)  # signed for BitVec


def smin(a: Any, b: Any) -> Any:
    if a is PAD:
        return b
    if b is PAD:
        return a
    a.ctx.step()
    return Sym(z3.If(a.t < b.t, a.t, b.t), a.ctx)


class OutOfTime(Exception):
    """The proof's time budget ran out while building terms (`Ctx.deadline`)."""


class Ctx:
    """The term factory of one proof: `mode` (uf|bv), and an optional `deadline` (a
    `time.monotonic()` instant) past which building terms raises `OutOfTime`; `on_tick(n)`, if
    given, is called every `TICK` terms (isel-verify reports its progress from it)."""

    TICK = 1 << 14

    def __init__(self, mode: str, deadline: float | None = None,
                 on_tick: Callable[[int], None] | None = None):
        self.mode = mode
        self.deadline, self.on_tick, self.built = deadline, on_tick, 0
        if mode == "uf":
            self.fadd = z3.Function("fadd", z3.RealSort(), z3.RealSort(), z3.RealSort())
            self.fmul = z3.Function("fmul", z3.RealSort(), z3.RealSort(), z3.RealSort())

    def fn(self, name: str, arity: int = 1) -> Any:
        """An uninterpreted real function (`sigmoid`, `tanh`, `exp`, `recip`, `rsqrt`, `fsub`)."""
        if self.mode != "uf":
            raise NotImplementedError(f"'{name}' has no bit-vector semantics; use arith=uf")
        key = f"_fn_{name}"
        if not hasattr(self, key):
            setattr(self, key, z3.Function(name, *([z3.RealSort()] * (arity + 1))))
        self.__dict__.setdefault("functions", set()).add(name)
        return getattr(self, key)

    def opaque_functions(self, terms: Sequence[Term] = ()) -> list[str]:
        """The uninterpreted functions used so far that no accelerator specification uses: a
        program written with them (x / n where a spec multiplies by 1/n) can differ from a spec
        as terms while being equal as numbers, so a counterexample over them proves nothing.
        With `terms`, only those that occur in them (torch's sigmoid uses `neg` on the way to the
        `sigmoid` it is recognized as, which then occurs nowhere)."""
        used = self.__dict__.get("functions", set()) - SPEC_FUNCTIONS
        return sorted(used & function_names(terms) if terms and used else used)

    def _sorted(self, a: Term, b: Term) -> tuple[Term, Term]:
        return (a, b) if a.get_id() <= b.get_id() else (b, a)

    def _apply(self, op: str, a: Term, b: Term) -> Term:
        """`op` of two terms, memoised: the input and the selected program share their products and sums."""
        key = (op, a.get_id(), b.get_id())
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            self.step()
            if self.mode == "uf":
                memo[key] = (self.fadd if op == "+" else self.fmul)(*self._sorted(a, b))
            else:
                memo[key] = a + b if op == "+" else a * b
        return memo[key]

    def step(self) -> None:
        """Count one term built; every `TICK` terms check the deadline and report."""
        self.built += 1
        if not self.built % self.TICK:
            self._tick()

    def _tick(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise OutOfTime(f"{self.built} terms built")
        if self.on_tick is not None:
            self.on_tick(self.built)

    def add(self, a: Term, b: Term) -> Term:
        return self._apply("+", a, b)

    def sum_of(self, parts: Sequence[Sym]) -> Term:
        """The canonical term of a sum: `fadd` folded over the summands sorted by term id."""
        terms = sorted((p.t for p in parts), key=lambda t: t.get_id())
        acc = terms[0]
        for t in terms[1:]:
            acc = self._apply("+", acc, t)
        return acc

    def mul(self, a: Term, b: Term) -> Term:
        return self._apply("*", a, b)

    def var(self, name: str) -> Term:
        return z3.Real(name) if self.mode == "uf" else z3.BitVec(name, 32)

    def const(self, v: float) -> Term:
        return z3.RealVal(v) if self.mode == "uf" else z3.BitVecVal(int(v), 32)


def function_names(terms: Sequence[Term]) -> set[str]:
    """The names of the functions applied anywhere in `terms` (each shared subterm visited once)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = list(terms)
    while stack:
        t = stack.pop()
        if not z3.is_app(t) or t.get_id() in seen:
            continue
        seen.add(t.get_id())
        names.add(t.decl().name())
        stack.extend(t.children())
    return names


def tensor(ctx: Ctx, name: str, shape: Sequence[int]) -> np.ndarray:
    flat = [Sym(ctx.var(f"{name}_{i}"), ctx) for i in range(int(np.prod(shape, dtype=np.int64)))]
    arr = np.empty(len(flat), dtype=object)
    arr[:] = flat
    return arr.reshape(shape)


def fold_sum(terms: Iterable[Any]) -> Any:
    """Σ terms, left to right; in `uf` mode one lazy sum of all the summands (no partial sums, so a
    k-long dot product costs O(k), not the O(k²) of k successive additions of growing sums)."""
    terms = list(terms)
    if len(terms) > 2 and all(isinstance(t, Sym) for t in terms) and terms[0].ctx.mode == "uf":
        parts = tuple(p for t in terms if not t._zero() for p in (t.parts or (t,)))
        for _ in terms[1:]:
            terms[0].ctx.step()
        return Sym(None, terms[0].ctx, parts) if len(parts) > 1 else parts[0] if parts else terms[0]
    acc = None
    for t in terms:
        acc = t if acc is None else acc + t
    return acc


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim > 2:  # batched over the leading axes
        return np.stack([matmul(x, y) for x, y in zip(a, np.broadcast_to(b, (a.shape[0], *b.shape[-2:])))])
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), dtype=object)
    for i in range(m):
        for j in range(n):
            out[i, j] = fold_sum(a[i, q] * b[q, j] for q in range(k))
    return out


def conv2d(x: np.ndarray, w: np.ndarray, strides: Sequence[int]) -> np.ndarray:
    """Valid NCHW conv, summing in (c, kr, kc) order (the im2col column order)."""
    cols = im2col_nchw(x, w.shape[2:], strides)  # [N*OH*OW, C*KH*KW]
    n, _, h, wd = x.shape
    k, _, kh, kw = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    y = matmul(w.reshape(k, -1), cols.T)  # [K, N*OH*OW]
    return y.reshape(k, n, oh, ow).transpose(1, 0, 2, 3)


def unary(name: str, a: np.ndarray) -> np.ndarray:
    """Elementwise uninterpreted function `name` over an object array."""
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(*a.shape):
        x: Any = a[idx]
        x.ctx.step()
        out[idx] = Sym(x.ctx.fn(name)(x.t), x.ctx)
    return out


def row_sums(a: np.ndarray) -> np.ndarray:
    """Σ over the last axis of a 2-D array, kept as [m, 1] (left fold, like the IR)."""
    out = np.empty((a.shape[0], 1), dtype=object)
    for i in range(a.shape[0]):
        out[i, 0] = fold_sum(a[i])
    return out


def accel_spec(callee: str, args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """The symbolic meaning of an accelerator function (numerics abstracted)."""
    if callee == "flexasr.maxpool":
        a = args[0]
        t = a.shape[0] // 2
        out = np.empty((t, *a.shape[1:]), dtype=object)
        for i in range(t):
            for j in np.ndindex(*a.shape[1:]):
                out[(i, *j)] = smax(a[(2 * i, *j)], a[(2 * i + 1, *j)])
        return out
    if callee == "flexasr.linear":
        x, w, b = args
        y = matmul(x, w.T)
        return y + b.reshape(1, -1)
    if callee == "vta.dense":
        return matmul(args[0], args[1].T)
    if callee == "flexasr.lstm":
        x, h0, c0, w, u, b = args
        n = u.shape[1]
        h, c, out = h0.reshape(1, n), c0.reshape(1, n), []
        for t in range(x.shape[0]):
            z = [matmul(x[t:t + 1], w[g * n:(g + 1) * n].T) + matmul(h, u[g * n:(g + 1) * n].T)
                 + b[g * n:(g + 1) * n].reshape(1, n) for g in range(4)]
            i, f, o = (unary("sigmoid", z[g]) for g in (0, 1, 3))
            c = f * c + i * unary("tanh", z[2])
            h = o * unary("tanh", c)
            out.append(h)
        return np.concatenate([*out, c])
    if callee == "flexasr.layernorm":
        x, g, b = args
        ctx = x.flat[0].ctx
        inv = Sym(ctx.const(float(np.float32(1.0 / x.shape[1]))), ctx)
        d = x - row_sums(x) * inv
        var = row_sums(d * d) * inv
        r = unary("rsqrt", var + Sym(ctx.const(attrs["epsilon"]), ctx))
        return d * r * g.reshape(1, -1) + b.reshape(1, -1)
    if callee == "flexasr.attention":
        q, k, v = args
        e = unary("exp", matmul(q, k.T))
        return matmul(e * unary("recip", row_sums(e)), v)
    if callee == "hlscnn.conv2d":
        return conv2d(args[0], args[1], tuple(attrs.get("strides", (1, 1))))
    raise NotImplementedError(f"no symbolic spec for '{callee}'")


def _symbolic(x: Any) -> bool:
    return np.asarray(x).dtype == object


class SymbolicDomain(NumpyDomain):
    """Object arrays of `Sym` terms over `ctx` (uf: + and · uninterpreted, bv: 32-bit integers).

    Each primitive falls back to numpy when no operand is symbolic (the indices and masks a
    `linalg.generic` body computes from `linalg.index`)."""

    name = "symbolic"
    lowest = PAD  # max-pool padding: never the maximum

    def __init__(self, ctx: Ctx):
        self.ctx = ctx

    def sym(self, e: Any) -> Any:
        """A scalar as a term (PAD and terms as they are)."""
        if isinstance(e, Sym) or e is PAD:
            return e
        return self.scalar(float(e))

    def _each(self, f: Callable[..., Any], nin: int, *xs: Any) -> np.ndarray:
        """`f` applied elementwise (numpy broadcasting) to terms."""
        return np.frompyfunc(lambda *es: f(*(self.sym(e) for e in es)), nin, 1)(*xs)

    def _all_terms(self, x: Any) -> np.ndarray:
        return np.asarray(self._each(lambda e: e, 1, x), dtype=object)

    # -- values ---------------------------------------------------------------------------------
    def lift(self, arr: np.ndarray, what: str) -> Any:
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            raise SemanticsError(f"{what} holds a non-finite value, which has no symbolic meaning")
        if self.ctx.mode == "bv" and not np.all(arr == np.round(arr)):
            raise SemanticsError(f"{what} holds a non-integer value; use arith=uf")
        syms: dict[float, Sym] = {}
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            if v not in syms:
                syms[v] = Sym(self.ctx.const(float(v)), self.ctx)
            out[idx] = syms[v]
        return out if out.ndim else out[()]

    def scalar(self, v: float | int) -> Any:
        if not isinstance(v, float):
            return np.int64(v)  # index arithmetic stays concrete
        if not np.isfinite(v):
            raise SemanticsError("a non-finite constant has no symbolic meaning")
        if self.ctx.mode == "bv" and v != round(v):
            raise SemanticsError(f"the non-integer constant {v} has no bit-vector meaning; use arith=uf")
        return Sym(self.ctx.const(v), self.ctx)

    def full(self, shape: Sequence[int], v: Any, like: Any = None) -> np.ndarray:
        out = np.empty(tuple(shape), dtype=object)
        out[...] = self.sym(v)
        return out

    def empty(self, shape: Sequence[int]) -> np.ndarray:
        return self.full(shape, PAD)

    def f32(self, x: Any) -> Any:
        return x if _symbolic(x) else super().f32(x)

    def to_float(self, x: Any) -> Any:
        return np.asarray(x) if _symbolic(x) else super().to_float(x)

    def convert(self, kind: str, x: Any) -> Any:
        if not _symbolic(x):
            return super().convert(kind, x)
        if kind == "float":
            return x
        raise SemanticsError(f"casting a symbolic value to {kind} is not supported")

    def cast(self, x: Any, element_type: str) -> Any:
        if not _symbolic(x):
            return super().cast(x, element_type)
        if element_type.startswith("f"):
            return x
        raise SemanticsError(f"a cast of symbolic values to {element_type} is not supported")

    # -- arithmetic -----------------------------------------------------------------------------
    def _fn(self, name: str, arity: int) -> Callable[..., Any]:
        try:
            return self.ctx.fn(name, arity)
        except NotImplementedError as e:
            raise SemanticsError(str(e)) from None

    def unary(self, kind: str, x: Any) -> Any:
        if not _symbolic(x):
            return super().unary(kind, x)
        if kind == "neg" and self.ctx.mode == "bv":
            return self._each(lambda e: Sym(-e.t, self.ctx), 1, x)
        if kind == "recip":
            return self._each(self._recip, 1, x)
        f = self._fn(kind, 1)  # uninterpreted: sigmoid, tanh, exp, rsqrt, ...
        return self._each(lambda e: Sym(f(e.t), self.ctx), 1, x)

    def _recip(self, e: Any) -> Sym:
        """`recip(e)`, or `sigmoid(x)` when `e` is `exp(neg(x)) + 1`: torch's sigmoid `1 / (1 + exp(-x))`
        is the sigmoid the FlexASR LSTM specification applies (`sigmoid` and `tanh` are uninterpreted
        functions shared by both programs, so equal arguments give equal results)."""
        x = _sigmoid_arg(e.t)
        if x is not None:
            return Sym(self._fn("sigmoid", 1)(x), self.ctx)
        return Sym(self._fn("recip", 1)(e.t), self.ctx)

    def binary(self, kind: str, x: Any, y: Any) -> Any:
        if not (_symbolic(x) or _symbolic(y)):
            return super().binary(kind, x, y)
        ops: dict[str, Callable[[Any, Any], Any]] = {
            "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "max": smax, "min": smin, "maxnum": smax, "minnum": smin}
        if kind in ops:
            return self._each(ops[kind], 2, x, y)
        if kind == "div":  # 1 / b is recip(b) (and torch's sigmoid a sigmoid: `_recip`)
            f = self._fn("fdiv", 2)
            return self._each(lambda a, b: self._recip(b) if _is_one(a.t) else Sym(f(a.t, b.t), self.ctx), 2, x, y)
        if kind == "pow":
            f = self._fn("fpow", 2)
            return self._each(lambda a, b: Sym(f(a.t, b.t), self.ctx), 2, x, y)
        raise SemanticsError(f"'{kind}' of symbolic values is not supported")

    def integer(self, kind: str, x: Any, y: Any) -> Any:
        return self.binary(kind, x, y) if _symbolic(x) or _symbolic(y) else super().integer(kind, x, y)

    def compare(self, rel: str, x: Any, y: Any) -> Any:
        if not (_symbolic(x) or _symbolic(y)):
            return super().compare(rel, x, y)
        rels: dict[str, Callable[[Any, Any], Any]] = {
            ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
        return self._each(lambda a, b: rels[rel](a.t, b.t), 2, x, y)

    def select(self, c: Any, x: Any, y: Any) -> Any:
        if not _symbolic(c):
            return np.where(c, x, y)
        return np.frompyfunc(lambda k, a, b: Sym(z3.If(k, self.sym(a).t, self.sym(b).t), self.ctx), 3, 1)(c, x, y)

    def matmul(self, a: Any, b: Any) -> Any:
        if not (_symbolic(a) or _symbolic(b)):
            return super().matmul(a, b)
        return matmul(self._all_terms(a), self._all_terms(b))

    def einsum(self, spec: str, *xs: Any) -> Any:
        if not any(_symbolic(x) for x in xs):
            return super().einsum(spec, *xs)
        lhs, out = spec.split("->")
        ins = lhs.split(",")
        terms = [self._all_terms(x) for x in xs]
        size = {c: n for s, x in zip(ins, terms) for c, n in zip(s, x.shape)}
        summed = [c for c in dict.fromkeys("".join(ins)) if c not in out]
        res = np.empty(tuple(size[c] for c in out), dtype=object)
        for oidx in np.ndindex(*res.shape):
            env = dict(zip(out, oidx))
            prods = []
            for sidx in np.ndindex(*(size[c] for c in summed)):
                env.update(zip(summed, sidx))
                prods.append(_product(x[tuple(env[c] for c in s)] for s, x in zip(ins, terms)))
            res[oidx] = fold_sum(prods)
        return res

    def reduce(self, kind: str, x: Any, axis: tuple[int, ...], keepdims: bool = False) -> Any:
        if not _symbolic(x):
            return super().reduce(kind, x, axis, keepdims)
        folds: dict[str, Callable[[Iterable[Any]], Any]] = {
            "sum": fold_sum, "prod": _product, "max": lambda es: _fold(smax, es), "min": lambda es: _fold(smin, es)}
        if kind not in folds:
            raise SemanticsError(f"a '{kind}' reduction of symbolic values is not supported")
        x = np.asarray(x)
        axes = [a % x.ndim for a in axis]
        moved = np.moveaxis(x, axes, list(range(len(axes))))
        rest = moved.shape[len(axes):]
        flat = moved.reshape(-1, *rest)
        out = np.empty(rest, dtype=object)
        for idx in np.ndindex(*rest):
            out[idx] = folds[kind](flat[(slice(None), *idx)])
        if keepdims:
            out = out.reshape([1 if k in axes else n for k, n in enumerate(x.shape)])
        return out if out.ndim else out[()]

    def conv2d(self, x: Any, w: Any, strides: tuple[int, int]) -> Any:
        if not (_symbolic(x) or _symbolic(w)):
            return super().conv2d(x, w, strides)
        return conv2d(self._all_terms(x), self._all_terms(w), strides)


def _is_one(t: Term) -> bool:
    return z3.is_rational_value(t) and t.as_fraction() == 1


def _sigmoid_arg(t: Term) -> Term | None:
    """x when `t` is `fadd(exp(neg(x)), 1)` (either argument order), else None."""
    if not (z3.is_app(t) and t.decl().name() == "fadd" and t.num_args() == 2):
        return None
    a, b = t.arg(0), t.arg(1)
    e = b if _is_one(a) else a if _is_one(b) else None
    if e is None or not (z3.is_app(e) and e.decl().name() == "exp" and e.num_args() == 1):
        return None
    n = e.arg(0)
    return n.arg(0) if z3.is_app(n) and n.decl().name() == "neg" and n.num_args() == 1 else None


def _fold(f: Callable[[Any, Any], Any], es: Iterable[Any]) -> Any:
    acc = PAD
    for e in es:
        acc = f(acc, e)
    return acc


def _product(es: Iterable[Any]) -> Any:
    acc = None
    for e in es:
        acc = e if acc is None else acc * e
    return acc
