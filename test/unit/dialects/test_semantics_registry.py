"""The op-semantics registry (dialects/semantics): dispatch by op class, and MLIR's integer rules
(integers.py) against a closed-form reference in Python's unbounded integers."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, tosa
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation
from xdsl.utils.test_value import create_ssa_value

from steplus.dialects import linalg_ext
from steplus.dialects.semantics import (ArithSemantics, IntegerDivisionByZero, NumpyDomain, TensorSemantics,
                                        TypedNumpyDomain, impl, register_semantics)
from steplus.dialects.semantics import integers

I64 = IntegerType(64)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _reference(kind: str, a: int, b: int, bits: int) -> int:
    """MLIR's meaning (steplus' choice where MLIR says poison: wrapping, shifts of >= bits)."""
    u = (1 << bits) - 1
    if kind == "divsi":
        return _wrap(_trunc_div(a, b), bits)
    if kind == "remsi":
        return _wrap(a - _trunc_div(a, b) * b, bits)
    if kind == "floordivsi":
        return _wrap(a // b, bits)
    if kind == "ceildivsi":
        return _wrap(-((-a) // b), bits)
    if kind == "divui":
        return _wrap((a & u) // (b & u), bits)
    if kind == "remui":
        return _wrap((a & u) % (b & u), bits)
    k = b & u
    if kind == "shli":
        return 0 if k >= bits else _wrap(a << k, bits)
    if kind == "shrsi":
        return (-1 if a < 0 else 0) if k >= bits else a >> k
    return 0 if k >= bits else _wrap((a & u) >> k, bits)  # shrui


KINDS = ["divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "shli", "shrsi", "shrui"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bits", [8, 32, 64])
def test_integer_primitive_matches_the_closed_form(kind, bits):
    rng = np.random.default_rng(bits)
    dt = np.dtype(f"int{bits}")
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    a = np.concatenate([rng.integers(lo, hi, 300, dtype=dt, endpoint=True),
                        np.array([lo, hi, -7, 7, -1, 0, lo, 1], dt)])
    if kind.startswith("sh"):
        b = np.concatenate([rng.integers(0, bits, 300, dtype=dt), np.array([bits, bits + 1, -1, 0, 1, 3, 0, 2], dt)])
    else:
        b = np.concatenate([rng.integers(-40, 40, 300, dtype=dt), np.array([-1, 3, 2, -2, 5, 7, -1, lo], dt)])
        b[b == 0] = 3
    got = integers.INTEGER_BINARY[kind](a, b)
    assert got.dtype == dt
    want = [_reference(kind, int(x), int(y), bits) for x, y in zip(a, b)]
    assert got.tolist() == want
    # a scalar gives a scalar of the same type
    s = integers.INTEGER_BINARY[kind](a[0], b[0])
    assert isinstance(s, np.integer) and s.dtype == dt and int(s) == want[0]


def test_division_examples_follow_mlir():
    d, r = integers.divsi, integers.remsi
    assert int(d(np.int32(-7), np.int32(2))) == -3  # arith.divsi truncates (floor would be -4)
    assert int(r(np.int32(-7), np.int32(2))) == -1  # the sign of the dividend
    assert int(integers.floordivsi(np.int32(-7), np.int32(2))) == -4
    assert int(integers.ceildivsi(np.int32(7), np.int32(2))) == 4
    low = np.int32(-2**31)
    assert int(d(low, np.int32(-1))) == -2**31 and int(r(low, np.int32(-1))) == 0  # wraps
    big = np.int64(2**53 + 1)  # not representable in float64
    assert int(d(big, np.int64(1))) == 2**53 + 1
    assert int(d(np.int64(2**62 + 3), np.int64(3))) == (2**62 + 3) // 3


@pytest.mark.parametrize("kind", ["divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui"])
def test_division_by_zero_is_an_error_not_a_value(kind):
    with pytest.raises(IntegerDivisionByZero, match="by zero"):
        integers.INTEGER_BINARY[kind](np.array([1, 2], np.int32), np.array([1, 0], np.int32))


def _op(cls: type[Operation], t=i32) -> Operation:
    a, b = create_ssa_value(t), create_ssa_value(t)
    return cls(a, b)


def test_arith_ops_dispatch_on_their_class_in_the_typed_domain():
    sem = ArithSemantics(TypedNumpyDomain())
    assert sem.apply(_op(arith.DivSIOp), [np.int32(-7), np.int32(2)]) == [np.int32(-3)]
    [s] = sem.apply(_op(arith.AddiOp), [np.int32(2**31 - 1), np.int32(1)])
    assert s == np.int32(-2**31) and s.dtype == np.int32  # i32 wraps
    [q] = sem.apply(_op(arith.DivSIOp, I64), [np.int64(2**53 + 1), np.int64(1)])
    assert q == 2**53 + 1 and q.dtype == np.int64
    with pytest.raises(IntegerDivisionByZero):
        sem.apply(_op(arith.RemSIOp), [np.int32(1), np.int32(0)])


def test_tosa_intdiv_truncates_in_the_tensor_table():
    from steplus.dialects.tosa_ext import EXTRA_OPS

    intdiv = next(c for c in EXTRA_OPS if c.name == "tosa.intdiv")
    assert TensorSemantics.lookup(intdiv) is TensorSemantics.impls[intdiv]
    op = intdiv.create(operands=[create_ssa_value(i32), create_ssa_value(i32)], result_types=[i32])
    [q] = TensorSemantics(NumpyDomain()).apply(op, [np.array([-7, 7, -8], np.int64), np.array([2, -2, 3], np.int64)])
    assert q.tolist() == [-3, -3, -2]


def test_a_subclass_of_a_registered_op_class_finds_its_base_implementation():
    # steplus' linalg.matmul (MatmulOpWithMaps) subclasses xDSL's MatmulOp, registered once
    assert issubclass(linalg_ext.MatmulOpWithMaps, linalg.MatmulOp)
    assert TensorSemantics.lookup(linalg_ext.MatmulOpWithMaps) is TensorSemantics.impls[linalg.MatmulOp]
    assert ArithSemantics.lookup(linalg.MatmulOp) is None


def test_impl_takes_op_classes_only():
    with pytest.raises(TypeError, match="operation classes"):
        impl("tosa.add")  # pyright: ignore[reportArgumentType]

    @register_semantics
    class Doubling(TensorSemantics):
        @impl(tosa.AddOp)
        def add_twice(self, op, a):
            return [self.d.binary("add", self.d.binary("add", a[0], a[1]), a[1])]

    op = tosa.AddOp.create(operands=[create_ssa_value(i32), create_ssa_value(i32)], result_types=[i32])
    x, y = np.float32([1, 2]), np.float32([10, 20])
    np.testing.assert_array_equal(Doubling(NumpyDomain()).apply(op, [x, y])[0], [21, 42])
    np.testing.assert_array_equal(TensorSemantics(NumpyDomain()).apply(op, [x, y])[0], [11, 22])
