"""HLSCNN ILA: config registers, scratchpad copy, conv2d in both weight widths."""

import numpy as np
import pytest

from steplus.runtime.ila.hlscnn import BASE, SPAD0, FixedFormats, Hlscnn
from steplus.runtime.ila.hlscnn_driver import cfg, run_conv2d, vir


def test_decodes_exclusive_and_config():
    sim = Hlscnn()
    assert sim.check_decode_exclusive() == []
    sim.step(cfg("ConvInputSize", (3 << 20) | (5 << 10) | 7))
    assert sim.state.get("cfg21") == (3 << 20) | (5 << 10) | 7


def test_spad_copy_from_virtual_memory():
    sim = Hlscnn()
    sim.run([vir(0x100, 0xABCD), cfg("SocMemRdWrLength", 1), cfg("SocMemBaseAddr", 0x100),
             {"wr": 1, "rd": 0, "addr": BASE + SPAD0 + 32, "data": 0},
             {"wr": 0, "rd": 1, "addr": BASE + SPAD0 + 32, "data": 0}])
    assert sim.output_log[-1][0] == 0xABCD - 0x10000


def _ref(x, w):
    K, C, KH, KW = w.shape
    OH, OW = x.shape[1] - KH + 1, x.shape[2] - KW + 1
    return np.array([[[np.sum(w[k] * x[:, i:i + KH, j:j + KW]) for j in range(OW)]
                      for i in range(OH)] for k in range(K)])


@pytest.mark.parametrize("bits,tol", [(8, 0.05), (16, 0.01)])
def test_conv2d_close_to_float(bits, tol):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((16, 10, 10)), rng.standard_normal((32, 16, 3, 3)) * 0.2
    y, counts = run_conv2d(x, w, fmt=FixedFormats(wgt_bits=bits))
    err = np.linalg.norm(y - _ref(x, w)) / np.linalg.norm(_ref(x, w))
    assert 0 < err < tol
    assert counts["reads"] == 32 * 8 * 8


def test_conv2d_exact_on_representable_values():
    x = np.arange(2 * 4 * 4).reshape(2, 4, 4) / 8.0
    w = np.array([[[[0.5, -0.25], [1.0, 0.0]], [[0.25, 0.5], [-1.0, 0.75]]]])
    y, _ = run_conv2d(x, w, stride=(2, 2), fmt=FixedFormats(wgt_bits=16))
    ref = _ref(x, w)[:, ::2, ::2]
    assert (y == ref).all()
