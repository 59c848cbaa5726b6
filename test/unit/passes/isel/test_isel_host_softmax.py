"""The host keeps torch's stable softmax: isel never extracts the max-free form for it.

Softmax is invariant under subtracting the row max, and FlexASR's attention subtracts it itself,
so torch's attention with the stable softmax is FlexASR's (`frontend_forms.FLEXASR_FORMS`).  The
max-free form is NOT an alternative of the softmax's e-class: it has fewer ops, so extraction would
give it to the host where the attention is not mapped, and `exp` overflows f32 above ~88."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.dialects.ila import InvokeOp
from steplus.passes.isel import IselPass
from steplus.runtime.ila.host import run_function
from steplus.tools.registry import get_all_dialects

ATTENTION = Path(__file__).resolve().parents[4] / "examples/isel/forms/attention.mlir"


def _isel(targets):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    m = Parser(ctx, ATTENTION.read_text()).parse_module()
    IselPass(targets=targets, mode="flexible").apply(ctx, m)
    return m


def _inputs_and_reference():
    """q, k, v [1, 2, 16, 16] scaled so that scores q·kᵀ/4 (the form's 0.5·q, 0.5·k) exceed 88."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 16, 16)).astype(np.float32) * 6 for _ in range(3))
    s = (q.astype(np.float64) * 0.5) @ (k.astype(np.float64) * 0.5).transpose(0, 1, 3, 2)
    assert s.max() > 100.0  # exp(s) is inf in f32 (above ~88.7)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (q, k, v), (p / p.sum(-1, keepdims=True)) @ v


def test_host_softmax_subtracts_the_row_max_when_attention_is_not_mapped():
    m = _isel(("vta",))
    assert [op.callee.data for op in m.walk() if isinstance(op, InvokeOp)] == ["vta.dense"] * 4
    # the row max is still computed on the host (the max-free softmax has no row max)
    assert [op.name for op in m.walk() if op.name == "tosa.reduce_max"] == ["tosa.reduce_max"]
    args, want = _inputs_and_reference()
    (y,), _ = run_function(m, "forward", list(args), backend="reference")
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def test_stable_attention_still_maps_to_flexasr():
    m = _isel(("flexasr",))
    assert [op.callee.data for op in m.walk() if isinstance(op, InvokeOp)] == ["flexasr.attention"] * 2
    assert not any(op.name in ("tosa.reduce_max", "arith.maximumf") for op in m.walk())
