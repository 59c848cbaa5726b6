"""The typed readers of utils/attrs.py that passes, runtime and tools use instead of
`op.properties[...].get_values()` and `value.type.get_shape()` on untyped fields (issue 25
item 4): what they accept, and the error naming the field for what they refuse."""

from __future__ import annotations

import pytest
from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block

from steplus.utils.attrs import i64_array, int_prop, int_values, ints_of, shape_of


def test_int_values_reads_both_array_kinds():
    assert int_values(i64_array([2, 3])) == (2, 3)
    assert int_values(DenseArrayBase.from_list(i32, [-1, 7])) == (-1, 7)
    dense = DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), [1, 1])
    assert int_values(dense) == (1, 1)
    assert int_values(i64_array([])) == ()


@pytest.mark.parametrize("attr", [None, IntegerAttr(3, i64), StringAttr("1, 2")])
def test_int_values_is_none_for_anything_else(attr):
    assert int_values(attr) is None


def test_ints_of_reads_any_integer_width():
    assert ints_of(DenseArrayBase.from_list(i32, [4, -5])) == [4, -5]
    assert ints_of(None) == []


def test_int_prop_names_a_missing_or_mistyped_property():
    op = xdsl_test.TestOp.create(properties={"kernel": i64_array([3, 3]), "axis": IntegerAttr(1, i64)})
    assert int_prop(op, "kernel") == (3, 3)
    with pytest.raises(KeyError, match="test.op has no integer array property 'stride'"):
        int_prop(op, "stride")
    with pytest.raises(KeyError, match="no integer array property 'axis'"):
        int_prop(op, "axis")


def test_shape_of_reads_shaped_values_and_names_other_types():
    block = Block(arg_types=[TensorType(f32, [2, -1, 4]), i64])
    tensor_arg, scalar_arg = block.args
    assert shape_of(tensor_arg) == (2, -1, 4)
    with pytest.raises(TypeError, match="expected a value of shaped type, got i64"):
        shape_of(scalar_arg)
