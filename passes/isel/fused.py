"""FlexASR's fused operations as e-graph patterns: LSTM cell, layer norm, attention.

The host ops these patterns cover (elementwise `mul`/`sub`, `sigmoid`,
`tanh`, `exp`, `recip`, `rsqrt`, row sums `rsum`) are terms like the ones of
`terms`; constants stay opaque leaves, and the importer records the facts the
guards need (`inv_of(c) = n` for a splat 1/n, `is_eps(c)` for a splat in
(0, 1e-3]).  Patterns are written over `addc`/`mulc`, the operands of an
addition/multiplication in the order a pattern wants: the `literal` rules
(always on, hence `exact` mode) add `addc(a, b)` for every `add(a, b)`; the
`commute` rules (flexible mode only) also add `addc(b, a)`.  `addc`/`mulc`
cost slightly more than `add`/`mul`, so an unmatched program is rebuilt from
its own ops.

- LSTM cell (PyTorch LSTMCell order, batch 1): gates
  `z = x·Wᵀ + h·Uᵀ + b`, `c' = σ(zf)·c + σ(zi)·tanh(zg)`, `h' = σ(zo)·tanh(c')`
  -> `flex_lstm(x, h, c, [Wi;Wf;Wg;Wo], [Ui;…], [bi;…])` (result rows: h', then c');
- layer norm over the last axis with γ, β and ε:
  `d = x - mean(x)`, `(d·rsqrt(mean(d·d) + ε))·γ + β` -> `flex_layernorm(x, γ, β)`, where
  `mean(x)` is the row sum times a constant 1/n (`literal`) or, in flexible mode, divided by a
  constant n (`frontend_forms.py`, the form torch writes);
- attention: `(e · recip(Σ e)) @ v` with `e = exp(q·kᵀ)` -> `flex_attention(q, k, v)`.

Example: `rules()` returns the three rulesets `(literal, commute, flexasr_fused)`.
"""

from __future__ import annotations

from egglog import eq, function, i64, i64Like, relation, rewrite, rule, ruleset, union, vars_

from steplus.dialects.target.ila import FLEXASR
from steplus.passes.isel.terms import Sh, Ten, add, dense, matmul, reshape


@function
def mul(a: Ten, b: Ten, s: Sh) -> Ten: ...
@function
def sub(a: Ten, b: Ten, s: Sh) -> Ten: ...
@function
def addc(a: Ten, b: Ten, s: Sh) -> Ten: ...
@function
def mulc(a: Ten, b: Ten, s: Sh) -> Ten: ...
@function
def sigmoid(a: Ten) -> Ten: ...
@function
def tanh(a: Ten) -> Ten: ...
@function
def exp(a: Ten) -> Ten: ...
@function
def recip(a: Ten) -> Ten: ...
@function
def rsqrt(a: Ten) -> Ten: ...
@function
def rsum(a: Ten, m: i64Like, n: i64Like) -> Ten: ...
@function
def concat4(a: Ten, b: Ten, c: Ten, d: Ten) -> Ten: ...
@function
def rows(a: Ten, start: i64Like, count: i64Like, n: i64Like) -> Ten: ...
@function
def inv_of(a: Ten) -> i64: ...
@function
def int_of(a: Ten) -> i64: ...
@function
def div(a: Ten, b: Ten, s: Sh) -> Ten: ...
@function
def mean(a: Ten, m: i64Like, n: i64Like) -> Ten: ...


is_eps = relation("is_eps", Ten)


