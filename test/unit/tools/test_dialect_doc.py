"""Op pages say types in words and what each property means (issue 28 item 3):
no IRDL constraint reprs, and the off-chip memory ops' properties explained."""

from __future__ import annotations

import pytest

from steplus.dialects import get_all_dialects
from steplus.dialects.step.ops import memory
from steplus.tools.dialect_doc import render_dialect, render_op

DIALECTS = sorted(get_all_dialects())


@pytest.mark.parametrize("name", DIALECTS)
def test_no_constraint_reprs(name):
    page = render_dialect(get_all_dialects()[name]())
    for repr_text in ("BaseAttr(", "RangeOf(", "ParamAttrConstraint(", "EqAttrConstraint(",
                      "RangeLengthConstraint(", "VarConstraint("):
        assert repr_text not in page, f"{name}: {repr_text}"


def test_load_properties_are_explained():
    rows = {line.split("|")[2].strip(" `"): line.split("|")[3:5]
            for line in render_op(memory.LinearOffChipLoadOp).splitlines()
            if line.startswith("| ") and not line.startswith("| kind")}
    assert rows["ref"][0].strip() == "optional `!step.stream`"
    assert rows["base_addr"][0].strip() == "`i64` integer"
    assert rows["stride"][0].strip() == "dense integer array, `array<i64: ...>`"
    assert "sum(i_k * stride_k)" in rows["stride"][1]
    assert "row-major grid of tiles" in rows["tiled_in_shape"][1]
    assert "one tile per element" in rows["tiled_out_shape"][1]


def test_random_store_buffer_depth_is_optional():
    page = render_op(memory.RandomOffChipStoreOp)
    assert "| property | `buffer_depth` | optional `i64` integer | Tiles it buffers" in page


@pytest.mark.parametrize("name", ["ila", "lus", "pim", "step", "sync"])
def test_every_property_has_a_meaning(name):
    """Every property/attribute row of these dialects' op tables says what it means in words."""
    page = render_dialect(get_all_dialects()[name]())
    rows = [line for line in page.splitlines() if line.startswith(("| property", "| attribute"))]
    assert rows, name
    empty = [row for row in rows if row.split("|")[4].strip() == ""]
    assert empty == []


def test_generic_and_own_meanings():
    from steplus.dialects.ila.host import WindowsOp
    from steplus.dialects.lus import NodeOp, YieldOp

    def meaning(op, prop):
        row = next(line for line in render_op(op).splitlines() if line.startswith(f"| property | `{prop}`"))
        return row.split("|")[4].strip()

    assert meaning(NodeOp, "sym_name").startswith("The node's symbol name")  # its own beats the generic
    assert meaning(NodeOp, "function_type").startswith("The static parameters and inputs")
    assert meaning(YieldOp, "operandSegmentSizes").startswith("How many operands each operand group has")
    assert meaning(NodeOp, "num_state").startswith("How many block arguments after the static ones")
    assert meaning(WindowsOp, "pad") == "Padding `[top, bottom, left, right]` added to H and W, each >= 0 (what it reads: see the op)."
