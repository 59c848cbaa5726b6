"""FlexASR ILA instructions: config fields, data movement, linear, pools, LSTM."""

import numpy as np
import pytest

from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.flexasr import GB, FlexAsr, read, write
from steplus.runtime.ila.flexasr_driver import (
    linear_fragment, maxp, pool_fragment, run_linear, run_lstm, run_pool,
)


def test_decodes_are_exclusive_and_interface_checked():
    sim = FlexAsr()
    assert sim.check_decode_exclusive() == []
    with pytest.raises(IlaError):
        sim.step(write(0x10, 1))
    assert sim.step(write(GB + 0x1234, 1)) is None  # valid, decodes nothing


def test_store_load_and_config_fields():
    sim = FlexAsr()
    assert sim.step(write(GB + 0x500010, 0x0102)) == "GB_CORE_STORE_LARGE"
    sim.step(read(GB + 0x500010))
    assert sim.data_out[:3] == [2, 1, 0] and sim.vir_output[GB + 0x500011] == 1
    sim.step(write(GB + 0x700010, 0xA0410010000000001))  # spec §6.4 gb_control
    g = lambda f: sim.state.get("ctrl." + f)
    assert (g("is_valid"), g("mem_idx_2"), g("num_vector_1"), g("num_vector_2"), g("num_timestep")) == (1, 1, 16, 4, 10)
    assert sim.step(write(GB + 0x20, 1)) is None  # layer reduce not configured valid


def test_maxpool_command_words_and_counts():
    cmds = maxp(16, 49)
    assert cmds[0]["data"] == 0x31 and cmds[1]["data"] == 0x100031000000000001
    codes = np.zeros((16, 49, 16), np.uint8)
    frag = pool_fragment(codes, 4)
    assert sum(1 for c in frag if c.get("wr")) == 784 + 12
    assert sum(1 for c in frag if c.get("rd")) == 49


def test_maxpool_chain_is_exact_on_codes():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 784))
    out, counts = run_pool(a, 4)
    q = af.quantize(a, af.bias_for(a))
    assert (out == q.max(axis=0)).all()
    assert counts == {"writes": 796, "reads": 49, "waits": 4}


def test_meanpool_one_step():
    a = np.array([[0.5] * 16, [0.25] * 16])
    out, _ = run_pool(a, 1, mode=1)
    assert (out == 0.375).all()


def test_linear_layer_bit_accurate_and_counts():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((10, 256)) * 0.5, rng.standard_normal((64, 256)) * 0.1, rng.standard_normal(64) * 0.1
    y, counts = run_linear(x, w, b)
    assert counts == {"writes": 1207, "reads": 40, "waits": 1}
    bw, bi, bb = af.bias_for(w), af.bias_for(x), af.bias_for(b)
    xc, wc, bc = af.encode(x, bi), af.encode(w, bw), af.encode(b, bb)
    acc = af.wrap(af.product_sum(wc[None], xc[:, None, :]).sum(-1), 32)
    v = af.clamp_act((acc >> (14 - bw - bi)) + af.to_fixed14(bc, bb))
    bo = af.bias_for(af.decode(xc, bi) @ af.decode(wc, bw).T + af.decode(bc, bb))
    assert (y == af.decode(af.from_fixed14(v, bo), bo)).all()
    frag = linear_fragment(xc, wc, bc, 0, 0, 0, 2)
    words = {c["addr"]: c["data"] for c in frag if c.get("wr")}
    assert words[0x34400010] == 0x10101000001 and words[0x34400020] == 0x100000001000000000
    assert words[0x35800010] == 0x102020001 + (1 << 64) and words[0x33400010] == 0x200000400000010


