"""VTA fragments: blocked dense (GEMM) with optional bias, ReLU and requantisation.

`dense_fragment(X, W, ...)` emits the canonical fragment of spec §3.5 with the
compressed uop form (`U = Kb·Nb` uops, `iter_out = M`).  `run_dense` executes it
and returns the int8 output and the command counts.

Example::

    y, counts = run_dense(x_i8, w_i8, shift=8)   # y = clip((x·wᵀ) >> 8, -127, 127)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from steplus.dialects.target.ila import VTA
from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.vta import BLOCK, Vta, alu, alu_uop, gemm, gemm_uop, load, store


Cmd = dict[str, int]


def _cmd(instr: int = 0, mem_mode: int = 0, mem_idx: int = 0, data: int | np.integer = 0) -> Cmd:
    """One VTA command: an instruction word (mem_mode 0) or a virtual-DRAM element write."""
    return {"instr": instr, "mem_mode": mem_mode, "mem_idx": mem_idx, "data": int(data)}


def dense_fragment(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer], bias: int | npt.NDArray[np.integer] | None = None,
                   shift: int | None = None, relu: bool = False) -> list[Cmd]:
    """Commands for out = [relu](clip((x·wᵀ + bias) >> shift)) (int8 x[M,K], w[N,K])."""
    M, K = x.shape
    N = w.shape[0]
    if K % BLOCK or N % BLOCK:
        raise IlaError(f"vta dense: K={K} and N={N} must be multiples of 16")
    Kb, Nb = K // BLOCK, N // BLOCK
    U = Kb * Nb
    if U > VTA.max_gemm_blocks or M * Kb > VTA.inp_rows or M * Nb > VTA.acc_rows:
        raise IlaError(f"vta dense: [{M}x{K}]·[{N}x{K}]ᵀ exceeds one fragment's buffers")
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
    if shift:
        cmds.append(_cmd(alu("shr", *loop, imm=shift)))
    if shift is not None:
        cmds += [_cmd(alu("max", *loop, imm=-127)), _cmd(alu("min", *loop, imm=127))]
    if relu:
        cmds.append(_cmd(alu("max", *loop, imm=0)))
    cmds.append(_cmd(store(0, 0, 1, M * Nb, M * Nb)))
    return cmds


def run_dense(x: npt.NDArray[np.integer], w: npt.NDArray[np.integer], bias: int | npt.NDArray[np.integer] | None = None,
              shift: int | None = None, relu: bool = False) -> tuple[npt.NDArray[np.int8], dict[str, int]]:
    """Execute a dense fragment; returns (int8 out[M,N], counts)."""
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
