"""VTA ILA: instruction encodings, GEMM, ALU ops and the dense fragment."""

import numpy as np

from steplus.runtime.ila.vta import Vta, alu, alu_uop, gemm, load, store
from steplus.runtime.ila.vta_driver import dense_fragment, dense_reference, run_dense


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


def test_alu_mul_branch():
    sim = Vta(alu_mul=True)
    vals = np.arange(16) - 8
    sim.run([_c(mode=3, idx=k, data=int(v)) for k, v in enumerate(vals)] +
            [_c(mode=4, idx=0, data=alu_uop(0, 0)), _c(load(0, 0, 0, 1, 1, 1)), _c(load(3, 0, 0, 1, 1, 1))])
    sim.step(_c(alu("mul", 0, 1, 1, 1, 0, 0, 0, 0, imm=-3, alu_mul=True)))
    assert list(sim.state.mems["acc"][0]) == list(vals * -3)
