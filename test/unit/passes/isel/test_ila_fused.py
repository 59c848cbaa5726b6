"""FlexASR LSTM, layer norm and attention mappings: ILA execution against the float32 program."""

import numpy as np
import pytest

from conftest import REPO
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila.accel import lstm_reference
from steplus.runtime.ila.host import random_arguments, run_function
from steplus.tools.loading import load_module

EX = REPO / "examples" / "isel"
SMALL = REPO / "test" / "filecheck" / "passes" / "inputs" / "isel-fused-small.mlir"
# Saturation must stop by its iteration or node limit, never by the 5 s wall-clock default:
# on a loaded machine that would drop matches and change the pinned invocation counts.
PIPE = "isel{targets=flexasr time-limit=300.0},ila-cancel-store-load,convert-ila-to-commands"


def _args(module, name, seed):
    return random_arguments(module, name, seed)


def _rel(r, y):
    return float(np.linalg.norm(np.asarray(r, np.float64) - y) / np.linalg.norm(r))


def _compare(path, name, seed=0):
    src = load_module(str(path))
    args = _args(src, name, seed)
    refs, _ = run_function(src, name, args, backend="reference")
    outs, stats = run_function(load_module(str(path), PIPE), name, args)
    return [_rel(r, y) for r, y in zip(refs, outs)], stats, args


def test_lstm_from_a_state_matches_the_reference():
    rng = np.random.default_rng(0)
    x, h0, c0 = rng.standard_normal((3, 32)) * 0.5, rng.uniform(-0.9, 0.9, 64), rng.standard_normal(64) * 0.5
    w, u, b = rng.standard_normal((256, 32)) * 0.2, rng.standard_normal((256, 64)) * 0.2, rng.standard_normal(256) * 0.1
    y, counts = fd.run_lstm(x, w, u, b, h0=h0, c0=c0)
    ref = lstm_reference(x, h0[None], c0[None], w, u, b)
    assert y.shape == (4, 64) and counts["reads"] == 3 * 4 + 4
    assert _rel(ref, y) < 0.05
    # the state is really used: starting from zeros gives a different result
    zero = lstm_reference(x, 0 * h0[None], 0 * c0[None], w, u, b)
    assert _rel(ref, zero) > 0.2


def test_lstm_lm_step_on_flexasr():
    errs, stats, _ = _compare(EX / "lstm_lm.mlir", "lstm_lm")
    assert stats.invocations == {"flexasr": 2}  # the LSTM cell and the output linear layer
    assert all(e < 0.06 for e in errs), errs


def test_encoder_layer_on_flexasr():
    (err,), stats, _ = _compare(EX / "encoder_layer.mlir", "encoder_layer")
    assert stats.invocations == {"flexasr": 9}  # 6 linear, attention, 2 layer norms
    assert err < 0.08


@pytest.mark.parametrize("name", ["layernorm", "attention"])
def test_small_fused_ops_on_flexasr(name):
    (err,), stats, _ = _compare(SMALL, name, seed=1)
    assert stats.invocations == {"flexasr": 1}
    assert err < 0.05
