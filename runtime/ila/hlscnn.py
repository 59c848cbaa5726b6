"""HLSCNN ILA: MMIO config registers, virtual SoC memory, two scratchpads, conv2d.

Commands are `{"wr", "rd", "addr", "data", "is_vir"}` (spec §2).  `is_vir=1`
writes 16 bytes into the virtual SoC memory at `addr` (the front end adds
0x50000).  Fixed-point formats are parameters (`FixedFormats`); the default is
the master model: 8-bit weights (Q2.6 stored as the high byte of a Q2.14
16-bit weight), 16-bit activations with 7 fraction bits, Q16.16 partial sums.
`wgt_bits=16` selects the `wgt_16bits` variant.

Example::

    sim = Hlscnn()
    sim.step({"wr": 1, "rd": 0, "addr": 0x32000000 + 4 * 21, "data": conv_input_size << 32 * 1})
"""

from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from steplus.runtime.ila.core import Bv, BvOps, Command, Cond, Ila, State, data_bytes

BASE = 0x32000000
SPAD0, SPAD1, VIR = 0x4000, 0x24000, 0x50000
REG: dict[str, int] = {"SocMemBaseAddr": 4, "SocMemRdWrLength": 5, "ConvTrigger": 17, "ConvActBase": 18,
       "ConvWgtBase": 19, "ConvOutBase": 20, "ConvInputSize": 21, "ConvOutputSize": 22,
       "KernelSize": 23, "ConvChannel": 24}


@dataclass(frozen=True)
class FixedFormats:
    """HLSCNN fixed-point formats (fraction bits); all [unverified] upstream."""

    wgt_bits: int = 8     # 8 (master) or 16 (wgt_16bits)
    wgt_frac: int = 14    # of the 16-bit datapath weight
    act_frac: int = 7     # 16-bit activations
    psum_frac: int = 16   # 32-bit partial sums


