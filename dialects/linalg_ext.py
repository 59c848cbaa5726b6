"""linalg named ops that xDSL 0.74 lacks and torch-mlir's linalg-on-tensors output contains.

`linalg.batch_matmul`, `linalg.depthwise_conv_2d_nchw_chw`, `linalg.conv_1d_ncw_fcw`,
`linalg.matmul_transpose_b` (also parsed from `linalg.matmul` with transposed-B `indexing_maps`) and
`linalg.pooling_nchw_sum`, built on xDSL's own `NamedOperation` / `ConvOperation` /
`PoolingOperation` bases (same custom syntax as upstream MLIR: attributes in front,
`ins(...)`, `outs(...)`, `-> type`).  step-opt registers them into the `linalg`
dialect next to xDSL's `linalg.matmul`, `linalg.conv_2d_nchw_fchw`, ...; step-run
gives each its meaning (`dialects/semantics/`, numeric and symbolic).  `linalg.generic` is xDSL's with
one parsing fix: a generic with several results writes them as `-> (tensor<..>, tensor<..>)`
(torch-mlir's max-with-index reductions), which xDSL 0.74 rejects.

Example:

```mlir
func.func @example(%a: tensor<4x16x8xf32>, %b: tensor<4x8x16xf32>, %x: tensor<1x8x10x10xf32>,
                   %w: tensor<8x3x3xf32>) -> (tensor<4x16x16xf32>, tensor<1x8x8x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<4x16x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%z : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<8x3x3xf32>) outs(%z2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %c, %d : tensor<4x16x16xf32>, tensor<1x8x8x8xf32>
}
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, IntegerType
from xdsl.dialects.linalg.abstract_ops import ConvOperation, NamedOperation, PoolingOperation
from xdsl.dialects.linalg.ops import GenericOp, MatmulOp, YieldOp
from xdsl.builder import Builder
from xdsl.ir import BlockArgument, Dialect, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.irdl import irdl_op_definition


def _mac_region(cls, inputs, outputs) -> Region:
    """The multiply-accumulate body shared by the contractions below."""
    arg_types = NamedOperation.body_arg_types((*inputs, *outputs))
    is_int = isinstance(arg_types[-1], IntegerType)
    add, mul = (arith.AddiOp, arith.MuliOp) if is_int else (arith.AddfOp, arith.MulfOp)

    @Builder.implicit_region(arg_types)
    def body(args: tuple[BlockArgument, ...]) -> None:
        YieldOp(add(mul(args[0], args[1]), args[2]))

    return body


def _iterators(parallel: int, reduction: int) -> ArrayAttr[IteratorTypeAttr]:
    return ArrayAttr((IteratorTypeAttr.parallel(),) * parallel + (IteratorTypeAttr.reduction(),) * reduction)


class _Contraction(NamedOperation, ABC):
    """A multiply-accumulate named op: `C += A * B` over the maps of `get_default_indexing_maps`."""

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue] = (), res=None, attributes=None):
        super().__init__(ins=inputs, outs=outputs,
                         result_types=res if res is not None else [o.type for o in outputs],
                         attributes=attributes, hidden_region=self.get_hidden_region(inputs, outputs))

    @classmethod
    def get_hidden_region(cls, inputs, outputs) -> Region:
        return _mac_region(cls, inputs, outputs)


@irdl_op_definition
class BatchMatmulOp(_Contraction):
    """Batched matrix product `C[b] += A[b] @ B[b]` of rank-3 tensors (what torch-mlir
    emits for `torch.bmm` / attention scores).

    Example: `%c = linalg.batch_matmul ins(%a, %b : tensor<4x16x8xf32>, tensor<4x8x16xf32>)
    outs(%z : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>`
    """

    name = "linalg.batch_matmul"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return (AffineMap.from_callable(lambda b, i, j, k: (b, i, k)),
                AffineMap.from_callable(lambda b, i, j, k: (b, k, j)),
                AffineMap.from_callable(lambda b, i, j, k: (b, i, j)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return _iterators(3, 1)


PLAIN_MAPS = (AffineMap.from_callable(lambda i, j, k: (i, k)),
              AffineMap.from_callable(lambda i, j, k: (k, j)),
              AffineMap.from_callable(lambda i, j, k: (i, j)))
"""`C[i, j] += A[i, k] * B[k, j]` (linalg.matmul's default maps)."""

TRANSPOSED_B_MAPS = (AffineMap.from_callable(lambda i, j, k: (i, k)),
                     AffineMap.from_callable(lambda i, j, k: (j, k)),
                     AffineMap.from_callable(lambda i, j, k: (i, j)))
"""`C[i, j] += A[i, k] * B[j, k]`."""


@irdl_op_definition
class MatmulTransposeBOp(_Contraction):
    """Matrix product with the right operand transposed, `C += A @ B^T` (IREE's input
    pipelines and older MLIR; newer MLIR writes `linalg.matmul` with `indexing_maps`).

    Example: `%c = linalg.matmul_transpose_b ins(%a, %b : tensor<16x8xf32>, tensor<32x8xf32>)
    outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>`
    """

    name = "linalg.matmul_transpose_b"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return TRANSPOSED_B_MAPS

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return _iterators(2, 1)


@irdl_op_definition
class BatchMatmulTransposeBOp(_Contraction):
    """Batched `C[b] += A[b] @ B[b]^T`.

    Example: `%c = linalg.batch_matmul_transpose_b ins(%a, %b : tensor<2x16x8xf32>,
    tensor<2x32x8xf32>) outs(%z : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>`
    """

    name = "linalg.batch_matmul_transpose_b"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return (AffineMap.from_callable(lambda b, i, j, k: (b, i, k)),
                AffineMap.from_callable(lambda b, i, j, k: (b, j, k)),
                AffineMap.from_callable(lambda b, i, j, k: (b, i, j)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return _iterators(3, 1)


@irdl_op_definition
class DepthwiseConv2DNchwChwOp(ConvOperation):
    """Depthwise 2-D convolution: `out[n,c,oh,ow] += x[n,c,oh*sh+kh*dh,ow*sw+kw*dw] * w[c,kh,kw]`
    (torch's `Conv2d(groups=channels)`).

    Example: `%d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>,
    strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<8x3x3xf32>)
    outs(%z : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>`
    """

    name = "linalg.depthwise_conv_2d_nchw_chw"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, c, oh, ow, kh, kw = (AffineDimExpr(d) for d in range(6))
        sh, sw = self.strides.get_values()
        dh, dw = self.dilations.get_values()
        return (AffineMap(6, 0, (n, c, oh * sh + kh * dh, ow * sw + kw * dw)), AffineMap(6, 0, (c, kh, kw)),
                AffineMap(6, 0, (n, c, oh, ow)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return _iterators(4, 2)


@irdl_op_definition
class Conv1DNcwFcwOp(ConvOperation):
    """1-D convolution `out[n,f,ow] += x[n,c,ow*s+k*d] * w[f,c,k]` (torch's `Conv1d`).

    Example: `%y = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides =
    dense<1> : vector<1xi64>} ins(%x, %w : tensor<1x16x64xf32>, tensor<16x16x1xf32>)
    outs(%z : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>`
    """

    name = "linalg.conv_1d_ncw_fcw"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, f, ow, c, k = (AffineDimExpr(d) for d in range(5))
        (s,) = self.strides.get_values()
        (d,) = self.dilations.get_values()
        return (AffineMap(5, 0, (n, c, ow * s + k * d)), AffineMap(5, 0, (f, c, k)), AffineMap(5, 0, (n, f, ow)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return _iterators(3, 2)


@irdl_op_definition
class PoolingNchwSumOp(PoolingOperation):
    """Sum pooling over windows (torch's average pools divide its result afterwards).

    Example: `%s = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides =
    dense<1> : vector<2xi64>} ins(%x, %k : tensor<1x8x4x4xf32>, tensor<4x4xf32>)
    outs(%z : tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>`
    """

    name = "linalg.pooling_nchw_sum"

    @classmethod
    def get_hidden_region(cls, inputs, outputs) -> Region:
        arg_types = NamedOperation.body_arg_types((*inputs, *outputs))
        add = arith.AddiOp if isinstance(arg_types[-1], IntegerType) else arith.AddfOp

        @Builder.implicit_region(arg_types)
        def body(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(add(args[0], args[2]))

        return body

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, c, oh, ow, kh, kw = (AffineDimExpr(d) for d in range(6))
        sh, sw = self.strides.get_values()
        dh, dw = self.dilations.get_values()
        return (AffineMap(6, 0, (n, c, oh * sh + kh * dh, ow * sw + kw * dw)), AffineMap(6, 0, (kh, kw)),
                AffineMap(6, 0, (n, c, oh, ow)))


class GenericOpWithResults(GenericOp):
    """`linalg.generic` (xDSL's op) that also parses a parenthesised list of result types.

    Example: `%r:2 = linalg.generic {...} ins(%x : tensor<4x8xf32>) outs(%m, %i : tensor<4xf32>,
    tensor<4xi64>) {...} -> (tensor<4xf32>, tensor<4xi64>)`
    """

    @classmethod
    def parse(cls, parser):
        orig_region, orig_punct = parser.parse_region, parser.parse_optional_punctuation
        state = {"body": False, "paren": False}

        def region(*a, **k):
            r = orig_region(*a, **k)
            state["body"] = True
            return r

        def punct(p, *a, **k):
            r = orig_punct(p, *a, **k)
            if r is not None and p == "->" and state["body"] and not state["paren"]:
                state["paren"] = orig_punct("(") is not None
            return r

        parser.parse_region, parser.parse_optional_punctuation = region, punct
        try:
            op = super().parse(parser)
        finally:
            del parser.parse_region, parser.parse_optional_punctuation
        if state["paren"]:
            parser.parse_punctuation(")")
        return op


class MatmulOpWithMaps(MatmulOp):
    """`linalg.matmul` (xDSL's op) that also parses newer MLIR's `indexing_maps = [...]` keyword
    form (torch-mlir and IREE emit `A @ B^T` that way): the identity maps give a plain
    `linalg.matmul`, the transposed-B maps a `linalg.matmul_transpose_b`; other maps are a
    located error (xDSL 0.74 failed with an IndexError).

    Example: `%c = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
    affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : tensor<4x8xf32>, tensor<16x8xf32>) outs(%c0 : tensor<4x16xf32>) -> tensor<4x16xf32>`
    """

    @classmethod
    def parse(cls, parser):
        if parser.parse_optional_keyword("indexing_maps") is None:
            return super().parse(parser)
        parser.parse_punctuation("=")
        at = parser.pos
        maps = parser.parse_attribute()
        op = super().parse(parser)
        given = [m.data for m in maps.data] if isinstance(maps, ArrayAttr) and all(
            isinstance(m, AffineMapAttr) for m in maps.data) else None
        if given == list(PLAIN_MAPS):
            return op
        if given == list(TRANSPOSED_B_MAPS):
            new = MatmulTransposeBOp(list(op.inputs), list(op.outputs),
                                     res=[r.type for r in op.results])
            op.erase()
            return new
        op.erase()
        parser.raise_error("linalg.matmul: only the plain (A @ B) and transposed-B (A @ B^T) "
                           "indexing_maps are supported", at, at + 1)


EXTRA_OPS = (BatchMatmulOp, MatmulTransposeBOp, BatchMatmulTransposeBOp, DepthwiseConv2DNchwChwOp,
             Conv1DNcwFcwOp, PoolingNchwSumOp)


def extended_linalg() -> Dialect:
    """xDSL's linalg dialect plus the operations above."""
    from xdsl.dialects.linalg import Linalg

    replaced = ("linalg.generic", "linalg.matmul")
    ops = [op for op in Linalg.operations if op.name not in replaced]
    return Dialect("linalg", [*ops, GenericOpWithResults, MatmulOpWithMaps, *EXTRA_OPS],
                   [*Linalg.attributes])
