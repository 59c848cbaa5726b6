"""The registered discardable attributes (issue 25 item 4): `sn40l.*`, `runtime.*`, the placement's knobs.

Each is a spec of `utils/discardable.py` listed in `dialects/step/discardable.py`
or `dialects/sn40l_attrs.py`; `step.graph`'s verifier checks the ones present
(the messages below are the spec's contract: name, expected type/range, value
found), and writers/readers go through the spec's typed `set`/`get`.
"""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from steplus.dialects import sn40l_attrs
from steplus.dialects.sn40l_attrs import KERNEL, READONLY, SOURCE, TIER
from steplus.dialects.step import Step
from steplus.dialects.step.discardable import REGISTRY, RUNTIME_CONTEXT, RUNTIME_DEPTH
from steplus.utils.discardable import IntDiscardable, StrDiscardable, registry

GRAPH = """
step.graph @g_k0 attributes {GRAPH_ATTRS} {
  %x = step.linear_offchip_load {OP_ATTRS, base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x64xf32>>
  step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x64xf32>>
}
"""


def _verify(graph_attrs: str, op_attrs: str) -> None:
    ctx = Context()
    for d in (Builtin, Step):
        ctx.load_dialect(d)
    text = GRAPH.replace("GRAPH_ATTRS", graph_attrs).replace("OP_ATTRS", op_attrs)
    Parser(ctx, text, "t.mlir").parse_module().verify()


def test_valid_sn40l_attributes_verify():
    _verify('sn40l.kernel = 0 : i64, sn40l.kernels = 2 : i64, sn40l.source = "g", '
            "sn40l.hbm_bytes = 0 : i64, sn40l.ddr_bytes = 16 : i64, sn40l.sections = 1 : i64, "
            "sn40l.pcus_used = 3 : i64, sn40l.pmus_used = 0 : i64",
            'sn40l.tier = "ddr", sn40l.readonly, sn40l.symbol = "g.t0", sn40l.pmus = 1 : i64')


@pytest.mark.parametrize("graph_attrs, op_attrs, message", [
    ("sn40l.kernel = -1 : i64", "name = \"x\"",
     "step.graph: 'sn40l.kernel' must be an integer >= 0, got -1"),
    ("sn40l.kernels = 0 : i64", "name = \"x\"",
     "step.graph: 'sn40l.kernels' must be an integer >= 1, got 0"),
    ("sn40l.source = 3 : i64", "name = \"x\"",
     "step.graph: 'sn40l.source' must be a string, got 3 : i64"),
    ("sn40l.kernel = 0 : i64", 'sn40l.tier = "nvme"',
     "step.linear_offchip_load: 'sn40l.tier' must be one of \"hbm\", \"ddr\", got \"nvme\""),
    ("sn40l.kernel = 0 : i64", "sn40l.readonly = 1 : i64",
     "step.linear_offchip_load: 'sn40l.readonly' must be a unit attribute (the name alone), "
     "got 1 : i64"),
    ("sn40l.kernel = 0 : i64", "sn40l.pcus = -2 : i64",
     "step.linear_offchip_load: 'sn40l.pcus' must be an integer >= 0, got -2"),
    ("runtime.depth = 0 : i64", "name = \"x\"",
     "step.graph: 'runtime.depth' must be an integer >= 1, got 0"),
])
def test_invalid_values_are_located_errors(graph_attrs: str, op_attrs: str, message: str):
    with pytest.raises(VerifyException) as info:
        _verify(graph_attrs, op_attrs)
    assert message in str(info.value)


def test_a_graph_attribute_on_an_operator_is_not_checked_as_one():
    # the registry names where each attribute lives; elsewhere it is not its contract
    _verify('sn40l.tier = "nvme"', "sn40l.kernel = -1 : i64")


def test_typed_accessors():
    m = ModuleOp([])
    assert KERNEL.get(m) is None and not KERNEL.present(m)
    KERNEL.set(m, 3)
    assert m.attributes["sn40l.kernel"] == IntegerAttr(3, i64) and KERNEL.get(m) == 3
    with pytest.raises(ValueError, match="'sn40l.kernel' must be an integer >= 0, got -1"):
        KERNEL.set(m, -1)
    m.attributes["sn40l.kernel"] = StringAttr("3")  # malformed: not a value, not 3
    assert KERNEL.get(m) is None
    with pytest.raises(ValueError, match="no valid 'sn40l.kernel'"):
        KERNEL.require(m)
    TIER.set(m, "ddr")
    assert TIER.get(m) == "ddr" and m.attributes["sn40l.tier"] == StringAttr("ddr")
    with pytest.raises(ValueError, match='must be one of "hbm", "ddr", got "nvme"'):
        TIER.set(m, "nvme")
    SOURCE.set(m, "g")
    assert SOURCE.get(m) == "g"
    assert not READONLY.get(m)
    READONLY.set(m)
    assert READONLY.get(m) and m.attributes["sn40l.readonly"] == UnitAttr()
    READONLY.set(m, False)
    assert "sn40l.readonly" not in m.attributes
    RUNTIME_CONTEXT.set(m, 0)
    RUNTIME_DEPTH.set(m, 2)
    assert (RUNTIME_CONTEXT.get(m), RUNTIME_DEPTH.get(m)) == (0, 2)


