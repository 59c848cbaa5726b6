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


def _rows(op: Operation | None, src: SSAValue | None = None) -> tuple[SSAValue, int, int] | None:
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


class FoldLstmSteps(RewritePattern):
    """Merge an LSTM invocation with the one whose state it continues (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        if op.callee.data != LSTM or len(op.args) != 6:
            return
        x2, h2, c2, *weights = op.args
        h_slice, c_slice = h2.owner, c2.owner
        if not isinstance(h_slice, ExtractSliceOp) or not isinstance(c_slice, ExtractSliceOp):
            return
        first = _lstm(h_slice.source)
        if first is None or first is op or c_slice.source is not first.res or list(first.args[3:]) != weights:
            return
        t1 = first.res.type.get_shape()[0] - 1
        n = first.res.type.get_shape()[1]
        if _rows(h_slice, first.res) != (first.res, t1 - 1, 1) or _rows(c_slice, first.res) != (first.res, t1, 1):
            return
        xs1, xs2 = _rows(first.args[0].owner), _rows(x2.owner)
        if xs1 is None or xs2 is None or xs1[0] is not xs2[0] or xs2[1] != xs1[1] + xs1[2]:
            return
        firsts, seconds = _slices_of(first.res), _slices_of(op.res)
        if firsts is None or seconds is None:
            return
        # the cell row of the first call is read only as the second call's state
        cell_reads = [s for s in firsts if (r := _rows(s)) is not None and r[1] + r[2] > t1]
        if any(s is not c_slice for s in cell_reads) or any(u.operation is not op for u in c_slice.result.uses):
            return
        t2 = xs2[2]
        src, r0, k = xs1[0], xs1[1], first.args[0].type.get_shape()[1]
        xs = ExtractSliceOp.from_static_parameters(src, [r0, 0], [t1 + t2, k])
        merged = InvokeOp(LSTM, [xs.result, first.args[1], first.args[2], *weights],
                          TensorType(f32, [t1 + t2 + 1, n]))
        rewriter.insert(xs, InsertPoint.before(first))
        rewriter.insert(merged, InsertPoint.before(first))
        for s, shift in [*((s, 0) for s in firsts if s is not c_slice), *((s, t1) for s in seconds)]:
            _, off, count = _rows(s) or (None, 0, 0)
            rewriter.replace(s, ExtractSliceOp.from_static_parameters(merged.res, [off + shift, 0], [count, n]))
        rewriter.erase(op)
        rewriter.erase(c_slice)
        rewriter.erase(first)
        for old in (x2.owner, first.args[0].owner):  # the per-step input slices, once unused
            if isinstance(old, Operation) and old.parent is not None and not any(r.uses for r in old.results):
                rewriter.erase(old)


def fold_lstm_steps(op: ModuleOp | Operation) -> int:
    """Fold every chain of FlexASR LSTM steps inside `op` (a module or function); return the LSTM
    invocations left."""
    walker = PatternRewriteWalker(FoldLstmSteps(), apply_recursively=True)
    for region in op.regions:
        walker.rewrite_region(region)
    return sum(1 for o in op.walk() if isinstance(o, InvokeOp) and o.callee.data == LSTM)
