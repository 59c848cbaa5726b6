"""Normalizing e-graph rewrites (flexible mode) from the forms frontends emit to the forms
the FlexASR patterns of `fused` are written over.

torch-mlir writes an `nn.LSTMCell` as one fused-gate GEMM per input (`x·W_ihᵀ + b_ih` and
`h·W_hhᵀ + b_hh`, each `[1, 4n]`), their sum, four column slices (`tensor.extract_slice`)
and elementwise `linalg.generic`s, with the sigmoid spelled `1/(1+exp(-x))`.  The rules:

- sigmoid: `recip(addone(exp(neg(x)))) -> sigmoid(x)`;
- two biased GEMMs: `(x·Wᵀ + b1) + (h·Uᵀ + b2) -> (x·Wᵀ + h·Uᵀ) + (b1 + b2)`;
- slices distribute: `cols(a + b) -> cols(a) + cols(b)`, `cols(x·Wᵀ) -> x·rowsof(W)ᵀ`,
  `cols(reshape(b, (1, n))) -> reshape(part(b), (1, c))`;

after which each gate is the `_gate` form of `fused` and the LSTM cell pattern fires.

`REAL_FORMS` does the same for torch's layer norm, softmax attention and sequence `nn.LSTM`
as `views.RealImporter` imports them (2-D views of N-D generics), with `SHAPES`, an
analysis giving terms their 2-D shape (`nrows`, `ncols`):

- layer norm: `sum(x) / n -> mean(x)`; the f64 variance is computed in f32
  (`trunc(ext(x)) -> x`, `trunc` pushed through `+ - ·` and row reductions);
- softmax: `a / b -> a · recip(b)`; torch's attention with the max-subtracting softmax
  `exp(z - max(z)) · recip(Σ exp(z - max(z))) @ v` is FlexASR's attention (its hardware subtracts the
  max itself); the max-free softmax is never made a host alternative (its `exp` overflows);
  torch's guard for all -inf rows is the identity on finite scores;
- per-head / per-step blocks: `bsel` (one batch) is a block of rows of the 2-D view, a row block
  (`rows`) distributes through row-wise ops (full, row- and column-broadcast operands), a row block
  of a batched product is one batch's GEMM, of a GEMM the GEMM of the block, of a row concatenation
  (`rcat`, torch's `tensor.concat` of the hidden states) the block of the part.

Example::

    eg.run(NORMALIZE | REAL_FORMS | SHAPES)   # part of `terms.saturate` in flexible mode
    eg.run(FLEXASR_FORMS)                     # ... when FlexASR is a target
"""

from __future__ import annotations

from egglog import eq, function, i64, i64Like, rewrite, rule, ruleset, set_, union, vars_

from steplus.dialects.target.ila import FLEXASR
from steplus.passes.isel.fused import (addc, div, exp, flex_attention, int_of, mean, mul, mulc, recip, rows, rsqrt,
                                       rsum, sigmoid, sub, tanh)
from steplus.passes.isel.terms import Sh, Ten, add, bias_add, bmm, bsel, dense, matmul, reshape


@function
def neg(a: Ten) -> Ten: ...
@function
def addone(a: Ten) -> Ten: ...
@function
def cols(a: Ten, c0: i64Like, cc: i64Like, m: i64Like, n: i64Like) -> Ten: ...
@function
def wrows(w: Ten, r0: i64Like, rr: i64Like, n: i64Like, k: i64Like) -> Ten: ...
@function
def vpart(b: Ten, c0: i64Like, cc: i64Like, n: i64Like) -> Ten: ...
@function
def vadd(a: Ten, b: Ten, n: i64Like) -> Ten: ...
@function
def ext(a: Ten) -> Ten: ...
@function
def trunc(a: Ten) -> Ten: ...
@function
def rmaxr(a: Ten, m: i64Like, n: i64Like) -> Ten: ...
@function
def guard(x: Ten, p: Ten) -> Ten: ...
@function
def rcat(a: Ten, b: Ten, ra: i64Like, rb: i64Like, n: i64Like) -> Ten: ...
@function(merge=lambda old, new: old)
def nrows(a: Ten) -> i64: ...
@function(merge=lambda old, new: old)
def ncols(a: Ten) -> i64: ...


a, b, x, h, w, u, b1, b2 = vars_("a b x h w u b1 b2", Ten)
m, n, k, k2, c0, cc = vars_("m n k k2 c0 cc", i64)
(s,) = vars_("s", Sh)


def _biased(v, wt, bias, kk):
    return addc(dense(v, wt, i64(1), kk, n), reshape(bias, Sh.s2(1, n)), Sh.s2(1, n))


