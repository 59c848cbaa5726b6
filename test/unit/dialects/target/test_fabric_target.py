"""`#target.fabric`: the fabric configuration as an attribute the module carries (issue 25 §2)."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from steplus.dialects.program_dialects import get_all_dialects
from steplus.dialects.target.attrs import FABRIC_KEY, FabricTargetAttr, fabric_target_of
from steplus.dialects.target.fabric import HBMConfig, get_preset


def _ctx() -> Context:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def _parse(text: str) -> ModuleOp:
    return Parser(_ctx(), text).parse_module()


def _print(module: ModuleOp) -> str:
    import io

    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def test_round_trip_and_config():
    text = ('builtin.module attributes {target.fabric = #target.fabric<"step-eval", '
            '{base_depth = 1 : i64, channels = 8 : i64}>} {\n}')
    module = _parse(text)
    assert _print(module) == text
    cfg = fabric_target_of(module)
    # the preset with the two fields changed: base depth, and the HBM tier's channels
    assert cfg == get_preset("step-eval").with_(base_depth=1, channels=8)
    assert cfg.hbm == HBMConfig(channels=8) and cfg.base_depth == 1


def test_preset_only_prints_without_a_dictionary():
    attr = FabricTargetAttr("sn40l")
    module = ModuleOp([], attributes={FABRIC_KEY: attr})
    assert _print(module) == ('builtin.module attributes {target.fabric = '
                              '#target.fabric<"sn40l">} {\n}')
    assert attr.config() == get_preset("sn40l")


@pytest.mark.parametrize("text, message", [
    ('#target.fabric<"sn41">', "unknown hardware preset 'sn41'"),
    ('#target.fabric<"sn40l", {channels = 0 : i64}>',
     "channels: expected an integer in [1, 1024], got 0"),
    ('#target.fabric<"sn40l", {chanels = 4 : i64}>', "unknown field(s) chanels"),
    ('#target.fabric<"sn40l", {name = "x"}>', "'name' must be an integer or a float"),
    ('#target.fabric<"sn40l", {base_depth = 1.5 : f64}>', "base_depth: expected an integer"),
])
def test_verifier_names_the_bad_field(text, message):
    with pytest.raises((VerifyException, ParseError)) as e:
        _parse(f"builtin.module attributes {{target.fabric = {text}}} {{\n}}")
    assert message in str(e.value)


def test_fabric_target_of_walks_up_and_rejects_other_attributes():
    inner = ModuleOp([])
    outer = ModuleOp([inner], attributes={FABRIC_KEY: FabricTargetAttr("swiglu-hdl")})
    assert fabric_target_of(inner) == get_preset("swiglu-hdl")
    assert fabric_target_of(ModuleOp([])) is None
    from xdsl.dialects.builtin import StringAttr

    outer.attributes[FABRIC_KEY] = StringAttr("swiglu-hdl")
    with pytest.raises(ValueError, match="must be a #target.fabric attribute"):
        fabric_target_of(inner)


def test_built_with_changed_fields_prints_and_verifies():
    attr = FabricTargetAttr("swiglu-hdl", {"base_depth": 3, "clock_ghz": 1.5})
    assert attr.config() == get_preset("swiglu-hdl").with_(base_depth=3, clock_ghz=1.5)
    text = _print(ModuleOp([], attributes={FABRIC_KEY: attr}))
    assert text == ('builtin.module attributes {target.fabric = #target.fabric<"swiglu-hdl", '
                    '{base_depth = 3 : i64, clock_ghz = 1.500000e+00 : f64}>} {\n}')
    assert _parse(text).attributes[FABRIC_KEY] == attr
    with pytest.raises(VerifyException, match="base_depth: expected an integer in"):
        FabricTargetAttr("swiglu-hdl", {"base_depth": 0})
