"""step-metrics on the SwiGLU expert (reference spec §8.1, schedule "mn_mk").

The graph is written with every derived dim as `_` (so the metrics also go
through step-infer-shapes' rules); the expected values are closed forms
derived here from the schedule, independently of the implementation.
"""

from __future__ import annotations

import pytest
import sympy

from steplus.dialects.step import GraphOp
from steplus.lowering.mlir_bridge import parse_xdsl
from steplus.passes.step.metrics import compute_metrics, parse_bindings


def _t(r: int, c: int) -> str:
    return f"!step.tile<{r}x{c}xf32>"


def _s(dims: list[str], el: str) -> str:
    return f"!step.stream<[{', '.join(dims)}], {el}>"


def swiglu_text(B: int, D: int, F: int, tm: int, tn: int, symbolic: bool = False) -> str:
    """gate/up tiled along M and N (K = D untiled), down along M and K (N = D untiled).

    With `symbolic`, the M loop (B/tm tiles) is the length `M` of ref streams.
    """
    m, n = B // tm, F // tn
    ref = _s(["M"], "!step.tile<1x1xi64>")
    args = ", ".join(f"%r{i}: {ref}" for i in range(4)) if symbolic else ""
    u2, u3 = ["_", "_"], ["_", "_", "_"]

    def load(name: str, i: int, tile: str, shape: list[int]) -> str:
        full = shape if symbolic else [m, *shape]
        arr = ", ".join(map(str, full))
        props = (f"{{base_addr = 0 : i64, tiled_in_shape = array<i64: {arr}>, "
                 f"stride = array<i64: {', '.join('1' for _ in full)}>, "
                 f"tiled_out_shape = array<i64: {arr}>}}")
        operand = f"%r{i} " if symbolic else ""
        src = ref if symbolic else ""
        return f"  %{name} = step.linear_offchip_load {operand}{props} : ({src}) -> {_s(u3, tile)}"

    def matmul_accum(name: str, zipped: str, a: str, w: str, out: str) -> list[str]:
        tup = f"!step.tuple<{a}, {w}>"
        return [
            f"  %{name} = step.accum %{zipped} {{rank = 1 : i64}} : {_s(u3, tup)} -> {_s(u2, out)} update {{",
            f"  ^bb0(%l: {a}, %w: {w}, %acc: {out}):",
            f"    %p = step.apply \"matmul\"(%l, %w) : ({a}, {w}) -> {out}",
            f"    %q = step.apply \"add\"(%acc, %p) : ({out}, {out}) -> {out}",
            f"    step.yield %q : {out}",
            "  } init {",
            f"    %z = step.apply \"zero\"() : () -> {out}",
            f"    step.yield %z : {out}",
            "  }",
        ]

    def zip_(name: str, a: str, at: str, b: str, bt: str, dims: list[str]) -> str:
        return (f"  %{name} = step.zip %{a}, %{b} : ({_s(dims, at)}, {_s(dims, bt)}) -> "
                f"{_s(dims, f'!step.tuple<{at}, {bt}>')}")

    X, W, H, O, WD = _t(tm, D), _t(D, tn), _t(tm, tn), _t(tm, D), _t(tn, D)
    lines = ["builtin.module {", "step.graph @swiglu {"]
    if symbolic:
        lines.append(f"^bb0({args}):")
    lines += [
        load("x", 0, X, [n, 1]),
        f"  %xa, %xb = step.broadcast %x : ({_s(u3, X)}) -> ({_s(u3, X)}, {_s(u3, X)})",
        load("wg", 1, W, [n, 1]),
        zip_("zg", "xa", X, "wg", W, u3),
        *matmul_accum("gate", "zg", X, W, H),
        load("wu", 2, W, [n, 1]),
        zip_("zu", "xb", X, "wu", W, u3),
        *matmul_accum("up", "zu", X, W, H),
        f"  %s = step.map %gate : {_s(u2, H)} -> {_s(u2, H)} {{",
        f"  ^bb0(%v: {H}):",
        f"    %e = step.apply \"silu\"(%v) : ({H}) -> {H}",
        f"    step.yield %e : {H}",
        "  }",
        zip_("zh", "s", H, "up", H, u2),
        f"  %h = step.map %zh : {_s(u2, f'!step.tuple<{H}, {H}>')} -> {_s(u2, H)} {{",
        f"  ^bb0(%a: {H}, %b: {H}):",
        f"    %e = step.apply \"mul\"(%a, %b) : ({H}, {H}) -> {H}",
        f"    step.yield %e : {H}",
        "  }",
        f"  %hr, %hp = step.reshape %h {{split_dim = 0 : i64, chunk_size = {n} : i64}} : "
        f"({_s(u2, H)}) -> ({_s(u3, H)}, {_s(u3, 'i1')})",
        f"  step.consume %hp : {_s(u3, 'i1')}",
        load("wd", 3, WD, [1, n]),
        zip_("zd", "hr", H, "wd", WD, u3),
        *matmul_accum("down", "zd", H, WD, O),
        f"  step.linear_offchip_store %down {{base_addr = 0 : i64}} : {_s(u2, O)}",
        "}",
        "}",
    ]
    return "\n".join(lines)


