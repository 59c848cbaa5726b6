"""Validation harness: exact mappings give 0 error, the others a small positive one."""

import numpy as np
import pytest

from steplus.runtime.ila.validate import MAPPINGS, rel_error, validate

BY_NAME = {op: fn for _, op, fn in MAPPINGS}


def test_rel_error():
    assert rel_error(np.array([3.0, 4.0]), np.array([3.0, 4.0])) == 0.0
    assert rel_error(np.array([3.0, 4.0]), np.array([0.0, 4.0])) == 0.6


def test_gemm_is_exact():
    assert validate(BY_NAME["GEMM"], n=2) == (0.0, 0.0)


@pytest.mark.parametrize("op,bound", [("LinearLayer", 0.05), ("MaxPool", 0.05), ("Conv2D (16-bit wgt)", 0.02),
                                      ("LayerNorm", 0.1), ("Attention", 0.1), ("LSTM cell (h, c)", 0.06),
                                      ("Attention (16 rows)", 0.1)])
def test_custom_numerics_error_is_small_but_nonzero(op, bound):
    mean, std = validate(BY_NAME[op], n=3)
    assert 0 < mean < bound and std >= 0
