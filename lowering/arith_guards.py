"""Defined integer arithmetic for code that runs on IREE: the rules of `dialects/semantics/integers.py`.

MLIR leaves a division by zero undefined and `INT_MIN / -1` poison; on IREE's VM a scalar
`arith.divsi` by zero kills the process with SIGFPE, and a scalar `arith.fptosi` rounds to the
nearest integer (the VM's `vm.cast.f32.si32`) where MLIR truncates.  `convert-sync-to-std` runs
these patterns on the functions it emits, so every IREE path computes what the reactive
runtimes compute:

- a scalar `divsi` / `remsi` / `floordivsi` / `ceildivsi` / `divui` / `remui` first asserts its
  divisor is not zero (`cf.assert`, whose message names the op and its source location: IREE
  reports it as a failed call, which the driver turns into `tick t: integer division by zero
  (arith.divsi at prog.lus:3:7)`), then divides by a divisor made 1 where it is 0 or where the
  signed division overflows (`INT_MIN / -1`: `INT_MIN / 1 = INT_MIN`, the wrapped quotient;
  `INT_MIN % 1 = 0`): no trap is left for the hardware;
- a scalar shift by the width or more gives 0 (`shli`, `shrui`) or the sign (`shrsi`), as
  shifting one bit at a time would (LLVM: poison; x86 shifts by the amount modulo the width);
- a scalar `fptosi` converts `x < 0 ? ceil(x) : floor(x)`, an integral value the VM's rounding
  keeps (`int(2.9) = 2`, `int(-2.9) = -2`).

Example (the guard of `%q = arith.divsi %a, %b : i32`):

```text
%nz = arith.cmpi ne, %b, %c0 : i32
cf.assert %nz, "integer division by zero (arith.divsi at prog.lus:3:7)"
%bad = arith.ori %is0, %overflow : i1       // b == 0, or a == INT_MIN and b == -1
%b1 = arith.select %bad, %c1, %b : i32
%q = arith.divsi %a, %b1 : i32
```
"""

from __future__ import annotations

from xdsl.dialects import arith, cf, math
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Operation, Region
from xdsl.pattern_rewriter import (GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker,
                                   RewritePattern, op_type_rewrite_pattern)

from steplus.dialects.semantics.errors import located
from steplus.dialects.semantics.integers import DIVISION_BY_ZERO

_SIGNED = (arith.DivSIOp, arith.RemSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp)
_UNSIGNED = (arith.DivUIOp, arith.RemUIOp)
_SHIFTS = (arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp)


class GuardIntegerDivision(RewritePattern):
    """A scalar integer division or remainder: assert a nonzero divisor, never trap (module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, _SIGNED + _UNSIGNED):
            return
        t = op.results[0].type
        if not isinstance(t, IntegerType) or t.width.data < 2:
            return
        a, b = op.operands
        width = t.width.data
        zero = arith.ConstantOp(IntegerAttr(0, t))
        one = arith.ConstantOp(IntegerAttr(1, t))
        is0 = arith.CmpiOp(b, zero, "eq")
        nonzero = arith.CmpiOp(b, zero, "ne")
        check = cf.AssertOp(nonzero, f"{DIVISION_BY_ZERO} {located(op)}")
        new: list[Operation] = [zero, one, is0, nonzero, check]
        bad = is0
        if isinstance(op, _SIGNED):
            lowest = arith.ConstantOp(IntegerAttr(-(1 << (width - 1)), t))
            minus1 = arith.ConstantOp(IntegerAttr(-1, t))
            a_low = arith.CmpiOp(a, lowest, "eq")
            b_m1 = arith.CmpiOp(b, minus1, "eq")
            overflow = arith.AndIOp(a_low, b_m1)
            bad = arith.OrIOp(is0, overflow)
            new += [lowest, minus1, a_low, b_m1, overflow, bad]
        divisor = arith.SelectOp(bad, one, b)
        div = type(op).create(operands=[a, divisor.result], result_types=[t],
                              properties=dict(op.properties), attributes=dict(op.attributes))
        div.location = op.location
        for o in new:
            o.location = op.location
        names = ["zero", "one", "is_zero", "nonzero", ""]
        if isinstance(op, _SIGNED):
            names += ["int_min", "minus_one", "a_is_min", "b_is_minus_one", "overflow", "bad_divisor"]
        _name([*new, divisor], [*names, "divisor"])
        rewriter.replace(op, [*new, divisor, div])  # the division keeps the op's result name


class DefinedShift(RewritePattern):
    """A scalar shift by the width or more gives what shifting one bit at a time would (0, or the
    sign for `shrsi`), as `integers.py` defines it; LLVM's shift is poison there."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, _SHIFTS):
            return
        t = op.results[0].type
        if not isinstance(t, IntegerType) or t.width.data < 2:
            return
        a, amount = op.operands
        width = arith.ConstantOp(IntegerAttr(t.width.data, t))
        top = arith.ConstantOp(IntegerAttr(t.width.data - 1, t))
        big = arith.CmpiOp(amount, width, "uge")
        inside = arith.SelectOp(big, top, amount)  # an amount the hardware shifts by
        shift = type(op).create(operands=[a, inside.result], result_types=[t],
                                properties=dict(op.properties), attributes=dict(op.attributes))
        new: list[Operation] = [width, top, big, inside, shift]
        if isinstance(op, arith.ShRSIOp):  # by width - 1: the sign in every bit
            result: Operation = shift
        else:
            zero = arith.ConstantOp(IntegerAttr(0, t))
            result = arith.SelectOp(big, zero, shift)
            new += [zero, result]
        for o in new:
            o.location = op.location
        _name(new[:-1], ["width", "top_bit", "too_far", "amount", "shifted", "zero"][:len(new) - 1])
        rewriter.replace(op, new)  # the last op's result keeps the op's name


class TruncatingFPToSI(RewritePattern):
    """A scalar `arith.fptosi` of an integral value (`x < 0 ? ceil(x) : floor(x)`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FPToSIOp, rewriter: PatternRewriter) -> None:
        t = op.input.type
        if not isinstance(t, AnyFloat):
            return
        zero = arith.ConstantOp(FloatAttr(0.0, t))
        down = math.FloorOp(op.input)
        up = math.CeilOp(op.input)
        negative = arith.CmpfOp(op.input, zero, "olt")
        whole = arith.SelectOp(negative, up, down)
        conv = arith.FPToSIOp(whole.result, op.result.type)
        for o in (zero, down, up, negative, whole, conv):
            o.location = op.location
        _name([zero, down, up, negative, whole], ["zero", "down", "up", "negative", "truncated"])
        rewriter.replace(op, [zero, down, up, negative, whole, conv])


def _name(ops: list[Operation], names: list[str]) -> None:
    """Name the guard's values (the printer numbers repeats), so only the replaced op's
    result keeps the op's own name."""
    for o, n in zip(ops, names):
        for r in o.results:
            r.name_hint = n or None


def guard_integer_arithmetic(region: Region) -> None:
    """Apply the patterns once to every op of `region` (the ops they create are not revisited)."""
    PatternRewriteWalker(GreedyRewritePatternApplier([GuardIntegerDivision(), DefinedShift(), TruncatingFPToSI()]),
                         apply_recursively=False).rewrite_region(region)
