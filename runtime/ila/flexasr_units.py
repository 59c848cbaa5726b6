"""FlexASR child units: PE core + activation unit, layer reduce, layer norm, attention.

These run a trigger's child ILA to completion on the architectural state `s`
(see `flexasr.FlexAsr`).  The PE core and act unit are bit-accurate to the
spec (§1.4.3, §4.2); layer norm and attention follow the documented dataflow
with float intermediates, since their fixed-point datapaths are not public
(spec §7 gap 2).

Example: `pe_timestep(state, 0)` runs PE0 on its input buffer for one
timestep and returns `[(gb_vector_index, 16 bytes), ...]` (its OUTGB ops).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila.adpfloat import Codes, Ints
from steplus.runtime.ila.core import IlaError, State


def _core_vectors(s: State, p: int) -> list[Ints]:
    """PE p's core: one Q6.14 vector (16 lanes) per (output, manager), in act-queue order."""
    def g(f: str) -> int:
        return s.get(f"pe{p}.{f}")

    wgt, inp = s.mems[f"pe{p}_wgt"], s.mems[f"pe{p}_inp"]
    vecs = []
    for o in range(g("num_output")):
        for m in range(g("num_manager")):
            def mg(f: str, m: int = m) -> int:
                return g(f"m{m}_{f}")

            acc = np.zeros(16, dtype=np.int64)
            if not (g("is_zero_first") and mg("zero_active")):
                nin, bi, bw = mg("num_input"), mg("base_input"), mg("base_weight")
                x = inp[bi * 16:(bi + nin) * 16].reshape(nin, 16)
                if g("is_cluster"):
                    lut = np.array([(s.get(f"pe{p}.cluster_{m}") >> (8 * k)) & 0xFF for k in range(16)],
                                   dtype=np.uint8)
                    wb = (o * nin) * 8 + bw
                    raw = wgt[wb * 16:wb * 16 + nin * 128].reshape(nin, 16, 8)
                    idx = np.stack([raw & 15, raw >> 4], axis=-1).reshape(nin, 16, 16)
                    w = lut[idx]
                else:
                    wb = (o * nin) * 16 + bw
                    w = wgt[wb * 16:wb * 16 + nin * 256].reshape(nin, 16, 16)
                acc = af.wrap(af.product_sum(w, x[:, None, :]).sum(axis=(0, 2)), 32)
            a = acc >> (14 - mg("adpbias_w") - mg("adpbias_i"))
            if g("is_bias"):
                bb = mg("base_bias")
                a = a + af.to_fixed14(inp[(bb + o) * 16:(bb + o) * 16 + 16], mg("adpbias_b"))
            vecs.append(af.wrap(af.clamp_act(a), 20))
    return vecs



def act_alu(op: int, regs: list[npt.NDArray[np.int64]], a2: int, a1: int) -> None:
    """One register-to-register instruction of the act unit's program (opcodes 0x7-0xD; others are
    no-ops here): copy, add, fixed-point multiply, sigmoid, tanh, relu, one-minus, on the 14-bit
    fixed-point registers wrapped to 20 bits. One home for the per-vector simulation
    (`pe_timestep`) and the whole-tensor one (`flexasr_vec`)."""
    if op == 0x7:
        regs[a2] = regs[a1].copy()
    elif op == 0x8:
        regs[a2] = af.wrap(regs[a2] + regs[a1], 20)
    elif op == 0x9:
        regs[a2] = af.wrap((regs[a1] * regs[a2]) >> 14, 20)
    elif op == 0xA:
        regs[a2] = af.sigmoid14(regs[a2])
    elif op == 0xB:
        regs[a2] = af.tanh14(regs[a2])
    elif op == 0xC:
        regs[a2] = np.maximum(regs[a2], 0)
    elif op == 0xD:
        regs[a2] = af.wrap((1 << 14) - regs[a2], 20)

def pe_timestep(s: State, p: int) -> list[tuple[int, Codes]]:
    """Run PE p's core and act unit for one timestep; return its OUTGB vectors."""
    def g(f: str) -> int:
        return s.get(f"pe{p}.{f}")

    queue = _core_vectors(s, p)
    prog = [(g("act_vector") >> (8 * k)) & 0xFF for k in range(g("act_num_inst"))]
    actbuf = s.mems[f"pe{p}_act"]
    b, zf = g("act_adpbias"), g("act_is_zero_first")
    regs = [np.zeros(16, dtype=np.int64) for _ in range(4)]
    out: list[tuple[int, Codes]] = []
    qi = 0
    for oc in range(g("act_num_output")):
        row = (oc + g("act_buffer_addr_base")) * 16
        for byte in prog:
            op, a2, a1 = byte >> 4, (byte >> 2) & 3, byte & 3
            if op == 0x1:
                regs[a2] = np.zeros(16, np.int64) if zf else af.to_fixed14(actbuf[row:row + 16], b)
            elif op == 0x2:
                actbuf[row:row + 16] = af.from_fixed14(regs[a2], b)
            elif op == 0x3:
                regs[a2] = queue[qi]
                qi += 1
            elif op == 0x4:
                out.append((oc + g("act_output_addr_base"), af.from_fixed14(regs[a2], b)))
            else:
                act_alu(op, regs, a2, a1)
    s.set(f"pe{p}.is_zero_first", 0)
    s.set(f"pe{p}.act_is_zero_first", 0)
    return out


