"""`ila-cancel-store-load`: split invocations into store/compute/load and cancel
redundant accelerator round trips (spec §5.3).

Cancellation applies where its preconditions hold: the loaded value was
produced in place by a FlexASR temporal pool and is re-stored only for pools of
the same kind (same region, base, vector count and AdaptivFloat bias).

Every `ila.invoke` becomes `ila.store` of each operand, `ila.compute` and
`ila.load` of the result (`ExpandInvoke`).  Then `ila.store(ila.load(%h))` — a
result loaded to the host only to be stored back into the same accelerator,
with the same tensor type — is replaced by `%h`; a load left without users
disappears (`CancelStoreOfLoad`).  This is valid for FlexASR pool chains
because LayerReduce writes its results in place, in the same region and
layout, and max does not change the adpbias.  Both rewrites are local, so
both are `RewritePattern`s under a `PatternRewriteWalker`; the new ops are
placed with the rewriter at an `InsertPoint` before the invocation.

Example: four chained `flexasr.maxpool` invocations become one `ila.store`,
four `ila.compute` and one `ila.load`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from steplus.dialects.ila import AccType, ComputeOp, InvokeOp, LoadOp, StoreOp

# accelerator functions whose result stays in their input's buffer region and layout
IN_PLACE = ("flexasr.maxpool", "flexasr.meanpool")


def _acc(target: str, t: Attribute) -> AccType:
    assert isinstance(t, TensorType)  # the invocation's verifier: operands and result are tensors
    return AccType(StringAttr(target), t)


@dataclass
class ExpandInvoke(RewritePattern):
    """An `ila.invoke` replaced by `ila.store` of each operand, `ila.compute` of the
    callee (with the invocation's attributes) and `ila.load` of its result.

    `origin` collects, for each compute built, the invocation it expands
    (`convert-ila-to-commands` reports a diagnostic of the compute there)."""

    origin: dict[Operation, InvokeOp] = field(default_factory=dict[Operation, InvokeOp])

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        target = op.callee.data.split(".")[0]
        stores = [StoreOp(operands=[a], result_types=[_acc(target, a.type)]) for a in op.args]
        comp = ComputeOp(operands=[[s.res for s in stores]],
                         result_types=[_acc(target, op.res.type)],
                         properties={"callee": op.callee}, attributes=dict(op.attributes))
        ld = LoadOp(operands=[comp.res], result_types=[op.res.type])
        rewriter.insert([*stores, comp, ld], InsertPoint.before(op))
        # the invocation's name goes to the load alone (replace_op would give it to all)
        rewriter.replace_all_uses_with(op.res, ld.res)
        rewriter.erase(op)
        self.origin[comp] = op


def expand_invokes(module: builtin.ModuleOp) -> dict[Operation, InvokeOp]:
    """Expand every `ila.invoke` of `module` (`ExpandInvoke`); compute -> its invocation."""
    pattern = ExpandInvoke()
    PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(module)
    return pattern.origin


@dataclass
class CancelStoreOfLoad(RewritePattern):
    """`ila.store(ila.load(%h))` replaced by `%h` when `%h` is an in-place pool's result
    and every user of the store is a pool of the same kind; the load goes too when
    nothing else reads it. `cancelled` counts the stores replaced."""

    cancelled: int = 0

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        src = op.input.owner
        if not (isinstance(src, LoadOp) and src.input.type == op.res.type):
            return
        producer = src.input.owner
        users = [u.operation for u in op.res.uses]
        # same buffer, base and layout: only in-place temporal pools qualify
        if not (isinstance(producer, ComputeOp) and producer.callee.data in IN_PLACE and users
                and all(isinstance(u, ComputeOp) and u.callee == producer.callee for u in users)):
            return
        handle: SSAValue = src.input
        rewriter.replace_all_uses_with(op.res, handle)
        rewriter.erase(op)
        self.cancelled += 1
        if not src.res.uses:
            rewriter.erase(src)


def cancel_pairs(module: builtin.ModuleOp) -> int:
    """Replace store(load(h)) by h; drop unused loads. Returns the number cancelled."""
    pattern = CancelStoreOfLoad()
    PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(module)
    return pattern.cancelled


@dataclass(frozen=True)
class IlaCancelStoreLoadPass(ModulePass):
    """Split ila.invoke into store/compute/load and cancel store(load) round trips.

    Example: `step-opt examples/isel/maxpool128.mlir -p 'isel,ila-cancel-store-load'`
    leaves one `ila.store`, four chained `ila.compute "flexasr.maxpool"` and one
    `ila.load` (with `{cancel=false}`: a store and a load around each compute).
    """

    name = "ila-cancel-store-load"

    cancel: bool = True
    """Cancel a store of a value just loaded (false: only split invocations into store/compute/load)."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expand_invokes(op)
        if self.cancel:
            cancel_pairs(op)
