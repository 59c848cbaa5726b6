"""`step-kernelize{mode=unfused|conventional}`: the kernel-by-kernel baseline.

The SN40L seed (§VI-A) compares streaming fusion with an *unfused* baseline:
every operator runs as its own kernel, its inputs and outputs go through
off-chip memory, kernels are launched one after the other. This pass cuts
each `step.graph` `@g` into kernels `@g_k0 .. @g_k{n-1}` (see
`steplus.passes.sn40l.kernels` for the mechanics: cut streams stored once and
re-loaded, weights re-read, broadcasts dissolved):

- `mode=unfused`: one kernel per compute, routing or collective operator
  (map, accum, scan, flat_map, partition, reassemble, all_reduce, ...); shape
  ops (flatten, reshape, repeat, expand, promote) are views of their
  consumer's kernel, as in PyTorch; a precision cast (a map applying only
  `mul_scalar[1]` into another element type) stays in its producer's kernel
  in both modes;
- `mode=conventional`: what a GPU compiler fuses (seed §III-A): a GEMM (a map
  or accum whose region applies `matmul`/`matmul_t`) absorbs the elementwise
  maps (`add`, `mul`, `div`, `exp`, `silu`) that follow it — its epilogue —
  as long as they consume the GEMM's kernel's results and nothing produced by
  a later kernel; reductions, softmax pieces and routing stay separate.

A stream that cannot go through memory — ragged dims (`[4, ?L0]`, a KV cache
walked per request), selectors or addresses (`1x1` integer tiles) — keeps its producer and consumer in one
kernel: the kernels between them are merged (in both modes). So the route's
decode attention is one kernel per cache walk, as a decode-attention kernel
is on a GPU, and its ragged lengths need no binding to be cut.

`step-run` runs the kernels one after the other and charges a launch per
kernel (`--orchestration so|ho`); the fused speedup is then the ratio of two
simulations of the same graph. The original graph's off-chip tensors keep
their names (`ensure_names`: `ld0`, `st0`, ...), so functional runs of the
fused graph and of its kernels can be compared tensor by tensor.

Example: `step-opt g.mlir -p 'step-kernelize{mode=unfused}'` turns

```mlir
step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
  %e = step.map %x : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%0: !step.tile<16x16xf32>):
    %1 = step.apply "exp"(%0) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %1 : !step.tile<16x16xf32>
  }
  %f = step.map %e : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%0: !step.tile<16x16xf32>):
    %1 = step.apply "exp"(%0) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %1 : !step.tile<16x16xf32>
  }
  step.linear_offchip_store %f {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
}
```

into `@g_k0` (load, the first exp, a store of `%e` as symbol `g.t0`) and
`@g_k1` (a load of `g.t0`, the second exp, the store), with `sn40l.kernel`
0 and 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.utils.diagnostics import OpDiagnosticError, emit
from steplus.passes.sn40l.kernels import (
    UnstorableCut, assign, ensure_names, graphs_to_kernelize, is_anchor, replace_graph, source,
    split,
)

MODES = ("unfused", "conventional")
MATMULS = {"matmul", "matmul_t", "matmul_acc", "matmul_t_acc"}
ELEMENTWISE = {"add", "mul", "div", "exp", "silu"}


def _fns(op: Operation) -> list[str]:
    return [a.fn.data for r in op.regions for a in r.walk() if isinstance(a, so.ApplyOp)
            and a.fn.data != "zero"]


def is_gemm(op: Operation) -> bool:
    return isinstance(op, (so.MapOp, so.AccumOp)) and bool(MATMULS & set(_fns(op)))


def is_elementwise(op: Operation) -> bool:
    fns = _fns(op)
    return isinstance(op, so.MapOp) and bool(fns) and set(fns) <= ELEMENTWISE


def _producing_anchors(op: Operation) -> list[Operation]:
    """The anchors whose results reach `op` through followers (zips, shape ops)."""
    out, work, seen = [], list(op.operands), set()
    while work:
        v = source(work.pop())
        owner = v.owner
        if not isinstance(owner, Operation) or owner in seen:
            continue
        seen.add(owner)
        if is_anchor(owner):
            out.append(owner)
        elif not isinstance(owner, so.LinearOffChipLoadOp):
            work.extend(owner.operands)
    return out


CAST = "mul_scalar[1]"
"""A map applying only this function with another result element type is a precision
cast (an f32 accumulator to bf16): part of its producer's kernel in every mode, as a
PyTorch GEMM writes bf16 itself."""


def is_cast(op: Operation) -> bool:
    return isinstance(op, so.MapOp) and _fns(op) == [CAST] and len(op.operands) == 1 \
        and op.results[0].type != op.operands[0].type


def anchor_kernels(graph: GraphOp, mode: str) -> dict[Operation, int]:
    """Kernel index of every anchor op for `mode`."""
    kernel: dict[Operation, int] = {}
    head: list[Operation] = []  # the first anchor of each kernel
    for op in graph.body.block.ops:
        if not is_anchor(op):
            continue
        if is_cast(op) and head:
            prods = _producing_anchors(op)
            if prods and all(kernel.get(p) == len(head) - 1 for p in prods):
                kernel[op] = len(head) - 1
                continue
        if mode == "conventional" and is_elementwise(op) and head and is_gemm(head[-1]):
            last = len(head) - 1
            prods = _producing_anchors(op)
            if prods and any(kernel.get(p) == last for p in prods) and \
                    all(kernel.get(p, -1) <= last for p in prods):
                kernel[op] = last
                continue
        kernel[op] = len(head)
        head.append(op)
    return kernel


def check_acyclic(graph: GraphOp, tag: str) -> None:
    """Kernels run one after the other: a feedback edge cannot cross them."""
    order = {o: i for i, o in enumerate(graph.body.block.ops)}
    for o in graph.body.block.ops:
        for v in o.operands:
            if isinstance(v.owner, Operation) and order.get(v.owner, -1) > order[o]:
                raise OpDiagnosticError(o, f"{tag}: a graph with feedback edges cannot be "
                                           "cut into kernels")


def kernelize_graph(graph: GraphOp, mode: str) -> list[GraphOp]:
    """The kernels of `graph` for `mode` (`graph` gets names on its memory ops)."""
    ensure_names(graph)
    kernel = anchor_kernels(graph, mode)
    tag = f"step-kernelize{{mode={mode}}}"
    for _ in range(len(kernel) + 1):  # each retry merges at least two kernels
        try:
            return split(graph, assign(graph, kernel), tag)
        except UnstorableCut as e:
            if e.first >= e.last:
                raise
            kernel = merge_kernels(kernel, e.first, e.last)
    raise OpDiagnosticError(graph, f"{tag}: the unstorable streams did not settle")


def merge_kernels(kernel: dict[Operation, int], first: int, last: int) -> dict[Operation, int]:
    """Kernels `first..last` as one (a ragged or selector stream between `first` and
    `last` cannot go through memory, and the kernels between them run in order)."""
    return {op: k if k < first else first if k <= last else k - (last - first)
            for op, k in kernel.items()}


@dataclass(frozen=True)
class StepKernelizePass(ModulePass):
    """Cut every step.graph into kernels run one by one through HBM (unfused / conventional).

    See the module doc; `mode` is `unfused` (one kernel per operator) or
    `conventional` (GEMM + elementwise epilogue). Graphs that already are
    kernels (`sn40l.kernel`) are left alone.
    """

    name = "step-kernelize"

    mode: str = "unfused"
    """`unfused`: one kernel per operator; `conventional`: a GEMM with its element-wise epilogue per kernel.
    One of: unfused, conventional."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode '{self.mode}' "
                             f"(choose from {', '.join(MODES)})")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in graphs_to_kernelize(op):
            check_acyclic(g, "step-kernelize")
            kernels = kernelize_graph(g, self.mode)
            emit(g, "remark", f"step-kernelize: @{g.sym_name.data}: {len(kernels)} kernel(s) "
                              f"({self.mode})")
            replace_graph(op, g, kernels)
