"""step-metrics on MoE graphs: the seed's Fig. 2 layer and a statically tiled expert.

Closed forms are derived here from the graph structure (reference spec §5.5
for the traffic), independently of the implementation.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import sympy

from steplus.dialects.step import GraphOp
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.passes.step.metrics import compute_metrics, format_table

REPO = Path(__file__).resolve().parents[4]
MOE = REPO / "test" / "filecheck" / "passes" / "inputs" / "step-moe-fig2.mlir"
D, F, E, CHUNK = 4096, 14336, 8, 16


def _graph(text: str) -> GraphOp:
    module = parse_xdsl(text)
    module.verify()
    (graph,) = [op for op in module.walk() if isinstance(op, GraphOp)]
    return graph


def _sym(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, nonnegative=True)


def test_fig2_traffic_is_the_reference_closed_form():
    gm = compute_metrics(_graph(MOE.read_text()))
    B = _sym("B")
    counts = [_sym(f"B_{e}") for e in range(E)]
    # tokens in (bf16), each expert's W1/W3/W2 once per token tile (bf16),
    # the output rows as f32.
    expected = 2 * B * D + sum(3 * sympy.ceiling(c / CHUNK) * 2 * D * F for c in counts) + 4 * B * D
    assert sympy.expand(gm.offchip - expected) == 0


@pytest.mark.parametrize("counts", [[16] * 8, [1, 0, 0, 0, 0, 0, 0, 127], [17, 33, 0, 5, 9, 16, 32, 0]])
def test_fig2_traffic_bound_to_a_routing(counts):
    batch = sum(counts) // 2  # top-2 routing
    values = {"B": batch, **{f"B_{e}": c for e, c in enumerate(counts)}}
    gm = compute_metrics(_graph(MOE.read_text())).bind(values)
    tiles = sum(math.ceil(c / CHUNK) for c in counts)
    assert gm.offchip == 2 * batch * D + tiles * 3 * 2 * D * F + 4 * batch * D
    # The table prints the bound totals.
    assert f"total offchip_bytes = {gm.offchip}" in format_table(gm)


def expert_text(tn: int) -> str:
    """One expert on statically tiled tokens: C token rows in chunks of tn
    (padded), each row times the [D, F] weight (loaded once per chunk)."""
    d, f = 64, 128
    row, w, out = (f"!step.tile<1x{d}xbf16>", f"!step.tile<{d}x{f}xbf16>",
                   f"!step.tile<1x{f}xbf16>")
    ref = "!step.tile<1x1xi64>"
    return f"""
step.graph @expert {{
^bb0(%tok: !step.stream<[C], {row}>, %ref: !step.stream<[T], {ref}>):
  %c, %pad = step.reshape %tok {{split_dim = 0 : i64, chunk_size = {tn} : i64}} : (!step.stream<[C], {row}>) -> (!step.stream<[_, _], {row}>, !step.stream<[_, _], i1>)
  step.consume %pad : !step.stream<[_, _], i1>
  %w = step.linear_offchip_load %ref {{base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: {tn}>}} : (!step.stream<[T], {ref}>) -> !step.stream<[T, {tn}], {w}>
  %z = step.zip %c, %w : (!step.stream<[_, _], {row}>, !step.stream<[T, {tn}], {w}>) -> !step.stream<[_, _], !step.tuple<{row}, {w}>>
  %y = step.map %z : !step.stream<[_, _], !step.tuple<{row}, {w}>> -> !step.stream<[_, _], {out}> {{
  ^bb0(%a: {row}, %b: {w}):
    %m = step.apply "matmul"(%a, %b) : ({row}, {w}) -> {out}
    step.yield %m : {out}
  }}
  step.consume %y : !step.stream<[_, _], {out}>
}}
"""


def test_padded_flops_are_the_padding_rows():
    tn, d, f = 16, 64, 128
    # zip requires the weight stream's outer dim to be the number of chunks
    text = expert_text(tn).replace("[T]", '["ceiling(C/16)"]').replace("[T, ", '["ceiling(C/16)", ')
    gm = compute_metrics(_graph(text))
    C = _sym("C")
    chunks = sympy.ceiling(C / tn)
    assert sympy.expand(gm.flops - 2 * d * f * chunks * tn) == 0
    for c in (1, 15, 16, 17, 40):
        padding_rows = math.ceil(c / tn) * tn - c
        assert gm.padded_flops.subs(C, c) == 2 * d * f * padding_rows
        assert gm.flops.subs(C, c) - gm.padded_flops.subs(C, c) == 2 * d * f * c


def test_fig2_dynamic_tiles_follow_their_accumulator():
    # Each expert packs its tokens into ?x4096 tiles (%acc<e>); the rows of
    # those tiles are one symbol acc<e>_rows everywhere they flow: the
    # repeated input, the gate/up/SiLU/Mul tiles and the W2 accumulator.
    gm = compute_metrics(_graph(MOE.read_text()))
    tf, n = 64, 224
    rows = [_sym(f"acc{e}_rows") for e in range(E)]
    tiles = [sympy.ceiling(_sym(f"B_{e}") / CHUNK) for e in range(E)]
    # per element of the [tiles, 224] stream: gate and up matmuls 2*r*D*tf each,
    # SiLU 8 and Mul 1 per element of the r x tf tile, the W2 matmul 2*r*tf*D
    # plus the accumulating add r*D; the final Accum adds one 1xD row per
    # routed (token, expert) pair: sum_B_sel of them.
    per = [r * (2 * 2 * D * tf + 8 * tf + tf + 2 * tf * D + D) for r in rows]
    sum_sel = _sym("sum_B_sel")
    expected = sum(c * n * p for c, p in zip(tiles, per)) + sum_sel * D
    assert sympy.expand(gm.flops - expected) == 0
    # on chip: token tile 2D, final f32 accumulator 4D, stored f32 tile 4D;
    # per expert the three weight tiles and three r x D bf16 tiles (packed
    # tokens, their repeat, the W2 accumulator).
    onchip = 10 * D + sum(3 * 2 * D * tf + 3 * 2 * r * D for r in rows)
    assert sympy.expand(gm.onchip - onchip) == 0
    # With 16-row tiles the padded FLOPs are those of the padding rows.
    counts = [3, 0, 16, 17, 1, 0, 40, 5]
    bound = gm.bind({**{f"acc{e}_rows": CHUNK for e in range(E)},
                     **{f"B_{e}": c for e, c in enumerate(counts)}})
    k = n * (2 * 2 * D * tf + 8 * tf + tf + 2 * tf * D + D)
    assert bound.padded_flops == sum(k * (math.ceil(c / CHUNK) * CHUNK - c) for c in counts)
