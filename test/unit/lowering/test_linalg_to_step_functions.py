"""The step library functions convert-linalg-to-step adds (issue 18, item 2): element-wise
sub/max/neg/square/rsqrt, the -inf init, the scalar families and the router's row
functions — their numpy semantics against independent references (numpy / torch),
their FLOPs and output tiles, and the family names the parser refuses."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.step.functions import all_families, get_function, member_name

RNG = np.random.default_rng(5)
X = RNG.standard_normal((4, 8))


@pytest.mark.parametrize("name,ref", [
    ("sub", lambda a, b: a - b), ("max", lambda a, b: np.where(a > b, a, b)),
])
def test_binary_functions_broadcast_a_column(name, ref):
    f = get_function(name)
    col = RNG.standard_normal((4, 1))
    np.testing.assert_array_equal(f.numpy(X, col), ref(X, col))
    assert f.out_shape([(4, 8), (4, 1)]) == (4, 8)
    assert f.flops([(4, 8), (4, 1)]) == 32  # one per output element


def test_unary_functions():
    pos = np.abs(X) + 0.5
    np.testing.assert_allclose(get_function("rsqrt").numpy(pos), pos ** -0.5, rtol=1e-15)
    np.testing.assert_array_equal(get_function("square").numpy(X), X * X)
    np.testing.assert_array_equal(get_function("neg").numpy(X), -X)
    assert get_function("rsqrt").flops([(4, 8)]) == 4 * 32
    assert get_function("square").flops([(4, 8)]) == 32
    assert np.isneginf(get_function("neg_inf").numpy()).all()


@pytest.mark.parametrize("name,c,ref", [
    ("add_scalar[1e-06]", 1e-6, lambda a: a + 1e-6),
    ("sub_scalar[0.5]", 0.5, lambda a: a - 0.5),
    ("mul_scalar[-0.125]", -0.125, lambda a: a * -0.125),
    ("div_scalar[16.0]", 16.0, lambda a: a / 16.0),
    ("rsub_scalar[1.0]", 1.0, lambda a: 1.0 - a),
    ("rdiv_scalar[3.0]", 3.0, lambda a: 3.0 / a),
])
def test_scalar_families(name, c, ref):
    f = get_function(name)
    assert f.name == name and f.arity == 1
    assert member_name(name.split("[")[0], c) == name
    np.testing.assert_array_equal(f.numpy(X), ref(X))
    assert f.flops([(4, 8)]) == 32 and f.out_shape([(4, 8)]) == (4, 8)


@pytest.mark.parametrize("name", [
    "mul_scalar[nan]", "mul_scalar[inf]", "mul_scalar[1e999]", "mul_scalar[]",
    "mul_scalar[1,2]", "mul_scalar[__import__]", "row_topk_index[0]", "row_topk_index[2.5]",
    "row_topk_index[2000000]", "nosuch[1]", "mul_scalar", "mul_scalar[1][2]",
])
def test_malformed_family_members_are_unknown(name):
    assert get_function(name) is None


def test_families_are_listed():
    assert {"add_scalar", "mul_scalar", "div_scalar", "row_topk_softmax", "row_softmax_topk",
            "row_topk_index"} <= set(all_families())


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_router_functions_equal_torch(k):
    logits = RNG.standard_normal((6, 8))
    t = torch.from_numpy(logits)
    top, idx = torch.topk(t, k, dim=-1)
    mixtral = torch.softmax(top, dim=-1).numpy()
    w, _ = torch.topk(torch.softmax(t, dim=-1), k, dim=-1)
    qwen = (w / w.sum(-1, keepdim=True)).numpy()
    np.testing.assert_array_equal(get_function(f"row_topk_index[{k}]").numpy(logits), idx.numpy())
    np.testing.assert_allclose(get_function(f"row_topk_softmax[{k}]").numpy(logits), mixtral,
                               rtol=1e-12)
    np.testing.assert_allclose(get_function(f"row_softmax_topk[{k}]").numpy(logits), qwen,
                               rtol=1e-12)
    for fam in ("row_topk_index", "row_topk_softmax", "row_softmax_topk"):
        assert get_function(f"{fam}[{k}]").out_shape([(6, 8)]) == (6, k)
    assert get_function(f"row_topk_index[{k}]").flops([(6, 8)]) == 6 * k * 8


@pytest.mark.parametrize("name,ref", [
    ("gelu", lambda t: torch.nn.functional.gelu(t)),
    ("erf", torch.erf), ("tanh", torch.tanh), ("sigmoid", torch.sigmoid),
    ("max_scalar[0.0]", torch.relu), ("min_scalar[6.0]", lambda t: torch.clamp(t, max=6.0)),
])
def test_activation_functions_equal_torch(name, ref):
    """The activations real models use (issue 26), on float64 tiles against torch."""
    x = RNG.standard_normal((4, 8)) * 4
    got = get_function(name).numpy(x)
    np.testing.assert_allclose(got, ref(torch.from_numpy(x)).numpy(), rtol=1e-12, atol=1e-15)


def test_min_broadcasts_and_sigmoid_saturates():
    col = RNG.standard_normal((4, 1))
    np.testing.assert_array_equal(get_function("min").numpy(X, col), np.minimum(X, col))
    with np.errstate(all="raise"):  # exp(1000) overflows: sigmoid is 0, no warning escapes
        assert get_function("sigmoid").numpy(np.array([[-1000.0, 1000.0]])).tolist() == \
            [[0.0, 1.0]]
