# pyright: strict
"""The meaning of the scalar `arith` and `math` ops, written once over any value domain.

`ArithSemantics` holds one `@impl` per op class (or family): float arithmetic (`arith.addf`,
...), integer arithmetic with MLIR's division, remainder and shift rules (`integers.py`),
comparisons, `arith.select`, casts and the `math` functions.  Each result goes through the
domain's `typed(value, result type)`: the float32 domain of isel and step-run leaves it as is,
the typed domain of the reactive runtimes casts it to the op's own type (i32 wraps at 32 bits).
The same methods evaluate `linalg.generic` bodies (`generic.py`) and, through
`TensorSemantics`, the scalar ops of tensor programs.

Example::

    sem = ArithSemantics(TypedNumpyDomain())
    sem.apply(divsi_op, [np.int32(-7), np.int32(2)])   # [np.int32(-3)]
"""

# pyright: strict

from __future__ import annotations

from typing import Any, cast

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import Operation

from steplus.dialects.semantics.constants import ConstantError, constant_array
from steplus.dialects.semantics.registry import Semantics, SemanticsError, impl, register_semantics

Values = list[Any]

FLOAT_BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "add", arith.SubfOp: "sub", arith.MulfOp: "mul", arith.DivfOp: "div",
    arith.MaximumfOp: "max", arith.MinimumfOp: "min", arith.MaxnumfOp: "maxnum", arith.MinnumfOp: "minnum",
    math.PowFOp: "pow",
}
INTEGER_BINARY: dict[type[Operation], str] = {
    arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul", arith.AndIOp: "and", arith.OrIOp: "or",
    arith.XOrIOp: "xor", arith.MaxSIOp: "max", arith.MinSIOp: "min", arith.DivSIOp: "divsi",
    arith.RemSIOp: "remsi", arith.FloorDivSIOp: "floordivsi", arith.CeilDivSIOp: "ceildivsi",
    arith.DivUIOp: "divui", arith.RemUIOp: "remui", arith.ShLIOp: "shli", arith.ShRSIOp: "shrsi",
    arith.ShRUIOp: "shrui",
}
UNARY: dict[type[Operation], str] = {
    arith.NegfOp: "neg", math.ExpOp: "exp", math.TanhOp: "tanh", math.SqrtOp: "sqrt", math.RsqrtOp: "rsqrt",
    math.AbsFOp: "abs", math.LogOp: "log", math.ErfOp: "erf", math.FloorOp: "floor", math.CeilOp: "ceil",
    math.CosOp: "cos", math.SinOp: "sin",
}
CONVERT: dict[type[Operation], str] = {
    arith.TruncFOp: "float", arith.ExtFOp: "float", arith.SIToFPOp: "float", arith.UIToFPOp: "ufloat",
    arith.FPToSIOp: "int", arith.IndexCastOp: "index", arith.ExtSIOp: "index", arith.TruncIOp: "index",
    arith.ExtUIOp: "uint",
}
# arith.cmpi predicates eq ne slt sle sgt sge ult ule ugt uge (the last four compare unsigned)
CMPI = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]
# arith.cmpf predicate codes; ordered and unordered agree here (false/ord/uno/true are not supported)
CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!=", 8: "==", 9: ">", 10: ">=", 11: "<", 12: "<=", 13: "!="}


def _predicate(op: Operation) -> int:
    pred = op.properties.get("predicate")
    if not isinstance(pred, IntegerAttr):
        raise SemanticsError(f"'{op.name}' has no predicate", op)
    return int(cast(IntegerAttr[IntegerType], pred).value.data)


@register_semantics
class ArithSemantics(Semantics):
    """The scalar (and elementwise) meaning of `arith` / `math` ops over `self.d` (see module doc)."""

    # the largest constant built (elements); None: unbounded
    max_elements: int | None = None

    def _typed(self, op: Operation, v: Any) -> Values:
        return [self.d.typed(v, op.results[0].type)]

    @impl(arith.ConstantOp)
    def constant(self, op: Operation, a: Values) -> Values:
        try:
            arr = constant_array(op, self.max_elements)
        except ConstantError as e:
            raise SemanticsError(str(e), op) from None
        return self._typed(op, self.d.lift(arr, f"'{op.name}'"))

    @impl(*FLOAT_BINARY)
    def float_binary(self, op: Operation, a: Values) -> Values:
        return self._typed(op, self.d.binary(FLOAT_BINARY[type(op)], a[0], a[1]))

    @impl(*INTEGER_BINARY)
    def integer_binary(self, op: Operation, a: Values) -> Values:
        return self._typed(op, self.d.integer(INTEGER_BINARY[type(op)], a[0], a[1]))

    @impl(*UNARY)
    def unary(self, op: Operation, a: Values) -> Values:
        return self._typed(op, self.d.unary(UNARY[type(op)], a[0]))

    @impl(math.FPowIOp)
    def fpowi(self, op: Operation, a: Values) -> Values:
        return self._typed(op, self.d.binary("pow", a[0], self.d.convert("float", a[1])))

    @impl(*CONVERT)
    def convert(self, op: Operation, a: Values) -> Values:
        return self._typed(op, self.d.convert(CONVERT[type(op)], a[0]))

    @impl(arith.CmpiOp)
    def cmpi(self, op: Operation, a: Values) -> Values:
        pred = _predicate(op)
        x, y = (self.d.unsigned(a[0]), self.d.unsigned(a[1])) if pred >= 6 else (a[0], a[1])
        return [self.d.compare(CMPI[pred], x, y)]

    @impl(arith.CmpfOp)
    def cmpf(self, op: Operation, a: Values) -> Values:
        pred = _predicate(op)
        if pred not in CMPF:
            raise SemanticsError(f"'arith.cmpf' predicate {pred} is not supported", op)
        return [self.d.compare(CMPF[pred], a[0], a[1])]

    @impl(arith.SelectOp)
    def select(self, op: Operation, a: Values) -> Values:
        return [self.d.select(a[0], a[1], a[2])]
