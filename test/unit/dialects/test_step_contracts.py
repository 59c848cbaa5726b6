"""Typed IR contracts of the step dialect (issue 25 item 4).

- every op with a shape rule carries the `INFER_SHAPES` trait, which verifies
  its written result shapes against the rule (no op calls the check by hand);
- every step operator's parent is matched by class (`HasParent(GraphOp)`),
  `step.apply` / `step.yield` by the four function-region op classes;
- the parent contract is reported before a shape contradiction whatever order
  xDSL's trait set iterates in (checked in processes with different hash seeds);
- `step.apply`'s callee is checked against the function library, naming close
  library functions.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.traits import HasParent
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.step import GraphOp, Step
from steplus.dialects.step import ops as so
from steplus.dialects.step.ops import ALL_OPS
from steplus.dialects.step.shape_rules import InferShapes, InferShapesTrait


def _verify(text: str) -> None:
    ctx = Context()
    for d in (Builtin, Func, Step):
        ctx.load_dialect(d)
    Parser(ctx, text, "t.mlir").parse_module().verify()


def test_every_op_with_a_shape_rule_has_the_trait():
    with_rule = [c for c in ALL_OPS if issubclass(c, InferShapes)]
    assert len(with_rule) == 28  # the 27 ops that called verify_result_shapes() by hand + regroup
    for c in with_rule:
        assert c.has_trait(InferShapesTrait), c.name
    for c in ALL_OPS:
        if not issubclass(c, InferShapes):
            assert not c.has_trait(InferShapesTrait), c.name


def test_parents_are_matched_by_class():
    for c in ALL_OPS:
        parents = c.get_traits_of_type(HasParent)
        assert len(parents) == 1, c.name
        want = ((so.MapOp, so.AccumOp, so.ScanOp, so.FlatMapOp)
                if c in (so.ApplyOp, so.YieldOp) else (GraphOp,))
        assert parents[0].op_types == want, c.name


PROMOTE = """
step.graph @g {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  %p = step.promote %x : (!step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[1, DIM], !step.tile<16x16xf32>>
  step.consume %p : !step.stream<[1, DIM], !step.tile<16x16xf32>>
}
"""


def test_the_trait_checks_result_shapes():
    _verify(PROMOTE.replace("DIM", "4"))
    # promote keeps the input's dims after its new outer dim (seed table 6): 4, not 5
    with pytest.raises(VerifyException, match=r"step\.promote: result dimension 1 is 5, "
                                              r"expected 4"):
        _verify(PROMOTE.replace("DIM", "5"))


def test_the_ops_own_rules_come_before_the_shape_rule():
    # a new outer dim of 2 breaks promote's own rule (1 or 0) and the shape rule
    # (Min(1, 4) = 1): the op's rule is reported
    text = PROMOTE.replace("[1, DIM]", "[2, 4]")
    with pytest.raises(VerifyException, match=r"the new outer dim is 1 \(or 0\), got 2"):
        _verify(text)


OUTSIDE = """
func.func @f(%x: !step.stream<[4], !step.tile<16x16xf32>>) {
  %p = step.promote %x : (!step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[1, 5], !step.tile<16x16xf32>>
  func.return
}
"""


def test_the_parent_is_reported_first_whatever_the_hash_seed():
    code = ("import sys; sys.path.insert(0, {here!r}); import test_step_contracts as t\n"
            "try:\n    t._verify(t.OUTSIDE)\nexcept Exception as e:\n    print(e)\n")
    here = os.path.dirname(os.path.abspath(__file__))
    for seed in ("0", "1"):
        out = subprocess.run([sys.executable, "-c", code.format(here=here)],
                             env={**os.environ, "PYTHONHASHSEED": seed},
                             capture_output=True, text=True, timeout=120, check=True).stdout
        assert "step.promote must be directly inside a step.graph (found in func.func)" in out, \
            (seed, out)


def test_apply_callee_is_checked_against_the_library():
    text = """
step.graph @g {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  %y = step.map %x : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%t: !step.tile<16x16xf32>):
    %s = step.apply "slu"(%t) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %s : !step.tile<16x16xf32>
  }
  step.consume %y : !step.stream<[4], !step.tile<16x16xf32>>
}
"""
    with pytest.raises(VerifyException, match=r"unknown function 'slu'; did you mean [^?]*'silu'"):
        _verify(text)


MAPPED = """
step.graph @g attributes {GRAPH_ATTRS} {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  %y = step.map %x {OP_ATTRS} : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%t: !step.tile<16x16xf32>):
    %s = step.apply "silu"(%t) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %s : !step.tile<16x16xf32>
  }
  step.consume %y : !step.stream<[4], !step.tile<16x16xf32>>
}
"""


def _mapped(graph_attrs: str, op_attrs: str) -> str:
    return MAPPED.replace("GRAPH_ATTRS", graph_attrs).replace("OP_ATTRS", op_attrs)


def test_registered_discardable_attributes_verify():
    _verify(_mapped("runtime.depth = 1 : i64", "compute_bw = 64 : i64, pmu_bw = 8 : i64, "
                                              "runtime.context = 0 : i64"))
    cases = [
        (("runtime.depth = 0 : i64", "compute_bw = 64 : i64"),
         "step.graph: 'runtime.depth' must be an integer >= 1, got 0"),
        (("runtime.depth = 1 : i64", 'compute_bw = "fast"'),
         "step.map: 'compute_bw' must be an integer in [1, 1099511627776], got \"fast\""),
        # the range is the spec's (it was the placement's, a lowering error)
        (("runtime.depth = 1 : i64", "compute_bw = 0 : i64"),
         "step.map: 'compute_bw' must be an integer in [1, 1099511627776], got 0"),
        (("runtime.depth = 1 : i64", "pmu_bw = 1.5 : f32"),
         "step.map: 'pmu_bw' must be an integer in [1, 1099511627776], got 1.500000e+00 : f32"),  # MLIR's float print
        (("runtime.depth = 1 : i64", "runtime.context = -1 : i64"),
         "step.map: 'runtime.context' must be an integer >= 0, got -1"),
    ]
    for (g, o), message in cases:
        with pytest.raises(VerifyException) as info:
            _verify(_mapped(g, o))
        assert message in str(info.value), (g, o, str(info.value))
