"""FlexASR program fragments (3LA driver conventions, spec §1.5-1.6) and runners.

A fragment is a list of MMIO commands (`flexasr.write`/`read`, and `WAIT` for
the simulation-only wait-for-interrupt).  The runners encode float tensors to
AdaptivFloat, build the fragment, execute it on a `FlexAsr` simulator and decode
the read-back; they return the result and the command counts.  Unless `reference=True` (or
`STEPLUS_ILA_REFERENCE=1`, `core.reference_mode`), they take the read-back codes from
`flexasr_vec` instead, which computes them on whole tensors, and the counts from the fragment's
shape: the same values bit for bit (the per-command run is the reference).

Example::

    y, stats = run_linear(x, w, b)        # x[T,in], w[out,in], b[out]; in <= 4080
    stats == {"writes": 1207, "reads": 40, "waits": 1}   # for the §6.2 shapes
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from steplus.dialects.target.ila import FLEXASR
from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila.adpfloat import Codes, Floats
from steplus.runtime.ila import flexasr_vec as vec
from steplus.runtime.ila.core import IlaError, bytes_word, reference_mode
from steplus.runtime.ila.flexasr import GB, FlexAsr, gb_addr, pe_base, read, write

# One fragment command: an MMIO write/read (`write`, `read`) or WAIT; command counts by kind.
Cmd = dict[str, int]
Counts = dict[str, int]

WAIT: Cmd = {"wait": 1}
LSTM_PROGRAM = bytes.fromhex("30 34 81 A0 34 38 86 B4 91 34 38 86 A4 18 96 81 20 B0 34 38 86 A4 91 40")


def word(*fields: tuple[int, int, int]) -> int:
    """Pack (value, byte offset, nbytes) fields into a 128-bit data word."""
    out = 0
    for v, b, n in fields:
        out |= (int(v) & ((1 << (8 * n)) - 1)) << (8 * b)
    return out


def execute(cmds: Iterable[Mapping[str, int]],
            sim: FlexAsr | None = None) -> tuple[FlexAsr, list[Codes], Counts]:
    """Run a fragment; return (simulator, list of 16-byte reads, counts)."""
    sim = sim or FlexAsr()
    reads: list[Codes] = []
    counts = {"writes": 0, "reads": 0, "waits": 0}
    for c in cmds:
        if "wait" in c:
            counts["waits"] += 1
            continue
        sim.step(c)
        if c["rd"]:
            reads.append(np.array(sim.data_out, dtype=np.uint8))
            counts["reads"] += 1
        else:
            counts["writes"] += 1
    return sim, reads, counts


def store_act(codes: Codes, base: int = 0, gb: int = GB) -> list[Cmd]:
    """Writes of a [T, nv, 16] code tensor into a GB-large region (byte base)."""
    T, nv, _ = codes.shape
    return [write(gb + 0x500000 + int(gb_addr(t, v, nv, base)), bytes_word(codes[t, v]))
            for t in range(T) for v in range(nv)]


def load_act(T: int, nv: int, base: int = 0, gb: int = GB) -> list[Cmd]:
    """Reads of a [T, nv] vector GB-large region (byte base), timestep-major."""
    return [read(gb + 0x500000 + int(gb_addr(t, v, nv, base))) for t in range(T) for v in range(nv)]


def maxp(T: int, nv: int, mode: int = 0, gb: int = GB) -> list[Cmd]:
    """cfg_mmngr_gb_large, cfg_ly_reduce, start 2, wait (region 0 at base 0)."""
    return [write(gb + 0x400010, word((nv, 0, 1))),
            write(gb + 0x800010, word((1, 0, 1), (mode, 1, 1), (0, 4, 1), (nv, 6, 1), (T, 8, 2))),
            write(gb + 0x20, 1), WAIT]


def pool_fragment(codes: Codes, n_pools: int, mode: int = 0) -> list[Cmd]:
    """Commands for `n_pools` chained temporal pools of codes[T, nv, 16]: one store, the pools
    in place in the global buffer, one load (the store/load between pools cancelled; the uncancelled
    program is `ila-cancel-store-load{cancel=false}`'s, one store and load per pool)."""
    T, nv, _ = codes.shape
    if nv > FLEXASR.max_vectors:
        raise IlaError(f"flexasr pool: {nv} vectors per timestep exceed {FLEXASR.max_vectors}; "
                       "chunk the hidden dim")
    cmds: list[Cmd] = store_act(codes)
    t = T
    for _ in range(n_pools):
        cmds += maxp(t, nv, mode)
        t //= 2
    return cmds + load_act(t, nv)


def _finite(what: str, **arrays: npt.NDArray[np.floating] | None) -> None:
    """IlaError unless every array is finite: AdaptivFloat has no code for NaN or infinity (a NaN
    input ran to a NaN output, reported only as a relative error of nan)."""
    for name, a in arrays.items():
        if a is not None and not np.all(np.isfinite(np.asarray(a, np.float64))):
            raise IlaError(f"{what}: {name} holds NaN or infinity, which AdaptivFloat cannot encode")


def run_pool(a: npt.NDArray[np.floating], n_pools: int = 1, mode: int = 0,
             reference: bool | None = None) -> tuple[Floats, Counts]:
    """`n_pools` temporal (2,1) pools of a[T, H] on FlexASR; H is chunked by 255 vectors (FLEXASR.max_vectors)."""
    # max pooling's padding is -inf (torch-mlir fills a max pool's window with it): the encoder
    # saturates it to the most negative code, which a max never picks over a real value
    _finite("flexasr pool", input=np.where(np.isneginf(a), 0.0, a) if mode == 0 else a)
    T, H = a.shape
    if H % 16:
        raise IlaError(f"flexasr pool: hidden size {H} is not a multiple of 16")
    b = af.bias_for(a)
    codes = af.encode(a, b).reshape(T, H // 16, 16)
    nv_all, counts = H // 16, {"writes": 0, "reads": 0, "waits": 0}
    out: list[Codes] = []
    chunks = -(-nv_all // FLEXASR.max_vectors)
    step = -(-nv_all // chunks)
    for c0 in range(0, nv_all, step):
        part = codes[:, c0:c0 + step]
        t_out = T >> n_pools
        fast = None if reference_mode(reference) else vec.pool_codes(part, n_pools, mode)
        if fast is not None:
            nv = part.shape[1]
            cnt = {"writes": T * nv + 3 * n_pools, "reads": t_out * nv, "waits": n_pools}
            out.append(fast)
        else:
            sim, reads, cnt = execute(pool_fragment(part, n_pools, mode))
            out.append(np.stack(reads[-t_out * part.shape[1]:]).reshape(t_out, part.shape[1], 16))
        for k in counts:
            counts[k] += cnt[k]
    res = np.concatenate(out, axis=1).reshape(T >> n_pools, H)
    return af.decode(res, b), counts


def _pe_weight_cmds(tiles: list[Codes], p: int, base_vec: int = 0) -> list[Cmd]:
    pb = pe_base(p)
    return [write(pb + 0x500000 + (base_vec + k * 16) * 16 + 16 * r, bytes_word(t[r]))
            for k, t in enumerate(tiles) for r in range(16)]


def linear_fragment(xc: Codes, wc: Codes, bc: Codes, bw: int, bi: int, bb: int, bo: int) -> list[Cmd]:
    """Fragment of y = x·Wᵀ + b (codes xc[T,16nvi], wc[16nvo,16nvi], bc[16nvo])."""
    T, nvi, nvo = xc.shape[0], xc.shape[1] // 16, wc.shape[0] // 16
    if nvo % 4 or nvi > FLEXASR.max_vectors or nvo > FLEXASR.max_vectors:
        raise IlaError(f"flexasr linear: needs out/16 % 4 == 0 and <= {FLEXASR.max_vectors} vectors "
                       f"(nvi={nvi}, nvo={nvo})")
    npe = nvo // 4
    cmds: list[Cmd] = []
    for p in range(4):
        tiles = [wc[16 * o:16 * o + 16, 16 * i:16 * i + 16]
                 for o in range(p * npe, (p + 1) * npe) for i in range(nvi)]
        cmds += _pe_weight_cmds(tiles, p)
    for p in range(4):
        for k in range(npe):
            o = p * npe + k
            cmds.append(write(pe_base(p) + 0x600000 + 16 * (nvi + k), bytes_word(bc[16 * o:16 * o + 16])))
    cmds += store_act(xc.reshape(T, nvi, 16))
    base1 = (T // 16 + 2) * 16 * nvi
    for p in range(4):
        pb = pe_base(p)
        cmds += [write(pb + 0x400010, word((1, 0, 1), (1, 3, 1), (1, 4, 1), (npe, 5, 1))),
                 write(pb + 0x400020, word((bw, 1, 1), (bb, 2, 1), (bi, 3, 1), (nvi, 4, 2), (nvi, 8, 2))),
                 write(pb + 0x800010, word((1, 0, 1), (bo, 2, 1), (2, 3, 1), (npe, 4, 2), (p * npe, 8, 1))),
                 write(pb + 0x800020, 0x4030)]
    cmds += [write(GB + 0x400010, word((nvi, 0, 1), (0, 2, 2), (nvo, 4, 1), (base1, 6, 2))),
             write(GB + 0x700010, word((1, 0, 1), (0, 4, 1), (1, 5, 1), (nvi, 6, 1), (nvo, 7, 1), (T, 8, 2))),
             write(GB + 0x10, 1), WAIT]
    cmds += load_act(T, nvo, 16 * base1)
    return cmds


def linear_tiles(T: int, nvi: int, nvo: int) -> list[tuple[int, int, int, int]]:
    """The calls of a linear layer over x[T, 16·nvi] with 16·nvo outputs (nvo % 4 == 0), as
    (t0, t1, v0, v1): timesteps [t0, t1) and output vectors [v0, v1).  One call when it fits; else
    the output vectors split evenly into chunks of at most 4·npe (npe per PE: its 256-vector input
    window holds the nvi input vectors and npe bias vectors, its 1 MiB weight memory npe·nvi tiles
    of 16x16, and the global buffer's `num_vector` fields are 8 bits: 4·npe <= 255), and the timesteps into chunks whose input and output
    regions fit the 1 MiB global buffer and its 16-bit base field (`flexasr_vec._fits_gb`).

    >>> linear_tiles(10, 16, 4)
    [(0, 10, 0, 4)]
    >>> len(linear_tiles(16, 255, 16))  # 255 input vectors leave room for 1 bias vector per PE
    4
    """
    if not 0 < nvi <= FLEXASR.max_vectors or nvo <= 0 or nvo % 4:
        raise IlaError(f"flexasr linear: {nvi} input vectors (at most {FLEXASR.max_vectors}) and {nvo} output "
                       "vectors (a multiple of 4) cannot be tiled")
    if T == 0:
        return []
    npe_max = min(FLEXASR.max_vectors // 4, vec.PE_INPUT_VECTORS - nvi, (1 << 20) // (256 * nvi))
    nb = nvo // 4
    pn = -(-nb // npe_max)
    o_cuts = [4 * (nb * i // pn) for i in range(pn + 1)]
    widest = max(b - a for a, b in zip(o_cuts, o_cuts[1:]))
    per_t = T
    if not vec._fits_gb(T, nvi, widest):
        # (T/16 + 2)·nvi + T/16·nvo vectors of 16 B fill the 64 Ki vectors of the global buffer
        per_t = 16 * max(1, min(((1 << 16) - 32 * nvi) // (16 * (nvi + widest)), 4095))
        while per_t > 16 and not vec._fits_gb(per_t, nvi, widest):
            per_t -= 16
    pt = -(-T // per_t)
    t_cuts = [T * i // pt for i in range(pt + 1)]
    return [(t0, t1, v0, v1) for t0, t1 in zip(t_cuts, t_cuts[1:]) for v0, v1 in zip(o_cuts, o_cuts[1:])]


def run_linear(x: npt.NDArray[np.floating], w: npt.NDArray[np.floating], b: npt.NDArray[np.floating] | None = None,
               out_bias: int | None = None, reference: bool | None = None) -> tuple[Floats, Counts]:
    """y = x·Wᵀ + b on FlexASR (AdaptivFloat); returns (y, counts).

    Any x[T, in], W[out, in] with in <= 4080 (one PE input window: the driver splits no sum).  in is
    padded with zero columns to a multiple of 16 and out with zero rows of W and zero biases to a
    multiple of 64 (4 PEs x 16 lanes): a zero product adds exactly nothing to the 32-bit
    accumulators, the padded outputs are dropped, and zeros move none of the AdaptivFloat biases the
    driver picks (each is the max magnitude's).  A layer past one call's buffers runs as the calls
    of `linear_tiles`, every call with the biases picked on the whole tensors, so every output is
    the code one call would give it (a linear layer computes each timestep and each output vector
    alone).  `counts["linear_calls"]` says how many calls ran when there were several."""
    _finite("flexasr linear", input=x, weight=w, bias=b)
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    b = np.zeros(w.shape[0]) if b is None else np.asarray(b, np.float64).reshape(-1)
    if x.ndim != 2 or w.ndim != 2 or w.shape[1] != x.shape[1] or b.shape != (w.shape[0],):
        raise IlaError(f"flexasr linear: x {list(x.shape)}, w {list(w.shape)} and b {list(b.shape)} are not "
                       "[T, in], [out, in] and [out]")
    (T, K), N = x.shape, w.shape[0]
    if K > FLEXASR.max_features or K == 0 or N == 0:
        raise IlaError(f"flexasr linear: in = {K} and out = {N} must be positive, in at most {FLEXASR.max_features} "
                       f"({FLEXASR.max_vectors} vectors of a PE's input; the driver splits no sum)")
    kp, n_pad = -(-K // 16) * 16, -(-N // 64) * 64
    xp, wp, bp = np.zeros((T, kp)), np.zeros((n_pad, kp)), np.zeros(n_pad)
    xp[:, :K], wp[:N, :K], bp[:N] = x, w, b
    bw, bi, bb = af.bias_for(wp), af.bias_for(xp), af.bias_for(bp)
    xc, wc, bc = af.encode(xp, bi), af.encode(wp, bw), af.encode(bp, bb)
    if out_bias is None:
        ref = af.decode(xc, bi) @ af.decode(wc, bw).T + af.decode(bc, bb)
        out_bias = af.bias_for(ref)
    codes = np.zeros((T, n_pad), np.uint8)
    counts = {"writes": 0, "reads": 0, "waits": 0}
    tiles = linear_tiles(T, kp // 16, n_pad // 16)
    for t0, t1, v0, v1 in tiles:
        o = slice(16 * v0, 16 * v1)
        codes[t0:t1, o], c = _linear_call(xc[t0:t1], wc[o], bc[o], bw, bi, bb, out_bias, reference)
        for key in counts:
            counts[key] += c[key]
    if len(tiles) > 1:
        counts["linear_calls"] = len(tiles)
    return af.decode(codes[:, :N], out_bias), counts


def _linear_call(xc: Codes, wc: Codes, bc: Codes, bw: int, bi: int, bb: int, bo: int,
                 reference: bool | None) -> tuple[Codes, Counts]:
    """One linear-layer call (it must fit the buffers): the codes it reads back [T, 16·nvo] and its
    counts, from `flexasr_vec` or, in reference mode, by stepping `linear_fragment`."""
    T, nvi, nvo = xc.shape[0], xc.shape[1] // 16, wc.shape[0] // 16
    fast = None if reference_mode(reference) else vec.linear_codes(xc, wc, bc, bw, bi, bb, bo)
    if fast is not None:
        # weight rows, bias vectors, the stored input, 4 PE configurations each, GB mngr/control/start
        return fast, {"writes": 16 * nvo * nvi + nvo + T * nvi + 16 + 3, "reads": T * nvo, "waits": 1}
    _, reads, counts = execute(linear_fragment(xc, wc, bc, bw, bi, bb, bo))
    return np.stack(reads).reshape(T, 16 * nvo), counts


def lstm_fragment(xc: Codes, wic: Codes, whc: Codes, bc: Codes, bw: int, bi: int, bb: int, bo: int,
                  h0c: Codes | None = None, c0c: Codes | None = None) -> list[Cmd]:
    """Fragment of an LSTM over xc[T,16nvi] (PyTorch i,f,g,o gate rows).

    Zero-initialised, or (h0c, c0c: codes [H] with the act bias `bo`) started
    from a given state: h0 goes to every PE's hidden-input region, c0 to the
    act buffers, `is_zero_first` is 0, and the final cell state is read back
    from the act buffers after the hidden states (reads `T·nvo + nvo`)."""
    T, nvi = xc.shape[0], xc.shape[1] // 16
    H = whc.shape[1]
    nvo = H // 16
    if nvo % 4:
        raise IlaError(f"flexasr lstm: hidden size {H} needs H/16 % 4 == 0")
    if h0c is not None and c0c is None:
        raise IlaError("flexasr lstm: an initial h0 needs its c0")
    npe = nvo // 4
    gates = {"i": 0, "f": 1, "g": 2, "o": 3}
    cmds: list[Cmd] = []
    for p in range(4):
        ti: list[Codes] = []
        th: list[Codes] = []
        bias: list[Codes] = []
        for k in range(p * npe, (p + 1) * npe):
            for gname in "igfo":
                r0 = gates[gname] * H + 16 * k
                ti += [wic[r0:r0 + 16, 16 * i:16 * i + 16] for i in range(nvi)]
                th += [whc[r0:r0 + 16, 16 * i:16 * i + 16] for i in range(nvo)]
                bias.append(bc[r0:r0 + 16])
        cmds += _pe_weight_cmds(ti, p) + _pe_weight_cmds(th, p, nvi * nvo * 16)
        pb = pe_base(p)
        cmds += [write(pb + 0x600000 + 16 * (nvi + k), bytes_word(v)) for k, v in enumerate(bias)]
        cmds += [write(pb + 0x600000 + 16 * (nvi + 2 * nvo + k), 0) for k in range(nvo)]
        if h0c is not None and c0c is not None:
            cmds += [write(pb + 0x600000 + 16 * (nvi + nvo + j), bytes_word(h0c[16 * j:16 * j + 16]))
                     for j in range(nvo)]
            cmds += [write(pb + 0x900000 + 16 * k, bytes_word(c0c[16 * (p * npe + k):16 * (p * npe + k) + 16]))
                     for k in range(npe)]
    zf = 1 if h0c is None else 0
    cmds += store_act(xc.reshape(T, nvi, 16))
    base1 = (T // 16 + 2) * 16 * nvi
    for p in range(4):
        pb = pe_base(p)
        cmds += [write(pb + 0x400010, word((1, 0, 1), (zf, 1, 1), (1, 3, 1), (2, 4, 1), (nvo, 5, 1))),
                 write(pb + 0x400020, word((bw, 1, 1), (bb, 2, 1), (bi, 3, 1), (nvi, 4, 2), (nvi, 8, 2))),
                 write(pb + 0x400040, word((1, 0, 1), (bw, 1, 1), (bb, 2, 1), (bo, 3, 1), (nvo, 4, 2),
                                           (nvi * nvo * 16, 6, 2), (nvi + 2 * nvo, 8, 2), (nvi + nvo, 10, 2))),
                 write(pb + 0x800010, word((1, 0, 1), (zf, 1, 1), (bo, 2, 1), (24, 3, 1), (npe, 4, 2),
                                           (0, 6, 2), (p * npe, 8, 1))),
                 write(pb + 0x800020, bytes_word(LSTM_PROGRAM[:16])),
                 write(pb + 0x800030, bytes_word(LSTM_PROGRAM[16:]))]
    cmds += [write(GB + 0x400010, word((nvi, 0, 1), (0, 2, 2), (nvo, 4, 1), (base1, 6, 2))),
             write(GB + 0x700010, word((1, 0, 1), (1, 2, 1), (0, 4, 1), (1, 5, 1), (nvi, 6, 1),
                                       (nvo, 7, 1), (T, 8, 2))),
             write(GB + 0x10, 1), WAIT]
    cmds += load_act(T, nvo, 16 * base1)
    if h0c is not None:
        cmds += [read(pe_base(p) + 0x900000 + 16 * k) for p in range(4) for k in range(npe)]
    return cmds


def run_lstm(x: npt.NDArray[np.floating], w_ih: npt.NDArray[np.floating], w_hh: npt.NDArray[np.floating],
             b_ih: npt.NDArray[np.floating], out_bias: int | None = None,
             h0: npt.NDArray[np.floating] | None = None,
             c0: npt.NDArray[np.floating] | None = None, reference: bool | None = None) -> tuple[Floats, Counts]:
    """An LSTM over x[T,I] on FlexASR; (h[T,H], counts), or with an initial
    state (h0, c0 [H]) (h[T+1,H] with the final cell state as its last row, counts).

    One act bias quantises h, c and the output.  From zero state: 5 (AdaptivFloat<8,3>
    with bias b spans [2^(b-10), 1.9375·2^(b-3)]: up to 7.75).  From a given state, the
    smallest bias whose range holds the cell state's bound |c| <= |c0| + T (|h| < 1), at
    least 3 (up to 1.94): isel runs torch's sequence LSTMs one step per call from the
    previous state, and with 5 every |h| below 2^-5 flushed to zero.

    Over several steps from a given state (isel's whole-sequence call) the bias is calibrated on the
    sequence instead (`lstm_chunks`), and the steps run as one call per chunk of one bias (one chunk
    when one bias holds the sequence); `counts["lstm_calls"]` says how many calls ran."""
    _finite("flexasr lstm", input=x, w_ih=w_ih, w_hh=w_hh, bias=b_ih, h0=h0, c0=c0)
    too_big = FLEXASR.lstm_failures(x.shape[1], w_hh.shape[1])
    if too_big:  # isel's guard (passes/isel/fused.py) refuses the same layers
        raise IlaError(f"flexasr lstm: {x.shape[1]} features and {w_hh.shape[1]} hidden units do not fit the "
                       f"driver's buffers: {'; '.join(too_big)}")
    if x.shape[1] % 16 or w_hh.shape[1] % 64:
        return _run_lstm_padded(x, w_ih, w_hh, b_ih, out_bias, h0, c0, reference)
    if out_bias is None and h0 is not None and c0 is not None and x.shape[0] > 1:
        return _run_lstm_chunked(x, w_ih, w_hh, b_ih, h0, c0, reference)
    bw = af.bias_for(np.concatenate([w_ih.ravel(), w_hh.ravel()]))
    bi, bb = af.bias_for(x), af.bias_for(b_ih)
    xc, wic, whc, bc = af.encode(x, bi), af.encode(w_ih, bw), af.encode(w_hh, bw), af.encode(b_ih, bb)
    H = w_hh.shape[1]
    state = h0 is not None
    if state and c0 is None:
        raise IlaError("flexasr lstm: an initial h0 needs its c0")
    if out_bias is None:
        out_bias = 5 if h0 is None or c0 is None else max(3, af.bias_for(np.array([np.max(np.abs(c0)) + x.shape[0]])))
    h0c = af.encode(np.asarray(h0, np.float64).reshape(H), out_bias) if state else None
    c0c = af.encode(np.asarray(c0, np.float64).reshape(H), out_bias) if state else None
    if not vec._fits_gb(x.shape[0], xc.shape[1] // 16, H // 16):  # from a given state the steps were split
        raise IlaError(f"flexasr lstm: {x.shape[0]} timesteps of {xc.shape[1] // 16} input and {H // 16} hidden "
                       f"vectors do not fit the 1 MiB global buffer (at most {lstm_max_steps(xc.shape[1] // 16, H // 16)} "
                       "a call)")
    rows = x.shape[0] + (1 if state else 0)
    fast = None if reference_mode(reference) else vec.lstm_codes(xc, wic, whc, bc, bw, bi, bb, out_bias,
                                                                 LSTM_PROGRAM, h0c, c0c)
    if fast is not None:
        return af.decode(fast, out_bias), _lstm_counts(x.shape[0], xc.shape[1] // 16, H // 16, state)
    _, reads, counts = execute(lstm_fragment(xc, wic, whc, bc, bw, bi, bb, out_bias, h0c, c0c))
    return af.decode(np.stack(reads).reshape(rows, H), out_bias), counts


def lstm_max_steps(nvi: int, nvo: int) -> int:
    """The most timesteps one LSTM call holds: its input [T, nvi] and output [T, nvo] regions in the 1 MiB
    global buffer, the output's base in a 16-bit field (`flexasr_vec._fits_gb`, monotone in T); 0 if none."""
    lo, hi = 0, (1 << 16) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if vec._fits_gb(mid, nvi, nvo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _run_lstm_padded(x: npt.NDArray[np.floating], w_ih: npt.NDArray[np.floating], w_hh: npt.NDArray[np.floating],
                     b_ih: npt.NDArray[np.floating], out_bias: int | None, h0: npt.NDArray[np.floating] | None,
                     c0: npt.NDArray[np.floating] | None, reference: bool | None) -> tuple[Floats, Counts]:
    """`run_lstm` with the input padded with zero features to a multiple of 16 and each gate's rows
    with zero rows (weights and bias) to a hidden size that is a multiple of 64 (4 PEs x 16 lanes).

    Exact for the real hidden units: the padded h columns of w_hh are zero, so whatever a padded
    unit computes (its gates see 0, but the act unit's tanh of 0 is 16/2^14, not 0: its c and h are
    small, not zero) meets only zero weights, and zero products add nothing; the padded float state
    the driver calibrates its biases on is exactly 0 (tanh(0) = 0), so no bias moves.  The rows of
    the padded units are dropped."""
    T, n_in = x.shape
    H = w_hh.shape[1]
    ip, hp = -(-n_in // 16) * 16, -(-H // 64) * 64
    xp, wi, wh, bp = np.zeros((T, ip)), np.zeros((4 * hp, ip)), np.zeros((4 * hp, hp)), np.zeros(4 * hp)
    xp[:, :n_in] = x
    for g in range(4):
        wi[g * hp:g * hp + H, :n_in] = w_ih[g * H:(g + 1) * H]
        wh[g * hp:g * hp + H, :H] = w_hh[g * H:(g + 1) * H]
        bp[g * hp:g * hp + H] = np.asarray(b_ih).reshape(-1)[g * H:(g + 1) * H]

    def pad(v: npt.NDArray[np.floating] | None) -> npt.NDArray[np.float64] | None:
        if v is None:
            return None
        out = np.zeros(hp)
        out[:H] = np.asarray(v, np.float64).reshape(H)
        return out

    y, counts = run_lstm(xp, wi, wh, bp, out_bias=out_bias, h0=pad(h0), c0=pad(c0), reference=reference)
    return y[:, :H], counts


def _lstm_counts(T: int, nvi: int, nvo: int, state: bool) -> Counts:
    """The command counts of `lstm_fragment` for these shapes."""
    # per PE: w_ih and w_hh rows (16 per tile), gate biases, zero biases, [h0 per PE, c0 vectors];
    # the stored input; 6 configuration writes per PE; GB mngr, control, start
    writes = 64 * nvo * (nvi + nvo) + 4 * nvo + 4 * nvo + (5 * nvo if state else 0) + T * nvi + 24 + 3
    return {"writes": writes, "reads": T * nvo + (nvo if state else 0), "waits": 1}


# a step's state is held by an act bias when AdaptivFloat<8,3> with that bias keeps h and c each within this
# relative error (twice the 2^-5 half-ulp of its 4-bit mantissa: a state whose small values flush
# to zero under the bias of a larger one goes past it)
LSTM_HOLD_TOLERANCE = 2.0 ** -4


def _held(state: npt.NDArray[np.floating], bias: int) -> bool:
    """h and c (the halves of `state`) each quantise within LSTM_HOLD_TOLERANCE with `bias`."""
    for part in np.split(np.asarray(state, np.float64), 2):
        norm = float(np.linalg.norm(part))
        if norm > 0.0 and float(np.linalg.norm(af.decode(af.encode(part, bias), bias) - part)) > \
                LSTM_HOLD_TOLERANCE * norm:
            return False
    return True


def lstm_chunks(x: npt.NDArray[np.floating], w_ih: npt.NDArray[np.floating], w_hh: npt.NDArray[np.floating],
                b_ih: npt.NDArray[np.floating], h0: npt.NDArray[np.floating],
                c0: npt.NDArray[np.floating]) -> list[tuple[int, int, int]]:
    """The calls of a T-step LSTM from (h0, c0): [(first step, end step, act bias)].

    The driver calibrates the act bias on the float LSTM over the sequence (as `run_linear` takes
    its output bias from the float product): a chunk's bias is `bias_for` of the largest |h|, |c|
    of its input state and its steps.  A chunk grows while that bias holds every state in it
    (`_held`: quantised within LSTM_HOLD_TOLERANCE); a step the bias cannot hold (its state grew
    past the range, or the chunk's larger bias would flush its small values) starts the next
    chunk, from the state the previous one left (read back and written again by the host)."""
    H = w_hh.shape[1]
    w = [np.asarray(a, np.float64) for a in (w_ih, w_hh, b_ih)]
    h, c = np.asarray(h0, np.float64).reshape(H), np.asarray(c0, np.float64).reshape(H)
    states = [np.concatenate([h, c])]  # states[t]: the state before step t (h, c)
    T = x.shape[0]
    for t in range(T):
        h, c = _lstm_step(np.asarray(x[t], np.float64), h, c, *w)
        states.append(np.concatenate([h, c]))
    chunks: list[tuple[int, int, int]] = []
    held: dict[tuple[int, int], bool] = {}  # (state index, bias) -> _held: each is asked once, not once per end

    def holds(k: int, bias: int) -> bool:
        if (k, bias) not in held:
            held[k, bias] = _held(states[k], bias)
        return held[k, bias]

    start = 0
    while start < T:
        bias = af.bias_for(np.concatenate(states[start:start + 2]))
        end = start + 1
        while end < T:
            wider = max(bias, af.bias_for(states[end + 1]))
            if not all(holds(k, wider) for k in range(start, end + 2)):
                break
            bias, end = wider, end + 1
        chunks.append((start, end, bias))
        start = end
    return chunks


def _lstm_step(x: np.ndarray, h: np.ndarray, c: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray,
               b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore"):  # exp(-z) -> inf: the gate is 0, as it should be
        z = (w_ih @ x + w_hh @ h + b).astype(np.float64)
        i, f, g, o = np.split(z, 4)
        c = 1 / (1 + np.exp(-f)) * c + 1 / (1 + np.exp(-i)) * np.tanh(g)
        return 1 / (1 + np.exp(-o)) * np.tanh(c), c


def _run_lstm_chunked(x: npt.NDArray[np.floating], w_ih: npt.NDArray[np.floating], w_hh: npt.NDArray[np.floating],
                      b_ih: npt.NDArray[np.floating], h0: npt.NDArray[np.floating],
                      c0: npt.NDArray[np.floating], reference: bool | None = None) -> tuple[Floats, Counts]:
    """`run_lstm` over x[T,I] from (h0, c0), one call per chunk of `lstm_chunks`; rows h_1..h_T, c_T."""
    H = w_hh.shape[1]
    h, c = np.asarray(h0, np.float64).reshape(H), np.asarray(c0, np.float64).reshape(H)
    rows: list[Floats] = []
    total: dict[str, int] = {}
    # a chunk longer than one call's global-buffer regions hold runs as calls of at most `limit` steps
    limit = lstm_max_steps(x.shape[1] // 16, H // 16)
    chunks = [(s, min(s + limit, end), bias) for s0, end, bias in lstm_chunks(x, w_ih, w_hh, b_ih, h, c)
              for s in range(s0, end, limit)]
    for start, end, bias in chunks:
        y, counts = run_lstm(x[start:end], w_ih, w_hh, b_ih, out_bias=bias, h0=h, c0=c, reference=reference)
        rows.append(y[:-1])
        h, c = y[-2], y[-1]
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
    total["lstm_calls"] = len(chunks)
    return np.concatenate([*rows, c[None]]), total


def _store_small(codes: Codes, base_vec: int) -> list[Cmd]:
    return [write(GB + 0x600000 + 16 * (base_vec + v), bytes_word(codes[v])) for v in range(len(codes))]


def run_layernorm(x: npt.NDArray[np.floating], gamma: npt.NDArray[np.floating],
                  beta: npt.NDArray[np.floating], reference: bool | None = None) -> tuple[Floats, Counts]:
    """Layer norm of x[T,H] over H with γ, β on FlexASR; (y, counts). Output bias = input bias."""
    _finite("flexasr layernorm", input=x, gamma=gamma, beta=beta)
    T, H = x.shape
    nv = H // 16
    bi, bg, bb = af.bias_for(x), af.bias_for(gamma), af.bias_for(beta)
    fast = None if reference_mode(reference) else vec.layernorm_codes(af.encode(x, bi), af.encode(gamma, bg),
                                                                      af.encode(beta, bb), bi, bg, bb)
    if fast is not None:
        return af.decode(fast, bi), {"writes": T * nv + 2 * nv + 4, "reads": T * nv, "waits": 1}
    cmds = store_act(af.encode(x, bi).reshape(T, nv, 16))
    cmds += _store_small(af.encode(gamma, bg).reshape(nv, 16), 0)
    cmds += _store_small(af.encode(beta, bb).reshape(nv, 16), nv)
    cmds += [write(GB + 0x400010, word((nv, 0, 1))), write(GB + 0x400020, word((0, 10, 2), (nv, 12, 2))),
             write(GB + 0x900010, word((1, 0, 1), (0, 4, 1), (nv, 6, 1), (T, 8, 2), (bi, 12, 1), (bb, 14, 1),
                                       (bg, 15, 1))),
             write(GB + 0x30, 1), WAIT]
    cmds += load_act(T, nv)
    _, reads, counts = execute(cmds)
    return af.decode(np.stack(reads).reshape(T, H), bi), counts


def run_attention_rows(q: npt.NDArray[np.floating], k: npt.NDArray[np.floating],
                       v: npt.NDArray[np.floating], reference: bool | None = None) -> tuple[Floats, Counts]:
    """Attention of every query row q[Tq,H] over k, v [T,H]: one fragment that stores
    K and V once and per query stores q, triggers GB_ATTENTION and reads the result."""
    _finite("flexasr attention", query=q, key=k, value=v)
    Tq, (T, H) = q.shape[0], k.shape
    nv = H // 16
    if H % 16 or nv > FLEXASR.max_vectors:
        raise IlaError(f"flexasr attention: hidden size {H} must be a multiple of 16 and at most 4080")
    bq, bk, bv = af.bias_for(q), af.bias_for(k), af.bias_for(v)
    bo = bv  # every output row is a convex combination of rows of V
    if not reference_mode(reference):
        fast = vec.attention_rows_codes(af.encode(q, bq), af.encode(k, bk), af.encode(v, bv), bq, bk, bv, bo)
        if fast is not None:
            # K and V, 3 configurations; per query its vectors and the start
            counts = {"writes": 2 * T * nv + 3 + Tq * (nv + 1), "reads": Tq * nv, "waits": Tq}
            return af.decode(fast.reshape(Tq, H), bo), counts
    base1 = (T // 16 + 2) * 16 * nv
    cmds = store_act(af.encode(k, bk).reshape(T, nv, 16))
    cmds += store_act(af.encode(v, bv).reshape(T, nv, 16), base=16 * base1)
    cmds += [write(GB + 0x400010, word((nv, 0, 1), (nv, 4, 1), (base1, 6, 2))),
             write(GB + 0x400020, word((0, 0, 2), (nv, 2, 2))),
             write(GB + 0xB00010, word((1, 0, 1), (0, 4, 1), (1, 5, 1), (nv, 6, 1), (T, 8, 2), (bq, 12, 1),
                                       (bk, 13, 1), (bv, 14, 1), (bo, 15, 1)))]
    qc = af.encode(q, bq).reshape(Tq, nv, 16)
    for r in range(Tq):
        cmds += _store_small(qc[r], 0) + [write(GB + 0x50, 1), WAIT]
        cmds += [read(GB + 0x600000 + 16 * (nv + j)) for j in range(nv)]
    _, reads, counts = execute(cmds)
    return af.decode(np.stack(reads).reshape(Tq, H), bo), counts


def run_attention(q: npt.NDArray[np.floating], k: npt.NDArray[np.floating], v: npt.NDArray[np.floating],
                  out_bias: int | None = None, reference: bool | None = None) -> tuple[Floats, Counts]:
    """softmax(K·q)ᵀ·V for one query q[H] over keys/values k, v [T,H] on FlexASR; (out[H], counts)."""
    _finite("flexasr attention", query=q, key=k, value=v)
    T, H = k.shape
    nv = H // 16
    bq, bk, bv = af.bias_for(q), af.bias_for(k), af.bias_for(v)
    bo = af.bias_for(v) if out_bias is None else out_bias
    if not reference_mode(reference):
        fast = vec.attention_rows_codes(af.encode(q, bq).reshape(1, -1), af.encode(k, bk), af.encode(v, bv),
                                        bq, bk, bv, bo)
        if fast is not None:
            return af.decode(fast.reshape(H), bo), {"writes": 2 * T * nv + nv + 4, "reads": nv, "waits": 1}
    base1 = (T // 16 + 2) * 16 * nv
    cmds = store_act(af.encode(k, bk).reshape(T, nv, 16))
    cmds += store_act(af.encode(v, bv).reshape(T, nv, 16), base=16 * base1)
    cmds += _store_small(af.encode(q, bq).reshape(nv, 16), 0)
    cmds += [write(GB + 0x400010, word((nv, 0, 1), (nv, 4, 1), (base1, 6, 2))),
             write(GB + 0x400020, word((0, 0, 2), (nv, 2, 2))),
             write(GB + 0xB00010, word((1, 0, 1), (0, 4, 1), (1, 5, 1), (nv, 6, 1), (T, 8, 2), (bq, 12, 1),
                                       (bk, 13, 1), (bv, 14, 1), (bo, 15, 1))),
             write(GB + 0x50, 1), WAIT]
    cmds += [read(GB + 0x600000 + 16 * (nv + j)) for j in range(nv)]
    _, reads, counts = execute(cmds)
    return af.decode(np.stack(reads).reshape(H), bo), counts
