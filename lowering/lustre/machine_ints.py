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

Kind 2's bit-vectors `uint<n>` / `int<n>` (1 <= n <= 64) are held in the
smallest of i8, i16, i32, i64 that fits them and reduced to their n bits
(masked, or sign-extended by `((v & mask) ^ sign) - sign`) at the inputs and
after every operation; `a ++ b` concatenates, `a[hi:lo]` extracts bits.

An input of type `uintN` is given to step-run as the signed integer of the
same N bits (`uint8` 255 is -1): steplus's runtimes carry the bits, not the
signedness; step-run prints and saves an output of type `uintN` / `uint<n>`
unsigned (255), from the node's `lustre.unsigned_outputs` attribute.

Example::

    node top(x: int) returns (y: int8);
    let
      y = (int8 x) + (int8 4);   -- wraps: x = 125 gives -127
    tel
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xdsl.dialects import arith
import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, IntegerType, f32, i64
from xdsl.ir import Operation, SSAValue

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering

_BITVEC = re.compile(r"(u?)int<([0-9]+)>")


def _bitvec(name: object) -> tuple[int, bool, int] | None:
    """(container width, signed, bits) of a bit-vector type `uint<n>` / `int<n>`."""
    m = _BITVEC.fullmatch(name) if isinstance(name, str) else None
    if m is None or not 1 <= int(m.group(2)) <= 64:
        return None
    n = int(m.group(2))
    return next(w for w in (8, 16, 32, 64) if w >= n), m.group(1) == "", n


class _MachineInts(dict[str, tuple[int, bool]]):
    """Machine integer type -> (MLIR width, signed): `int8` ... `uint64`, and
    Kind 2's bit-vectors `uint<n>` / `int<n>` (1 <= n <= 64) in the smallest of
    i8, i16, i32, i64 holding them."""

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or _bitvec(key) is not None

    def __missing__(self, key: str) -> tuple[int, bool]:
        bv = _bitvec(key)
        if bv is None:
            raise KeyError(key)
        return bv[0], bv[1]


MACHINE_INTS = _MachineInts({
    f"{'u' if u else ''}int{w}": (w, not u) for u in (False, True) for w in (8, 16, 32, 64)})
"""Machine integer type -> (width, signed)."""


def bits(ltype: str) -> int:
    """The number of bits of a machine integer type (n of `uint<n>`)."""
    bv = _bitvec(ltype)
    return bv[2] if bv is not None else MACHINE_INTS[ltype][0]


def normalize(low: NodeLowering, v: SSAValue, ltype: str, pos: int) -> SSAValue:
    """A bit-vector `uint<n>` / `int<n>` held in a wider iW: its value modulo 2^n,
    zero- or sign-extended to W bits (machine integers of a full width: v)."""
    width, signed = MACHINE_INTS[ltype]
    n = bits(ltype)
    if n == width:
        return v
    t = IntegerType(width)
    mask = low.emit(arith.ConstantOp(IntegerAttr(_signed((1 << n) - 1, width), t)), pos)
    out = low.emit(arith.AndIOp(v, mask), pos)
    if signed:  # ((v & mask) ^ sign) - sign: no shift (IREE's VM widens i8/i16 shifts)
        sign = low.emit(arith.ConstantOp(IntegerAttr(_signed(1 << (n - 1), width), t)), pos)
        out = low.emit(arith.SubiOp(low.emit(arith.XOrIOp(out, sign), pos), sign), pos)
    low.tag(out, ltype)
    return out


