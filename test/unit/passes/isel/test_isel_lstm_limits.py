"""isel's FlexASR LSTM guard is what the LSTM driver's buffers hold (spec §1.3), not `hidden <= 4080`.

A layer of I features and H hidden units is padded to nvi = ceil(I/16) input vectors and 4·npe hidden
vectors, npe = ceil(H/64) per PE.  Each PE stores 4 gates x npe x (nvi + 4·npe) weight tiles of
16x16 codes (256 B) in its 1 MiB weight buffer, and nvi + 3·4·npe vectors (x, gate biases, h, the
recurrent manager's zero biases) in the 256 vectors of its input buffer MMIO reaches.  Expected values
come from those two sizes alone (a brute force here, not `FLEXASR.lstm_failures`): a square layer
fits up to 704 (npe = 11: 4·11·88 tiles = 968 KiB; npe = 12 needs 1116 KiB), a 64-unit layer up to
3904 features (244 + 12 = 256 input vectors)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from conftest import REPO
from steplus.dialects.target.ila import FLEXASR
from steplus.passes.isel import IselPass
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila.accel import lstm_reference
from steplus.runtime.ila.core import IlaError
from steplus.tools.registry import get_all_dialects

WEIGHT_BUFFER, TILE, INPUT_VECTORS = 1 << 20, 16 * 16, 4096 // 16  # spec §1.3


def _fits(features: int, hidden: int) -> bool:
    nvi, nvo = -(-features // 16), 4 * -(-hidden // 64)
    return nvo * (nvi + nvo) * TILE <= WEIGHT_BUFFER and nvi + 3 * nvo <= INPUT_VECTORS


def test_the_largest_layers_the_buffers_hold():
    square = max(h for h in range(1, 4081) if _fits(h, h))
    assert square == 704
    assert max(i for i in range(1, 4081) if _fits(i, 64)) == 3904
    for i, h in [(704, 704), (705, 705), (3904, 64), (3905, 64), (1536, 512), (1537, 512), (200, 200),
                 (16, 2048), (4080, 64), (64, 4080)]:
        assert (FLEXASR.lstm_failures(i, h) == []) == _fits(i, h), (i, h)
    assert FLEXASR.lstm_failures(705, 705) == [
        "a PE's weights need 4 gates x 12 x (45 + 48) tiles of 256 B = 1116 KiB > 1024 KiB"]
    assert FLEXASR.lstm_failures(3905, 64) == [
        "a PE's input buffer needs 245 input + 3 x 4 bias and state vectors = 257 > 256"]


def _lstm_cell(features: int, hidden: int) -> str:
    """The LSTM cell of test/filecheck/passes/isel-fused.mlir (16 features, 64 units) at another size."""
    text = (REPO / "test" / "filecheck" / "passes" / "isel-fused.mlir").read_text()
    body = text[text.index("\nfunc.func @lstm_cell") + 1:]
    body = body[:body.index("\n}\n") + 3]
    dims = {"1": "1", "16": str(features), "64": str(hidden)}
    body = re.sub(r"tensor<([0-9x]+)xf32>",
                  lambda m: "tensor<" + "x".join(dims[d] for d in m.group(1).split("x")) + "xf32>", body)
    return body.replace("dense<[1, 64]>", f"dense<[1, {hidden}]>")


def _isel_callees(text: str) -> list[str]:
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, text).parse_module()
    IselPass(targets=("flexasr",), mode="exact").apply(ctx, module)
    return [op.callee.data for op in module.walk() if op.name == "ila.invoke"]


@pytest.mark.parametrize(("features", "hidden", "taken"), [(16, 64, True), (704, 704, True), (705, 705, False),
                                                            (3904, 64, True), (3905, 64, False)])
def test_isel_takes_an_lstm_cell_exactly_when_the_driver_holds_it(features, hidden, taken):
    assert _isel_callees(_lstm_cell(features, hidden)) == (["flexasr.lstm"] if taken else [])


def _layer(rng, steps: int, features: int, hidden: int):
    return (rng.standard_normal((steps, features)) * 0.5, rng.standard_normal((4 * hidden, features)) * 0.05,
            rng.standard_normal((4 * hidden, hidden)) * 0.05, rng.standard_normal(4 * hidden) * 0.1)


@pytest.mark.parametrize(("features", "hidden"), [(3904, 64), (1536, 512)])
def test_the_driver_runs_the_largest_layers_on_whole_tensors(features, hidden, monkeypatch):
    """At the boundary (1536 x 512: exactly 1 MiB of weights a PE) the driver's vectorized path models the
    call: stepping the commands (`execute`) is never reached."""
    def no_commands(*_a, **_k):
        raise AssertionError("fell back to the per-command simulation")

    monkeypatch.setattr(fd, "execute", no_commands)
    x, w, u, b = _layer(np.random.default_rng(0), 2, features, hidden)
    y, counts = fd.run_lstm(x, w, u, b)
    assert y.shape == (2, hidden) and counts["reads"] == 2 * hidden // 16
    ref = lstm_reference(x, np.zeros((1, hidden)), np.zeros((1, hidden)), w, u, b)[:-1]
    # AdaptivFloat<8,3> codes with the zero-state act bias 5 (h's values below 2^-5 flush): 3-6 % here
    assert float(np.linalg.norm(y - ref) / np.linalg.norm(ref)) < 0.1


def test_the_driver_refuses_a_layer_past_its_buffers():
    x, w, u, b = _layer(np.random.default_rng(0), 1, 3905, 64)
    with pytest.raises(IlaError, match=r"3905 features and 64 hidden units do not fit the driver's buffers: "
                                       r"a PE's input buffer needs 245 input"):
        fd.run_lstm(x, w, u, b)


def _gb_steps(nvi: int, nvo: int) -> int:
    """The most timesteps of one call: the driver puts the input [T, nvi] at vector 0 and the output [T, nvo] at
    vector base1 = (T // 16 + 2)·16·nvi (a 16-bit field); vector v of step t of a region at byte B lives at
    B + (t // 16)·nv·256 + (t % 16)·16 + v·256 (spec §1.4.3), and both must end within the 1 MiB buffer."""
    def end(t, nv, base):
        return base + ((t - 1) // 16) * nv * 256 + ((t - 1) % 16) * 16 + (nv - 1) * 256 + 16

    best = 0
    for t in range(1, 1 << 16):
        base1 = (t // 16 + 2) * 16 * nvi
        if base1 < 1 << 16 and end(t, nvi, 0) <= 1 << 20 and end(t, nvo, 16 * base1) <= 1 << 20:
            best = t
    return best


def test_a_long_sequence_runs_as_calls_the_global_buffer_holds(monkeypatch):
    """LSTM-WLM's padded 200-wide layer (13 input, 16 hidden vectors) holds 2240 steps a call; a longer
    sequence from a state (isel's whole-sequence call) runs as several calls, the state passed through the
    host with the same act bias, so the output is the one call's bit for bit (checked here with the limit
    lowered to 2 steps on a 6-step sequence)."""
    assert fd.lstm_max_steps(13, 16) == _gb_steps(13, 16) == 2240
    assert fd.lstm_max_steps(4, 4) == _gb_steps(4, 4)
    rng = np.random.default_rng(1)
    x, w, u, b = _layer(rng, 6, 64, 64)
    h0, c0 = rng.uniform(-0.5, 0.5, 64), rng.uniform(-0.5, 0.5, 64)
    y, counts = fd.run_lstm(x, w, u, b, h0=h0, c0=c0)
    monkeypatch.setattr(fd, "lstm_max_steps", lambda nvi, nvo: 2)
    y2, counts2 = fd.run_lstm(x, w, u, b, h0=h0, c0=c0)
    assert counts["lstm_calls"] == 1 and counts2["lstm_calls"] == 3
    assert np.array_equal(y, y2)


def test_a_zero_state_call_past_the_global_buffer_is_refused():
    x, w, u, b = _layer(np.random.default_rng(0), 2241, 200, 200)
    with pytest.raises(IlaError, match=r"2241 timesteps of 13 input and 16 hidden vectors do not fit the 1 MiB "
                                       r"global buffer \(at most 2240 a call\)"):
        fd.run_lstm(x, w, u, b)
