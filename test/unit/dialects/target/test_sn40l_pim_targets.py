"""`#target.sn40l` and `#target.pim`: the SN40L table and the PIM mesh as module attributes (issue 25).

Expected values come from the tables themselves (`dialects/target/sn40l.py`,
`dialects/target/pim.py`) and the formulas their `why` states, recomputed here.
"""

from __future__ import annotations

import io
import math

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.program_dialects import get_all_dialects
from steplus.dialects.target.attrs import (
    PIM_KEY,
    SN40L_KEY,
    PimTargetAttr,
    SN40LTargetAttr,
    pim_target_of,
    sn40l_target_of,
)
from steplus.dialects.target.pim import preset
from steplus.dialects.target.sn40l import SN40L, with_changes


def _parse(text: str) -> ModuleOp:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def _print(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def test_sn40l_round_trip_and_table():
    for attr in ("#target.sn40l", "#target.sn40l<{pcus = 520 : i64, clock_ghz = 1.200000e+00 : f64}>"):
        text = f"builtin.module attributes {{target.sn40l = {attr}}} {{\n}}"
        assert _print(_parse(text)) == text
    m = _parse("builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 520 : i64, "
               "clock_ghz = 1.2 : f64}>} {\n}")
    target = sn40l_target_of(m)
    assert isinstance(target, SN40LTargetAttr)
    assert target.value("pcus") == 520 and target.value("clock_ghz") == 1.2
    # derived parameters follow their formulas with the changed values
    assert target.value("pcu_flops") == math.floor(638e12 / (520 * 1.2e9))  # 1022
    assert target.value("node_ddr_gbps") == pytest.approx(8 * 4 * 64 / 2 * 1.2)
    # untouched parameters are the seed table's
    assert target.value("hbm_bytes") == SN40L["hbm_bytes"].value
    assert target.table()["pcus"].source == "assumed"


def test_sn40l_no_changes_is_the_table():
    assert with_changes({}) is SN40L
    m = _parse("builtin.module attributes {target.sn40l = #target.sn40l} {\n}")
    target = sn40l_target_of(m)
    assert target is not None and target.table() is SN40L
    assert sn40l_target_of(ModuleOp([])) is None


@pytest.mark.parametrize("changes, message", [
    ("{pcu_flops = 3 : i64}", "'pcu_flops' is derived"),
    ("{pcus = 0 : i64}", "'pcus' must be a positive number, got 0"),
    ("{pcus = 2.5 : f64}", "'pcus' must be an integer, got 2.5"),
    ("{ddr_latency = -1 : i64}", "'ddr_latency' must be a non-negative number, got -1"),
    ("{warp = 1 : i64}", "unknown sn40l parameter 'warp'"),
    ('{pcus = "many"}', "'pcus' must be an integer or a float"),
])
def test_sn40l_verifier(changes: str, message: str):
    with pytest.raises(VerifyException, match=message):
        SN40LTargetAttr.new([_parse(f"builtin.module attributes {{x = {changes}}} {{\n}}")
                             .attributes["x"]]).verify()


def test_pim_round_trip_and_hardware():
    text = ('builtin.module attributes {target.pim = #target.pim<"allspark-8x8", '
            '{rows = 4 : i64, freq_mhz = 5.000000e+02 : f64}>} {\n}')
    m = _parse(text)
    assert _print(m) == text
    hw = pim_target_of(m)
    assert hw is not None
    assert (hw.rows, hw.cols, hw.freq_mhz) == (4, 8, 500.0)
    assert hw.nodes == 4 * 8 and hw.pe == preset("allspark-8x8").pe
    assert pim_target_of(ModuleOp([])) is None
    assert PimTargetAttr("allspark-16x16").hardware() == preset("allspark-16x16")


@pytest.mark.parametrize("attr, message", [
    ('#target.pim<"nope">', "unknown preset 'nope'"),
    ('#target.pim<"allspark-8x8", {rows = 0 : i64}>', "'rows' must be positive, got 0"),
    ('#target.pim<"allspark-8x8", {rows = 2.5 : f64}>', "'rows' must be an integer, got 2.5"),
    ('#target.pim<"allspark-8x8", {bogus = 1 : i64}>', "unknown field 'bogus'"),
    ('#target.pim<"allspark-8x8", {t_rfc_ns = 5000.0 : f64}>', "tRFC must be smaller than tREFI"),
])
def test_pim_verifier(attr: str, message: str):
    with pytest.raises(VerifyException, match=message):
        _parse(f"builtin.module attributes {{target.pim = {attr}}} {{\n}}")


def test_wrong_attribute_under_the_key():
    for key, reader in ((SN40L_KEY, sn40l_target_of), (PIM_KEY, pim_target_of)):
        m = _parse(f"builtin.module attributes {{{key} = 3 : i64}} {{\n}}")
        with pytest.raises(ValueError, match=f"'{key}' must be a #target"):
            reader(m)
