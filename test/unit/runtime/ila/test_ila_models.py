"""The benchmark models: committed text is generated, and flexible matching finds more offloads."""

import importlib.util
from collections import Counter

import pytest

from conftest import REPO
from steplus.tools.loading import load_module

EX = REPO / "examples" / "isel"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_models", EX / "gen_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", sorted(_gen().MODELS))
def test_committed_models_are_generated(name):
    assert (EX / f"{name}.mlir").read_text() == _gen().MODELS[name]()


def _calls(name, targets, mode):
    # Saturation must stop by its iteration or node limit, never by the 5 s
    # wall-clock default: on a loaded machine that would drop matches.
    m = load_module(str(EX / f"{name}.mlir"),
                    f"isel{{targets={targets} mode={mode} time-limit=300.0}}")
    return Counter(op.callee.data for op in m.walk() if op.name == "ila.invoke")


@pytest.mark.parametrize("name,targets,exact,flexible", [
    ("resmlp", "flexasr", {}, {"flexasr.linear": 2}),
    # the LSTM cell is literal (exact pattern); the output layer needs add(reshape(dense)) -> linear
    ("lstm_lm", "flexasr", {"flexasr.lstm": 1}, {"flexasr.lstm": 1, "flexasr.linear": 1}),
    ("encoder_layer", "flexasr", {"flexasr.attention": 1, "flexasr.layernorm": 2},
     {"flexasr.linear": 6, "flexasr.attention": 1, "flexasr.layernorm": 2}),
    ("resnet_block", "hlscnn,flexasr", {"hlscnn.conv2d": 2}, {"hlscnn.conv2d": 2, "flexasr.maxpool": 2,
                                                              "flexasr.linear": 1}),
    # the 16 per-channel GEMMs of the grouped 3x3 ([64, 9] x [9, 1]: FlexASR's driver pads in to 16 and the one
    # output to 64), the pointwise convolution and the classifier
    ("mobilenet_block", "flexasr", {}, {"flexasr.linear": 18}),
])
def test_exact_vs_flexible(name, targets, exact, flexible):
    assert _calls(name, targets, "exact") == Counter(exact)
    assert _calls(name, targets, "flexible") == Counter(flexible)
