"""FlexASR's driver fragments on whole tensors: the codes the per-command simulation reads back.

`flexasr_driver`'s runners build a fragment (thousands of MMIO commands) and step `FlexAsr` through
it; the functions here compute what that fragment reads back directly from the code tensors the
runner would store, with the same units: the PE core's ProductSum accumulation and the act unit's
program (`act_program`, the byte code of `flexasr_units.pe_timestep` interpreted on arrays of
lanes), layer reduce, layer norm and attention (`flexasr_units`' functions on the same arrays).  A
GB_CONTROL_START over T timesteps becomes one matrix product for a linear layer and one per
timestep (the recurrence) for an LSTM.

Each function models its fragment only where every command lands in the window it addresses and
no configuration field truncates (`_region_end`, the checks below); outside that it returns None
and the runner steps the commands (the per-command simulation is the reference: a test checks the
two bit for bit, `test/unit/runtime/ila/test_ila_vectorized.py`).

Exactness of the core: ProductSum terms are `±(16+m_w)(16+m_x) << (e_w+e_x)` < 2^24 and a dot
product has at most 4080 of them, so every partial sum is an integer below 2^53 and the float64
product is exact in any summation order.

Example::

    codes = linear_codes(xc, wc, bc, bw, bi, bb, bo)   # == the reads of linear_fragment(...), or None
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from steplus.dialects.target.ila import FLEXASR
from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila.adpfloat import Codes, Ints
from steplus.runtime.ila.flexasr import MIB, region_end
from steplus.runtime.ila.flexasr_units import act_alu, attention_codes, layer_norm_codes, reduce_codes

# the windows the drivers' commands address: a PE's input buffer (vectors), act buffer (vectors),
# GB small buffer (vectors); register field limits
PE_INPUT_VECTORS = FLEXASR.pe_input_vectors  # 0x1000 // 16
PE_ACT_VECTORS = FLEXASR.pe_act_vectors  # 0x200 // 16
GB_SMALL_VECTORS = 0x4000 // 16
U8, U16 = 1 << 8, 1 << 16


def _region_end(T: int, nv: int, base: int = 0) -> int:
    """One past the last byte of a [T, nv] GB-large region at byte `base` (`flexasr.region_end`,
    the bound the per-command simulation refuses past: outside it these functions return None)."""
    return region_end(T - 1, nv, base)


def _fits_gb(T: int, nv_in: int, nv_out: int) -> bool:
    """A [T, nv_in] input region at 0 and a [T, nv_out] output region at the drivers' `base1` fit
    the 1 MiB GB-large buffer and the 8/16-bit fields that describe them."""
    base1 = (T // 16 + 2) * 16 * nv_in
    return (0 < T < U16 and 0 < nv_in < U8 and 0 < nv_out < U8 and base1 < U16
            and _region_end(T, nv_in) <= MIB and _region_end(T, nv_out, 16 * base1) <= MIB)


def signed_significands(codes: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """`±(16+m) << e` of codes (0 for zero codes) as float64: ProductSum(w, x) = this(w)·this(x)."""
    return af.to_fixed14(codes, 0).astype(np.float64)


def core_dot(w: npt.ArrayLike, x: npt.ArrayLike) -> Ints:
    """The PE core's 32-bit accumulators: `wrap32(Σ_k ProductSum(w[n, k], x[t, k]))` -> [T, N]
    for codes x[T, K] and w[N, K] (exact: see the module doc)."""
    return _wrap_dot(signed_significands(x), signed_significands(w))


def _wrap_dot(x: npt.NDArray[np.float64], w: npt.NDArray[np.float64]) -> Ints:
    """wrap32(x · wᵀ) of signed significands (x[..., K], w[N, K]).  numpy's einsum, not BLAS: the
    sums are exact either way, and a multithreaded BLAS on a loaded machine takes ~50 ms for a
    35x64x256 product that einsum does in 0.2 ms."""
    return af.wrap(np.einsum("...k,nk->...n", x, w).astype(np.int64), 32)


def core_vector(acc: Ints, shift: int, bias14: Ints | int = 0) -> Ints:
    """A manager's output lanes: `wrap20(clamp(acc >> shift + bias))` (`flexasr_units._core_vectors`)."""
    return af.wrap(af.clamp_act((acc >> shift) + bias14), 20)


