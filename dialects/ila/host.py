"""Host-side layout ops that `isel` introduces: window gathering and im2col.

They are part of the `ila` dialect (registered in `dialects/ila/__init__.py`) because
only instruction selection creates them; they run on the host.

Example:

```mlir
func.func @example(%x: tensor<1x128x128x1xf32>) {
  %a = ila.windows %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x128x128x1xf32>) -> tensor<16x4096xf32>
  func.return
}
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, IntegerType, TensorType
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

from steplus.utils.attrs import ints_of, shape_of


def window_problem(shape, kernel, stride, pad, hw_axes: tuple[int, int] = (1, 2)) -> str | None:
    """Why a pooling/patch geometry is malformed (None if it is well formed): a static
    rank-4 input, kernel and stride of two positive sizes, four non-negative pads and
    at least one window (`hw_axes`: the H and W axes, (1, 2) for NHWC, (2, 3) for NCHW)."""
    kernel, stride, pad = tuple(kernel), tuple(stride), tuple(pad)
    if len(shape) != 4 or any(d < 0 for d in shape):
        return f"expects a static rank-4 input, got shape {list(shape)}"
    if len(kernel) != 2 or len(stride) != 2 or len(pad) != 4:
        return "expects kernel and stride of 2 values and pad of 4 values"
    if min(kernel) < 1 or min(stride) < 1 or min(pad) < 0:
        return "kernel and stride must be positive and pads non-negative"
    h, w = shape[hw_axes[0]] + pad[0] + pad[1], shape[hw_axes[1]] + pad[2] + pad[3]
    if h < kernel[0] or w < kernel[1]:
        return f"kernel {list(kernel)} is larger than the padded input ({h}x{w})"
    return None


class _WindowOp(IRDLOperation):
    input = operand_def(TensorType)
    kernel = prop_def(DenseArrayBase)
    """The window size `[KH, KW]` (rows, columns), both >= 1."""
    stride = prop_def(DenseArrayBase)
    """The step between windows `[SH, SW]`, both >= 1."""
    pad = prop_def(DenseArrayBase)
    """Padding `[top, bottom, left, right]` added to H and W, each >= 0 (what it reads: see the op)."""
    res = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @staticmethod
    def _nchw(shape: tuple[int, ...]) -> tuple[int, ...]:
        """(N, C, H, W) of the input shape (NHWC or NCHW: each op says)."""
        raise NotImplementedError

    def expected_shape(self) -> tuple[int, int]:
        """The result shape the geometry gives."""
        raise NotImplementedError

    def geometry(self):
        """(N, C, H, W, KH, KW, SH, SW, pads, OH, OW) of the input (see `layout`)."""
        shape = shape_of(self.input)
        for what, arr in (("kernel", self.kernel), ("stride", self.stride), ("pad", self.pad)):
            if not isinstance(arr.elt_type, IntegerType):  # array<f32: 4.5, 4.0> read as 4, 4
                raise VerifyException(f"{self.name}: {what} must be an integer array "
                                      f"(array<i64: ...>), got {arr.elt_type}")
        hw_axes = (1, 2) if self.name == "ila.windows" else (2, 3)
        kernel, stride, pads = ints_of(self.kernel), ints_of(self.stride), tuple(ints_of(self.pad))
        problem = window_problem(shape, kernel, stride, pads, hw_axes)
        if problem is not None:
            raise VerifyException(f"{self.name}: {problem}")
        kh, kw = kernel
        sh, sw = stride
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
    func.func @example(%x: tensor<1x128x128x1xf32>) {
      %a = ila.windows %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x128x128x1xf32>) -> tensor<16x4096xf32>
      func.return
    }
    ```
    """

    name = "ila.windows"

    @staticmethod
    def _nchw(shape: tuple[int, ...]) -> tuple[int, ...]:
        n, h, w, c = shape
        return n, c, h, w

    def expected_shape(self) -> tuple[int, int]:
        n, c, _, _, kh, kw, _, _, _, oh, ow = self.geometry()
        return (kh * kw, n * oh * ow * c)


@irdl_op_definition
class Im2colOp(_WindowOp):
    """Gather the conv patches of an NCHW tensor as a [N*OH*OW, C*KH*KW] matrix.

    Column order is (c, kr, kc), matching an FCHW weight reshaped to [F, C*KH*KW];
    padding reads zeros.

    Example:

    ```mlir
    func.func @example(%x: tensor<1x16x10x10xf32>) {
      %c = ila.im2col %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x16x10x10xf32>) -> tensor<64x144xf32>
      func.return
    }
    ```
    """

    name = "ila.im2col"

    @staticmethod
    def _nchw(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(shape)

    def expected_shape(self) -> tuple[int, int]:
        n, c, _, _, kh, kw, _, _, _, oh, ow = self.geometry()
        return (n * oh * ow, c * kh * kw)
