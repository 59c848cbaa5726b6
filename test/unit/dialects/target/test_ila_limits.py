"""The ILA limits (dialects/target/ila.py) are the ILA models' register widths and buffer sizes,
and the drivers refuse exactly what isel does not select (issue 25 §2: each fact once)."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.target.ila import FLEXASR, HLSCNN, VTA
from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.hlscnn import Hlscnn
from steplus.runtime.ila.hlscnn_driver import conv_fragment
from steplus.runtime.ila.vta import Vta
from steplus.runtime.ila.vta_driver import dense_fragment


def test_limits_are_the_models_field_widths_and_buffers():
    # register fields: K, KH, KW 8 bits; strides 3 bits; H, W 10 bits; C 12 bits
    assert (HLSCNN.max_filters, HLSCNN.max_kernel) == (2**8 - 1, 2**8 - 1)
    assert HLSCNN.max_stride == 2**3 - 1
    assert (HLSCNN.max_height, HLSCNN.max_channels) == (2**10 - 1, 2**12 - 1)
    assert FLEXASR.max_vectors == 2**8 - 1 and FLEXASR.max_features == 4080
    # the buffers as the ILA models allocate them
    mems = Hlscnn().state.mems
    assert len(mems["spad1"]) == HLSCNN.spad_bytes and HLSCNN.max_output_positions == 8192
    vta = Vta().state.mems
    assert vta["inp"].shape == (VTA.inp_rows, VTA.block)
    assert vta["acc"].shape == (VTA.acc_rows, VTA.block)
    assert vta["wgt"].shape == (VTA.wgt_blocks, VTA.block, VTA.block)
    assert VTA.max_gemm_blocks == 1023  # one micro-op per weight block, plus one


def test_hlscnn_driver_refuses_past_the_limits():
    x = np.zeros((1, 8, 8), np.int64)
    ok = np.zeros((1, 1, 1, 1), np.int64)
    conv_fragment(x, ok, (HLSCNN.max_stride, 1), Hlscnn().fmt)
    with pytest.raises(IlaError, match="register limits"):
        conv_fragment(x, ok, (HLSCNN.max_stride + 1, 1), Hlscnn().fmt)
    # K*H*W past SPAD1: 129 filters over 8x8 = 8256 > 8192 output positions
    with pytest.raises(IlaError, match="exceeds SPAD1"):
        conv_fragment(x, np.zeros((129, 1, 1, 1), np.int64), (1, 1), Hlscnn().fmt)


def test_vta_driver_refuses_past_the_micro_op_buffer():
    x = np.zeros((1, 16 * 33), np.int8)
    dense_fragment(x, np.zeros((16 * 31, 16 * 33), np.int8))  # 31 x 33 = 1023 blocks
    with pytest.raises(IlaError, match="exceeds one fragment's buffers"):
        dense_fragment(np.zeros((1, 16 * 32), np.int8),
                       np.zeros((16 * 32, 16 * 32), np.int8))  # 32 x 32 = 1024 blocks