def act_program(prog: bytes, queue: list[Ints], actbuf: Codes, b: int,
                zero_first: bool) -> tuple[Codes | None, Codes]:
    """The act unit's program over every output vector at once (the per-vector loop of
    `flexasr_units.pe_timestep`): `queue[j]` holds the j-th queue entry of every output ([..., 16]
    lanes), `actbuf` the act-buffer row of every output (codes).  Returns (the codes the last
    OUTGB writes, or None, the new act-buffer rows)."""
    shape = actbuf.shape
    regs = [np.zeros(shape, np.int64) for _ in range(4)]
    actbuf = actbuf.copy()
    out: Codes | None = None
    qi = 0
    for byte in prog:
        op, a2, a1 = byte >> 4, (byte >> 2) & 3, byte & 3
        if op == 0x1:
            regs[a2] = np.zeros(shape, np.int64) if zero_first else af.to_fixed14(actbuf, b)
        elif op == 0x2:
            actbuf = af.from_fixed14(regs[a2], b)
        elif op == 0x3:
            regs[a2] = queue[qi]
            qi += 1
        elif op == 0x4:
            out = af.from_fixed14(regs[a2], b)
        else:
            act_alu(op, regs, a2, a1)
    return out, actbuf


def linear_codes(xc: Codes, wc: Codes, bc: Codes, bw: int, bi: int, bb: int, bo: int) -> Codes | None:
    """The codes `linear_fragment(xc, wc, bc, bw, bi, bb, bo)` reads back ([T, 16·nvo]), or None
    outside the modelled shapes.  Every output vector's program is `0x30 0x40` (queue -> OUTGB)."""
    T, nvi, nvo = xc.shape[0], xc.shape[1] // 16, wc.shape[0] // 16
    npe = nvo // 4
    if not (_fits_gb(T, nvi, nvo) and nvo % 4 == 0 and nvi + npe <= PE_INPUT_VECTORS
            and npe * nvi * 256 <= MIB and xc.shape[1] == 16 * nvi and wc.shape == (16 * nvo, 16 * nvi)):
        return None
    lanes = core_vector(core_dot(wc, xc), 14 - bw - bi, af.to_fixed14(bc, bb))
    return af.from_fixed14(lanes, bo)


LSTM_QUEUE = 8  # queue entries per hidden vector: gates i, g, f, o, each x part (manager 0) and h part (1)


