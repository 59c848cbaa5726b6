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

Example::

    eg.run(NORMALIZE)   # part of `terms.saturate` in flexible mode
"""

from __future__ import annotations

from egglog import function, i64, i64Like, rewrite, ruleset, vars_

from steplus.passes.isel.fused import addc, exp, recip, sigmoid
from steplus.passes.isel.terms import Sh, Ten, add, dense, reshape


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
    rewrite(cols(add(a, b, s), c0, cc, m, n)).to(add(cols(a, c0, cc, m, n), cols(b, c0, cc, m, n), Sh.s2(m, cc))),
    rewrite(cols(addc(a, b, s), c0, cc, m, n)).to(
        addc(cols(a, c0, cc, m, n), cols(b, c0, cc, m, n), Sh.s2(m, cc))),
    rewrite(cols(dense(x, w, m, k, n), c0, cc, m, n)).to(dense(x, wrows(w, c0, cc, n, k), m, k, cc)),
    rewrite(cols(reshape(b, Sh.s2(1, n)), c0, cc, i64(1), n)).to(reshape(vpart(b, c0, cc, n), Sh.s2(1, cc))),
    name="normalize",
)
