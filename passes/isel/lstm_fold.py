"""Fold adjacent FlexASR LSTM invocations into one call over the sequence (D2A Appendix A).

isel matches an LSTM one step at a time (`fused.py`: a cell is one `flexasr.lstm` over one row,
from the previous step's `(h, c)`).  D2A maps LSTM-WLM's 35-step LSTM to **one** FlexASR LSTM
instruction and names the rewrite that gets there: "fold adjacent timesteps into a single FlexASR
LSTM layer invocation with the total number of timesteps".  `FoldLstmSteps` is that rewrite on
the selected IR: an invocation `I2` over rows `[r+T1, r+T1+T2)` of a tensor `X` whose state is the
last hidden row and the cell row of an invocation `I1` over rows `[r, r+T1)` of the same `X`,
with the same weights and bias, merges with it into one invocation over `[r, r+T1+T2)`.

```
%1 = ila.invoke "flexasr.lstm"(%x0, %h, %c, %w, %u, %b) : (...) -> tensor<2x64xf32>   // rows h1, c1
%2 = tensor.extract_slice %1[0, 0] [1, 64] [1, 1]      // h1
%3 = tensor.extract_slice %1[1, 0] [1, 64] [1, 1]      // c1, only the next step's state
%4 = ila.invoke "flexasr.lstm"(%x1, %2, %3, %w, %u, %b) : (...) -> tensor<2x64xf32>   // rows h2, c2
// ->  one ila.invoke "flexasr.lstm" over rows 0..1 of X: tensor<3x64xf32> (h1, h2, c2)
```

The merge needs every use of `I1`'s result to be a row slice and its cell row to be read only
as `I2`'s state (the merged call returns the last cell state only).  How the driver quantises a
many-step call (one AdaptivFloat bias calibrated on the sequence, or one call per chunk when one
bias cannot hold it) is `flexasr_driver.lstm_chunks`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.dialects.tensor import ExtractSliceOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern)
from xdsl.rewriter import InsertPoint

from steplus.dialects.ila import InvokeOp

LSTM = "flexasr.lstm"


def _rows(op: object, src: SSAValue | None = None) -> tuple[SSAValue, int, int] | None:
    """(source, first row, rows) of a static 2-D slice of whole rows (of `src` if given), else None."""
    if not isinstance(op, ExtractSliceOp) or op.offsets or op.sizes or op.strides:
        return None
    if src is not None and op.source is not src:
        return None
    shape = op.source.type.get_shape() if isinstance(op.source.type, TensorType) else ()
    offs, sizes, steps = (tuple(a.get_values()) for a in (op.static_offsets, op.static_sizes, op.static_strides))
    if len(shape) != 2 or steps != (1, 1) or offs[1] != 0 or sizes[1] != shape[1] or \
            tuple(op.result.type.get_shape()) != tuple(sizes):
        return None
    return op.source, int(offs[0]), int(sizes[0])


def _lstm(v: SSAValue) -> InvokeOp | None:
    op = v.owner
    return op if isinstance(op, InvokeOp) and op.callee.data == LSTM else None


def _slices_of(v: SSAValue) -> list[ExtractSliceOp] | None:
    """The users of `v`, when every one is a row slice of it."""
    users = [u.operation for u in v.uses]
    if not all(isinstance(u, ExtractSliceOp) and _rows(u, v) is not None for u in users):
        return None
    return [u for u in users if isinstance(u, ExtractSliceOp)]


def _oriented(call: InvokeOp, is_input, canonical: bool = False):
    """(input, h, W, U) of an LSTM call, or None.

    A cell whose input is as wide as its state matches with (x, W) and (h, U) either way round (the
    gates are x·Wᵀ + h·Uᵀ + b), and the extraction may pick either: the input is the one of the
    first two operands that `is_input` accepts (a merged call is canonical: its first operand)."""
    x, h, _, w, u, _ = call.args
    if canonical:
        return (x, h, w, u) if is_input(x) else None
    if is_input(x) and not is_input(h):
        return x, h, w, u
    if is_input(h) and not is_input(x) and w.type == u.type:
        return h, x, u, w
    return None


class FoldLstmSteps(RewritePattern):
    """Merge an LSTM invocation with the one whose state it continues (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        if op.callee.data != LSTM or len(op.args) != 6:
            return
        c_slice = op.args[2].owner
        if not isinstance(c_slice, ExtractSliceOp):
            return
        first = _lstm(c_slice.source)
        if first is None or first is op:
            return
        t1, n = first.res.type.get_shape()
        t1 -= 1
        if _rows(c_slice, first.res) != (first.res, t1, 1):
            return
        # the second call's state h is the first call's last hidden row; its other operand is its input
        second = _oriented(op, lambda v: _rows(v.owner, first.res) != (first.res, t1 - 1, 1),
                           canonical=op.res.type.get_shape()[0] > 2)
        if second is None:
            return
        x2, _, w2, u2 = second
        xs2 = _rows(x2.owner)
        if xs2 is None:
            return
        # the first call's input: rows just before the second's of the same tensor
        oriented = _oriented(first, lambda v: (r := _rows(v.owner)) is not None and r[0] is xs2[0] and
                             r[1] + r[2] == xs2[1], canonical=t1 > 1)
        if oriented is None or op.args[5] is not first.args[5]:
            return
        x1, h0, w1, u1 = oriented
        xs1 = _rows(x1.owner)
        if xs1 is None or w1 is not w2 or u1 is not u2:
            return
        firsts, seconds = _slices_of(first.res), _slices_of(op.res)
        if firsts is None or seconds is None:
            return
        # the cell row of the first call is read only as the second call's state
        cell_reads = [s for s in firsts if (r := _rows(s)) is not None and r[1] + r[2] > t1]
        if any(s is not c_slice for s in cell_reads) or any(u.operation is not op for u in c_slice.result.uses):
            return
        t2 = xs2[2]
        src, r0 = xs1[0], xs1[1]
        k = src.type.get_shape()[1] if isinstance(src.type, TensorType) else 0
        xs = ExtractSliceOp.from_static_parameters(src, [r0, 0], [t1 + t2, k])
        merged = InvokeOp(LSTM, [xs.result, h0, first.args[2], w1, u1, first.args[5]],
                          TensorType(f32, [t1 + t2 + 1, n]))
        rewriter.insert(xs, InsertPoint.before(first))
        rewriter.insert(merged, InsertPoint.before(first))
        for s, shift in [*((s, 0) for s in firsts if s is not c_slice), *((s, t1) for s in seconds)]:
            _, off, count = _rows(s) or (None, 0, 0)
            rewriter.replace(s, ExtractSliceOp.from_static_parameters(merged.res, [off + shift, 0], [count, n]))
        rewriter.erase(op)
        rewriter.erase(c_slice)
        rewriter.erase(first)
        for old in (x2.owner, x1.owner):  # the per-step input slices, once unused
            if isinstance(old, Operation) and old.parent is not None and not any(r.uses for r in old.results):
                rewriter.erase(old)


def fold_lstm_steps(op: ModuleOp | Operation) -> int:
    """Fold every chain of FlexASR LSTM steps inside `op` (a module or function); return the LSTM
    invocations left."""
    walker = PatternRewriteWalker(FoldLstmSteps(), apply_recursively=True)
    for region in op.regions:
        walker.rewrite_region(region)
    return sum(1 for o in op.walk() if isinstance(o, InvokeOp) and o.callee.data == LSTM)