def lstm_codes(xc: Codes, wic: Codes, whc: Codes, bc: Codes, bw: int, bi: int, bb: int, bo: int,
               program: bytes, h0c: Codes | None = None, c0c: Codes | None = None) -> Codes | None:
    """The codes `lstm_fragment(...)` reads back: h_1..h_T ([T, H]) and, from a given state, the
    final cell state as one more row; None outside the modelled shapes.

    Per timestep every PE's core runs manager 0 (w_ih · x_t + bias) and manager 1 (w_hh · h_{t-1},
    skipped on the first step from zero state) for each gate row, and the act unit runs `program`
    on every hidden vector at once; h_t's codes are the next step's manager-1 input (`is_rnn`), and
    the cell state stays in the act buffers as codes."""
    T, nvi = xc.shape[0], xc.shape[1] // 16
    H = whc.shape[1]
    nvo = H // 16
    npe = nvo // 4
    if not (_fits_gb(T, nvi, nvo) and nvo % 4 == 0 and H == 16 * nvo and xc.shape[1] == 16 * nvi
            and nvi + 3 * nvo <= PE_INPUT_VECTORS and npe <= PE_ACT_VECTORS
            and nvi * nvo * 16 < U16 and (nvi + nvo) * nvo * 256 <= FLEXASR.pe_weight_bytes
            and wic.shape == (4 * H, 16 * nvi) and whc.shape == (4 * H, H) and bc.shape == (4 * H,)
            and (h0c is None) == (c0c is None)):
        return None
    if sum(1 for byte in program if byte >> 4 == 0x3) != LSTM_QUEUE:
        return None
    # gate rows in the queue's order (i, g, f, o of PyTorch's i, f, g, o), as [4, H] per gate
    order = [0, 2, 1, 3]
    x_lanes = core_vector(core_dot(wic, xc), 14 - bw - bi, af.to_fixed14(bc, bb))  # [T, 4H]
    x_gates = x_lanes.reshape(T, 4, H)[:, order]
    zero_first = h0c is None
    h = np.zeros(H, np.uint8) if h0c is None else np.asarray(h0c, np.uint8).reshape(H)
    c = np.zeros((nvo, 16), np.uint8) if c0c is None else np.asarray(c0c, np.uint8).reshape(nvo, 16)
    wh = signed_significands(whc.reshape(4, H, H)[order].reshape(4 * H, H))  # core_dot's w side, once
    rows: list[Codes] = []
    for t in range(T):
        if zero_first and t == 0:
            h_gates = np.zeros((4, H), np.int64)
        else:
            h_gates = core_vector(_wrap_dot(signed_significands(h), wh), 14 - bw - bo).reshape(4, H)
        queue = [part.reshape(4, nvo, 16)[g] for g in range(4) for part in (x_gates[t], h_gates)]
        out, c = act_program(program, queue, c, bo, zero_first and t == 0)
        if out is None:
            return None
        h = out.reshape(H)
        rows.append(h)
    if h0c is not None:
        rows.append(c.reshape(H))
    return np.stack(rows)


def layernorm_codes(xc: Codes, gc: Codes, bc: Codes, bi: int, bg: int, bb: int) -> Codes | None:
    """The codes `run_layernorm`'s fragment reads back ([T, H]), or None outside the modelled shapes."""
    T, H = xc.shape
    nv = H // 16
    if not (H == 16 * nv and _fits_gb(T, nv, nv) and 2 * nv <= GB_SMALL_VECTORS):
        return None
    return layer_norm_codes(xc.reshape(T, nv, 16), gc, bc, bi, bb, bg).reshape(T, H)


def attention_rows_codes(qc: Codes, kc: Codes, vc: Codes, bq: int, bk: int, bv: int, bo: int) -> Codes | None:
    """The codes `run_attention_rows`' fragment reads back ([Tq, H]): GB_ATTENTION once per query
    row (the same unit function on the same codes, row by row), or None outside the modelled shapes."""
    T, H = kc.shape
    nv = H // 16
    if not (H == 16 * nv and _fits_gb(T, nv, nv) and 2 * nv <= GB_SMALL_VECTORS):
        return None
    kr, vr = kc.reshape(T, nv, 16), vc.reshape(T, nv, 16)
    return np.stack([attention_codes(q, kr, vr, bq, bk, bv, bo) for q in qc.reshape(-1, H)])


def pool_codes(codes: Codes, n_pools: int, mode: int) -> Codes | None:
    """The codes `pool_fragment(codes, n_pools, mode)` (store/load cancelled) reads back
    ([T >> n_pools, nv, 16]), or None outside the modelled shapes."""
    T, nv, _ = codes.shape
    if not (0 < T < U16 and 0 < nv < U8 and _region_end(T, nv) <= MIB and 0 < n_pools and T >> n_pools > 0):
        return None
    cur = codes
    t = T
    for _ in range(n_pools):
        if t >= 2:
            half = t // 2
            cur = np.concatenate([reduce_codes(cur[0:2 * half:2], cur[1:2 * half:2], mode), cur[half:]])
        t //= 2
    return cur[:T >> n_pools]