@function
def flex_lstm(x: Ten, h: Ten, c: Ten, w: Ten, u: Ten, b: Ten, t: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def flex_layernorm(x: Ten, g: Ten, b: Ten, eps: Ten, t: i64Like, n: i64Like) -> Ten: ...
@function
def flex_attention(q: Ten, k: Ten, v: Ten, tq: i64Like, tk: i64Like, d: i64Like) -> Ten: ...


a, b_, x, h, c, g, bt, q, kk, v, e1, c1, c2, ce = vars_("a b x h c g bt q kk v e1 c1 c2 ce", Ten)
wi, wf, wg, wo, ui, uf, ug, uo, bi, bf, bg, bo = vars_("wi wf wg wo ui uf ug uo bi bf bg bo", Ten)
(s,) = vars_("s", Sh)
k, n, t, tq, tk, d = vars_("k n t tq tk d", i64)


def _gate(w, u, bias, k, n):
    sh = Sh.s2(1, n)
    return addc(addc(dense(x, w, i64(1), k, n), dense(h, u, i64(1), n, n), sh), reshape(bias, Sh.s2(1, n)), sh)


def _lstm_fits(k, n) -> list:
    """egglog conditions: an LSTM of k features and n hidden units fits the driver's buffers
    (`FLEXASR.lstm_failures`: per PE, 4·npe·(nvi + 4·npe) weight tiles of 256 B, nvi + 12·npe input
    vectors, npe act vectors; nvi = ceil(k/16), npe = ceil(n/64))."""
    nvi, npe = (k + (FLEXASR.vector - 1)) / FLEXASR.vector, (n + (FLEXASR.lanes - 1)) / FLEXASR.lanes
    nvo = FLEXASR.pes * npe
    return [k > 0, n > 0, nvo * (nvi + nvo) * 256 <= FLEXASR.pe_weight_bytes,
            nvi + 3 * nvo <= FLEXASR.pe_input_vectors, npe <= FLEXASR.pe_act_vectors]


def rules():
    literal = ruleset(
        rewrite(add(a, b_, s)).to(addc(a, b_, s)),
        rewrite(mul(a, b_, s)).to(mulc(a, b_, s)),
        # a row mean written as a row sum times the constant 1/n
        rule(eq(a).to(mulc(rsum(x, t, n), c1, s)), eq(inv_of(c1)).to(n)).then(union(a).with_(mean(x, t, n))),
        name="literal",
    )
    commute = ruleset(
        rewrite(add(a, b_, s)).to(addc(b_, a, s)),
        rewrite(mul(a, b_, s)).to(mulc(b_, a, s)),
        name="commute",
    )
    sh = Sh.s2(1, n)
    zi, zf, zg, zo = _gate(wi, ui, bi, k, n), _gate(wf, uf, bf, k, n), _gate(wg, ug, bg, k, n), _gate(wo, uo, bo, k, n)
    c_new = addc(mulc(sigmoid(zf), c, sh), mulc(sigmoid(zi), tanh(zg), sh), sh)
    h_new = mulc(sigmoid(zo), tanh(c_new), sh)
    lstm = flex_lstm(x, h, c, concat4(wi, wf, wg, wo), concat4(ui, uf, ug, uo), concat4(bi, bf, bg, bo), 1, k, n)
    # any in and hidden size the LSTM driver's buffers hold: it pads in to % 16 and each gate to % 64 with
    # zeros (runtime/ila/flexasr_driver.run_lstm); `FLEXASR.lstm_failures` says the same in Python
    lstm_rule = rule(eq(a).to(h_new), *_lstm_fits(k, n)).then(
        union(a).with_(rows(lstm, 0, 1, n)), union(c_new).with_(rows(lstm, 1, 1, n)))
    st, s1 = Sh.s2(t, n), Sh.s2(t, 1)
    dev = sub(x, mean(x, t, n), st)
    var = mean(mulc(dev, dev, st), t, n)
    norm = mulc(mulc(dev, rsqrt(addc(var, ce, s1)), st), reshape(g, Sh.s2(1, n)), st)
    ln = addc(norm, reshape(bt, Sh.s2(1, n)), st)
    ln_rule = rule(eq(a).to(ln), is_eps(ce), eq(n % 16).to(i64(0)),
                   n <= FLEXASR.max_features).then(union(a).with_(flex_layernorm(x, g, bt, ce, t, n)))
    e = exp(dense(q, kk, tq, d, tk))
    att = matmul(mulc(e, recip(rsum(e, tq, tk)), Sh.s2(tq, tk)), v, tq, tk, d)
    att_rule = rule(eq(a).to(att), eq(d % 16).to(i64(0)), d <= FLEXASR.max_features).then(
        union(a).with_(flex_attention(q, kk, v, tq, tk, d)))
    return literal, commute, ruleset(lstm_rule, ln_rule, att_rule, name="flexasr_fused")


LITERAL, COMMUTE, FLEXASR_FUSED = rules()
