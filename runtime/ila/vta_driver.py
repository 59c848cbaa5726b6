"""VTA fragments: blocked dense (GEMM) with optional bias, ReLU and requantisation.

`dense_fragment(X, W, ...)` emits the canonical fragment of spec §3.5 with the
compressed uop form (`U = Kb·Nb` uops, `iter_out = M`).  `run_dense` executes it
and returns the int8 output and the command counts.

A dense larger than one fragment's buffers runs as several programs, as D2A's VTA
code generator tiles it (`dense_tiles`): N (outputs) and M (rows) are split into
chunks that fit, each chunk its own load/gemm/alu/store program; K is never split
(one block column of weights, K/16 <= 1023 blocks), so every output element gets
the whole sum, the bias, shift and clip exactly as one program would give it.
`counts["programs"]` says how many programs one dense took.

The requantisation shift is the ALU's `shr` with an immediate, whose amount the ILA reads as the low
5 bits of the operand, signed (`vta.alu_apply`): 0..15 shift right, 16..31 shift LEFT by 32 - amount.
A shift past 15 is therefore emitted as several `shr` instructions of at most 15 each (`shift_steps`:
arithmetic right shifts compose exactly, `(a >> s) >> t == a >> (s + t)`).

Example::

    y, counts = run_dense(x_i8, w_i8, shift=8)   # y = clip((x·wᵀ) >> 8, -127, 127)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from steplus.dialects.target.ila import VTA
from steplus.runtime.ila.core import IlaError, reference_mode
from steplus.runtime.ila.vta import (ALU_OPS, BLOCK, Vta, _sext, _wrap, alu, alu_apply, alu_uop, gemm, gemm_uop, load,
                                     store)


Cmd = dict[str, int]


def _cmd(instr: int = 0, mem_mode: int = 0, mem_idx: int = 0, data: int | np.integer = 0) -> Cmd:
    """One VTA command: an instruction word (mem_mode 0) or a virtual-DRAM element write."""
    return {"instr": instr, "mem_mode": mem_mode, "mem_idx": mem_idx, "data": int(data)}


# the largest right shift one ALU `shr` with an immediate performs (a 5-bit signed amount)
MAX_SHR = 15


def shift_steps(shift: int | None) -> list[int]:
    """The amounts of the `shr` instructions that shift the accumulator right by `shift` (0..31:
    an int32 shifted by 31 is its sign), each at most MAX_SHR.

    >>> shift_steps(20), shift_steps(15), shift_steps(0)
    ([15, 5], [15], [])
    """
    if not shift:
        return []
    if not 0 < shift <= 31:
        raise IlaError(f"vta dense: requantisation shift {shift} is not in 0..31")
    return [MAX_SHR] * (shift // MAX_SHR) + ([shift % MAX_SHR] if shift % MAX_SHR else [])


def dense_fragment_check(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer]) -> None:
    """IlaError unless one dense fragment holds x[M,K]·w[N,K]ᵀ (blocks of 16, VTA's buffers)."""
    M, K = x.shape
    N = w.shape[0]
    if K % BLOCK or N % BLOCK:
        raise IlaError(f"vta dense: K={K} and N={N} must be multiples of 16")
    Kb, Nb = K // BLOCK, N // BLOCK
    if Kb * Nb > VTA.max_gemm_blocks or M * Kb > VTA.inp_rows or M * Nb > VTA.acc_rows:
        raise IlaError(f"vta dense: [{M}x{K}]·[{N}x{K}]ᵀ exceeds one fragment's buffers")


def dense_tiles(m: int, k: int, n: int) -> list[tuple[int, int, int, int]]:
    """The programs of a dense x[m,k]·w[n,k]ᵀ as (row0, row1, out0, out1) slices: one (the whole)
    when it fits one fragment, else n split evenly into chunks of at most `max_gemm_blocks // Kb`
    blocks and m into row chunks that fit the input buffer and the accumulator with them.

    >>> dense_tiles(16, 32, 16)
    [(0, 16, 0, 16)]
    >>> len(dense_tiles(16, 512, 2048))  # 32 block rows of K: 31 blocks of N a program, 128 / 31
    5
    """
    if k % BLOCK or n % BLOCK:
        raise IlaError(f"vta dense: K={k} and N={n} must be multiples of 16")
    kb, nb = k // BLOCK, n // BLOCK
    if kb > VTA.max_gemm_blocks or kb > VTA.inp_rows:
        raise IlaError(f"vta dense: K={k} exceeds one block column of {VTA.max_gemm_blocks} weight blocks "
                       f"of {BLOCK}x{BLOCK}")
    if m == 0 or nb == 0:
        return [(0, m, 0, n)]
    per_n = min(nb, VTA.max_gemm_blocks // max(kb, 1))
    pn = -(-nb // per_n)
    n_cuts = [BLOCK * (nb * i // pn) for i in range(pn + 1)]
    widest = max(b - a for a, b in zip(n_cuts, n_cuts[1:])) // BLOCK
    per_m = min(m, VTA.inp_rows // max(kb, 1), VTA.acc_rows // widest)
    pm = -(-m // per_m)
    m_cuts = [m * i // pm for i in range(pm + 1)]
    return [(m0, m1, n0, n1) for m0, m1 in zip(m_cuts, m_cuts[1:]) for n0, n1 in zip(n_cuts, n_cuts[1:])]


def dense_fragment(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer], bias: int | npt.NDArray[np.integer] | None = None,
                   shift: int | None = None, relu: bool = False) -> list[Cmd]:
    """Commands for out = [relu](clip((x·wᵀ + bias) >> shift)) (int8 x[M,K], w[N,K])."""
    M, K = x.shape
    N = w.shape[0]
    dense_fragment_check(x, w)
    Kb, Nb = K // BLOCK, N // BLOCK
    U = Kb * Nb
    cmds = [_cmd(mem_mode=1, mem_idx=i, data=v) for i, v in enumerate(x.reshape(-1))]
    wt = w.reshape(Nb, BLOCK, Kb, BLOCK).transpose(0, 2, 1, 3).reshape(-1)
    cmds += [_cmd(mem_mode=2, mem_idx=i, data=v) for i, v in enumerate(wt)]
    b = np.zeros((M, N), np.int64) if bias is None else np.broadcast_to(bias, (M, N))
    cmds += [_cmd(mem_mode=3, mem_idx=i, data=v) for i, v in enumerate(b.reshape(-1))]
    uops = [gemm_uop(n, k, n * Kb + k) for n in range(Nb) for k in range(Kb)]
    uops.append(alu_uop(0, 0))
    cmds += [_cmd(mem_mode=4, mem_idx=i, data=u) for i, u in enumerate(uops)]
    cmds += [_cmd(load(0, 0, 0, 1, U + 1, U + 1)), _cmd(load(3, 0, 0, 1, M * Nb, M * Nb)),
             _cmd(load(1, 0, 0, 1, Nb * Kb, Nb * Kb)), _cmd(load(2, 0, 0, 1, M * Kb, M * Kb)),
             _cmd(gemm(0, 0, U, M, 1, Nb, 0, Kb, 0, 0, 0))]
    loop = (U, U + 1, M * Nb, 1, 1, 0, 1, 0)
    cmds += [_cmd(alu("shr", *loop, imm=amount)) for amount in shift_steps(shift)]
    if shift is not None:
        cmds += [_cmd(alu("max", *loop, imm=-127)), _cmd(alu("min", *loop, imm=127))]
    if relu:
        cmds.append(_cmd(alu("max", *loop, imm=0)))
    cmds.append(_cmd(store(0, 0, 1, M * Nb, M * Nb)))
    return cmds


def _dense_vectorized(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer],
                      bias: int | npt.NDArray[np.integer] | None, shift: int | None,
                      relu: bool) -> tuple[npt.NDArray[np.int8], dict[str, int]] | None:
    """What `dense_fragment`'s STORE leaves in the output DRAM, and its counts, on whole tensors:
    the virtual-DRAM writes' sign extension, the GEMM's wrapped int32 accumulation (a sum of int8
    products: exact in int64, and wrapping once equals wrapping per micro-op) and each ALU
    instruction on every accumulator row at once (`alu_apply`). None for an empty input."""
    M, K = x.shape
    N = w.shape[0]
    if M == 0 or w.shape[1] != K:
        return None
    xq, wq = _wrap(np.asarray(x, np.int64), 8), _wrap(np.asarray(w, np.int64), 8)
    b = np.zeros((M, N), np.int64) if bias is None else np.broadcast_to(np.asarray(bias, np.int64), (M, N))
    acc = _wrap(_wrap(b, 32) + xq @ wq.T, 32)
    out = _wrap(acc, 8)
    ops: list[tuple[int, int]] = [(ALU_OPS["shr"], amount) for amount in shift_steps(shift)]
    if shift is not None:
        ops += [(ALU_OPS["max"], -127), (ALU_OPS["min"], 127)]
    if relu:
        ops.append((ALU_OPS["max"], 0))
    for op, imm in ops:
        r = alu_apply(op, acc, _sext(imm, 16))
        acc, out = _wrap(r, 32), _wrap(r, 8)
    Kb, Nb = K // BLOCK, N // BLOCK
    counts = {"dram_writes": M * K + N * K + M * N + Kb * Nb + 1, "instructions": 5 + len(ops) + 1}
    return out.astype(np.int8), counts


def run_dense(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer], bias: int | npt.NDArray[np.integer] | None = None,
              shift: int | None = None, relu: bool = False,
              reference: bool | None = None) -> tuple[npt.NDArray[np.int8], dict[str, int]]:
    """Execute a dense as the programs of `dense_tiles` (one when it fits); returns (int8 out[M,N],
    counts summed over the programs, with `programs` their number).

    `reference` (default: `core.reference_mode`) steps each program's commands on a fresh `Vta`;
    otherwise the same output and counts come from `_dense_vectorized`, program by program."""
    x, w = np.asarray(x), np.asarray(w)
    if x.ndim != 2 or w.ndim != 2 or w.shape[1] != x.shape[1]:
        raise IlaError(f"vta dense: x {list(x.shape)} and w {list(w.shape)} are not [M, K] and [N, K]")
    M, N = x.shape[0], w.shape[0]
    tiles = dense_tiles(M, x.shape[1], N)
    if len(tiles) == 1:
        out, counts = _run_program(x, w, bias, shift, relu, reference)
        return out, {**counts, "programs": 1}
    b = None if bias is None else np.broadcast_to(np.asarray(bias), (M, N))
    out = np.empty((M, N), np.int8)
    total = {"dram_writes": 0, "instructions": 0, "programs": len(tiles)}
    for m0, m1, n0, n1 in tiles:
        y, counts = _run_program(x[m0:m1], w[n0:n1], None if b is None else b[m0:m1, n0:n1], shift, relu,
                                 reference)
        out[m0:m1, n0:n1] = y
        for key, v in counts.items():
            total[key] += v
    return out, total


def _run_program(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer],
                 bias: int | npt.NDArray[np.integer] | None, shift: int | None, relu: bool,
                 reference: bool | None) -> tuple[npt.NDArray[np.int8], dict[str, int]]:
    """One dense fragment (it must fit the buffers), stepped or on whole tensors."""
    if not reference_mode(reference):
        dense_fragment_check(np.asarray(x), np.asarray(w))
        fast = _dense_vectorized(np.asarray(x), np.asarray(w), bias, shift, relu)
        if fast is not None:
            return fast
    sim = Vta()
    cmds = dense_fragment(np.asarray(x), np.asarray(w), bias, shift, relu)
    sim.run(cmds)
    M, N = x.shape[0], w.shape[0]
    counts = {"dram_writes": sum(1 for c in cmds if c["mem_mode"]),
              "instructions": sum(1 for c in cmds if not c["mem_mode"])}
    out = sim.state.mems["dram_out"][:M * N].reshape(M, N).copy()
    return out, counts


def dense_reference(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer], bias: int | npt.NDArray[np.integer] | None = None,
                    shift: int | None = None, relu: bool = False) -> npt.NDArray[np.int8]:
    """The integer semantics of the fragment, in numpy."""
    acc = x.astype(np.int64) @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + bias
    acc = ((acc + 2**31) % 2**32) - 2**31
    if shift:
        acc = acc >> shift
    if shift is not None:
        acc = np.clip(acc, -127, 127)
    if relu:
        acc = np.maximum(acc, 0)
    return (((acc + 128) % 256) - 128).astype(np.int8)