def _signed(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >= 1 << (width - 1) else v


def normalize_inputs(low: NodeLowering) -> None:
    """Bit-vector inputs reduced to their n bits on entry (every value of a
    `uint<n>` is then in 0 .. 2^n - 1, of an `int<n>` in -2^(n-1) .. 2^(n-1) - 1)."""
    for d in low.ast.inputs:
        t = low.ltypes.get(d.name, "")
        if _bitvec(t) is not None and d.name in low.env:
            low.env[d.name] = normalize(low, low.env[d.name], t, d.pos)


def bits_op(low: NodeLowering, e: ast.BitConcat | ast.BitExtract) -> SSAValue:
    """`a ++ b` (a's bits above b's, of `uint<na + nb>`) and `a[hi:lo]` (bits
    hi down to lo of a, of `uint<hi - lo + 1>`), on unsigned machine integers."""
    args = [e.lhs, e.rhs] if isinstance(e, ast.BitConcat) else [e.arg]
    vals = [low.expr1(a) for a in args]
    for a, v in zip(args, vals):
        t = low.lt(v)
        if t not in MACHINE_INTS or MACHINE_INTS[t][1]:
            raise LustreError(a.pos, f"'{'++' if len(args) == 2 else '[:]'}' needs an "
                              f"unsigned machine integer, not {t}")
    if isinstance(e, ast.BitConcat):
        na, nb = bits(low.lt(vals[0])), bits(low.lt(vals[1]))
        if na + nb > 64:
            raise LustreError(e.pos, f"'++' gives {na + nb} bits, more than 64")
        out_t = f"uint<{na + nb}>"
        w = MACHINE_INTS[out_t][0]
        a, b = (_resize(low, v, w, False, e.pos) for v in vals)
        shift = low.emit(arith.ConstantOp(IntegerAttr(nb, IntegerType(w))), e.pos)
        out = low.emit(arith.OrIOp(low.emit(arith.ShLIOp(a, shift), e.pos), b), e.pos)
    else:
        n = bits(low.lt(vals[0]))
        if not 0 <= e.lo <= e.hi < n:
            raise LustreError(e.pos, f"bits [{e.hi}:{e.lo}] out of a {n}-bit value")
        out_t = f"uint<{e.hi - e.lo + 1}>"
        src_w = MACHINE_INTS[low.lt(vals[0])][0]
        shift = low.emit(arith.ConstantOp(IntegerAttr(e.lo, IntegerType(src_w))), e.pos)
        moved = low.emit(arith.ShRUIOp(vals[0], shift), e.pos)
        out = _resize(low, moved, MACHINE_INTS[out_t][0], False, e.pos)
    low.tag(out, out_t)
    return normalize(low, out, out_t, e.pos)


def _resize(low: NodeLowering, v: SSAValue, width: int, signed: bool, pos: int) -> SSAValue:
    t = v.type
    assert isinstance(t, IntegerType)
    have = t.width.data
    if have == width:
        return v
    if have > width:
        return low.emit(arith.TruncIOp(v, IntegerType(width)), pos)
    return low.emit((arith.ExtSIOp if signed else arith.ExtUIOp)(v, IntegerType(width)), pos)

_INTS = {"int": (32, True), **MACHINE_INTS}
_OPS = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "&&": arith.AndIOp,
        "||": arith.OrIOp}
_SIGNED_OPS = {"/": arith.DivSIOp, "div": arith.DivSIOp, "mod": arith.RemSIOp}
_UNSIGNED_OPS = {"/": arith.DivUIOp, "div": arith.DivUIOp, "mod": arith.RemUIOp}
_CMP = {"=": "eq", "<>": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def wrap(value: int, ltype: str) -> int:
    """`value` modulo 2^n (n the type's bits), as held in its MLIR iW: the signed
    W-bit integer of the same bits (sign-extended first for an `int<n>`)."""
    width, signed = MACHINE_INTS[ltype]
    n = bits(ltype)
    v = value & ((1 << n) - 1)
    if signed and v >= 1 << (n - 1):
        v -= 1 << n
    return _signed(v, width)


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
    return normalize(low, out, dst, e.pos) if dst in MACHINE_INTS else out


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
    return normalize(low, out, t, e.pos)


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
    return normalize(low, out, t, e.pos)


UNSIGNED_OUTPUTS = "lustre.unsigned_outputs"
"""The discardable `lus.node` attribute listing its `uintN` / `uint<n>` outputs
as `[[index, bits], ...]`: step-run prints (and saves) them unsigned."""


def unsigned_outputs_attr(items: list[tuple[int, int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(k, i64), IntegerAttr(n, i64)]) for k, n in items])


def as_unsigned(node: Operation, outputs: list) -> list:
    """`outputs` (one column per output) with the unsigned outputs of `node`
    read as unsigned integers of their bits (the runtimes carry signless
    bits: `uint8` 255 comes back as -1)."""
    attr = node.attributes.get(UNSIGNED_OUTPUTS)
    if not isinstance(attr, ArrayAttr):
        return outputs
    out = list(outputs)
    for item in attr.data:
        if not (isinstance(item, ArrayAttr) and len(item.data) == 2
                and isinstance(k := item.data[0], IntegerAttr)
                and isinstance(n := item.data[1], IntegerAttr)):
            continue
        index, nbits = k.value.data, n.value.data
        if not 0 <= index < len(out) or not 1 <= nbits <= 64:
            continue
        width = next(w for w in (8, 16, 32, 64) if nbits <= w)
        utype = np.dtype(f"uint{width}")
        mask = utype.type((1 << nbits) - 1)
        out[index] = [v if not isinstance(v, int | np.integer) else
                      np.asarray(v).astype(f"int{width}").view(utype) & mask
                      for v in out[index]]
    return out
