"""`ila-cancel-store-load`: split invocations into store/compute/load and cancel
redundant accelerator round trips (spec §5.3).

Cancellation applies where its preconditions hold: the loaded value was
produced in place by a FlexASR temporal pool and is re-stored only for pools of
the same kind (same region, base, vector count and AdaptivFloat bias).

Every `ila.invoke` becomes `ila.store` of each operand, `ila.compute` and
`ila.load` of the result.  Then `ila.store(ila.load(%h))` — a result loaded to
the host only to be stored back into the same accelerator, with the same
tensor type — is replaced by `%h`; a load left without users disappears.  This
is valid for FlexASR pool chains because LayerReduce writes its results in
place, in the same region and layout, and max does not change the adpbias.

Example: four chained `flexasr.maxpool` invocations become one `ila.store`,
four `ila.compute` and one `ila.load`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from steplus.dialects.ila import AccType, ComputeOp, InvokeOp, LoadOp, StoreOp
from xdsl.dialects.builtin import StringAttr

# accelerator functions whose result stays in their input's buffer region and layout
IN_PLACE = ("flexasr.maxpool", "flexasr.meanpool")


def expand_invoke(inv: InvokeOp) -> None:
    target = inv.callee.data.split(".")[0]
    block = inv.parent_block()
    handles = []
    for a in inv.args:
        st = StoreOp(operands=[a], result_types=[AccType(StringAttr(target), a.type)])
        block.insert_op_before(st, inv)
        handles.append(st.res)
    comp = ComputeOp(operands=[handles], result_types=[AccType(StringAttr(target), inv.res.type)],
                     properties={"callee": inv.callee}, attributes=dict(inv.attributes))
    block.insert_op_before(comp, inv)
    ld = LoadOp(operands=[comp.res], result_types=[inv.res.type])
    block.insert_op_before(ld, inv)
    inv.res.replace_all_uses_with(ld.res)
    inv.detach()
    inv.erase()


def cancel_pairs(module) -> int:
    """Replace store(load(h)) by h; drop unused loads. Returns the number cancelled."""
    n = 0
    for st in [o for o in module.walk() if isinstance(o, StoreOp)]:
        src = st.input.owner
        if not (isinstance(src, LoadOp) and src.input.type == st.res.type):
            continue
        producer = src.input.owner
        users = [u.operation for u in st.res.uses]
        # same buffer, base and layout: only in-place temporal pools qualify
        if (isinstance(producer, ComputeOp) and producer.callee.data in IN_PLACE and users
                and all(isinstance(u, ComputeOp) and u.callee == producer.callee for u in users)):
            st.res.replace_all_uses_with(src.input)
            st.detach()
            st.erase()
            n += 1
            if not src.res.uses:
                src.detach()
                src.erase()
    return n


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
        for inv in [o for o in op.walk() if isinstance(o, InvokeOp)]:
            expand_invoke(inv)
        if self.cancel:
            cancel_pairs(op)
