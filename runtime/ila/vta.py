"""VTA ILA (vta-ila): 128-bit instructions, virtual DRAMs, int8/int32 datapath.

A command is `{"instr": 128-bit, "mem_mode": 0..4, "mem_idx": 32-bit, "data": int}`;
`mem_mode` 1/2/3/4 writes one element of the virtual input / weight / bias / uop
DRAM, `mem_mode = 0` decodes `instr` (LOAD, STORE, GEMM, ALU; spec §3).  With
`alu_mul=True` (branch `alu_mul`) the ALU opcode is 3 bits wide and 4 = MUL.

Example::

    sim = Vta()
    sim.step({"instr": 0, "mem_mode": 1, "mem_idx": 0, "data": -3})   # VIR_MEM_WR_INP
    sim.step({"instr": load(2, 0, 0, 1, 1, 1), "mem_mode": 0, "mem_idx": 0, "data": 0})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np
import numpy.typing as npt

from steplus.runtime.ila.core import Bv, BvOps, Command, Cond, Decode, Ila, PyOps, State, StateView

BLOCK = 16


def _bits(x: int, hi: int, lo: int) -> int:
    """Bits hi..lo of an instruction word (PyOps' extract: ints stay ints)."""
    return cast(int, PyOps.extract(x, hi, lo))


def _pack(*fields: tuple[int, int, int]) -> int:
    """(value, hi, lo) fields -> instruction word."""
    out = 0
    for v, hi, lo in fields:
        out |= (int(v) & ((1 << (hi - lo + 1)) - 1)) << lo
    return out


def load(mem_type: int, sram: int, dram: int, y: int, x: int, stride: int,
         pads: tuple[int, int, int, int] = (0, 0, 0, 0)) -> int:
    """LOAD instruction word (mem type 0 uop, 1 wgt, 2 inp, 3 acc/bias)."""
    return _pack((0, 2, 0), (mem_type, 8, 7), (sram, 24, 9), (dram, 56, 25), (y, 79, 64),
                 (x, 95, 80), (stride, 111, 96), (pads[0], 115, 112), (pads[1], 119, 116),
                 (pads[2], 123, 120), (pads[3], 127, 124))


def store(sram: int, dram: int, y: int, x: int, stride: int) -> int:
    """STORE instruction word (output buffer -> output DRAM)."""
    return _pack((1, 2, 0), (sram, 24, 9), (dram, 56, 25), (y, 79, 64), (x, 95, 80), (stride, 111, 96))


def _loops(op: int, reset: int, ub: int, ue: int, io: int, ii: int, dfo: int, dfi: int, sfo: int,
           sfi: int) -> list[tuple[int, int, int]]:
    """The (value, hi, lo) fields GEMM and ALU words share: opcode, reset, uop range, loop extents, factors."""
    return [(op, 2, 0), (reset, 7, 7), (ub, 20, 8), (ue, 34, 21), (io, 48, 35), (ii, 62, 49),
            (dfo, 74, 64), (dfi, 85, 75), (sfo, 96, 86), (sfi, 107, 97)]


def gemm(reset: int, ub: int, ue: int, io: int, ii: int, dfo: int, dfi: int, sfo: int, sfi: int, wfo: int,
         wfi: int) -> int:
    """GEMM instruction word."""
    return _pack(*_loops(2, reset, ub, ue, io, ii, dfo, dfi, sfo, sfi), (wfo, 117, 108), (wfi, 127, 118))


ALU_OPS = {"min": 0, "max": 1, "add": 2, "shr": 3, "mul": 4}


def alu(op: str, ub: int, ue: int, io: int, ii: int, dfo: int, dfi: int, sfo: int, sfi: int,
        imm: int | None = None, alu_mul: bool = False) -> int:
    """ALU instruction word (imm: 16-bit immediate operand, else accumulator source)."""
    w = 3 if alu_mul else 2
    return _pack(*_loops(4, 0, ub, ue, io, ii, dfo, dfi, sfo, sfi), (ALU_OPS[op], 107 + w, 108),
                 (imm is not None, 108 + w, 108 + w), (imm or 0, 124 + w, 109 + w))


def gemm_uop(acc: int, inp: int, wgt: int) -> int:
    """A GEMM micro-op: accumulator, input and weight indices."""
    return _pack((acc, 10, 0), (inp, 21, 11), (wgt, 31, 22))


def alu_uop(dst: int, src: int) -> int:
    """An ALU micro-op: destination and source accumulator indices."""
    return _pack((dst, 10, 0), (src, 21, 11))


def _sext(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _wrap(a: npt.ArrayLike, bits: int) -> npt.NDArray[np.int64]:
    m = 1 << bits
    return (((np.asarray(a, dtype=np.int64) + (m >> 1)) % m) - (m >> 1))


def alu_apply(op: int, a: npt.NDArray[np.int64], b: npt.NDArray[np.int64] | int) -> npt.NDArray[np.int64]:
    """The ALU's result before wrapping, lane by lane on whole arrays: min (0), max (1), add (2),
    shift (3: right by the low 5 bits of b as a signed 5-bit value, left when negative), mul."""
    if op == 0:
        return np.minimum(a, b)
    if op == 1:
        return np.maximum(a, b)
    if op == 2:
        return a + b
    if op == 3:
        n = ((np.asarray(b, np.int64) & 31) ^ 16) - 16
        return np.where(n >= 0, a >> np.maximum(n, 0), a << np.maximum(-n, 0))
    return a * b


class Vta(Ila):
    """The VTA ILA with its virtual DRAMs (BATCH 1, BLOCK 16)."""

    def __init__(self, alu_mul: bool = False) -> None:
        super().__init__("vta", {"instr": 128, "mem_mode": 3, "mem_idx": 32, "data": 32})
        self.alu_mul = alu_mul
        self.valid = lambda o, i, s: o.ule(i["mem_mode"], 4)
        m = self.state.mems
        self.mem("uop", 8192, np.uint32)
        m["inp"] = np.zeros((2048, BLOCK), np.int8)
        m["wgt"] = np.zeros((1024, BLOCK, BLOCK), np.int8)
        m["acc"] = np.zeros((2048, BLOCK), np.int32)
        m["out"] = np.zeros((2048, BLOCK), np.int8)
        self.mem("dram_inp", 2 << 20, np.int8)
        self.mem("dram_wgt", 16 << 20, np.int8)
        self.mem("dram_bias", 2 << 20, np.int32)
        self.mem("dram_uop", 1024, np.uint32)
        self.mem("dram_out", 2 << 20, np.int8)
        for k, name in ((1, "inp"), (2, "wgt"), (3, "bias"), (4, "uop")):
            def upd(s: State, i: Command, name: str = name) -> None:
                d = s.mems["dram_" + name]
                d[i["mem_idx"]] = i["data"] if name == "uop" else _sext(i["data"], d.itemsize * 8)

            self.instr(f"VIR_MEM_WR_{name.upper()}", lambda o, i, s, k=k: o.eq(i["mem_mode"], k), upd)

        def dec(opcode: int, mtype: int | None = None) -> Decode:
            def d(o: BvOps, i: Mapping[str, Bv], s: StateView) -> Cond:
                c = [o.eq(i["mem_mode"], 0), o.eq(o.extract(i["instr"], 2, 0), opcode)]
                if mtype is not None:
                    c.append(o.eq(o.extract(i["instr"], 8, 7), mtype))
                return o.and_(*c)
            return d

        for mt, name in enumerate(("UOP", "WGT", "INP", "BIAS")):
            self.instr(f"LOAD_{name}", dec(0, mt), lambda s, i, mt=mt: self._load(s, i["instr"], mt))
        self.instr("STORE", dec(1), lambda s, i: self._store(s, i["instr"]))
        self.instr("GEMM", dec(2), lambda s, i: self._gemm(s, i["instr"]))
        self.instr("ALU", dec(4), lambda s, i: self._alu(s, i["instr"]))

    # -- semantics --------------------------------------------------------
    @staticmethod
    def _mem_fields(ins: int) -> tuple[int, int, int, int, int]:
        """(sram, dram, y size, x size, stride) of a LOAD/STORE word."""
        return (_bits(ins, 24, 9), _bits(ins, 56, 25), _bits(ins, 79, 64), _bits(ins, 95, 80),
                _bits(ins, 111, 96))

    def _load(self, s: State, ins: int, mt: int) -> None:
        sram, dram, ys, xs, stride = self._mem_fields(ins)
        m = s.mems
        if mt == 0:
            m["uop"][sram:sram + xs] = m["dram_uop"][dram:dram + xs]
            return
        if mt == 2:
            yp0, yp1, xp0, xp1 = (_bits(ins, 115, 112), _bits(ins, 119, 116),
                                  _bits(ins, 123, 120), _bits(ins, 127, 124))
            width = xp0 + xs + xp1
            row = sram
            m["inp"][row:row + width * yp0] = 0
            row += width * yp0
            for y in range(ys):
                m["inp"][row:row + xp0] = 0
                for x in range(xs):
                    t = dram + y * stride + x
                    m["inp"][row + xp0 + x] = m["dram_inp"][t * BLOCK:(t + 1) * BLOCK]
                m["inp"][row + xp0 + xs:row + width] = 0
                row += xs  # the ILA's quirk: advance by x_size, not the padded width
            m["inp"][row:row + width * yp1] = 0
            return
        for y in range(ys):
            for x in range(xs):
                t, d = dram + y * stride + x, sram + y * xs + x
                if mt == 1:
                    m["wgt"][d] = m["dram_wgt"][t * 256:(t + 1) * 256].reshape(BLOCK, BLOCK)
                else:
                    m["acc"][d] = m["dram_bias"][t * BLOCK:(t + 1) * BLOCK]

    def _store(self, s: State, ins: int) -> None:
        sram, dram, ys, xs, stride = self._mem_fields(ins)
        m = s.mems
        for y in range(ys):
            for x in range(xs):
                t = dram + y * stride + x
                m["dram_out"][t * BLOCK:(t + 1) * BLOCK] = m["out"][sram + y * xs + x]

    @staticmethod
    def _loop_fields(ins: int) -> list[int]:
        """reset, uop begin/end, outer/inner extents and dst/src factors of a GEMM/ALU word."""
        return [_bits(ins, hi, lo) for hi, lo in ((7, 7), (20, 8), (34, 21), (48, 35), (62, 49),
                                                 (74, 64), (85, 75), (96, 86), (107, 97))]

    def _gemm(self, s: State, ins: int) -> None:
        reset, ub, ue, io, ii, dfo, dfi, sfo, sfi = self._loop_fields(ins)
        wfo, wfi = _bits(ins, 117, 108), _bits(ins, 127, 118)
        m = s.mems
        for o in range(io):
            for i in range(ii):
                for u in range(ub, ue):
                    w = int(m["uop"][u])
                    d = _bits(w, 10, 0) + o * dfo + i * dfi
                    x = _bits(w, 21, 11) + o * sfo + i * sfi
                    g = _bits(w, 31, 22) + o * wfo + i * wfi
                    acc = m["acc"][d].astype(np.int64)
                    total = acc + m["wgt"][g].astype(np.int64) @ m["inp"][x].astype(np.int64)
                    m["out"][d] = _wrap(total, 8)
                    m["acc"][d] = 0 if reset else _wrap(total, 32)

    def _alu(self, s: State, ins: int) -> None:
        _, ub, ue, io, ii, dfo, dfi, sfo, sfi = self._loop_fields(ins)
        w = 3 if self.alu_mul else 2
        op, use_imm = _bits(ins, 107 + w, 108), _bits(ins, 108 + w, 108 + w)
        imm = _sext(_bits(ins, 124 + w, 109 + w), 16)
        m = s.mems
        for o in range(io):
            for i in range(ii):
                for u in range(ub, ue):
                    word = int(m["uop"][u])
                    d = _bits(word, 10, 0) + o * dfo + i * dfi
                    sr = _bits(word, 21, 11) + o * sfo + i * sfi
                    a = m["acc"][d].astype(np.int64)
                    b = np.full(BLOCK, imm, np.int64) if use_imm else m["acc"][sr].astype(np.int64)
                    r = alu_apply(op, a, b)
                    m["acc"][d] = _wrap(r, 32)
                    m["out"][d] = _wrap(r, 8)
