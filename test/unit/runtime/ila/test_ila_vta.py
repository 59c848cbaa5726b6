"""VTA ILA: instruction encodings, GEMM, ALU ops and the dense fragment."""

import numpy as np
import pytest

from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.vta import Vta, alu, alu_uop, gemm, load, store
from steplus.runtime.ila.vta_driver import dense_fragment, dense_reference, dense_tiles, run_dense


def _c(instr=0, mode=0, idx=0, data=0):
    return {"instr": instr, "mem_mode": mode, "mem_idx": idx, "data": data}


def test_decodes_exclusive():
    assert Vta().check_decode_exclusive() == []


def test_alu_ops_on_one_tile():
    sim = Vta()
    vals = np.arange(-8, 8) * 100
    sim.run([_c(mode=3, idx=k, data=int(v)) for k, v in enumerate(vals)] +
            [_c(mode=4, idx=0, data=alu_uop(0, 0)), _c(load(0, 0, 0, 1, 1, 1)), _c(load(3, 0, 0, 1, 1, 1))])
    sim.step(_c(alu("shr", 0, 1, 1, 1, 0, 0, 0, 0, imm=2)))
    assert list(sim.state.mems["acc"][0]) == list(vals >> 2)
    sim.step(_c(alu("shr", 0, 1, 1, 1, 0, 0, 0, 0, imm=-1)))  # negative amount: left shift
    sim.step(_c(alu("max", 0, 1, 1, 1, 0, 0, 0, 0, imm=-100)))
    sim.step(_c(alu("add", 0, 1, 1, 1, 0, 0, 0, 0)))          # acc + acc
    expect = np.maximum((vals >> 2) << 1, -100) * 2
    assert list(sim.state.mems["acc"][0]) == list(expect)
    sim.step(_c(store(0, 0, 1, 1, 1)))
    assert list(sim.state.mems["dram_out"][:16]) == list(((expect + 128) % 256) - 128)


def test_gemm_reset_and_instruction_count():
    frag = dense_fragment(np.ones((16, 16), np.int8), np.ones((16, 16), np.int8))
    assert sum(1 for c in frag if c["mem_mode"] == 0) == 6
    assert gemm(1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0) & 0x87 == 0x82


def test_dense_matches_integer_reference():
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (64, 144), dtype=np.int8)
    w = rng.integers(-128, 128, (32, 144), dtype=np.int8)
    b = rng.integers(-1000, 1000, 32)
    for kw in ({}, {"shift": 10}, {"bias": b, "shift": 9, "relu": True}):
        y, counts = run_dense(x, w, **kw)
        assert (y == dense_reference(x, w, **kw)).all()
    assert counts["dram_writes"] == 64 * 144 + 32 * 144 + 64 * 32 + 9 * 2 + 1
    assert counts["programs"] == 1 and dense_tiles(64, 144, 32) == [(0, 64, 0, 32)]


def _int_reference(x, w, bias, shift, relu):
    """numpy's int32 accumulation, then VTA's ALU rule per element: K is never split, so a tiled
    dense's every output element is the whole row sum (+ bias) shifted and clipped as one program."""
    acc = x.astype(np.int64) @ w.astype(np.int64).T + (0 if bias is None else np.asarray(bias, np.int64))
    acc = ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)
    acc = np.clip(acc >> shift, -127, 127)
    return (np.maximum(acc, 0) if relu else acc).astype(np.int8)


# (m, k, n): what overflows, the programs (row chunks x output chunks)
TILED = [((32, 64, 1152), 2, 1),   # m*n/16 = 2304 accumulator rows > 2048: 28 rows a program -> 2 x 16
         ((16, 512, 528), 1, 2)]   # 32 x 33 = 1056 weight blocks > 1023: 31 blocks of n a program -> 2


