"""Building linalg-on-tensors functions as IR, for the dense parts of `convert-linalg-to-step`.

The dense paths of the PyTorch frontend (`linalg_region`, `conv`, `pool`, `rnn`,
`softmax_dim`, `attention_dense`) write the forms torch-mlir emits (`tensor.empty`,
`linalg.fill`, `linalg.matmul`, element-wise and row-reduction `linalg.generic`s)
and hand the function to `convert-linalg-to-step`. They build those ops directly
with xDSL's `Builder` at the end of the function's block (no MLIR text is written
and parsed back): `LinalgFunc` holds the block and its arguments, each method
inserts one op and returns its value, and a generic's scalar body is a callable
that receives a `Scalar` (a `Builder` inside the body block) and the block's
arguments and returns the value the body yields.

Example: a row sum of a `4x8` tensor,

    fn = LinalgFunc("rows", [tensor_type((4, 8))])
    acc = fn.fill(fn.const(0.0), (4, 1))
    r = fn.generic([fn.args[0]], acc, ["d0, d1", "d0, 0"], "pr",
                   lambda s, a: s.add(a[0], a[1]))
    module = fn.module([r])

is the module of

    func.func @rows(%a0: tensor<4x8xf32>) -> (tensor<4x1xf32>) {
      %c = arith.constant 0.000000e+00 : f32
      %e = tensor.empty() : tensor<4x1xf32>
      %z = linalg.fill ins(%c : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
             affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]}
             ins(%a0 : tensor<4x8xf32>) outs(%z : tensor<4x1xf32>) {
      ^bb0(%in: f32, %o: f32):
        %y = arith.addf %in, %o : f32
        linalg.yield %y : f32
      } -> tensor<4x1xf32>
      func.return %r : tensor<4x1xf32>
    }
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    AffineMapAttr, BFloat16Type, DenseArrayBase, Float16Type, FloatAttr, ModuleOp, TensorType,
    f32, i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp, TransposeOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint

ELEMENTS: dict[str, Attribute] = {"f32": f32, "bf16": BFloat16Type(), "f16": Float16Type()}


def tensor_type(shape: Sequence[int], el: str = "f32") -> TensorType:
    """`tensor<{shape}x{el}>` (`el`: "f32", "bf16" or "f16")."""
    return TensorType(ELEMENTS[el], list(shape))


def affine_map(rank: int, results: str) -> AffineMapAttr:
    """The map `(d0, .., d{rank-1}) -> (results)`, `results` written "d0, 0" (dims and
    the constant 0: what the dense forms index with)."""
    exprs: list[AffineExpr] = []
    for r in results.split(","):
        r = r.strip()
        exprs.append(AffineConstantExpr(0) if r == "0" else AffineDimExpr(int(r[1:])))
    return AffineMapAttr(AffineMap(rank, 0, tuple(exprs)))


def _iterators(kinds: str):
    it = {"p": IteratorTypeAttr.parallel(), "r": IteratorTypeAttr.reduction()}
    return [it[k] for k in kinds]


class Scalar:
    """The scalar ops of a generic's body, inserted in call order by a `Builder`."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def _insert(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(arith.AddfOp(x, y))

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(arith.SubfOp(x, y))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(arith.MulfOp(x, y))

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(arith.DivfOp(x, y))

    def max(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(arith.MaximumfOp(x, y))

    def min(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(arith.MinimumfOp(x, y))

    def neg(self, x: SSAValue) -> SSAValue:
        return self._insert(arith.NegfOp(x))

    def exp(self, x: SSAValue) -> SSAValue:
        return self._insert(xmath.ExpOp(x))

    def tanh(self, x: SSAValue) -> SSAValue:
        return self._insert(xmath.TanhOp(x))

    def erf(self, x: SSAValue) -> SSAValue:
        return self._insert(xmath.ErfOp(x))

    def rsqrt(self, x: SSAValue) -> SSAValue:
        return self._insert(xmath.RsqrtOp(x))

    def powf(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._insert(xmath.PowFOp(x, y))

    def mask(self, pred: str, x: SSAValue, y: SSAValue) -> SSAValue:
        """1.0 where `arith.cmpf pred` of x and y holds, else 0.0 (`arith.uitofp` of the i1:
        torch's `(x > c).float()`)."""
        c = self._insert(arith.CmpfOp(x, y, pred))
        return self._insert(arith.UIToFPOp(c, f32))

    def where(self, m: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        """x where the 0/1 mask m is not 0, else y (`arith.select` of `arith.cmpf une m, 0`:
        torch.where on a boolean tensor the region holds as a 0/1 float)."""
        zero = self._insert(arith.ConstantOp(FloatAttr(0.0, f32)))
        c = self._insert(arith.CmpfOp(m, zero, "une"))
        return self._insert(arith.SelectOp(c, x, y))

    def extf(self, x: SSAValue) -> SSAValue:
        """`x` widened to f32 (a bf16/f16 element read by an f32 computation)."""
        return self._insert(arith.ExtFOp(x, f32))

    def apply(self, name: str, *xs: SSAValue) -> SSAValue:
        """The op of an MLIR name (`arith.addf`, `math.exp`, ...) of this class."""
        return getattr(self, _BY_NAME[name])(*xs)


_BY_NAME = {"arith.addf": "add", "arith.subf": "sub", "arith.mulf": "mul", "arith.divf": "div",
            "arith.maximumf": "max", "arith.minimumf": "min", "arith.negf": "neg",
            "math.exp": "exp", "math.tanh": "tanh", "math.erf": "erf", "math.rsqrt": "rsqrt",
            "math.powf": "powf"}

Body = Callable[[Scalar, Sequence[SSAValue]], SSAValue]
# a named linalg op class, called (inputs, outputs, result types)
Contraction = Callable[[list[SSAValue], list[SSAValue], list[Attribute]], Operation]


class LinalgFunc:
    """A `func.func` on tensors being built: its block's arguments (`args`) and a
    `Builder` at the end of the block; `module(results)` returns it and ends it."""

    def __init__(self, name: str, arg_types: Sequence[Attribute]):
        self.name = name
        self.block = Block(arg_types=arg_types)
        self.builder = Builder(InsertPoint.at_end(self.block))

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.block.args)

    def add_arg(self, t: Attribute) -> SSAValue:
        """A new last argument of type `t` (a signature that grows as the body is built)."""
        return self.block.insert_arg(t, len(self.block.args))

    def _insert(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def const(self, v: float) -> SSAValue:
        """An f32 `arith.constant` of `v` (exactly this double: callers round)."""
        return self._insert(arith.ConstantOp(FloatAttr(v, f32)))

    def empty(self, shape: Sequence[int], el: str = "f32") -> SSAValue:
        return self._insert(tensor.EmptyOp([], tensor_type(shape, el)))

    def fill(self, value: SSAValue, shape: Sequence[int] | SSAValue) -> SSAValue:
        """`linalg.fill` of the scalar `value` into a fresh f32 `tensor.empty` of `shape`,
        or into the tensor `shape` is."""
        e = shape if isinstance(shape, SSAValue) else self.empty(shape)
        return self._insert(FillOp([value], [e], [e.type]))

    def generic(self, ins: Sequence[SSAValue], init: SSAValue, maps: Sequence[str],
                iterators: str, body: Body) -> SSAValue:
        """A `linalg.generic` reading `ins`, writing into `init` (its one output):
        `maps` are the results of each operand's map over the iteration dims
        (`affine_map`'s form, outputs last), `iterators` one letter per dim ("p"
        parallel, "r" reduction); `body(scalar, args)` builds the scalar body from the
        block's arguments (one per input, then the output's) and returns the yield."""
        rank = len(iterators)
        types = [_element(v) for v in [*ins, init]]
        block = Block(arg_types=types)
        inner = Builder(InsertPoint.at_end(block))
        inner.insert(YieldOp(body(Scalar(inner), block.args)))
        return self._insert(GenericOp(list(ins), [init], Region(block),
                                      [affine_map(rank, m) for m in maps],
                                      _iterators(iterators), [init.type]))

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        """`linalg.transpose` of `x` into a fresh `tensor.empty` (`perm`: the permutation)."""
        t = x.type
        assert isinstance(t, TensorType)
        shape = t.get_shape()
        e = self._insert(tensor.EmptyOp([], TensorType(t.get_element_type(),
                                                       [shape[p] for p in perm])))
        return self._insert(TransposeOp(x, e, DenseArrayBase.from_list(i64, list(perm))))

    def named(self, cls: Contraction, ins: Sequence[SSAValue], init: SSAValue) -> SSAValue:
        """A named contraction (`linalg.matmul`, `batch_matmul`, ...: the op class) into
        `init`."""
        return self._insert(cls(list(ins), [init], [init.type]))

    def module(self, results: Sequence[SSAValue]) -> ModuleOp:
        """The function, returning `results`, in a module of its own."""
        self.builder.insert(func.ReturnOp(*results))
        ftype = ([a.type for a in self.args], [r.type for r in results])
        return ModuleOp([func.FuncOp(self.name, ftype, Region(self.block))])


def _element(v: SSAValue) -> Attribute:
    t = v.type
    return t.get_element_type() if isinstance(t, TensorType) else t
