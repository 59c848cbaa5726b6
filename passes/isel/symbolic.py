"""Symbolic (z3) semantics of tensor IR and of accelerator functions.

Tensors are numpy object arrays of `Sym` scalars.  In `uf` mode the scalars
are z3 reals and `+`/`*` are uninterpreted functions `fadd`/`fmul` (commutative
by argument ordering, with `x + 0 = x`): the accelerators' custom numerics
(AdaptivFloat, fixed point) are abstracted, so a proof checks the mapping's
indexing, layout and reduction structure.  `max` is interpreted (it is exact on
every target).  In `bv` mode scalars are 32-bit bit-vectors with native
wrap-around arithmetic (VTA's int32 accumulation).

Example: `SymbolicInterpreter("uf").run(func_op, ["x"])` returns the outputs as
object arrays of z3 terms over inputs `x_0, x_1, ...`.
"""

from __future__ import annotations

import numpy as np
import z3

from steplus.runtime.ila.host import im2col_nchw


class Sym:
    """A scalar term; `None`-valued padding is represented by `PAD`."""

    __slots__ = ("t", "ctx")

    def __init__(self, t, ctx):
        self.t, self.ctx = t, ctx

    def _zero(self):
        return z3.is_rational_value(self.t) and self.t.as_fraction() == 0 if self.ctx.mode == "uf" else \
            (z3.is_bv_value(self.t) and self.t.as_long() == 0)

    def __add__(self, o):
        if o is PAD or o is None:
            return self
        if self._zero():
            return o
        if o._zero():
            return self
        return Sym(self.ctx.add(self.t, o.t), self.ctx)

    __radd__ = __add__

    def __mul__(self, o):
        return Sym(self.ctx.mul(self.t, o.t), self.ctx)

    __rmul__ = __mul__

    def __sub__(self, o):
        return Sym(self.ctx.fn("fsub", 2)(self.t, o.t) if self.ctx.mode == "uf" else self.t - o.t, self.ctx)


PAD = object()


def smax(a, b):
    if a is PAD:
        return b
    if b is PAD:
        return a
    ctx = a.ctx
    cond = a.t > b.t if ctx.mode == "uf" else a.t > b.t  # signed for BitVec
    return Sym(z3.If(cond, a.t, b.t), ctx)


class Ctx:
    def __init__(self, mode: str):
        self.mode = mode
        if mode == "uf":
            self.fadd = z3.Function("fadd", z3.RealSort(), z3.RealSort(), z3.RealSort())
            self.fmul = z3.Function("fmul", z3.RealSort(), z3.RealSort(), z3.RealSort())

    def fn(self, name: str, arity: int = 1):
        """An uninterpreted real function (`sigmoid`, `tanh`, `exp`, `recip`, `rsqrt`, `fsub`)."""
        if self.mode != "uf":
            raise NotImplementedError(f"'{name}' has no bit-vector semantics; use arith=uf")
        key = f"_fn_{name}"
        if not hasattr(self, key):
            setattr(self, key, z3.Function(name, *([z3.RealSort()] * (arity + 1))))
        return getattr(self, key)

    def _sorted(self, a, b):
        return (a, b) if a.get_id() <= b.get_id() else (b, a)

    def _apply(self, op: str, a, b):
        """`op` of two terms, memoised: the input and the selected program share their products and sums."""
        key = (op, a.get_id(), b.get_id())
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            if self.mode == "uf":
                memo[key] = (self.fadd if op == "+" else self.fmul)(*self._sorted(a, b))
            else:
                memo[key] = a + b if op == "+" else a * b
        return memo[key]

    def add(self, a, b):
        return self._apply("+", a, b)

    def mul(self, a, b):
        return self._apply("*", a, b)

    def var(self, name):
        return z3.Real(name) if self.mode == "uf" else z3.BitVec(name, 32)

    def const(self, v: float):
        return z3.RealVal(v) if self.mode == "uf" else z3.BitVecVal(int(v), 32)


def tensor(ctx: Ctx, name: str, shape) -> np.ndarray:
    flat = [Sym(ctx.var(f"{name}_{i}"), ctx) for i in range(int(np.prod(shape, dtype=np.int64)))]
    arr = np.empty(len(flat), dtype=object)
    arr[:] = flat
    return arr.reshape(shape)


def fold_sum(terms):
    acc = None
    for t in terms:
        acc = t if acc is None else acc + t
    return acc


def matmul(a, b):
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), dtype=object)
    for i in range(m):
        for j in range(n):
            out[i, j] = fold_sum(a[i, q] * b[q, j] for q in range(k))
    return out


def conv2d(x, w, strides):
    """Valid NCHW conv, summing in (c, kr, kc) order (the im2col column order)."""
    cols = im2col_nchw(x, w.shape[2:], strides)  # [N*OH*OW, C*KH*KW]
    n, _, h, wd = x.shape
    k, _, kh, kw = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    y = matmul(w.reshape(k, -1), cols.T)  # [K, N*OH*OW]
    return y.reshape(k, n, oh, ow).transpose(1, 0, 2, 3)


def windows_nhwc(x, kernel, stride, pad):
    n, h, w, c = x.shape
    kh, kw = kernel
    sh, sw = stride
    pt, pb, pl, pr = pad
    xp = np.empty((n, h + pt + pb, w + pl + pr, c), dtype=object)
    xp[...] = PAD
    xp[:, pt:pt + h, pl:pl + w] = x
    oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
    return np.stack([xp[:, i:i + sh * oh:sh, j:j + sw * ow:sw, :].reshape(-1) for i in range(kh) for j in range(kw)])


def unary(name: str, a):
    """Elementwise uninterpreted function `name` over an object array."""
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(*a.shape):
        x = a[idx]
        out[idx] = Sym(x.ctx.fn(name)(x.t), x.ctx)
    return out


def row_sums(a):
    """Σ over the last axis of a 2-D array, kept as [m, 1] (left fold, like the IR)."""
    out = np.empty((a.shape[0], 1), dtype=object)
    for i in range(a.shape[0]):
        out[i, 0] = fold_sum(a[i])
    return out


def reduce_rows_max(a):
    out = np.empty(a.shape[1:], dtype=object)
    for idx in np.ndindex(*a.shape[1:]):
        acc = PAD
        for t in range(a.shape[0]):
            acc = smax(acc, a[(t, *idx)])
        out[idx] = acc
    return out


def accel_spec(callee: str, args, attrs):
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
