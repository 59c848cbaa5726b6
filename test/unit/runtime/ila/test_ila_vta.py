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