@pytest.mark.parametrize(("shape", "pm", "pn"), TILED)
def test_dense_past_the_buffers_runs_as_tiled_programs(shape, pm, pn):
    m, k, n = shape
    rng = np.random.default_rng(29)
    x = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-128, 128, (n, k)).astype(np.int8)
    bias = rng.integers(-2**20, 2**20, n)
    want = _int_reference(x, w, bias, 9, True)
    tiles = dense_tiles(m, k, n)
    assert len(tiles) == pm * pn
    assert sorted({(a, b) for a, b, _, _ in tiles}) == [(m * i // pm, m * (i + 1) // pm) for i in range(pm)]
    runs = [run_dense(x, w, bias=bias, shift=9, relu=True, reference=ref) for ref in (True, False)]
    (yr, cr), (yv, cv) = runs
    assert np.array_equal(yr, want) and np.array_equal(yv, want)
    # each program loads its x rows, its w rows, its bias block and Kb*Nb_chunk + 1 uops
    kb = k // 16
    writes = sum((m1 - m0) * k + (n1 - n0) * k + (m1 - m0) * (n1 - n0) + kb * (n1 - n0) // 16 + 1
                 for m0, m1, n0, n1 in tiles)
    assert cr == cv == {"dram_writes": writes, "instructions": pm * pn * (5 + 4 + 1), "programs": pm * pn}


def test_dense_tiles_fit_the_buffers():
    for m, k, n in [(2048, 32, 16), (16, 2048, 256), (2048, 16, 32), (4096, 512, 2048), (48, 16 * 1023, 32)]:
        tiles = dense_tiles(m, k, n)
        covered = np.zeros((m, n), np.int64)
        for m0, m1, n0, n1 in tiles:
            kb, nb = k // 16, (n1 - n0) // 16
            assert kb * nb <= 1023 and (m1 - m0) * kb <= 2048 and (m1 - m0) * nb <= 2048
            covered[m0:m1, n0:n1] += 1
        assert (covered == 1).all()


def test_dense_refuses_k_past_one_block_column():
    for ref in (True, False):
        with pytest.raises(IlaError, match="K=16384 exceeds one block column of 1023"):
            run_dense(np.zeros((1, 16 * 1024), np.int8), np.zeros((16, 16 * 1024), np.int8), reference=ref)


def test_alu_mul_branch():
    sim = Vta(alu_mul=True)
    vals = np.arange(16) - 8
    sim.run([_c(mode=3, idx=k, data=int(v)) for k, v in enumerate(vals)] +
            [_c(mode=4, idx=0, data=alu_uop(0, 0)), _c(load(0, 0, 0, 1, 1, 1)), _c(load(3, 0, 0, 1, 1, 1))])
    sim.step(_c(alu("mul", 0, 1, 1, 1, 0, 0, 0, 0, imm=-3, alu_mul=True)))
    assert list(sim.state.mems["acc"][0]) == list(vals * -3)


def _shift_reference(x, w, shift):
    """numpy: the int32-wrapped GEMM, an arithmetic right shift, VTA's clip to int8."""
    acc = x.astype(np.int64) @ w.astype(np.int64).T
    acc = ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)
    return np.clip(acc >> shift, -127, 127).astype(np.int8)


def _signed_int8(rng, shape, positive):
    """int8 values of magnitude 64..127, the first `positive` columns positive (a large sum), the rest random signs."""
    v = rng.integers(64, 128, shape)
    sign = np.where(rng.random(shape) < 0.5, -1, 1)
    sign[:, :positive] = 1
    return (v * sign).astype(np.int8)


def test_shift_steps_split_past_the_alu_amount():
    from steplus.runtime.ila.vta_driver import shift_steps

    assert shift_steps(None) == shift_steps(0) == []
    assert shift_steps(15) == [15] and shift_steps(16) == [15, 1] and shift_steps(31) == [15, 15, 1]
    for bad in (-1, 32):
        with pytest.raises(IlaError, match="not in 0..31"):
            shift_steps(bad)


@pytest.mark.parametrize("shift", [16, 17, 20])
def test_dense_shift_of_16_and_more_is_a_right_shift(shift):
    # K = 1024: sums up to 127*127*1024 ~ 2^24, so requantising to int8 needs a shift >= 16, which one
    # ALU shr cannot do (amounts 16..31 shift left in the ILA); both paths against numpy
    rng = np.random.default_rng(shift)
    x, w = _signed_int8(rng, (32, 1024), 700), _signed_int8(rng, (16, 1024), 700)
    want = _shift_reference(x, w, shift)
    assert want.any() and (np.abs(want) < 127).all()  # the shifted sums neither vanish nor clip
    for ref in (True, False):
        y, counts = run_dense(x, w, shift=shift, reference=ref)
        assert np.array_equal(y, want)
        # load x3 (+ uops), gemm, one shr per 15 of shift, max, min, store
        assert counts["instructions"] == 5 + -(-shift // 15) + 2 + 1


def test_float_dense_with_large_k_requantises_right():
    """`accel.vta_dense_float` on K = 1024: its calibrated shift is >= 16 and the result is numpy's
    int32 GEMM shifted right, scaled back, within the shift's quantum of the float product."""
    from steplus.runtime.ila.accel import vta_dense_float

    rng = np.random.default_rng(7)
    xi, wi = _signed_int8(rng, (16, 1024), 700), _signed_int8(rng, (32, 1024), 700)
    xi[0, 0], wi[0, 0] = 127, 127          # max |.| = 127: the per-tensor scale is exactly 1/127 ...
    x, w = xi / 127.0, wi / 127.0          # ... so the int8 operands are xi, wi
    acc = xi.astype(np.int64) @ wi.astype(np.int64).T
    shift = int(np.abs(acc).max()).bit_length() - 7
    assert shift >= 16
    quantum = 2.0**shift / 127**2  # one int8 step of the output, in the float scale
    want = _shift_reference(xi, wi, shift)
    for ref in (True, False):
        y, _ = vta_dense_float(x, w, reference=ref)
        assert np.array_equal(np.rint(y / quantum), want) and np.allclose(y, want * quantum, rtol=1e-12, atol=0)
        assert np.abs(y - x @ w.T).max() <= quantum
