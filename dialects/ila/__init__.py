"""The `ila` dialect: accelerator invocations and command streams.

Instruction selection (`isel`) replaces tensor computations by `ila.invoke`s
of accelerator functions (`flexasr.linear`, `flexasr.maxpool`, `vta.dense`,
`hlscnn.conv2d`, ...).  `ila-cancel-store-load` splits each invocation into
`ila.store` (host tensor into an accelerator buffer), `ila.compute` (the
operation on accelerator-resident data, typed `!ila.acc<"target", tensor>`) and
`ila.load`, and cancels a load immediately re-stored by the next invocation.
`convert-ila-to-commands` groups each chain into an `ila.fragment`: the command
stream of one accelerator, made of driver-level commands (`ila.cmd`, expanded
to MMIO with the run-time data) and constant MMIO commands (`ila.write`,
`ila.read`, `ila.wait_irq`).

Example:

```mlir
func.func @example(%x: tensor<16x784xf32>) {
  %y = ila.invoke "flexasr.maxpool"(%x) : (tensor<16x784xf32>) -> tensor<8x784xf32>
  %h = ila.store %x : tensor<16x784xf32> -> !ila.acc<"flexasr", tensor<16x784xf32>>
  func.return
}
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, StringAttr, TensorType
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator
from xdsl.utils.exceptions import VerifyException

from steplus.utils.attrs import int_values, shape_of

# accelerator function -> number of tensor operands
ACCEL_FUNCS: dict[str, int] = {
    "flexasr.linear": 3,
    "flexasr.maxpool": 1,
    "flexasr.meanpool": 1,
    "flexasr.lstm": 6,
    "flexasr.layernorm": 3,
    "flexasr.attention": 3,
    "hlscnn.conv2d": 2,
    "vta.dense": 2,
}
TARGETS = ("flexasr", "hlscnn", "vta")


def _check_callee(op: IRDLOperation, callee: str, nargs: int) -> None:
    if callee not in ACCEL_FUNCS:
        known = ", ".join(sorted(ACCEL_FUNCS))
        raise VerifyException(f"{op.name}: unknown accelerator function '{callee}' (known: {known})")
    if ACCEL_FUNCS[callee] != nargs:
        raise VerifyException(
            f"{op.name}: '{callee}' takes {ACCEL_FUNCS[callee]} operands, got {nargs}")


def _prod(dims) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _pool_shape(s):
    (x,) = s
    return None if len(x) != 2 or x[0] < 2 else (x[0] // 2, x[1])


def _dense_shape(s):
    x, w = s[0], s[1]
    ok = len(x) == 2 and len(w) == 2 and x[1] == w[1] and (len(s) == 2 or _prod(s[2]) == w[0])
    return (x[0], w[0]) if ok else None


def _lstm_shape(s):
    x, h, c, w, u, b = s
    if len(x) != 2 or len(w) != 2 or len(u) != 2:
        return None
    n = u[1]
    ok = w == (4 * n, x[1]) and u[0] == 4 * n and _prod(b) == 4 * n and _prod(h) == n and _prod(c) == n
    return (x[0] + 1, n) if ok else None


def _layernorm_shape(s):
    x, g, b = s
    return x if len(x) == 2 and _prod(g) == x[1] and _prod(b) == x[1] else None


def _attention_shape(s):
    q, k, v = s
    return (q[0], v[1]) if len(q) == 2 and len(k) == 2 and v == k and q[1] == k[1] else None


def _conv_shape(s, strides):
    x, w = s
    if len(x) != 4 or len(w) != 4 or x[1] != w[1] or len(strides) != 2 or min(strides) < 1:
        return None
    if x[2] < w[2] or x[3] < w[3]:
        return None
    return (x[0], w[0], (x[2] - w[2]) // strides[0] + 1, (x[3] - w[3]) // strides[1] + 1)


_SHAPE_RULES = {"flexasr.maxpool": _pool_shape, "flexasr.meanpool": _pool_shape, "flexasr.linear": _dense_shape,
                "vta.dense": _dense_shape, "flexasr.lstm": _lstm_shape, "flexasr.layernorm": _layernorm_shape,
                "flexasr.attention": _attention_shape}


def accel_result_shape(callee: str, shapes, attributes) -> tuple[int, ...] | None:
    """The result shape of accelerator function `callee` on operands of `shapes` (static), or
    None if the operands do not fit it (e.g. `vta.dense` on [M,K], [N,K] gives [M,N])."""
    shapes = [tuple(x) for x in shapes]
    if any(d < 0 for x in shapes for d in x):
        return None
    if callee == "hlscnn.conv2d":
        values = int_values(attributes.get("strides"))
        return _conv_shape(shapes, (1, 1) if values is None else values)
    return _SHAPE_RULES[callee](shapes)


def _check_shapes(op: IRDLOperation, callee: str, shapes, result) -> None:
    strides = op.attributes.get("strides")
    values = int_values(strides)
    if callee == "hlscnn.conv2d" and strides is not None and not (
            values is not None and len(values) == 2 and min(values) >= 1):
        raise VerifyException(f"{op.name}: '{callee}' strides must be two positive integers")
    if any(0 in tuple(x) for x in (*shapes, result)):  # the simulators reduce over rows
        raise VerifyException(f"{op.name}: '{callee}' on an empty tensor (shapes "
                              f"{', '.join(str(list(x)) for x in (*shapes, result))})")
    want = accel_result_shape(callee, shapes, op.attributes)
    if want is None:
        raise VerifyException(f"{op.name}: '{callee}' does not accept operands of shapes "
                              f"{', '.join(str(list(x)) for x in shapes)}")
    if tuple(result) != want:
        raise VerifyException(f"{op.name}: '{callee}' on these operands gives shape {list(want)}, "
                              f"not {list(result)}")


@irdl_attr_definition
class AccType(ParametrizedAttribute, TypeAttribute):
    """A tensor resident in an accelerator's buffer: `!ila.acc<"flexasr", tensor<...>>`."""

    name = "ila.acc"
    target: StringAttr = param_def()
    tensor: TensorType = param_def()

    def verify(self) -> None:
        if self.target.data not in TARGETS:
            raise VerifyException(f"!ila.acc: unknown target '{self.target.data}'")


