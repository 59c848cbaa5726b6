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
