"""isel-verify proves torch's sequence nn.LSTM mapped to FlexASR, folded into one call over the sequence
(issue 29): torch's sigmoid `1/(1+exp(-x))` is the `sigmoid` of the FlexASR specification (one
uninterpreted function on both sides), and `+` is associative and commutative in the proof (torch adds
the two biases to the two GEMMs, the specification adds their sum to the GEMMs' sum)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import z3
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.passes.isel import symbolic as S
from steplus.passes.isel.equivalence import IselVerifyPass
from steplus.tools.registry import get_all_dialects
from steplus.utils.diagnostics import OpDiagnosticError, collecting_diagnostics


def test_sums_are_equal_up_to_associativity_and_commutativity_products_only_commute():
    ctx = S.Ctx("uf")
    a, b, c = (S.Sym(ctx.var(n), ctx) for n in "abc")
    assert z3.eq(((a + b) + c).t, (c + (b + a)).t)
    assert z3.eq((a * b).t, (b * a).t)
    assert not z3.eq(((a * b) * c).t, (a * (b * c)).t)
    assert not z3.eq((a + b).t, (a + c).t)


def test_torchs_sigmoid_is_the_specifications_sigmoid():
    ctx = S.Ctx("uf")
    dom = S.SymbolicDomain(ctx)
    x = S.tensor(ctx, "x", (2,))
    one = np.array(1.0, np.float32)
    # torch-mlir's body: negf, exp, addf 1, divf 1 / _
    torch_sigmoid = dom.binary("div", dom.lift(one, "1"), dom.binary("add", dom.unary("exp", dom.unary("neg", x)),
                                                                      dom.lift(one, "1")))
    spec = dom.unary("sigmoid", x)
    assert all(z3.eq(p.t, q.t) for p, q in zip(torch_sigmoid, spec))
    # 1 / (exp(x) + 1) is not a sigmoid of x; 2 / y is a division, 1 / y a reciprocal
    other = dom.binary("div", dom.lift(one, "1"), dom.binary("add", dom.unary("exp", x), dom.lift(one, "1")))
    assert str(other[0].t).startswith("recip(")
    assert str(dom.binary("div", dom.lift(np.array(2.0, np.float32), "2"), x)[0].t).startswith("fdiv(")
    # the neg it consumed occurs in no term: a difference over the sigmoid is not an abstraction gap
    assert ctx.opaque_functions([spec[0].t != spec[1].t]) == []
    assert ctx.opaque_functions() == ["fdiv", "neg"]  # all used (2 / x is a real fdiv)


@pytest.fixture(scope="module")
def lstm_text():
    """torch's nn.LSTM(16, 64) over 2 steps (batch 1) through torch-mlir (FlexASR's LSTM needs n % 64)."""
    torch = pytest.importorskip("torch")
    fx = pytest.importorskip("torch_mlir.fx")

    class Lstm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(16, 64)

        def forward(self, x):
            return self.lstm(x)[0]

    torch.manual_seed(0)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        return str(fx.export_and_import(Lstm().eval(), torch.randn(2, 1, 16), output_type="linalg-on-tensors",
                                        func_name="forward"))


def _verify(text, **options):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, text).parse_module()
    with collecting_diagnostics() as engine:
        IselVerifyPass(targets=("flexasr",), timeout_ms=600_000, **options).apply(ctx, module)
    return [(d.severity, d.message) for d in engine.diagnostics if d.severity != "note"]


def test_folded_lstm_is_proven(lstm_text):
    assert "math.exp" in lstm_text and "arith.negf" in lstm_text  # torch's sigmoid, not tosa.sigmoid
    diags = _verify(lstm_text)
    assert ("remark", "isel-verify: @forward: 1 invocations (flexasr=1) equivalent to the input on all 128 "
                      "outputs (z3: unsat)") in diags
    assert not [d for d in diags if d[0] in ("warning", "error")]


@pytest.mark.slow
def test_a_wrong_lstm_specification_is_a_counterexample_not_an_abstraction_gap(lstm_text, monkeypatch):
    real = S.accel_spec

    def swapped_gates(callee, args, attrs):
        if callee != "flexasr.lstm":
            return real(callee, args, attrs)
        x, h0, c0, w, u, b = args
        n = u.shape[1]
        perm = np.r_[n:2 * n, 0:n, 2 * n:4 * n]  # the input and forget gates exchanged
        return real(callee, [x, h0, c0, w[perm], u[perm], b[perm]], attrs)

    monkeypatch.setattr(S, "accel_spec", swapped_gates)
    with pytest.raises(OpDiagnosticError, match=r"selected program differs from the input \(z3: sat\)"):
        _verify(lstm_text)


@pytest.mark.slow
def test_per_step_lstm_is_proven(lstm_text):
    diags = _verify(lstm_text, lstm="step")
    assert ("remark", "isel-verify: @forward: 2 invocations (flexasr=2) equivalent to the input on all 128 "
                      "outputs (z3: unsat)") in diags