def _acc_type(value: SSAValue) -> AccType:
    """The `!ila.acc` type of an operand the op's constraints have checked."""
    t = value.type
    if not isinstance(t, AccType):
        raise VerifyException(f"expected an !ila.acc value, got {t}")
    return t


@irdl_op_definition
class InvokeOp(IRDLOperation):
    """Invoke an accelerator function on host tensors.

    The callee names the target and the operation; extra attributes are its
    parameters.  Semantics: the float32 meaning of the operation, computed by
    the accelerator's ILA with its own numerics.

    Example:

    ```mlir
    func.func @example(%x: tensor<10x256xf32>, %w: tensor<64x256xf32>, %b: tensor<64xf32>) {
      %y = ila.invoke "flexasr.linear"(%x, %w, %b) : (tensor<10x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<10x64xf32>
      func.return
    }
    ```
    """

    name = "ila.invoke"
    callee = prop_def(StringAttr)
    """The accelerator function, `target.op` (e.g. `flexasr.linear`); its arity and shapes are checked."""
    args = var_operand_def()
    res = result_def(TensorType)
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: str, args, res_type: Attribute, attributes: dict | None = None):
        super().__init__(operands=[args], result_types=[res_type],
                         properties={"callee": StringAttr(callee)}, attributes=attributes or {})

    def verify_(self) -> None:
        _check_callee(self, self.callee.data, len(self.args))
        _check_shapes(self, self.callee.data, [shape_of(a) for a in self.args], self.res.type.get_shape())


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Store a host tensor into an accelerator buffer.

    Example:

    ```mlir
    func.func @example(%x: tensor<16x784xf32>) {
      %h = ila.store %x : tensor<16x784xf32> -> !ila.acc<"flexasr", tensor<16x784xf32>>
      func.return
    }
    ```
    """

    name = "ila.store"
    input = operand_def(TensorType)
    res = result_def(AccType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($res)"

    def verify_(self) -> None:
        if self.res.type.tensor != self.input.type:
            raise VerifyException("ila.store: the stored tensor type must match the !ila.acc tensor type")


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """Run an accelerator function on accelerator-resident data.

    Example:

    ```mlir
    func.func @example(%h: !ila.acc<"flexasr", tensor<16x784xf32>>) {
      %p = ila.compute "flexasr.maxpool"(%h) : (!ila.acc<"flexasr", tensor<16x784xf32>>) -> !ila.acc<"flexasr", tensor<8x784xf32>>
      func.return
    }
    ```
    """

    name = "ila.compute"
    callee = prop_def(StringAttr)
    """The accelerator function, `target.op`; its target must be the one of every `!ila.acc` operand and result."""
    args = var_operand_def(AccType)
    res = result_def(AccType)
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def verify_(self) -> None:
        _check_callee(self, self.callee.data, len(self.args))
        target = self.callee.data.split(".")[0]
        args = [_acc_type(a) for a in self.args]
        for t in (*args, self.res.type):
            if t.target.data != target:
                raise VerifyException(
                    f"ila.compute: '{self.callee.data}' operates on {target} data, got {t}")
        _check_shapes(self, self.callee.data, [t.tensor.get_shape() for t in args],
                      self.res.type.tensor.get_shape())


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Load an accelerator-resident tensor back to the host.

    Example:

    ```mlir
    func.func @example(%p: !ila.acc<"flexasr", tensor<1x784xf32>>) {
      %y = ila.load %p : !ila.acc<"flexasr", tensor<1x784xf32>> -> tensor<1x784xf32>
      func.return
    }
    ```
    """

    name = "ila.load"
    input = operand_def(AccType)
    res = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($res)"

    def verify_(self) -> None:
        if _acc_type(self.input).tensor != self.res.type:
            raise VerifyException("ila.load: the result type must match the !ila.acc tensor type")


