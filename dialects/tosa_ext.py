"""TOSA operations that xDSL 0.74 lacks, registered into the `tosa` dialect by step-opt.

`tosa.const_shape` and `tosa.reshape` (the shape is a `!tosa.shape<rank>`
operand, as in upstream MLIR's TOSA), `tosa.sigmoid`, `tosa.tanh`, `tosa.exp` and `tosa.rsqrt`.  Tensor-level inputs to `isel` use them next to xDSL's own
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

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, IntAttr, TensorType
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
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


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
        return tuple(int(v) for v in self.values.get_values())


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
        if self.shape.type.rank.data != len(out):
            raise VerifyException(f"tosa.reshape: shape rank {self.shape.type.rank.data} != result rank {len(out)}")
        src = self.shape.owner
        if isinstance(src, ConstShapeOp) and src.get_shape() != out:
            raise VerifyException(f"tosa.reshape: result shape must be {list(src.get_shape())}")
        if math.prod(out) != math.prod(self.input1.type.get_shape()):
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


EXTRA_OPS = [ConstShapeOp, ReshapeOp, SigmoidOp, TanhOp, ExpOp, RsqrtOp]


def extended_tosa() -> Dialect:
    """xDSL's tosa dialect plus the operations above."""
    from xdsl.dialects.tosa import TOSA

    return Dialect("tosa", [*TOSA.operations, *EXTRA_OPS], [*TOSA.attributes, ShapeType])
