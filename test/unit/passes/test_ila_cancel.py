"""`ila-cancel-store-load`'s two patterns (passes/ila_cancel.py): `ExpandInvoke` and
`CancelStoreOfLoad` under `PatternRewriteWalker` (issue 25 item 3).

The expected IR follows the pass's contract (spec §5.3): an invocation of n operands
becomes n stores, one compute carrying its attributes and one load; a store of a just
loaded in-place pool result feeding only pools of the same kind is cancelled."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from steplus.dialects.ila import ComputeOp, InvokeOp, LoadOp, StoreOp
from steplus.passes.ila_cancel import cancel_pairs, expand_invokes
from steplus.tools.registry import get_all_dialects

POOLS = """
func.func @pools(%a: tensor<16x64xf32>) -> tensor<2x64xf32> {
  %p1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<16x64xf32>) -> tensor<8x64xf32>
  %p2 = ila.invoke "flexasr.maxpool"(%p1) : (tensor<8x64xf32>) -> tensor<4x64xf32>
  %p3 = ila.invoke "flexasr.maxpool"(%p2) {note = 3 : i64} : (tensor<4x64xf32>) -> tensor<2x64xf32>
  func.return %p3 : tensor<2x64xf32>
}
"""


def _parse(text: str) -> ModuleOp:
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    return Parser(ctx, text).parse_module()


def _kinds(m: ModuleOp) -> list[str]:
    return [o.name for o in m.walk() if o.name.startswith("ila.")]


def test_expand_invoke_splits_each_invocation_in_order():
    m = _parse(POOLS)
    invokes = [o for o in m.walk() if isinstance(o, InvokeOp)]
    origin = expand_invokes(m)
    m.verify()
    assert _kinds(m) == ["ila.store", "ila.compute", "ila.load"] * 3
    computes = [o for o in m.walk() if isinstance(o, ComputeOp)]
    assert [origin[c] for c in computes] == invokes  # each compute -> the invocation it expands
    assert computes[2].attributes["note"] == invokes[2].attributes["note"]
    # the invocation's name goes to its load only, not to the store or compute
    loads = [o for o in m.walk() if isinstance(o, LoadOp)]
    assert [ld.res.name_hint for ld in loads] == ["p1", "p2", "p3"]
    assert all(o.results[0].name_hint is None
               for o in m.walk() if isinstance(o, StoreOp | ComputeOp))


def test_cancel_leaves_one_store_and_one_load_around_a_pool_chain():
    m = _parse(POOLS)
    expand_invokes(m)
    assert cancel_pairs(m) == 2
    m.verify()
    assert _kinds(m) == ["ila.store", "ila.compute", "ila.compute", "ila.compute", "ila.load"]
    c1, c2, c3 = [o for o in m.walk() if isinstance(o, ComputeOp)]
    assert c2.args[0] is c1.res and c3.args[0] is c2.res


def test_no_cancel_across_kinds_or_for_non_pools():
    m = _parse("""
func.func @f(%a: tensor<16x64xf32>) -> tensor<4x64xf32> {
  %p1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<16x64xf32>) -> tensor<8x64xf32>
  %p2 = ila.invoke "flexasr.meanpool"(%p1) : (tensor<8x64xf32>) -> tensor<4x64xf32>
  func.return %p2 : tensor<4x64xf32>
}
""")
    expand_invokes(m)
    assert cancel_pairs(m) == 0  # a meanpool reading a maxpool's buffer: not the same kind
    assert _kinds(m) == ["ila.store", "ila.compute", "ila.load"] * 2


def test_a_load_the_host_also_reads_stays():
    m = _parse("""
func.func @f(%a: tensor<16x64xf32>) -> (tensor<4x64xf32>, tensor<8x64xf32>) {
  %p1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<16x64xf32>) -> tensor<8x64xf32>
  %p2 = ila.invoke "flexasr.maxpool"(%p1) : (tensor<8x64xf32>) -> tensor<4x64xf32>
  func.return %p2, %p1 : tensor<4x64xf32>, tensor<8x64xf32>
}
""")
    expand_invokes(m)
    assert cancel_pairs(m) == 1
    m.verify()
    assert _kinds(m) == ["ila.store", "ila.compute", "ila.load", "ila.compute", "ila.load"]