def test_lstm_close_to_float_reference():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 64)) * 0.5
    wi, wh, b = rng.standard_normal((256, 64)) * 0.2, rng.standard_normal((256, 64)) * 0.2, rng.standard_normal(256) * 0.1
    h_acc, counts = run_lstm(x, wi, wh, b)
    sig = lambda z: 1 / (1 + np.exp(-z))
    h, c, ref = np.zeros(64), np.zeros(64), []
    for t in range(5):
        i, f, g, o = np.split(wi @ x[t] + wh @ h + b, 4)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        ref.append(h)
    err = np.linalg.norm(h_acc - np.array(ref)) / np.linalg.norm(ref)
    assert 0 < err < 0.1
    assert counts["reads"] == 20


def test_z3_rendering_of_config_and_data_movement():
    import z3

    sim = FlexAsr()
    inp = sim.z3_inputs()
    nxt = sim.z3_next_state("CONFIG_GB_CONTROL", inputs=inp)
    s = z3.Solver()  # num_timestep is bytes 9:8 of the data word, for every command
    s.add(nxt["ctrl.num_timestep"] != z3.Extract(79, 64, inp["data"]))
    assert s.check() == z3.unsat
    # a store followed by a load of the same address returns the stored word
    st = sim.z3_next_state("GB_CORE_STORE_LARGE", inputs=inp)
    out = sim.z3_next_state("GB_CORE_LOAD_LARGE", state=st, inputs=inp)["data_out"]
    s = z3.Solver()
    s.add(out != inp["data"])
    assert s.check() == z3.unsat
    with pytest.raises(IlaError, match="no symbolic update"):
        sim.z3_next_state("GB_CONTROL_START")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_are_errors_not_nan_outputs(bad: float) -> None:
    """AdaptivFloat has no NaN or infinity: each entry point refuses them (a NaN input ran to
    a NaN output that step-run reported as 'relative error nan')."""
    from steplus.runtime.ila import flexasr_driver as fd

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 16)), rng.normal(size=(64, 16))
    u, b = rng.normal(size=(64, 16)), rng.normal(size=64)
    xb = x.copy()
    xb[1, 3] = bad
    h0, c0 = np.zeros(16), np.zeros(16)
    calls = [("flexasr linear: input", lambda: fd.run_linear(xb, w, b)),
             ("flexasr lstm: input", lambda: fd.run_lstm(xb, w, u, b)),
             ("flexasr lstm: input", lambda: fd.run_lstm(xb, w, u, b, h0=h0, c0=c0)),  # chunked
             ("flexasr lstm: c0", lambda: fd.run_lstm(x, w, u, b, h0=h0, c0=np.full(16, bad))),
             ("flexasr pool: input", lambda: fd.run_pool(xb, mode=1)),
             ("flexasr layernorm: input", lambda: fd.run_layernorm(xb, np.ones(16), np.zeros(16))),
             ("flexasr attention: query", lambda: fd.run_attention_rows(xb, x, x)),
             ("flexasr attention: value", lambda: fd.run_attention(x[0], x, xb))]
    for what, call in calls:
        with pytest.raises(IlaError, match=f"^{what} holds NaN or infinity, which AdaptivFloat "
                                           f"cannot encode$"):
            call()
    if bad == -np.inf:  # a max pool's padding: the max of the other element of the window
        y, _ = fd.run_pool(xb, 1, mode=0)
        assert y[0, 3] == af.decode(af.encode(xb[0, 3], af.bias_for(xb)), af.bias_for(xb))
    else:
        with pytest.raises(IlaError, match="^flexasr pool: input holds NaN or infinity"):
            fd.run_pool(xb, mode=0)


def test_lstm_chunks_of_a_saturating_sequence_warn_nothing() -> None:
    """exp overflow in the float reference is a closed gate (0), not a RuntimeWarning."""
    import warnings

    from steplus.runtime.ila.flexasr_driver import lstm_chunks

    rng = np.random.default_rng(0)
    w, u, b = rng.normal(size=(64, 16)), rng.normal(size=(64, 16)), rng.normal(size=64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chunks = lstm_chunks(np.full((3, 16), 1e4), w, u, b, np.zeros(16), np.zeros(16))
    assert chunks[0][0] == 0 and chunks[-1][1] == 3
