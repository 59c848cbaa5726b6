"""lus-normalize on a delay whose next value is another delay's result.

`%a = lus.fby %c0 %b`, `%b = lus.fby %c0 %x` is a two-tick shift register:
a(0) = 0, a(1) = b(0) = 0, a(t) = b(t-1) = x(t-2) from t = 2. lus-normalize stopped
on it with an internal error ("Attempting to delete SSA value that still has uses"):
the next state of `%a` was taken before `%b`'s result was replaced.
"""

from __future__ import annotations

import numpy as np
from xdsl.context import Context

from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.passes.lus.normalize import LusNormalizePass
from steplus.runtime.reactive import run_node

CHAIN = """
lus.node @n(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %a = lus.fby %c0 %b : i32
  %b = lus.fby %c0 %x : i32
  lus.yield (%a : i32)
}
"""


def test_fby_of_fby_becomes_a_shift_register():
    module = parse_xdsl(CHAIN)
    LusNormalizePass().apply(Context(), module)
    module.verify()
    node = next(iter(module.body.block.ops))
    text = str(node)
    # the next state of %a is %b's current value (its merge), of %b the input
    assert "lus.node @n state(%a_state: i32, %b_state: i32) (%x: i32) -> (i32) {" in text
    assert "lus.yield state(%b : i32, %x : i32) (%a : i32)" in text
    xs = np.arange(1, 9, dtype=np.int32)
    out = run_node(module, "n", {"x": xs}, len(xs))[0]
    assert [int(v) for v in out] == [0, 0, *(int(x) for x in xs[:-2])]