NORMALIZE = ruleset(
    rewrite(recip(addone(exp(neg(x))))).to(sigmoid(x)),
    rewrite(addc(_biased(x, w, b1, k), _biased(h, u, b2, k2), Sh.s2(1, n))).to(
        addc(addc(dense(x, w, i64(1), k, n), dense(h, u, i64(1), k2, n), Sh.s2(1, n)),
             reshape(vadd(b1, b2, n), Sh.s2(1, n)), Sh.s2(1, n))),
    # the sum of two bias vectors does not depend on their order (one LSTM call, not one per order)
    rewrite(vadd(b1, b2, n)).to(vadd(b2, b1, n)),
    # ... nor on whether the gate's part is cut before or after the sum
    rewrite(vpart(vadd(b1, b2, n), c0, cc, n)).to(vadd(vpart(b1, c0, cc, n), vpart(b2, c0, cc, n), cc)),
    rewrite(cols(add(a, b, s), c0, cc, m, n)).to(add(cols(a, c0, cc, m, n), cols(b, c0, cc, m, n), Sh.s2(m, cc))),
    rewrite(cols(addc(a, b, s), c0, cc, m, n)).to(
        addc(cols(a, c0, cc, m, n), cols(b, c0, cc, m, n), Sh.s2(m, cc))),
    rewrite(cols(dense(x, w, m, k, n), c0, cc, m, n)).to(dense(x, wrows(w, c0, cc, n, k), m, k, cc)),
    rewrite(cols(reshape(b, Sh.s2(1, n)), c0, cc, i64(1), n)).to(reshape(vpart(b, c0, cc, n), Sh.s2(1, cc))),
    name="normalize",
)


# ---- torch's real forms of layer norm and softmax attention (linalg generics viewed as 2-D rows x last axis)

e, p, z, c, q, kk, v = vars_("e p z c q kk v", Ten)
t, r, r0, rr, wa, wb, nb, i = vars_("t r r0 rr wa wb nb i", i64)

_BINARY = (add, sub, mul, div, addc, mulc)
_UNARY = (exp, neg, recip, rsqrt, tanh, sigmoid, addone, ext, trunc)
_ROWWISE = (rsum, rmaxr, mean)


def _shape_rules():
    """`nrows`/`ncols`: the 2-D shape of a term, where its constructor says it (an e-graph analysis
    the row-slice rules use to tell a full operand from a broadcast row or column)."""
    def both(term, rows_, cols_, *conds):
        return rule(eq(e).to(term), *conds).then(set_(nrows(e)).to(rows_), set_(ncols(e)).to(cols_))

    out = [both(reshape(a, Sh.s2(r, n)), r, n), both(dense(x, w, m, k, n), m, n), both(matmul(x, w, m, k, n), m, n),
           both(rows(a, r0, rr, n), rr, n), both(rcat(a, b, r, rr, n), r + rr, n)]
    out += [both(f(a, b, Sh.s2(r, n)), r, n) for f in _BINARY]
    out += [both(f(a, r, n), r, i64(1)) for f in _ROWWISE]
    out += [both(f(a), r, n, eq(nrows(a)).to(r), eq(ncols(a)).to(n)) for f in _UNARY]
    return out


SHAPES = ruleset(*_shape_rules(), name="shapes")