def _graph(text: str) -> GraphOp:
    module = parse_xdsl(text)
    module.verify()
    (graph,) = [op for op in module.walk() if isinstance(op, GraphOp)]
    return graph


B, D, F = 64, 256, 512
SWEEP = [(tm, tn) for tm in (16, 32, 64) for tn in (16, 32, 64, 128, 256)]


def closed_traffic(tm: int, tn: int) -> int:
    # Reference spec §5.5 (nb = 4): input re-read per N tile, the three weights
    # re-read per M tile, f32 output written once.
    return 4 * B * D * (F // tn) + 3 * 4 * D * F * (B // tm) + 4 * B * D


def closed_flops(tm: int, tn: int) -> int:
    # gate and up: a [B,D]x[D,F] matmul each plus one add per partial sum
    # (K untiled: one add per output element); SiLU 8 and Mul 1 per element of
    # [B, F]; down: [B,F]x[F,D] matmul plus one add per output element for each
    # of the F/tn partial products.
    mm = 2 * B * D * F
    return 2 * (mm + B * F) + 8 * B * F + B * F + mm + B * D * (F // tn)


def closed_onchip_artifact(tm: int, tn: int) -> int:
    # one tile per load (x, three weights), the three accumulators, the store's tile
    loads = 4 * (tm * D + 2 * D * tn + tn * D)
    accs = 4 * (2 * tm * tn + tm * D)
    return loads + accs + 4 * tm * D


def closed_onchip_paper(tm: int, tn: int) -> int:
    # seed §4.1: memory operators double-buffered; a matmul accum holds 16 rows
    # of its input tile, the whole weight tile and its output tile.
    loads = 2 * 4 * (tm * D + 2 * D * tn + tn * D)
    store = 2 * 4 * tm * D
    gate_up = 2 * (16 * D * 4 + D * tn * 4 + tm * tn * 4)
    down = 16 * tn * 4 + tn * D * 4 + tm * D * 4
    return loads + store + gate_up + down


@pytest.mark.parametrize("tm,tn", SWEEP)
def test_swiglu_metrics_match_closed_forms(tm, tn):
    gm = compute_metrics(_graph(swiglu_text(B, D, F, tm, tn)))
    assert gm.offchip == closed_traffic(tm, tn)
    assert gm.flops == closed_flops(tm, tn)
    assert gm.padded_flops == 0
    assert gm.onchip == closed_onchip_artifact(tm, tn)
    assert gm.operational_intensity == sympy.Rational(closed_flops(tm, tn), closed_traffic(tm, tn))


@pytest.mark.parametrize("tm,tn", [(16, 16), (32, 128), (64, 256)])
def test_swiglu_paper_onchip_convention(tm, tn):
    gm = compute_metrics(_graph(swiglu_text(B, D, F, tm, tn)), onchip="paper")
    assert gm.onchip == closed_onchip_paper(tm, tn)
    assert gm.offchip == closed_traffic(tm, tn)  # traffic does not depend on the mode


def test_swiglu_symbolic_m_then_bound():
    tm, tn = 16, 64
    gm = compute_metrics(_graph(swiglu_text(B, D, F, tm, tn, symbolic=True)))
    M = sympy.Symbol("M", integer=True, nonnegative=True)
    n = F // tn
    expected = 4 * M * n * tm * D + 3 * 4 * M * n * D * tn + 4 * M * tm * D
    assert sympy.expand(gm.offchip - expected) == 0
    bound = gm.bind(parse_bindings(f"M={B // tm}"))
    assert bound.offchip == closed_traffic(tm, tn)
    assert bound.flops == closed_flops(tm, tn)


def test_per_op_rows_and_the_ir_is_unchanged():
    text = swiglu_text(B, D, F, 16, 64)
    graph = _graph(text)
    before = str(graph)
    gm = compute_metrics(graph)
    assert str(graph) == before
    by_label = {m.label: m for m in gm.ops}
    assert by_label["%x step.linear_offchip_load"].offchip == 4 * B * D * (F // 64)
    assert by_label["%s step.map"].flops == 8 * B * F
    assert by_label["%h step.map"].flops == B * F
    assert by_label["%gate step.accum"].onchip == 4 * 16 * 64


def test_bad_bindings_are_rejected():
    assert parse_bindings(" B=64, ?L = 3 ,") == {"B": 64, "L": 3}
    for bad in ("B", "B=x", "1B=2", "B=1.5"):
        with pytest.raises(ValueError):
            parse_bindings(bad)
    with pytest.raises(ValueError):
        compute_metrics(_graph(swiglu_text(B, D, F, 16, 64)), onchip="both")
