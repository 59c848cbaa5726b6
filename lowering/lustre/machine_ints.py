"""Kind 2 machine integers: `int8` ... `int64`, `uint8` ... `uint64`.

A value of type `intN` / `uintN` is an MLIR `iN` (signless: the bits), and
arithmetic wraps modulo 2^N as in Kind 2 (`(uint8 255) + (uint8 1) = (uint8 0)`,
`(int8 127) + (int8 1) = (int8 -128)`). Signedness decides division and
remainder (`arith.divsi`/`remsi` or `divui`/`remui`, truncating), the
comparisons (`slt` or `ult` ...) and the conversions:

- `(uintN e)` / `(intN e)` of an `int` or another machine integer keeps the low N
  bits (`arith.trunci`) or extends the value (`extsi` from a signed type,
  `extui` from an unsigned one): `(uint8 300) = (uint8 44)`, `(int8 200) = (int8 -56)`;
- `int e` / `real e` of a machine integer is its value as an int (i32; an
  `int64` or `uint32` outside the int range wraps) or a real;
- `&&`, `||`, `!` are the bitwise and, or and complement; `+ - * div mod`, unary
  `-` and the comparisons need both operands of the same machine type.

An input of type `uintN` is given to step-run, and an output printed, as the
signed integer of the same N bits (`uint8` 255 is -1): steplus's runtimes
carry the bits, not the signedness.

Example::

    node top(x: int) returns (y: int8);
    let
      y = (int8 x) + (int8 4);   -- wraps: x = 125 gives -127
    tel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, f32
from xdsl.ir import SSAValue

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering

MACHINE_INTS: dict[str, tuple[int, bool]] = {
    f"{'u' if u else ''}int{w}": (w, not u) for u in (False, True) for w in (8, 16, 32, 64)}
"""Machine integer type -> (width, signed)."""

_INTS = {"int": (32, True), **MACHINE_INTS}
_OPS = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "&&": arith.AndIOp,
        "||": arith.OrIOp}
_SIGNED_OPS = {"/": arith.DivSIOp, "div": arith.DivSIOp, "mod": arith.RemSIOp}
_UNSIGNED_OPS = {"/": arith.DivUIOp, "div": arith.DivUIOp, "mod": arith.RemUIOp}
_CMP = {"=": "eq", "<>": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def wrap(value: int, ltype: str) -> int:
    """`value` modulo 2^N, as the signed N-bit integer of the same bits."""
    width, _ = MACHINE_INTS[ltype]
    v = value & ((1 << width) - 1)
    return v - (1 << width) if v >= 1 << (width - 1) else v


def constant(low: NodeLowering, value: int, ltype: str, pos: int) -> SSAValue:
    v = low.emit(arith.ConstantOp(IntegerAttr(wrap(int(value), ltype),
                                              IntegerType(MACHINE_INTS[ltype][0]))), pos)
    low.tag(v, ltype)
    return v


def convert(low: NodeLowering, e: ast.Unary, v: SSAValue) -> SSAValue:
    """`(intN v)`, `(uintN v)`, `int v`, `real v` with machine integers."""
    src, dst = low.lt(v), e.op
    if dst == "real":
        op = arith.SIToFPOp if _INTS[src][1] else arith.UIToFPOp
        return low.emit(op(v, f32), e.pos)
    if src == "real":
        if dst == "int":
            raise LustreError(e.pos, "internal: int of real")  # pragma: no cover
        out = low.emit(arith.FPToSIOp(v, IntegerType(_INTS[dst][0])), e.pos)
        low.tag(out, dst)
        return out
    if src not in _INTS:
        raise LustreError(e.pos, f"'{dst}' cannot be applied to {src}")
    (ws, signed), (wd, _) = _INTS[src], _INTS[dst]
    if ws == wd:
        out = v
    elif wd < ws:
        out = low.emit(arith.TruncIOp(v, IntegerType(wd)), e.pos)
    else:
        out = low.emit((arith.ExtSIOp if signed else arith.ExtUIOp)(v, IntegerType(wd)), e.pos)
    if out is v and dst != src:  # same bits, another type: a new value to tag
        out = low.emit(arith.AddiOp(v, low.emit(arith.ConstantOp(
            IntegerAttr(0, IntegerType(wd))), e.pos)), e.pos)
    low.tag(out, dst)
    return out


def unary(low: NodeLowering, e: ast.Unary, v: SSAValue) -> SSAValue:
    """`-v` and `!v` on a machine integer."""
    t = low.lt(v)
    if e.op == "-":
        out = low.emit(arith.SubiOp(constant(low, 0, t, e.pos), v), e.pos)
    elif e.op == "!":
        out = low.emit(arith.XOrIOp(v, constant(low, -1, t, e.pos)), e.pos)
    else:
        raise LustreError(e.pos, f"'{e.op}' cannot be applied to {t}")
    low.tag(out, t)
    return out


def binary(low: NodeLowering, e: ast.Binary, a: SSAValue, b: SSAValue) -> SSAValue:
    """An arithmetic, bitwise or comparison operator on two machine integers."""
    t = low.lt(a)
    _, signed = MACHINE_INTS[t]
    op = e.op
    if op in _CMP:
        pred = _CMP[op] if op in ("=", "<>") else ("s" if signed else "u") + _CMP[op]
        return low.emit(arith.CmpiOp(a, b, pred), e.pos)
    cls = _OPS.get(op) or (_SIGNED_OPS if signed else _UNSIGNED_OPS).get(op)
    if cls is None:
        raise LustreError(e.pos, f"'{op}' cannot be applied to {t}")
    out = low.emit(cls(a, b), e.pos)
    low.tag(out, t)
    return out