def _row_rules():
    """Row blocks (`rows`) distribute through row-wise ops, so one batch of a batched softmax is
    the softmax of that batch's rows; a row block of a batched product is one batch's GEMM."""
    out = []
    for f in _BINARY:
        lhs = rows(f(a, b, Sh.s2(t, n)), r0, rr, n)
        full = dict(a=(eq(nrows(a)).to(t), eq(ncols(a)).to(wa)), b=(eq(nrows(b)).to(t), eq(ncols(b)).to(wb)))
        row_a, row_b = (eq(nrows(a)).to(i64(1)), t > 1), (eq(nrows(b)).to(i64(1)), t > 1)
        out += [rule(eq(e).to(lhs), *full["a"], *full["b"], rr < t).then(
                    union(e).with_(f(rows(a, r0, rr, wa), rows(b, r0, rr, wb), Sh.s2(rr, n)))),
                rule(eq(e).to(lhs), *full["a"], *row_b, rr < t).then(
                    union(e).with_(f(rows(a, r0, rr, wa), b, Sh.s2(rr, n)))),
                rule(eq(e).to(lhs), *row_a, *full["b"], rr < t).then(
                    union(e).with_(f(a, rows(b, r0, rr, wb), Sh.s2(rr, n))))]
    # (a block of every row is the tensor itself: not distributed, or it would walk every chain of 1-row ops)
    out += [rule(eq(e).to(rows(f(a), r0, rr, n)), eq(nrows(a)).to(t), rr < t).then(
        union(e).with_(f(rows(a, r0, rr, n)))) for f in _UNARY]
    out += [rewrite(rows(f(a, t, n), r0, rr, i64(1))).to(f(rows(a, r0, rr, n), rr, n), rr < t) for f in _ROWWISE]
    out += [
        rewrite(bsel(a, i, nb, r, n)).to(rows(reshape(a, Sh.s2(nb * r, n)), i * r, r, n)),
        rule(eq(e).to(rows(reshape(bmm(a, b, nb, m, k, n), Sh.s2(t, n)), r0, m, n)), eq(t).to(nb * m),
             eq(r0 % m).to(i64(0))).then(
            union(e).with_(matmul(bsel(a, r0 / m, nb, m, k), bsel(b, r0 / m, nb, k, n), m, k, n))),
        rule(eq(e).to(reshape(a, Sh.s2(r, n))), eq(nrows(a)).to(r), eq(ncols(a)).to(n)).then(union(e).with_(a)),
        # a row block of a GEMM is the GEMM of the row block (one step of a sequence's input projection)
        rewrite(rows(dense(x, w, m, k, n), r0, rr, n)).to(dense(rows(x, r0, rr, k), w, rr, k, n)),
        rewrite(rows(matmul(x, w, m, k, n), r0, rr, n)).to(matmul(rows(x, r0, rr, k), w, rr, k, n)),
        # row blocks of a row concatenation (the sequence of hidden states) and the whole-tensor block
        rewrite(rows(rcat(a, b, r, t, n), r0, rr, n)).to(rows(a, r0, rr, n), r0 + rr <= r),
        rewrite(rows(rcat(a, b, r, t, n), r0, rr, n)).to(rows(b, r0 - r, rr, n), r0 >= r),
        rule(eq(e).to(rows(a, i64(0), rr, n)), eq(nrows(a)).to(rr)).then(union(e).with_(a)),
    ]
    return out


def _stable_attention():
    """`softmax(z - max(z)) @ v` with `z = q·kᵀ` -> `flex_attention` under `fused`'s guards.

    Softmax is invariant under subtracting the row max, so this is `fused`'s attention; the two
    softmax forms are NOT unioned: the max-free one has fewer ops, the host would extract it where
    the attention is not mapped, and `exp` overflows f32 for scores above ~88 (inf/NaN)."""
    st = Sh.s2(t, n)
    zs = sub(z, rmaxr(z, t, n), st)
    att = matmul(mulc(exp(zs), recip(rsum(exp(zs), t, n)), st), v, t, n, k)
    return rule(eq(e).to(att), eq(z).to(dense(q, kk, t, k, n)), eq(k % 16).to(i64(0)),
                k <= FLEXASR.max_features).then(union(e).with_(flex_attention(q, kk, v, t, n, k)))


def _form_rules():
    """torch's spellings -> the patterns' forms (`fused`)."""
    return [
        # the mean as a row sum divided by the constant n (torch's aten.mean)
        rule(eq(e).to(div(rsum(x, t, n), c, s)), eq(int_of(c)).to(n)).then(union(e).with_(mean(x, t, n))),
        rewrite(div(a, b, s)).to(mulc(a, recip(b), s)),
        # a bias held as a [1, n] tensor (TOSA's form) is a bias add like a reshaped 1-D one
        rule(eq(e).to(add(a, b, Sh.s2(m, n))), eq(nrows(b)).to(i64(1)), eq(ncols(b)).to(n), m > 1).then(
            union(e).with_(bias_add(a, reshape(b, Sh.s1(n)), m, n))),
        # torch's guard for fully masked rows (all scores -inf -> 0): the identity on finite scores
        rewrite(guard(x, p)).to(p),
        # torch-mlir's layer norm takes the variance in f64: compute it in f32 (the accelerator's own
        # format is narrower than either; step-run evaluates f64 generics in f32 as well)
        rewrite(trunc(ext(x))).to(x),
        *[rewrite(trunc(f(a, b, s))).to(f(trunc(a), trunc(b), s)) for f in (add, sub, mul)],
        *[rewrite(trunc(f(a, t, n))).to(f(trunc(a), t, n)) for f in _ROWWISE],
    ]


REAL_FORMS = ruleset(*_form_rules(), *_row_rules(), name="real_forms")
# with FlexASR among the targets: torch's stable attention is FlexASR's (its softmax subtracts the row max
# itself); matched as such, not by a union with the max-free softmax, which the host would extract
FLEXASR_FORMS = ruleset(_stable_attention(), name="flexasr_forms")