def _region(base: int, nv: int, T: int, size: int) -> npt.NDArray[np.int64]:
    """Byte offsets [T, nv, 16] of a GB-large region; IlaError if it ends past `size`
    bytes (the configuration registers allow ~4 GiB of offsets: never built)."""
    if T > 0 and nv > 0:
        end = base + ((T - 1) // 16) * (nv * 256) + ((T - 1) % 16) * 16 + (nv - 1) * 256 + 16
        if end > size:
            raise IlaError(f"flexasr: a region of {T} timesteps of {nv} vectors at byte {base} "
                           f"ends at byte {end}, past the {size}-byte global buffer")
    t = np.arange(T)[:, None, None]
    v = np.arange(nv)[None, :, None]
    return base + (t // 16) * (nv * 256) + (t % 16) * 16 + v * 256 + np.arange(16)[None, None, :]


def reduce_codes(a: Codes, b: Codes, mode: int) -> Codes:
    """Layer reduce of code tensors a, b (bias 0): max (mode 0), mean (1) or sum (other modes)."""
    da, db = af.decode(a, 0), af.decode(b, 0)
    if mode == 0:
        return af.encode(np.where(db > da, db, da), 0)
    if mode == 1:
        return af.encode((da + db) / 2, 0)
    return af.encode(da + db, 0)


def layer_reduce(gbl: Codes, base: int, nv: int, T: int, mode: int) -> None:
    """GB_LAYER_REDUCE: out[t] = f(in[2t], in[2t+1]) in place, t < T//2 (codes, bias 0)."""
    if T < 2:
        return
    idx = _region(base, nv, T, len(gbl))
    gbl[idx[:T // 2]] = reduce_codes(gbl[idx[0:2 * (T // 2):2]], gbl[idx[1:2 * (T // 2):2]], mode)


def layer_norm_codes(x: Codes, gamma: Codes, beta: Codes, b_x: int, b_beta: int, b_gamma: int) -> Codes:
    """Layer norm of codes x[T, nv, 16] (bias b_x, which the result keeps) over its nv·16 values,
    then γ·x + β (codes [nv·16] with their biases)."""
    T, nv, _ = x.shape
    xf = af.decode(x, b_x).reshape(T, nv * 16)
    gam = af.decode(gamma, b_gamma)
    bet = af.decode(beta, b_beta)
    mu = xf.mean(axis=1, keepdims=True)
    var = ((xf - mu) ** 2).mean(axis=1, keepdims=True)
    y = (xf - mu) / np.sqrt(var + 2.0 ** -14) * gam + bet
    return af.encode(y.reshape(T, nv, 16), b_x)


def layer_norm(s: State, base: int) -> None:
    """GB_LAYER_NORM: normalise every timestep over H, then γ·x + β (in place)."""
    def g(f: str) -> int:
        return s.get("ln." + f)

    nv, T = g("num_vector"), g("num_timestep")
    gbl, small = s.mems["gb_large"], s.mems["gb_small"]
    idx = _region(base, nv, T, len(gbl))
    gbl[idx] = layer_norm_codes(gbl[idx], small[16 * s.get("gb.base_small_5"):][:16 * nv],
                                small[16 * s.get("gb.base_small_6"):][:16 * nv], g("adpbias_1"),
                                g("adpbias_3"), g("adpbias_4"))


def attention_codes(q: Codes, k: Codes, v: Codes, b_q: int, b_k: int, b_v: int, b_out: int) -> Codes:
    """Attention of one query (codes [nv·16]) over keys and values (codes [T, nv, 16]): the
    softmax-weighted sum of the values, encoded with b_out."""
    T = k.shape[0]
    qf = af.decode(q, b_q)
    kf = af.decode(k, b_k).reshape(T, -1)
    vf = af.decode(v, b_v).reshape(T, -1)
    sc = kf @ qf
    w = np.exp(sc - sc.max())
    w /= w.sum()
    return af.encode(w @ vf, b_out)


def attention(s: State, base_kv: int, base_v: int) -> None:
    """GB_ATTENTION: one query (small buffer, base_small_0) over T keys (region
    mem_idx_1) and values (region mem_idx_2); softmax-weighted sum written to the
    small buffer at base_small_1."""
    def g(f: str) -> int:
        return s.get("att." + f)

    nv, T = g("num_vector"), g("num_timestep")
    gbl, small = s.mems["gb_large"], s.mems["gb_small"]
    o = 16 * s.get("gb.base_small_1")
    small[o:o + 16 * nv] = attention_codes(small[16 * s.get("gb.base_small_0"):][:16 * nv],
                                           gbl[_region(base_kv, nv, T, len(gbl))], gbl[_region(base_v, nv, T, len(gbl))],
                                           g("adpbias_1"), g("adpbias_2"), g("adpbias_3"), g("adpbias_4"))