@irdl_op_definition
class FragmentOp(IRDLOperation):
    """One accelerator's command stream, from host tensors to host tensors.

    The body's block arguments are the operands; it ends with `ila.yield` of
    the results.  It holds `ila.cmd`, `ila.write`, `ila.read`, `ila.wait_irq`.

    Example:

    ```mlir
    func.func @example(%x: tensor<2x16xf32>) {
      %y = ila.fragment "flexasr"(%x) : (tensor<2x16xf32>) -> tensor<1x16xf32> {
      ^bb0(%a: tensor<2x16xf32>):
        ila.cmd "store_act"(%a) {region = 0 : i64} : (tensor<2x16xf32>) -> ()
        ila.write 0x33400010, 0x1
        ila.wait_irq
        %r = ila.cmd "load_act"() {region = 0 : i64} : () -> tensor<1x16xf32>
        ila.yield %r : tensor<1x16xf32>
      }
      func.return
    }
    ```
    """

    name = "ila.fragment"
    target = prop_def(StringAttr)
    """The accelerator whose command stream this is (`flexasr`, `vta` or `hlscnn`)."""
    args = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove())
    assembly_format = "$target `(` $args `)` attr-dict `:` functional-type($args, $res) $body"

    def verify_(self) -> None:
        if self.target.data not in TARGETS:
            raise VerifyException(f"ila.fragment: unknown target '{self.target.data}'")
        block = self.body.block
        if tuple(a.type for a in block.args) != tuple(a.type for a in self.args):
            raise VerifyException("ila.fragment: block arguments must match the operands")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("ila.fragment: body must end with ila.yield")
        if tuple(v.type for v in last.values) != tuple(r.type for r in self.res):
            raise VerifyException("ila.fragment: yielded types must match the results")


@irdl_op_definition
class CmdOp(IRDLOperation):
    """A driver-level command, expanded to MMIO with the run-time data.

    Kinds: FlexASR `store_act`, `store_wgt`, `store_bias`, `linear_layer`,
    `lstm_layer`, `load_act`; VTA `store_inp`, `store_wgt`, `gemm`, `load_out`;
    HLSCNN `store_act`, `store_wgt`, `conv`, `load_out`.  Attributes carry the
    layout parameters.

    Example:

    ```mlir
    %y = ila.fragment "flexasr"() : () -> tensor<1x16xf32> {
      %r = ila.cmd "load_act"() {region = 0 : i64, timesteps = 1 : i64} : () -> tensor<1x16xf32>
      ila.yield %r : tensor<1x16xf32>
    }
    ```
    """

    name = "ila.cmd"
    kind = prop_def(StringAttr)
    """The driver command (e.g. `store_act`, `gemm`, `load_out`; the list above), expanded to MMIO writes at run time."""
    args = var_operand_def()
    res = var_result_def()
    traits = traits_def(HasParent(FragmentOp))
    assembly_format = "$kind `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def verify_(self) -> None:
        if self.kind.data == "concat":
            _verify_concat(self)


def _verify_concat(op: CmdOp) -> None:
    """`ila.cmd "concat"`: tensors of one rank joined along `axis` into its one result."""
    axis = op.attributes.get("axis")
    if not isinstance(axis, IntegerAttr) or isinstance(axis.type, IndexType):
        raise VerifyException("ila.cmd 'concat': needs the integer attribute 'axis'")
    types = [v.type for v in (*op.args, *op.res)]
    if not op.args or len(op.res) != 1 or not all(isinstance(t, TensorType) for t in types):
        raise VerifyException("ila.cmd 'concat': takes tensors and has one tensor result")
    shapes = [t.get_shape() for t in types if isinstance(t, TensorType)]
    rank, k = len(shapes[0]), axis.value.data
    if not 0 <= k < rank:
        raise VerifyException(f"ila.cmd 'concat': axis {k} of rank-{rank} tensors")
    want = [*shapes[0][:k], sum(sh[k] for sh in shapes[:-1] if len(sh) == rank), *shapes[0][k + 1:]]
    if any(len(sh) != rank or [*sh[:k], *sh[k + 1:]] != [*want[:k], *want[k + 1:]] for sh in shapes) \
            or list(shapes[-1]) != want:
        raise VerifyException(f"ila.cmd 'concat': operands of shapes "
                              f"{', '.join(str(list(sh)) for sh in shapes[:-1])} do not join "
                              f"along axis {k} into {list(shapes[-1])}")


