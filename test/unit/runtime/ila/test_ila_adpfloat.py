"""AdaptivFloat<8,3> numerics: spec test vectors, round trips, fixed-point helpers."""

import numpy as np
import pytest

from steplus.runtime.ila import adpfloat as af


@pytest.mark.parametrize("x,b,code", [
    (0.2, 0, 0x7A), (-0.2, 0, 0xFA), (0.12890625, 0, 0x71), (-0.12890625, 0, 0xF0),
    (1.0, 0, 0x7F), (0.001, 0, 0x00), (0.00105, 0, 0x01), (3.0, 7, 0x48), (5.5, 7, 0x56),
    (0.0, 3, 0x00), (-1e9, 2, 0xFF),
])
def test_encode_known_values(x, b, code):
    assert af.encode(x, b) == code


def test_decode_known_values():
    assert af.decode(0x7A, 0) == 0.203125
    assert af.decode(0x7F, 0) == 0.2421875
    assert af.decode(0x80, 5) == 0.0 and af.decode(0x00, 5) == 0.0
    assert af.decode(0x48, 7) == 3.0


@pytest.mark.parametrize("b", range(8))
def test_every_code_round_trips(b):
    codes = np.arange(256, dtype=np.uint8)
    back = af.encode(af.decode(codes, b), b)
    expect = codes.copy()
    expect[0x80] = 0  # -0 canonicalises to +0
    assert (back == expect).all()


def test_bias_from_max_and_fixed14():
    assert af.bias_for(np.array([0.3, -1.5])) == 3  # floor(log2 1.5) + 3
    assert af.bias_for(np.array([100.0])) == 7 and af.bias_for(np.zeros(3)) == 0
    assert af.to_fixed14(0x7A, 0) == 3328 and af.to_fixed14(0xFA, 0) == -3328
    assert af.product_sum(0x7A, 0x7A) == 26 * 26 << 14


def test_pwl_activations():
    assert af.sigmoid14(0) == 8208 and af.sigmoid14(-(1 << 14)) == (1 << 14) - af.sigmoid14(1 << 14)
    assert af.tanh14(1 << 14) == 12528 and af.tanh14(5 << 14) == (1 << 14) - 1
