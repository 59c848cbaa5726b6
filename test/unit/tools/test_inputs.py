"""The step-run input reader and validator (tools/inputs.py), shared by every backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import Float32Type, IntegerType, TensorType, f32, i1, i8, i32, i64

from steplus.tools.cli import InputError, UsageError
from steplus.tools.inputs import (
    input_signature,
    check_array,
    load_inputs,
    parse_input_specs,
    read_array,
)


def stream(t, name: str = "x"):
    return input_signature(name, t, per_tick=True)


def whole(t, name: str = "x"):
    return input_signature(name, t, per_tick=False)


def rejects(sig, values, path: str = "in.npy") -> str:
    with pytest.raises(InputError) as info:
        check_array(sig, np.asarray(values), path)
    (line,) = info.value.lines
    return line


@pytest.mark.parametrize("t, lo, hi", [(i8, -128, 127), (i32, -2**31, 2**31 - 1),
                                       (i64, -2**63, 2**63 - 1)])
def test_integer_bounds_are_exact(t, lo, hi):
    sig = stream(t)
    out = check_array(sig, np.array([lo, hi], dtype=np.int64 if t != i64 else np.int64), "a.npy")
    assert out.tolist() == [lo, hi] and out.dtype == np.dtype(f"int{t.width.data}")
    if t != i64:
        assert "out of range" in rejects(sig, np.array([hi + 1], np.int64))
        assert "out of range" in rejects(sig, np.array([lo - 1], np.int64))
    # A float just past the bound is refused, also for i64 where float(max) rounds up.
    assert f"{float(hi + 1)} at index [0], out of range for i{t.width.data}" in rejects(
        sig, np.array([float(hi + 1)]))


def test_integral_floats_are_accepted_for_integers():
    assert check_array(stream(i32), np.array([3.0, -4.0]), "a.csv").tolist() == [3, -4]


@pytest.mark.parametrize("value, problem", [(2.5, "2.5 at index [1], not an integer"),
                                            (np.nan, "nan at index [1], not an integer"),
                                            (np.inf, "inf at index [1], not an integer")])
def test_non_integers_are_refused(value, problem):
    assert rejects(stream(i32), [1.0, value]).endswith("got " + problem)


def test_booleans_are_zero_or_one():
    assert check_array(stream(i1), np.array([0, 1, 1]), "b.csv").tolist() == [False, True, True]
    assert rejects(stream(i1), [0, -1]).endswith("got -1 at index [1], not 0 or 1")


def test_floats_keep_nan_but_refuse_overflow():
    out = check_array(stream(f32), np.array([np.nan, 3.4e38]), "f.npy")
    assert np.isnan(out[0]) and out[1] == np.float32(3.4e38)
    assert rejects(stream(f32), [1.0, 3.5e39]).endswith("got 3.5e+39 at index [1], "
                                                       "out of range for f32")


@pytest.mark.parametrize("values, what", [
    (np.array(["1", "2"]), "an array of strings"),
    (np.array([b"1"]), "an array of byte strings"),
    (np.array([1 + 1j]), "an array of complex numbers"),
    (np.zeros(2, dtype=[("a", "i4")]), "an array of structured records"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "an array of dates"),
    (np.array(7), "a 0-d array (a single value)"),
])
def test_non_numeric_and_0d_arrays_are_refused(values, what):
    assert rejects(stream(i32), values) == (
        f"in.npy: error: input 'x' expects i32 values, one per tick (shape [ticks]); got {what}")


def test_tensor_streams_need_the_exact_shape():
    sig = stream(TensorType(f32, [2, 3]))
    assert check_array(sig, np.ones((5, 2, 3)), "t.npy").shape == (5, 2, 3)
    assert rejects(sig, np.ones((5, 3, 2))) == (
        "in.npy: error: input 'x' expects tensor<2x3xf32> values, one per tick "
        "(shape [ticks, 2, 3]); got an array of shape [5, 3, 2]")
    assert "got an array of shape [5, 6]" in rejects(sig, np.ones((5, 6)))


def test_csv_rows_hold_flattened_tensors():
    sig = stream(TensorType(f32, [2, 3]))
    rows = np.arange(12.0).reshape(2, 6)
    out = check_array(sig, rows, "t.csv")
    assert out.shape == (2, 2, 3) and out[1, 1, 2] == 11.0
    assert "got an array of shape [2, 4]" in rejects(sig, np.ones((2, 4)), "t.csv")


def test_dynamic_dims_take_any_size():
    sig = whole(TensorType(f32, [-1, 4]))
    assert sig.shape_text() == "[?, 4]"
    assert check_array(sig, np.ones((7, 4)), "w.npy").shape == (7, 4)
    assert "got an array of shape [7, 5]" in rejects(sig, np.ones((7, 5)))


def test_function_arguments_are_whole_tensors():
    sig = whole(TensorType(Float32Type(), [1, 4]))
    assert sig.describe() == "a tensor<1x4xf32> (shape [1, 4])"
    assert check_array(sig, np.ones((1, 4), np.float64), "w.npy").dtype == np.float32


def test_specs_are_checked():
    assert parse_input_specs(["a=x.npy", "%b=y=z.csv"]) == {"a": "x.npy", "b": "y=z.csv"}
    for bad in (["a"], ["=x.npy"], ["a="]):
        with pytest.raises(UsageError, match="--input expects NAME=FILE"):
            parse_input_specs(bad)
    with pytest.raises(UsageError, match="^--input 'a' is given twice$"):
        parse_input_specs(["a=x", "a=y"])


def test_files_are_read_without_unpickling(tmp_path: Path):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(3))
    assert read_array(str(good), "x").tolist() == [0, 1, 2]
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([1, None], dtype=object))
    with pytest.raises(InputError, match="Object arrays cannot be loaded"):
        read_array(str(obj), "x")
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"\x93NUMPY\x01\x00garbage")
    with pytest.raises(InputError, match="cannot read input 'x'"):
        read_array(str(junk), "x")
    words = tmp_path / "words.csv"
    words.write_text("1\nzwei\n")
    with pytest.raises(InputError, match="cannot read input 'x'"):
        read_array(str(words), "x")


def test_unknown_names_are_usage_errors(tmp_path: Path):
    path = tmp_path / "a.csv"
    path.write_text("1\n2\n")
    sigs = [stream(IntegerType(32), "a"), stream(i1, "b")]
    assert load_inputs([f"a={path}"], sigs, "@n")["a"].tolist() == [1, 2]
    with pytest.raises(UsageError, match=r"^--input: @n has no input 'c' \(inputs: 'a', 'b'\)$"):
        load_inputs([f"c={path}"], sigs, "@n")