class _MmioOp(IRDLOperation):
    def _print_hex(self, printer: Printer, *vals: IntegerAttr) -> None:
        printer.print_string(" " + ", ".join(hex(v.value.data) for v in vals))


@irdl_op_definition
class WriteOp(_MmioOp):
    """A constant MMIO write `(addr, 128-bit data)`.

    Example:

    ```mlir
    ila.fragment "flexasr"() : () -> () {
      ila.write 0x33000020, 0x1
      ila.yield
    }
    ```
    """

    name = "ila.write"
    addr = prop_def(IntegerAttr)
    """The 32-bit MMIO address written (printed in hex)."""
    data = prop_def(IntegerAttr)
    """The 128-bit value written at `addr` (printed in hex)."""
    traits = traits_def(HasParent(FragmentOp))

    def __init__(self, addr: int, data: int):
        super().__init__(properties={"addr": IntegerAttr(addr, IntegerType(64)),
                                     "data": IntegerAttr(data, IntegerType(128))})

    @classmethod
    def parse(cls, parser: Parser) -> WriteOp:
        start = parser.pos
        addr = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")
        data = parser.parse_integer(allow_boolean=False)
        if not (0 <= addr < 1 << 32 and 0 <= data < 1 << 128):  # before an i64 attribute
            parser.raise_error("ila.write expects a 32-bit address and 128-bit data", start)
        return cls(addr, data)

    def verify_(self) -> None:
        if not (0 <= self.addr.value.data < 1 << 32 and 0 <= self.data.value.data < 1 << 128):
            raise VerifyException("ila.write expects a 32-bit address and 128-bit data")

    def print(self, printer: Printer):
        self._print_hex(printer, self.addr, self.data)


@irdl_op_definition
class ReadOp(_MmioOp):
    """A constant MMIO read (its 16 bytes go to the simulator's read log).

    Example:

    ```mlir
    ila.fragment "flexasr"() : () -> () {
      ila.read 0x33500000
      ila.yield
    }
    ```
    """

    name = "ila.read"
    addr = prop_def(IntegerAttr)
    """The 32-bit MMIO address read; its 16 bytes go to the simulator's read log."""
    traits = traits_def(HasParent(FragmentOp))

    def __init__(self, addr: int):
        super().__init__(properties={"addr": IntegerAttr(addr, IntegerType(64))})

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        start = parser.pos
        addr = parser.parse_integer(allow_boolean=False)
        if not 0 <= addr < 1 << 32:  # before an i64 attribute (a huge literal's message)
            parser.raise_error("ila.read expects a 32-bit address", start)
        return cls(addr)

    def verify_(self) -> None:
        if not 0 <= self.addr.value.data < 1 << 32:
            raise VerifyException("ila.read expects a 32-bit address")

    def print(self, printer: Printer):
        self._print_hex(printer, self.addr)


@irdl_op_definition
class WaitIrqOp(IRDLOperation):
    """Wait for the accelerator's interrupt (a simulation barrier).

    Example:

    ```mlir
    ila.fragment "flexasr"() : () -> () {
      ila.wait_irq
      ila.yield
    }
    ```
    """

    name = "ila.wait_irq"
    traits = traits_def(HasParent(FragmentOp))
    assembly_format = "attr-dict"


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminate an `ila.fragment`, returning its results.

    Example:

    ```mlir
    %y = ila.fragment "flexasr"() : () -> tensor<1x16xf32> {
      %r = ila.cmd "load_act"() {region = 0 : i64} : () -> tensor<1x16xf32>
      ila.yield %r : tensor<1x16xf32>
    }
    ```
    """

    name = "ila.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FragmentOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"


from steplus.dialects.ila.host import Im2colOp, WindowsOp  # noqa: E402

Ila = Dialect(
    "ila",
    [InvokeOp, StoreOp, ComputeOp, LoadOp, FragmentOp, CmdOp, WriteOp, ReadOp, WaitIrqOp, YieldOp,
     WindowsOp, Im2colOp],
    [AccType],
)
