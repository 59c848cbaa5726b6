"""Host-side layout ops that `isel` introduces: window gathering and im2col.

They are part of the `ila` dialect (registered in `dialects/ila.py`) because
only instruction selection creates them; they run on the host.

Example:

```mlir
%a = ila.windows %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x128x128x1xf32>) -> tensor<16x4096xf32>
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, TensorType
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


class _WindowOp(IRDLOperation):
    input = operand_def(TensorType)
    kernel = prop_def(DenseArrayBase)
    stride = prop_def(DenseArrayBase)
    pad = prop_def(DenseArrayBase)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def geometry(self):
        """(N, C, H, W, KH, KW, SH, SW, pads, OH, OW) of the input (see `layout`)."""
        kh, kw = self.kernel.get_values()
        sh, sw = self.stride.get_values()
        pads = tuple(self.pad.get_values())
        shape = self.input.type.get_shape()
        if len(shape) != 4 or len(pads) != 4:
            raise VerifyException(f"{self.name}: expects a rank-4 input and 4 pads")
        n, c, h, w = self._nchw(shape)
        oh = (h + pads[0] + pads[1] - kh) // sh + 1
        ow = (w + pads[2] + pads[3] - kw) // sw + 1
        return n, c, h, w, kh, kw, sh, sw, pads, oh, ow

    def verify_(self) -> None:
        if tuple(self.res.type.get_shape()) != self.expected_shape():
            raise VerifyException(f"{self.name}: result shape must be {list(self.expected_shape())}")


@irdl_op_definition
class WindowsOp(_WindowOp):
    """Gather the max-pool windows of an NHWC tensor as a [KH*KW, N*OH*OW*C] matrix.

    Row `t = kr*KW + kc` holds window element (kr, kc) of every output position
    (in NHWC output order); padding reads -inf (FlexASR: the most negative code).

    Example:

    ```mlir
    %a = ila.windows %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x128x128x1xf32>) -> tensor<16x4096xf32>
    ```
    """

    name = "ila.windows"

    @staticmethod
    def _nchw(shape):
        n, h, w, c = shape
        return n, c, h, w

    def expected_shape(self):
        n, c, _, _, kh, kw, _, _, _, oh, ow = self.geometry()
        return (kh * kw, n * oh * ow * c)


@irdl_op_definition
class Im2colOp(_WindowOp):
    """Gather the conv patches of an NCHW tensor as a [N*OH*OW, C*KH*KW] matrix.

    Column order is (c, kr, kc), matching an FCHW weight reshaped to [F, C*KH*KW];
    padding reads zeros.

    Example:

    ```mlir
    %c = ila.im2col %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x16x10x10xf32>) -> tensor<64x144xf32>
    ```
    """

    name = "ila.im2col"

    @staticmethod
    def _nchw(shape):
        return tuple(shape)

    def expected_shape(self):
        n, c, _, _, kh, kw, _, _, _, oh, ow = self.geometry()
        return (n * oh * ow, c * kh * kw)
