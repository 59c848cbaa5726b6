"""HLSCNN conv_layer_driver fragment (spec §2.4) and runner.

Example::

    y, counts = run_conv2d(x[C,H,W], w[K,C,KH,KW], stride=(1, 1))   # floats in, floats out
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from steplus.dialects.target.ila import HLSCNN
from steplus.runtime.ila.core import IlaError, bytes_word, reference_mode
from steplus.runtime.ila.hlscnn import BASE, REG, SPAD0, SPAD1, FixedFormats, Hlscnn, conv_datapath


# one HLSCNN command: {"wr", "rd", "addr", "data"[, "is_vir"]}
Cmd = dict[str, int]


def cfg(name: str, value: int) -> Cmd:
    """Write config register `name` (its 32-bit lane of the 128-bit data word)."""
    k = REG[name]
    return {"wr": 1, "rd": 0, "addr": BASE + 4 * k, "data": (value & 0xFFFFFFFF) << (8 * ((4 * k) % 16))}


def vir(off: int, word: int) -> Cmd:
    """Write 16 bytes at `off` of the virtual SoC memory."""
    return {"wr": 1, "rd": 0, "addr": off, "data": word, "is_vir": 1}


def quant(v: npt.ArrayLike, frac: int, bits: int) -> npt.NDArray[np.int64]:
    """Round-to-nearest fixed point, saturating."""
    lim = 1 << (bits - 1)
    return np.clip(np.round(np.asarray(v, np.float64) * (1 << frac)), -lim, lim - 1).astype(np.int64)


def _conv_layout(xa: npt.NDArray[np.int64], wq: npt.NDArray[np.int64], stride: tuple[int, int],
                 fmt: FixedFormats) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], tuple[int, int, int]]:
    """The conv's SoC-memory image: activation rows and weight rows (16 bytes each) and (K, OH, OW);
    IlaError when the shape exceeds the registers or memories."""
    C, H, W = xa.shape
    K, _, KH, KW = wq.shape
    sr, sc = stride
    lim = HLSCNN
    if (K > lim.max_filters or max(KH, KW) > lim.max_kernel or max(sr, sc) > lim.max_stride
            or max(H, W) > lim.max_height or C > lim.max_channels):
        raise IlaError("hlscnn conv2d: shape exceeds the register limits")
    OH, OW = (H - KH) // sr + 1, (W - KW) // sc + 1
    ncb = -(-C // 8)
    if K * H * W > lim.max_output_positions:
        raise IlaError(f"hlscnn conv2d: output K*H*W*16 = {K * H * W * 16} exceeds SPAD1")
    xp = np.zeros((ncb * 8, H, W), np.int64)
    xp[:C] = xa
    act = np.ascontiguousarray(xp.reshape(ncb, 8, H, W).transpose(0, 2, 3, 1).astype("<i2")).view(np.uint8).reshape(-1, 16)
    wp = np.zeros((K, ncb * 8, KH, KW), np.int64)
    wp[:, :C] = wq
    wl = wp.reshape(K, ncb, 8, KH, KW).transpose(0, 1, 3, 4, 2).reshape(-1)
    wbytes = (wl.astype(np.int8).view(np.uint8) if fmt.wgt_bits == 8
              else wl.astype("<i2").view(np.uint8))
    wbytes = np.concatenate([wbytes, np.zeros(-len(wbytes) % 16, np.uint8)]).reshape(-1, 16)
    if (len(act) + len(wbytes)) * 16 + 256 > (192 << 10):
        raise IlaError("hlscnn conv2d: activations + weights exceed the 192 KiB SoC memory")
    return act, wbytes, (K, OH, OW)


def conv_fragment(xa: npt.NDArray[np.int64], wq: npt.NDArray[np.int64], stride: tuple[int, int], fmt: FixedFormats,
                  relu: bool = False) -> tuple[list[Cmd], tuple[int, int, int]]:
    """Commands for a valid conv of fixed-point activations xa[C,H,W] and weights wq[K,C,KH,KW]."""
    C, H, W = xa.shape
    K, _, KH, KW = wq.shape
    sr, sc = stride
    act, wbytes, (K, OH, OW) = _conv_layout(xa, wq, stride, fmt)
    cmds = [vir(16 * k, bytes_word(r)) for k, r in enumerate(act)]
    woff = (len(act) // 16 + 1) * 256
    cmds += [vir(woff + 16 * k, bytes_word(r)) for k, r in enumerate(wbytes)]
    cmds += [cfg("SocMemRdWrLength", len(wbytes)), cfg("SocMemBaseAddr", woff),
             {"wr": 1, "rd": 0, "addr": BASE + SPAD0, "data": 0}]
    cmds += [cfg("ConvActBase", 0), cfg("ConvWgtBase", SPAD0), cfg("ConvOutBase", SPAD1),
             cfg("ConvInputSize", (C << 20) | (H << 10) | W), cfg("ConvOutputSize", (K << 20) | (OH << 10) | OW),
             cfg("KernelSize", (sr << 19) | (sc << 16) | (KH << 8) | KW),
             cfg("ConvChannel", (K << 19) | (int(relu) << 17)),
             {"wr": 1, "rd": 0, "addr": BASE + 4 * REG["ConvTrigger"], "data": 1}]
    for f in range(K):
        for i in range(OH):
            for j in range(OW):
                word = f * H * W + (i * sr + KH // 2) * W + (j * sc + KW // 2)
                cmds.append({"wr": 0, "rd": 1, "addr": BASE + SPAD1 + 16 * word, "data": 0})
    return cmds, (K, OH, OW)


# configuration writes of a conv fragment besides its memory rows: SocMemRdWrLength, SocMemBaseAddr,
# the SPAD0 copy, seven conv registers and the trigger
_CONV_CONTROL_WRITES = 11


def _conv_vectorized(xa: npt.NDArray[np.int64], wq: npt.NDArray[np.int64], stride: tuple[int, int],
                     fmt: FixedFormats, relu: bool) -> tuple[npt.NDArray[np.int64], dict[str, int]] | None:
    """What the fragment of `conv_fragment` reads back (the int16 outputs [K, OH, OW]) and its
    counts, computed on the memory image without the commands: the conv unit (`conv_datapath`) on
    the activation and weight bytes the fragment writes, into a fresh (zero) output scratchpad.
    None when the weights do not fit SPAD0 (the commands' copy fails there) or the output is empty:
    the commands run then."""
    act, wbytes, (K, OH, OW) = _conv_layout(xa, wq, stride, fmt)
    if len(wbytes) * 16 > HLSCNN.spad_bytes or min(OH, OW) <= 0:
        return None
    C, H, W = xa.shape
    KH, KW = wq.shape[2:]
    ncb = -(-C // 8)
    nw = K * ncb * KH * KW * 8
    flat = wbytes.reshape(-1)
    wgt = (flat[:nw].view(np.int8).astype(np.int64) << 8 if fmt.wgt_bits == 8
           else flat[:2 * nw].view("<i2").astype(np.int64)).reshape(K, ncb, KH, KW, 8)
    cur = conv_datapath(act.reshape(-1).view("<i2").reshape(ncb, H, W, 8), wgt, np.zeros((K, OH, OW), np.int64),
                        stride, fmt, relu=relu)
    return cur, {"writes": len(act) + len(wbytes) + _CONV_CONTROL_WRITES, "reads": K * OH * OW}


def run_conv2d(x: npt.ArrayLike, w: npt.ArrayLike, stride: tuple[int, int] = (1, 1),
               fmt: FixedFormats = FixedFormats(), relu: bool = False,
               reference: bool | None = None) -> tuple[npt.NDArray[np.float64], dict[str, int]]:
    """Valid conv2d of x[C,H,W] (floats) with w[K,C,KH,KW] on HLSCNN; (y[K,OH,OW], counts).

    `reference` (default: `core.reference_mode`) runs the fragment command by command on `Hlscnn`;
    otherwise the same outputs and counts come from the conv unit on whole tensors."""
    wfrac = fmt.wgt_frac - 8 if fmt.wgt_bits == 8 else fmt.wgt_frac
    xa, wq = quant(x, fmt.act_frac, 16), quant(w, wfrac, fmt.wgt_bits)
    if not reference_mode(reference):
        fast = _conv_vectorized(xa, wq, stride, fmt, relu)
        if fast is not None:
            return fast[0] / (1 << fmt.act_frac), fast[1]
    cmds, (K, OH, OW) = conv_fragment(xa, wq, stride, fmt, relu)
    sim = Hlscnn(fmt)
    sim.run(cmds)
    lane = (K - 1) % 8
    y = np.array([r[lane] for r in sim.output_log], np.float64).reshape(K, OH, OW)
    counts = {"writes": sum(1 for c in cmds if c["wr"]), "reads": len(sim.output_log)}
    return y / (1 << fmt.act_frac), counts