def test_registry_lists_every_sn40l_attribute_once():
    specs = [v for v in vars(sn40l_attrs).values()
             if isinstance(v, IntDiscardable | StrDiscardable) or v is READONLY]
    assert {s.name for s in specs} == set(sn40l_attrs.REGISTRY)
    assert all(name.startswith("sn40l.") for name in sn40l_attrs.REGISTRY)
    assert set(sn40l_attrs.REGISTRY) <= set(REGISTRY)
    with pytest.raises(ValueError, match="registered twice"):
        registry([KERNEL, KERNEL])


# -- the fabric placement's knobs: each verified where written (bad type, out of range) --

KNOB_CASES = [
    ('compute_bw = "fast"', "'compute_bw' must be an integer in [1, 1099511627776], got \"fast\""),
    ("compute_bw = 0 : i64", "'compute_bw' must be an integer in [1, 1099511627776], got 0"),
    ("pmu_bw = 2.0 : f32", "'pmu_bw' must be an integer in [1, 1099511627776], got 2.000000e+00 : f32"),
    ("pmu_bw = -64 : i64", "'pmu_bw' must be an integer in [1, 1099511627776], got -64"),
    ('rank = "inner"', "'rank' must be an integer in [0, 64], got \"inner\""),
    ("rank = -1 : i64", "'rank' must be an integer in [0, 64], got -1"),
    ("rank = 65 : i64", "'rank' must be an integer in [0, 64], got 65"),
    ("switch_cycles = 3 : i64",
     "'switch_cycles' must be an array of integers in [0, 1099511627776], got 3 : i64"),
    ("switch_cycles = array<f32: 1.0>",
     "'switch_cycles' must be an array of integers in [0, 1099511627776], got array<f32: 1.0"),
    ("switch_cycles = array<i64: 1, -5>",
     "'switch_cycles' must be an array of integers in [0, 1099511627776], got [1, -5]"),
    ("write_back_mu = true", "'write_back_mu' must be a unit attribute (the name alone), got true"),
    ("write_back_mu = 1 : i64",
     "'write_back_mu' must be a unit attribute (the name alone), got 1 : i64"),
    ('add_outer_dim = "yes"',
     "'add_outer_dim' must be a unit attribute (the name alone), got \"yes\""),
    ("name = 3 : i64", "'name' must be a string, got 3 : i64"),
]


@pytest.mark.parametrize("op_attrs, message", KNOB_CASES)
def test_placement_knobs_are_verified_where_written(op_attrs: str, message: str):
    with pytest.raises(VerifyException) as info:
        _verify("sn40l.kernel = 0 : i64", op_attrs)
    assert f"step.linear_offchip_load: {message}" in str(info.value)


def test_valid_placement_knobs_verify():
    _verify("sn40l.kernel = 0 : i64",
            'compute_bw = 1 : i64, pmu_bw = 1099511627776 : i64, rank = 0 : i64, '
            'switch_cycles = array<i64: 0, 3>, write_back_mu, add_outer_dim, name = "ld"')


STORE_GRAPH = """
step.graph @g {
  %a = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<1x1xi64>>
  %d = step.linear_offchip_load {base_addr = 64 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<8x64xbf16>>
  %ack = step.random_offchip_store %a, %d {base_addr = 4096 : i64, tiled_in_shape = array<i64: 8, 1>, DEPTH} : (!step.stream<[4], !step.tile<1x1xi64>>, !step.stream<[4], !step.tile<8x64xbf16>>) -> !step.stream<[4], i1>
  step.consume %ack : !step.stream<[4], i1>
}
"""


@pytest.mark.parametrize("depth, message", [
    ("buffer_depth = 0 : i64", "buffer_depth must be an integer in [1, 1099511627776], got 0"),
    ("buffer_depth = -2 : i64", "buffer_depth must be an integer in [1, 1099511627776], got -2"),
    ('buffer_depth = "deep"', '"deep" should be of base attribute integer'),  # xDSL's property check
])
def test_buffer_depth_is_the_store_property_verified(depth: str, message: str):
    ctx = Context()
    for d in (Builtin, Step):
        ctx.load_dialect(d)
    Parser(ctx, STORE_GRAPH.replace("DEPTH", "buffer_depth = 4 : i64")).parse_module().verify()
    with pytest.raises(VerifyException) as info:
        Parser(ctx, STORE_GRAPH.replace("DEPTH", depth)).parse_module().verify()
    assert message in str(info.value)


def test_int_array_spec_accessors():
    from steplus.dialects.step.discardable import SWITCH_CYCLES

    m = ModuleOp([])
    assert SWITCH_CYCLES.get(m) is None
    SWITCH_CYCLES.set(m, [0, 7])
    assert str(m.attributes["switch_cycles"]) == "array<i64: 0, 7>"
    assert SWITCH_CYCLES.get(m) == [0, 7]
    with pytest.raises(ValueError, match=r"'switch_cycles' must be an array of integers in "
                       r"\[0, 1099511627776\], got \[1, -1\]"):
        SWITCH_CYCLES.set(m, [1, -1])
    m.attributes["switch_cycles"] = IntegerAttr(3, i64)  # malformed: not a value
    assert SWITCH_CYCLES.get(m) is None
    with pytest.raises(ValueError, match="got 3 : i64"):
        SWITCH_CYCLES.check_on(m)