def _sat16(v: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return np.clip(v, -32768, 32767)


def _wrap32(v: npt.ArrayLike) -> npt.NDArray[np.int64]:
    return ((np.asarray(v, np.int64) + 2**31) % 2**32) - 2**31


class Hlscnn(Ila):
    """The HLSCNN ILA (master layout)."""

    def __init__(self, fmt: FixedFormats = FixedFormats()) -> None:
        super().__init__("hlscnn", {"wr": 1, "rd": 1, "addr": 32, "data": 128})
        self.fmt = fmt
        self.valid = lambda o, i, s: o.and_(
            o.or_(o.and_(o.eq(i["wr"], 1), o.eq(i["rd"], 0)), o.and_(o.eq(i["wr"], 0), o.eq(i["rd"], 1))),
            o.or_(o.ule(i["addr"], BASE + 0x44000), o.and_(o.ule(VIR, i["addr"]), o.ult(i["addr"], 0x80000))))
        self.mem("spad0", 128 << 10)
        self.mem("spad1", 128 << 10)
        self.mem("vir", 192 << 10)
        self.output_log: list[np.ndarray] = []
        for k in range(30):
            self.reg(f"cfg{k}", 32)

        def ma(o: BvOps, i: Mapping[str, Bv]) -> Bv:  # the address within the MMIO map
            return o.extract(i["addr"], 23, 0)

        def w(o: BvOps, i: Mapping[str, Bv]) -> Cond:
            return o.and_(o.eq(i["wr"], 1), o.eq(i["rd"], 0), o.ule(BASE, i["addr"]))

        def r(o: BvOps, i: Mapping[str, Bv]) -> Cond:
            return o.and_(o.eq(i["rd"], 1), o.eq(i["wr"], 0), o.ule(BASE, i["addr"]))

        def cfg_upd(s: State, i: Command) -> None:
            k = ((i["addr"] & 0xFFFFFF) >> 2) % 30
            sh = i["addr"] & 15
            s.set(f"cfg{k}", (i["data"] >> (8 * sh)) & 0xFFFFFFFF)

        trig = BASE + 4 * REG["ConvTrigger"]
        self.instr("CFG_REG_WR", lambda o, i, s: o.and_(w(o, i), o.ult(ma(o, i), 0x4000),
                                                       o.not_(o.eq(i["addr"], trig))), cfg_upd)
        self.instr("ACCEL_CONV_TRIGGER", lambda o, i, s: o.and_(w(o, i), o.eq(i["addr"], trig)),
                   lambda s, i: self._conv(s))
        for name, lo, mem in (("SPAD0", SPAD0, "spad0"), ("SPAD1", SPAD1, "spad1")):
            def win(o: BvOps, i: Mapping[str, Bv], lo: int = lo) -> Cond:
                return o.and_(o.ule(lo, ma(o, i)), o.ult(ma(o, i), lo + 0x20000))

            self.instr(f"{name}_DATA_WR", lambda o, i, s, win=win: o.and_(w(o, i), win(o, i)),
                       lambda s, i, lo=lo, mem=mem: self._spad_copy(s, (i["addr"] & 0xFFFFFF) - lo, mem))
            self.instr(f"{name}_DATA_RD", lambda o, i, s, win=win: o.and_(r(o, i), win(o, i)),
                       lambda s, i, lo=lo, mem=mem: self._spad_rd(s, (i["addr"] & 0xFFFFFF) - lo, mem))

        def vir_upd(s: State, i: Command) -> None:
            off = i["addr"] - VIR
            s.mems["vir"][off:off + 16] = data_bytes(i["data"])

        self.instr("VIR_MEM_WR", lambda o, i, s: o.and_(o.eq(i["wr"], 1), o.eq(i["rd"], 0),
                                                      o.ule(VIR, i["addr"]), o.ult(i["addr"], 0x80000)),
                   vir_upd)

    def step(self, inputs: Command) -> str | None:
        """Execute one command; an `is_vir` write goes to the virtual SoC memory window."""
        if inputs.get("is_vir"):
            inputs = dict(inputs, addr=inputs["addr"] + VIR, is_vir=0)
        return super().step(inputs)

    def _spad_copy(self, s: State, off: int, mem: str) -> None:
        """Copy cfg5 16-byte words from virtual memory at cfg4 into scratchpad `mem` at `off`."""
        base, n = s.get("cfg4"), s.get("cfg5")
        s.mems[mem][off:off + 16 * n] = s.mems["vir"][base:base + 16 * n]

    def _spad_rd(self, s: State, off: int, mem: str) -> None:
        """Read 8 int16 lanes at `off` of scratchpad `mem` into `output_log`."""
        self.output_log.append(s.mems[mem][off:off + 16].view("<i2").copy())

    def _conv(self, s: State) -> None:
        f = self.fmt
        # cfg22 (outs) is not used: the output size follows from the input, kernel, strides
        ins, _outs, ks, ch = s.get("cfg21"), s.get("cfg22"), s.get("cfg23"), s.get("cfg24")
        C, H, W = ins >> 20, (ins >> 10) & 1023, ins & 1023
        K = (ch >> 19) & 255
        KH, KW, sc, sr = (ks >> 8) & 255, ks & 255, (ks >> 16) & 7, (ks >> 19) & 7
        bias = ((ch & 0xFFFF) ^ 0x8000) - 0x8000
        bias_en, relu, accum = (ch >> 16) & 1, (ch >> 17) & 1, (ch >> 18) & 1
        OH, OW = (H - KH) // sr + 1, (W - KW) // sc + 1
        ncb = -(-C // 8)
        act = s.mems["vir"][s.get("cfg18"):][:ncb * H * W * 16].view("<i2").reshape(ncb, H, W, 8)
        nw = K * ncb * KH * KW * 8
        if f.wgt_bits == 8:
            wgt = s.mems["spad0"][:nw].view(np.int8).astype(np.int64) << 8
        else:
            wgt = s.mems["spad0"][:2 * nw].view("<i2").astype(np.int64)
        wgt = wgt.reshape(K, ncb, KH, KW, 8)
        out = s.mems["spad1"].view("<i2").reshape(-1, 8)
        lane = (K - 1) % 8
        rows = np.arange(OH) * sr + KH // 2
        cols = np.arange(OW) * sc + KW // 2
        words = np.arange(K)[:, None, None] * H * W + rows[None, :, None] * W + cols[None, None, :]
        cur = out[words, lane].astype(np.int64)
        # the conv unit tap by tap, as the hardware iterates (`conv_datapath` is the same on whole tensors)
        shift = f.wgt_frac + f.act_frac - f.psum_frac
        a2p = f.psum_frac - f.act_frac
        for cb in range(ncb):
            for kr in range(KH):
                for kc in range(KW):
                    a = act[cb, kr:kr + sr * OH:sr, kc:kc + sc * OW:sc].astype(np.int64)
                    prod = (wgt[:, cb, kr, kc][:, None, None, :] * a[None]) >> shift
                    psum = _wrap32(prod.sum(axis=-1))
                    pa = _sat16((psum + (1 << (a2p - 1))) >> a2p)
                    prev = 0 if (cb, kr, kc) == (0, 0, 0) and not accum else cur
                    o = (pa + prev) << a2p
                    if (cb, kr, kc) == (ncb - 1, KH - 1, KW - 1):
                        if bias_en:
                            o = o + (bias << (f.psum_frac - f.wgt_frac) if f.psum_frac >= f.wgt_frac
                                     else bias >> (f.wgt_frac - f.psum_frac))
                        if relu:
                            o = np.maximum(o, 0)
                    cur = _sat16((o + (1 << (a2p - 1))) >> a2p)
        out[words, lane] = cur


# products one step of `conv_datapath` holds at once (bounds its memory: taps are taken in chunks)
_TAP_ELEMENTS = 1 << 22


def conv_datapath(act: npt.NDArray[np.int16], wgt: npt.NDArray[np.int64], cur: npt.NDArray[np.int64],
                  stride: tuple[int, int], f: FixedFormats, accum: bool = False, bias: int | None = None,
                  relu: bool = False) -> npt.NDArray[np.int64]:
    """The conv unit on whole tensors (`Hlscnn._conv`'s tap-by-tap loop, the reference): activations
    act[ncb, H, W, 8] (int16 lanes), datapath weights wgt[K, ncb, KH, KW, 8], the output
    scratchpad's values cur[K, OH, OW] (accumulated into when `accum`); the new 16-bit outputs
    [K, OH, OW].  The products of many taps are one einsum; the rounding and 16-bit saturation
    between taps, which the hardware applies as it stores each partial sum, stay in tap order."""
    sr, sc = stride
    K, ncb, KH, KW, _ = wgt.shape
    OH, OW = cur.shape[1:]
    shift = f.wgt_frac + f.act_frac - f.psum_frac
    a2p = f.psum_frac - f.act_frac
    taps = [(cb, kr, kc) for cb in range(ncb) for kr in range(KH) for kc in range(KW)]
    wt = wgt.transpose(1, 2, 3, 0, 4).reshape(len(taps), K, 8)  # tap-major, as `taps`
    # (w·a) >> shift per product, summed over the 8 lanes of a tap.  When every weight is a
    # multiple of 2^shift (8-bit weights are w8 << 8), that is (w >> shift)·a exactly: a dot product.
    exact_dot = shift >= 0 and not np.any(wt & ((1 << shift) - 1))
    chunk = max(1, _TAP_ELEMENTS // max(1, K * OH * OW * 8))
    for t0 in range(0, len(taps), chunk):
        part = taps[t0:t0 + chunk]
        win = np.stack([act[cb, kr:kr + sr * OH:sr, kc:kc + sc * OW:sc] for cb, kr, kc in part]).astype(np.int64)
        w = wt[t0:t0 + len(part)]
        if exact_dot:
            psums = np.einsum("tkl,tijl->tkij", w >> shift, win)
        else:
            psums = ((w[:, :, None, None, :] * win[:, None]) >> shift).sum(axis=-1)
        for k, tap in enumerate(part):
            psum = _wrap32(psums[k])
            pa = _sat16((psum + (1 << (a2p - 1))) >> a2p)
            prev = 0 if tap == (0, 0, 0) and not accum else cur
            o = (pa + prev) << a2p
            if tap == (ncb - 1, KH - 1, KW - 1):
                if bias is not None:
                    o = o + (bias << (f.psum_frac - f.wgt_frac) if f.psum_frac >= f.wgt_frac
                             else bias >> (f.wgt_frac - f.psum_frac))
                if relu:
                    o = np.maximum(o, 0)
            cur = _sat16((o + (1 << (a2p - 1))) >> a2p)
    return cur
