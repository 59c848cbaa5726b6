"""convert-step-to-runtime as patterns after the placement (issue 25 item 3).

The fan-out rule of the reference spec §7: every stream with several consumers
gets a `step.broadcast` appended at the end of its graph, one result per use (in
the order of the value's use list, where xDSL puts the latest use first; the
fabric placement numbers the channels the same way), the broadcasts in placement order after the graph's own contexts
(numbered in graph order; a zip fused into its map gets none). Fan-out is illegal
in verified IR, so the input is parsed without verifying (as a frontend hands it
over) and verified after the pass.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from steplus.dialects.program_dialects import get_all_dialects
from steplus.dialects.step import GraphOp
from steplus.dialects.step.discardable import RUNTIME_CONTEXT, RUNTIME_DEPTH
from steplus.dialects.step.ops import BroadcastOp
from steplus.lowering.step_to_runtime import ConvertStepToRuntimePass

T = "!step.stream<[2], !step.tile<4x4xf32>>"
LOAD = ("step.linear_offchip_load {{base_addr = {a} : i64, tiled_in_shape = array<i64: 2>, "
        "stride = array<i64: 1>, tiled_out_shape = array<i64: 2>}} : () -> " + T)
TEXT = f"""
builtin.module {{
  step.graph @fan {{
    %x = {LOAD.format(a=0)}
    %w = {LOAD.format(a=64)}
    %z = step.zip %x, %w : ({T}, {T}) -> !step.stream<[2], !step.tuple<!step.tile<4x4xf32>, !step.tile<4x4xf32>>>
    %y = step.map %z : !step.stream<[2], !step.tuple<!step.tile<4x4xf32>, !step.tile<4x4xf32>>> -> {T} {{
    ^bb0(%p: !step.tile<4x4xf32>, %q: !step.tile<4x4xf32>):
      %s = step.apply "matmul"(%p, %q) : (!step.tile<4x4xf32>, !step.tile<4x4xf32>) -> !step.tile<4x4xf32>
      step.yield %s : !step.tile<4x4xf32>
    }}
    step.consume %w : {T}
    step.consume %y : {T}
    step.linear_offchip_store %x {{base_addr = 4096 : i64}} : {T}
    step.consume %x : {T}
  }}
  step.graph @two {{
    %a = {LOAD.format(a=0)}
    step.consume %a : {T}
    step.consume %a : {T}
  }}
}}
"""


def _place(preset: str = "") -> ModuleOp:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    module = Parser(ctx, TEXT).parse_module()  # fan-out: not verified before the pass
    ConvertStepToRuntimePass(preset=preset).apply(ctx, module)
    module.verify()
    return module


def test_fan_out_broadcasts_are_appended_in_placement_order():
    fan, two = [g for g in _place().walk() if isinstance(g, GraphOp)]
    ops = list(fan.body.block.ops)
    names = [o.name for o in ops]
    assert names == ["step.linear_offchip_load", "step.linear_offchip_load", "step.zip",
                     "step.map", "step.consume", "step.consume", "step.linear_offchip_store",
                     "step.consume", "step.broadcast", "step.broadcast"]
    x, w, z, y, cw, cy, st, cx, bx, bw = ops
    # the graph's contexts in graph order (the zip fused into the map), then the broadcasts'
    assert [RUNTIME_CONTEXT.get(o) for o in ops] == [0, 1, None, 2, 3, 4, 5, 6, 7, 8]
    assert RUNTIME_DEPTH.get(fan) == 2  # step-eval's base depth
    # one result per use, latest use first: x is used by the zip, the store, the consume
    assert isinstance(bx, BroadcastOp) and bx.input is x.results[0]
    assert [r.first_use.operation for r in bx.results] == [cx, st, z]
    assert isinstance(bw, BroadcastOp) and bw.input is w.results[0]
    assert [r.first_use.operation for r in bw.results] == [cw, z]
    # unnamed results (as the hand-edited pass printed them: %0, %1, ...)
    assert all(r.name_hint is None for b in (bx, bw) for r in b.results)
    assert y.results[0].first_use.operation is cy
    a, c1, c2, ba = two.body.block.ops
    assert [RUNTIME_CONTEXT.get(o) for o in (a, c1, c2, ba)] == [0, 1, 2, 3]
    assert [r.first_use.operation for r in ba.results] == [c2, c1]


def test_the_module_records_its_fabric():
    module = _place("sn40l")
    assert str(module.attributes["target.fabric"]) == '#target.fabric<"sn40l">'
    fan = next(g for g in module.walk() if isinstance(g, GraphOp))
    assert RUNTIME_DEPTH.get(fan) == 2  # the sn40l preset's base depth (dialects/target)
