"""`convert-ila-to-commands`: accelerator chains -> per-accelerator command streams.

Invocations are first split into store/compute/load (without cancellation;
run `ila-cancel-store-load` before to cancel round trips).  Every `ila.load`
then becomes an `ila.fragment` of the accelerator that computes it:

- a chain of FlexASR temporal pools over one stored tensor: per chunk of at
  most 255 vectors, `ila.cmd "store_act"`, then per pool the three constant
  MMIO writes (`cfg_mmngr_gb_large`, `cfg_ly_reduce`, `start 2`) and
  `ila.wait_irq`, then `ila.cmd "load_act"`; chunks are joined by
  `ila.cmd "concat"`;
- a FlexASR linear layer, LSTM, layer norm or attention, VTA dense or HLSCNN
  conv2d: one driver-level `ila.cmd` (`linear_layer`, `lstm_layer`,
  `layernorm`, `attention`, `dense`, `conv2d`) whose MMIO depends on the
  run-time data (AdaptivFloat biases, int8 scales).

Example: the 128x128 max-pool after `isel,ila-cancel-store-load` becomes one
`ila.fragment "flexasr"` with 2 chunks x (1 store, 4 x 3 writes + wait, 1 load).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, f32, i64
from xdsl.builder import Builder
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from steplus.dialects.target.ila import FLEXASR
from steplus.dialects.ila import CmdOp, ComputeOp, FragmentOp, LoadOp, StoreOp, WaitIrqOp, WriteOp, YieldOp
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.ila_cancel import expand_invokes

GB = 0x33000000
GB_LARGE_BYTES = 1 << 20  # FlexASR's large global buffer (spec: ⌈T/16⌉·16·H ≤ 1 MiB per pool)
MAX_POOL_CHUNKS = 1024  # bounds the commands one pooled tensor expands to
_POOL_MODE = {"flexasr.maxpool": 0, "flexasr.meanpool": 1}
_CMD = {"flexasr.linear": "linear_layer", "flexasr.lstm": "lstm_layer", "flexasr.layernorm": "layernorm",
        "flexasr.attention": "attention", "vta.dense": "dense", "hlscnn.conv2d": "conv2d"}


def _word(*fields):
    out = 0
    for v, b, n in fields:
        out |= (int(v) & ((1 << (8 * n)) - 1)) << (8 * b)
    return out


def _i(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _pool_body(b: Builder, arg, chain: list[ComputeOp], out_type) -> list:
    T, H = arg.type.get_shape()
    if H % 16 or H < 16:
        raise OpDiagnosticError(chain[0], f"flexasr pool: hidden size {H} is not a positive multiple of 16")
    nv_all = H // 16
    chunks = -(-nv_all // FLEXASR.max_vectors)
    step = -(-nv_all // chunks)
    if chunks > MAX_POOL_CHUNKS:
        raise OpDiagnosticError(chain[0], f"flexasr pool: hidden size {H} needs {chunks} chunks of at most {FLEXASR.max_vectors} "
                                          f"vectors, more than {MAX_POOL_CHUNKS}")
    if T >= 1 << 16 or -(-T // 16) * 16 * 16 * step > GB_LARGE_BYTES:
        raise OpDiagnosticError(chain[0], f"flexasr pool: {T} timesteps of {16 * step} values exceed the "
                                          "1 MiB global buffer (or the 16-bit timestep count)")
    mode = _POOL_MODE[chain[0].callee.data]
    parts = []
    for v0 in range(0, nv_all, step):
        nv = min(step, nv_all - v0)
        b.insert(CmdOp(operands=[[arg]], result_types=[[]], properties={"kind": StringAttr("store_act")},
                           attributes={"vector_offset": _i(v0), "vectors": _i(nv)}))
        t = T
        for _ in chain:
            b.insert(WriteOp(GB + 0x400010, _word((nv, 0, 1))))
            b.insert(WriteOp(GB + 0x800010, _word((1, 0, 1), (mode, 1, 1), (nv, 6, 1), (t, 8, 2))))
            b.insert(WriteOp(GB + 0x20, 1))
            b.insert(WaitIrqOp())
            t //= 2
        ld = CmdOp(operands=[[]], result_types=[[TensorType(f32, [t, 16 * nv])]],
                   properties={"kind": StringAttr("load_act")},
                   attributes={"timesteps": _i(t), "vectors": _i(nv)})
        b.insert(ld)
        parts.append(ld.results[0])
    if len(parts) == 1:
        return parts
    cat = CmdOp(operands=[parts], result_types=[[out_type]], properties={"kind": StringAttr("concat")},
                attributes={"axis": _i(1)})
    b.insert(cat)
    return [cat.results[0]]


def _store(v: SSAValue) -> StoreOp:
    """The `ila.store` defining `v` (the caller checked it is one)."""
    op = v.owner
    assert isinstance(op, StoreOp)
    return op


def fragment_for(load: LoadOp) -> FragmentOp:
    chain, cur = [], load.input.owner
    while isinstance(cur, ComputeOp) and cur.callee.data in _POOL_MODE and (
            not chain or cur.callee.data == chain[0].callee.data):
        chain.append(cur)
        cur = cur.args[0].owner
    out_type = load.res.type
    if chain and isinstance(cur, StoreOp):
        src = [cur.input]
        block = Block(arg_types=[v.type for v in src])
        b = Builder(InsertPoint.at_end(block))
        results = _pool_body(b, block.args[0], chain, out_type)
        target, n = "flexasr", len(chain)
    elif isinstance(cur, ComputeOp) and cur.callee.data in _CMD and all(
            isinstance(a.owner, StoreOp) for a in cur.args):
        src = [_store(a).input for a in cur.args]
        block = Block(arg_types=[v.type for v in src])
        b = Builder(InsertPoint.at_end(block))
        cmd = CmdOp(operands=[list(block.args)], result_types=[[out_type]],
                    properties={"kind": StringAttr(_CMD[cur.callee.data])}, attributes=dict(cur.attributes))
        b.insert(cmd)
        results, target, n = [cmd.results[0]], cur.callee.data.split(".")[0], 1
    else:
        raise OpDiagnosticError(load, "convert-ila-to-commands: unsupported accelerator chain "
                                      "(expected stores -> one compute, or a chain of temporal pools)")
    b.insert(YieldOp(operands=[results]))
    return FragmentOp(operands=[src], result_types=[[out_type]], properties={"target": StringAttr(target)},
                      regions=[Region(block)], attributes={"invocations": _i(n)})


@dataclass(frozen=True)
class ConvertIlaToCommandsPass(ModulePass):
    """Expand accelerator invocations into per-accelerator command streams (ila.fragment).

    Example: `step-opt examples/isel/maxpool128.mlir -p
    'isel,ila-cancel-store-load,convert-ila-to-commands'` turns the one store,
    four `flexasr.maxpool` computes and one load into one `ila.fragment "flexasr"`
    of `ila.cmd`, `ila.write` and `ila.wait_irq` ops (see `ila.fragment`).
    """

    name = "convert-ila-to-commands"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        origin = expand_invokes(op)  # compute op -> the ila.invoke it expands (diagnostics go there)
        fragments = {}  # id(load) -> its fragment, all built before the IR changes
        for ld in [o for o in op.walk() if isinstance(o, LoadOp)]:
            try:
                fragments[id(ld)] = fragment_for(ld)
            except OpDiagnosticError as e:
                where = origin.get(e.op, e.op) if e.op is not None else None
                raise OpDiagnosticError(where, e.message, e.notes) from None
        PatternRewriteWalker(LoadToFragment(fragments), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(EraseUnusedChain()).rewrite_module(op)


@dataclass
class LoadToFragment(RewritePattern):
    """An `ila.load` replaced by the `ila.fragment` built for it (`fragment_for`)."""

    fragments: dict[int, FragmentOp]  # id(load) -> its fragment

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp, rewriter: PatternRewriter) -> None:
        frag = self.fragments.get(id(op))
        if frag is not None:
            rewriter.replace(op, frag)


class EraseUnusedChain(RewritePattern):
    """An `ila.compute` or `ila.store` whose value nothing reads any more (its load
    became a fragment) is erased; the walker repeats until none is left."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, (ComputeOp, StoreOp)) and not op.results[0].uses:
            rewriter.erase(op)
