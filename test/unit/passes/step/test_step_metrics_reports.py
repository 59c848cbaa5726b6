"""step-metrics reports: stderr / files (JSON, CSV), huge numbers, and the
cheap ratio and dim comparisons that replaced `sympy.simplify`.

Expected numbers are derived by hand from the graph: a load of `[B, 2]`
tiles of 16x64 f32 (4096 bytes each) into a store."""

from __future__ import annotations

import csv
import io
import json

import pytest
import sympy
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import parse_dim_text
from steplus.passes.step.metrics import compute_metrics, reduce_ratio
from steplus.passes.step.reports import format_json, format_table, metric_text, metric_value
from steplus.dialects.step.shape_rules import equal_dims, promoted_dim
from steplus.tools.registry import get_all_dialects

SMALL = """
step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
  step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[B, 2], !step.tile<16x64xf32>>
}
"""

CUBE = """
step.graph @cube {
^bb0(%ref: !step.stream<[B, B, B], !step.tile<1x1xi64>>):
  %x = step.random_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[B, B, B], !step.tile<1x1xi64>>) -> !step.stream<[B, B, B], !step.tile<2x2xf32>>
  step.consume %x : !step.stream<[B, B, B], !step.tile<2x2xf32>>
}
"""

B = sympy.Symbol("B", integer=True, nonnegative=True)
L = sympy.Symbol("L", integer=True, nonnegative=True)


def _graph(text: str) -> GraphOp:
    ctx = Context(allow_unregistered=True)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    module = Parser(ctx, text).parse_module()
    return next(op for op in module.walk() if isinstance(op, GraphOp))


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text(SMALL)
    return path


def test_report_on_stderr_ir_alone_on_stdout(step_opt, small):
    r = step_opt([str(small), "-p", "step-metrics"])
    assert r.code == 0
    assert "step-metrics" not in r.out and r.out.startswith("builtin.module {")
    assert "total offchip_bytes = 16384*B\n" in r.err  # 2 x (2B tiles x 4096 B)
    assert step_opt([str(small), "-p", "step-print-dot"]).err.startswith('digraph "g" {')


def test_json_file_holds_the_exact_numbers(step_opt, small, tmp_path):
    out = tmp_path / "m.json"
    r = step_opt([str(small), "-p", f'step-metrics{{bind="B=64" out="{out}"}}'])
    assert r.code == 0 and r.err == "" and "step-metrics" not in r.out
    (graph,) = json.loads(out.read_text())["graphs"]
    tiles = 64 * 2
    assert graph["name"] == "g"
    assert [op["offchip_bytes"] for op in graph["ops"]] == [tiles * 4096] * 2
    assert graph["totals"] == {"offchip_bytes": 2 * tiles * 4096, "onchip_bytes": 2 * 4096,
                               "flops": 0, "flops_executed": 0, "padded_flops": 0, "flops_artifact": None,
                               "operational_intensity": 0}


def test_csv_file_by_extension_and_by_format(step_opt, small, tmp_path):
    for name, extra in (("m.csv", ""), ("m.out", " format=csv")):
        out = tmp_path / name
        assert step_opt([str(small), "-p", f'step-metrics{{out="{out}"{extra}}}']).code == 0
        rows = list(csv.DictReader(io.StringIO(out.read_text())))
        assert [r["op"] for r in rows] == ["%x step.linear_offchip_load",
                                           "#1 step.linear_offchip_store", "total"]
        assert rows[-1]["offchip_bytes"] == "16384*B"
        assert rows[-1]["operational_intensity"] == "0"


def test_dot_file(step_opt, small, tmp_path):
    out = tmp_path / "g.dot"
    r = step_opt([str(small), "-p", f'step-print-dot{{out="{out}"}}'])
    assert r.code == 0 and r.err == ""
    assert 'n0 -> n1 [label="[B, 2] 16x64xf32"];' in out.read_text()


def test_huge_values_do_not_hit_the_int_to_str_limit():
    # (10^2000)^3 tiles of 2x2 f32 = 16 x 10^6000 bytes: 6002 digits, past
    # Python's 4300-digit limit for str(int).
    gm = compute_metrics(_graph(CUBE)).bind({"B": 10**2000})
    assert "total offchip_bytes = 1.60000e+6001\n" in format_table(gm)
    totals = json.loads(format_json([gm]))["graphs"][0]["totals"]
    assert totals["offchip_bytes"] == "1.60000e+6001" and totals["onchip_bytes"] == 16


