"""TOSA operations that xDSL 0.74 lacks, registered into the `tosa` dialect by step-opt.

`tosa.const_shape` and `tosa.reshape` (the shape is a `!tosa.shape<rank>`
operand, as in upstream MLIR's TOSA), `tosa.sigmoid`, `tosa.tanh`, `tosa.exp` and `tosa.rsqrt`, a
`tosa.const` that also takes `dense_resource` values, and the ops torch-mlir's TOSA output
contains beyond xDSL's (`transpose`, `slice`, `conv2d`, `depthwise_conv2d`, `pow`, `negate`,
`erf`, `intdiv`, ... in their generic custom form; their meaning, numeric and symbolic, is in `dialects/semantics/`).
Tensor-level inputs to `isel` use them next to xDSL's own
`tosa.add`, `tosa.max_pool2d`, `tosa.clamp`, ... and `linalg` named ops.

Example:

```mlir
func.func @example(%x: tensor<10x64xf32>) {
  %s = tosa.const_shape {values = dense<[1, 10, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reshape %x, %s : (tensor<10x64xf32>, !tosa.shape<3>) -> tensor<1x10x64xf32>
  func.return
}
```
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, IndexType, IntAttr, TensorType
from xdsl.ir import Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from steplus.utils.attrs import int_values, shape_of


@irdl_attr_definition
class ShapeType(ParametrizedAttribute, TypeAttribute):
    """A TOSA shape value of a given rank: `!tosa.shape<3>`."""

    name = "tosa.shape"
    rank: IntAttr = param_def()

    @classmethod
    def parse_parameters(cls, parser) -> list:
        parser.parse_punctuation("<")
        rank = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">")
        return [IntAttr(rank)]

    def print_parameters(self, printer) -> None:
        printer.print_string(f"<{self.rank.data}>")


@irdl_op_definition
class ConstShapeOp(IRDLOperation):
    """A constant shape.

    Example:

    ```mlir
    %s = tosa.const_shape {values = dense<[1, 10, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
    ```
    """

    name = "tosa.const_shape"
    values = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(ShapeType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` `(` `)` `->` type($output)"

    def __init__(self, shape):
        shape = [int(d) for d in shape]
        t = TensorType(IndexType(), [len(shape)])
        super().__init__(result_types=[ShapeType(IntAttr(len(shape)))],
                         properties={"values": DenseIntOrFPElementsAttr.from_list(t, shape)})

    def get_shape(self) -> tuple[int, ...]:
        return int_values(self.values) or ()


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Reshape a tensor to the shape given by a `tosa.const_shape` (same element count).

    Example:

    ```mlir
    func.func @example(%x: tensor<10x64xf32>, %s: !tosa.shape<3>) {
      %r = tosa.reshape %x, %s : (tensor<10x64xf32>, !tosa.shape<3>) -> tensor<1x10x64xf32>
      func.return
    }
    ```
    """

    name = "tosa.reshape"
    input1 = operand_def(TensorType)
    shape = operand_def(ShapeType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input1 `,` $shape attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        out = tuple(self.output.type.get_shape())
        shape_type = self.shape.type
        if not isinstance(shape_type, ShapeType):  # the operand constraint has checked it
            raise VerifyException(f"tosa.reshape: the shape operand must be a !tosa.shape, got {shape_type}")
        if shape_type.rank.data != len(out):
            raise VerifyException(f"tosa.reshape: shape rank {shape_type.rank.data} != result rank {len(out)}")
        src = self.shape.owner
        if isinstance(src, ConstShapeOp) and src.get_shape() != out:
            raise VerifyException(f"tosa.reshape: result shape must be {list(src.get_shape())}")
        if math.prod(out) != math.prod(shape_of(self.input1)):
            raise VerifyException("tosa.reshape: element count changes")


def reshape(x, shape) -> tuple[ConstShapeOp, ReshapeOp]:
    """Build `tosa.const_shape` + `tosa.reshape` of x to shape."""
    c = ConstShapeOp(shape)
    r = ReshapeOp(operands=[x, c.output], result_types=[TensorType(x.type.element_type, list(shape))])
    return c, r


class _Unary(IRDLOperation):
    input1 = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input1 attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class SigmoidOp(_Unary):
    """Elementwise logistic sigmoid.

    Example:

    ```mlir
    func.func @example(%x: tensor<4xf32>) {
      %s = tosa.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return
    }
    ```
    """

    name = "tosa.sigmoid"


@irdl_op_definition
class TanhOp(_Unary):
    """Elementwise hyperbolic tangent.

    Example:

    ```mlir
    func.func @example(%x: tensor<4xf32>) {
      %s = tosa.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return
    }
    ```
    """

    name = "tosa.tanh"


@irdl_op_definition
class ExpOp(_Unary):
    """Elementwise exponential.

    Example:

    ```mlir
    func.func @example(%x: tensor<4xf32>) {
      %s = tosa.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return
    }
    ```
    """

    name = "tosa.exp"


@irdl_op_definition
class RsqrtOp(_Unary):
    """Elementwise reciprocal square root (layer normalisation).

    Example:

    ```mlir
    func.func @example(%x: tensor<4x1xf32>) {
      %s = tosa.rsqrt %x : (tensor<4x1xf32>) -> tensor<4x1xf32>
      func.return
    }
    ```
    """

    name = "tosa.rsqrt"


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A constant tensor; unlike xDSL's `tosa.const` it also takes the `dense_resource<...>`
    values torch-mlir writes for parameters (step-run reads the blob).

    Example:

    ```mlir
    func.func @example() {
      %c = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
      func.return
    }
    ```
    """

    name = "tosa.const"
    values = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())


class _Operands(IRDLOperation):
    """A TOSA op in its generic custom form: operands, attributes, functional type."""

    inputs = var_operand_def()
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __post_init__(self) -> None:
        # Upstream MLIR prints these ops' attributes as properties (`<{perms = ...}>`);
        # this generic definition declares none, so it keeps them as attributes.
        if self.properties:
            self.attributes = {**self.properties, **self.attributes}
            self.properties = {}
        super().__post_init__()

    def verify_(self) -> None:
        missing = [a for a in REQUIRED_ATTRIBUTES.get(self.name, ()) if a not in self.attributes]
        if missing:
            raise VerifyException(f"{self.name} needs the attribute(s) {', '.join(missing)}")


REQUIRED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "tosa.transpose": ("perms",),
    "tosa.conv2d": ("pad", "stride", "dilation"),
    "tosa.depthwise_conv2d": ("pad", "stride", "dilation"),
}
"""Attributes TOSA requires of the generic ops that read them (the semantics and isel do)."""


def _tosa_op(op_name: str, doc: str) -> type[IRDLOperation]:
    cls = type(op_name.split(".")[1].title().replace("_", "") + "Op", (_Operands,),
               {"name": op_name, "__doc__": doc, "__module__": __name__})
    return irdl_op_definition(cls)


_EXAMPLE = """

    Example:

    ```mlir
    func.func @example(%x: tensor<1x4x4x2xf32>) {{
      {0}
      func.return
    }}
    ```
    """
_GENERIC = {
    "tosa.transpose": ("Permute the axes (`perms`).",
                       "%t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> "
                       "tensor<1x2x4x4xf32>"),
    "tosa.slice": ("A static slice; start and size are `tosa.const_shape` operands.", ""),
    "tosa.conv2d": ("NHWC convolution with OHWI weights, bias and zero points (`pad`, `stride`, `dilation`).",
                    ""),
    "tosa.depthwise_conv2d": ("NHWC depthwise convolution with HWCM weights.", ""),
    "tosa.pow": ("Elementwise power (broadcasting).",
                 "%p = tosa.pow %x, %x : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>"),
    "tosa.negate": ("Elementwise negation (with zero points).", ""),
    "tosa.erf": ("Elementwise error function.",
                 "%e = tosa.erf %x : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>"),
    "tosa.log": ("Elementwise natural logarithm.", ""),
    "tosa.abs": ("Elementwise absolute value.", ""),
    "tosa.maximum": ("Elementwise maximum (broadcasting).", ""),
    "tosa.minimum": ("Elementwise minimum (broadcasting).", ""),
    "tosa.greater": ("Elementwise `>` (i1 result).", ""),
    "tosa.greater_equal": ("Elementwise `>=` (i1 result).", ""),
    "tosa.equal": ("Elementwise `==` (i1 result).", ""),
    "tosa.select": ("Elementwise `cond ? a : b`.", ""),
    "tosa.cast": ("Element type conversion (float to integer rounds to nearest).", ""),
    "tosa.identity": ("The operand unchanged.", ""),
    "tosa.intdiv": ("Elementwise integer division truncating toward zero (`-7 / 2 = -3`; division by zero is "
                    "an error).", ""),
    "tosa.logical_and": ("Elementwise logical and of i1 tensors.", ""),
    "tosa.floor": ("Elementwise floor.", ""),
    "tosa.ceil": ("Elementwise ceiling.", ""),
    "tosa.matmul": ("Batched matrix product `[N,H,C] x [N,C,W]` with zero points (xDSL's verifier wrongly "
                    "demands N = 1; torch-mlir writes multi-head attention with N = heads).", ""),
}
GENERIC_OPS = [_tosa_op(n, d + _EXAMPLE.format(ex or "%y = tosa.erf %x : (tensor<1x4x4x2xf32>) -> "
                                                   "tensor<1x4x4x2xf32>"))
               for n, (d, ex) in _GENERIC.items()]

EXTRA_OPS = [ConstShapeOp, ReshapeOp, SigmoidOp, TanhOp, ExpOp, RsqrtOp, ConstOp, *GENERIC_OPS]


def extended_tosa() -> Dialect:
    """xDSL's tosa dialect plus the operations above."""
    from xdsl.dialects.tosa import TOSA

    mine = {op.name for op in EXTRA_OPS}
    return Dialect("tosa", [*(op for op in TOSA.operations if op.name not in mine), *EXTRA_OPS],
                   [*TOSA.attributes, ShapeType])