def test_number_text_exact_up_to_1000_digits():
    assert metric_text(sympy.Integer(10**999)) == "1" + "0" * 999
    assert metric_text(sympy.Integer(10**1000)) == "1.00000e+1000"
    assert metric_text(sympy.Integer(-123456789 * 10**1500)) == "-1.23456e+1508"
    assert metric_text(sympy.Rational(517, 70)) == "517/70 (~7.386)"
    assert metric_value(sympy.Rational(1, 54)) == 1 / 54
    assert metric_value(8 * B) == "8*B" and metric_value(None) is None


def test_reduce_ratio_cancels_like_simplify():
    assert reduce_ratio(8192 * B / (32768 * B + 4096 * L)) == 2 * B / (8 * B + L)
    assert reduce_ratio((B + 1) * (L + 2) / ((B + 1) * (L + 3))) == (L + 2) / (L + 3)
    assert reduce_ratio(sympy.Integer(50823168) / 6881280) == sympy.Rational(517, 70)
    many = sympy.symbols("P0:20", integer=True, nonnegative=True)
    # 128 S / (64 S + 20 x 8) with S the sum of the 20 symbols: 4 S / (2 S + 5).
    ratio = sum(128 * p for p in many) / sum(64 * p + 8 for p in many)
    reduced = reduce_ratio(ratio)
    num, den = sympy.fraction(reduced)
    assert (sympy.expand(num), sympy.expand(den)) == (4 * sum(many), 2 * sum(many) + 5)
    assert sympy.simplify(reduced - ratio) == 0


def test_equal_dims_without_simplify_on_the_hot_path():
    assert equal_dims(B * (B + 1), B**2 + B)
    assert not equal_dims(sympy.ceiling(B / 16), sympy.Min(1, B))
    assert not equal_dims(B, 0) and equal_dims(sympy.Integer(4), 4)
    assert equal_dims(sympy.floor(B / 2) + sympy.ceiling(B / 2), B) == \
        (sympy.simplify(sympy.floor(B / 2) + sympy.ceiling(B / 2) - B) == 0)


def test_promoted_dim_is_the_parsed_min():
    b0 = parse_dim_text("B_0")
    assert promoted_dim(b0) == parse_dim_text("Min(1, B_0)")
    assert promoted_dim(b0 + 1) == 1 and promoted_dim(sympy.Integer(0)) == 0
    assert promoted_dim(sympy.ceiling(b0 / 16)) == sympy.Min(1, sympy.ceiling(b0 / 16))


@pytest.mark.parametrize("name,ragged", [("B_0", False), ("B_17", False), ("acc3_rows", False),
                                         ("L", True), ("zz_metric_symbol", False)])
def test_memoized_metric_text_is_sympys_text(name, ragged):
    # metric_text prints one-symbol expressions once per shape, renaming the
    # symbol; the text must be sympy's own for every symbol name
    x = parse_dim_text(f"?{name}" if ragged else name)
    shapes = [3145728 * sympy.Min(1, x), -768 * x + 12288 * sympy.ceiling(x / 16),
              8192 * x, x / 3 + 5, x**2 - 2 * x, sympy.Max(x, 7) * sympy.floor(x / 4)]
    for e in shapes * 2:  # the second round hits the memo
        assert metric_text(e) == sympy.sstr(e)


def test_max_of_two_dimension_symbols_is_sympys_max():
    from steplus.passes.step.tile_shapes import _max

    a, b = parse_dim_text("down0_rows"), parse_dim_text("acc0_rows")
    for x, y in ((a, b), (b, a), (a, a), (a, sympy.Integer(3)), (a, sympy.Integer(0))):
        got, want = _max(x, y), sympy.Max(x, y)
        assert got == want and sympy.sstr(got) == sympy.sstr(want)


def test_equal_dims_memo_keeps_symbols_apart():
    # memoized up to renaming: the same question in other symbols has the
    # same answer, and different symbols never collapse into one
    b0, b1, c, rc = (parse_dim_text(t) for t in ("B_0", "B_1", "C", "?C"))
    for x in (b0, b1):
        assert equal_dims(sympy.ceiling(x / 16) * 16 - x + x, 16 * sympy.ceiling(x / 16))
        assert not equal_dims(sympy.ceiling(x / 16), x / 16)
    assert not equal_dims(b0, b1) and not equal_dims(sympy.ceiling(b0 / 16), sympy.ceiling(b1 / 16))
    assert equal_dims(b0 + b1, b1 + b0)
    assert not equal_dims(c, rc)  # a ragged and a regular symbol of one name
