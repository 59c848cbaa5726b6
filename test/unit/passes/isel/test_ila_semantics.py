"""The one op-semantics table (dialects/semantics): dispatch as xDSL's `@impl`, and each op's
one meaning evaluated in both domains, numpy (step-run) and z3 terms (isel-verify), checked
against torch on the same small-integer inputs (exact in float32 and in 32-bit bit-vectors)."""

from __future__ import annotations

import numpy as np
import pytest
import z3
from xdsl.context import Context
from xdsl.parser import Parser

from steplus.passes.isel import symbolic as S
from xdsl.dialects import tosa
from xdsl.dialects.linalg import ops as linalg

from steplus.dialects.semantics import NumpyDomain, SemanticsError, TensorSemantics, impl, register_semantics
from steplus.tools.registry import get_all_dialects

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _fn(text: str):
    ctx = Context()
    for name, make in get_all_dialects().items():
        ctx.register_dialect(name, make)
    module = Parser(ctx, text).parse_module()
    return next(op for op in module.walk() if op.name == "func.func")


def _numeric(fn, inputs):
    block = fn.body.blocks[0]
    return TensorSemantics(NumpyDomain()).run_block(block, dict(zip(block.args, inputs)))


def _symbolic_then_substituted(fn, inputs):
    """Evaluate on bit-vector terms, then put the integer inputs into every output term."""
    ctx = S.Ctx("bv")
    block = fn.body.blocks[0]
    syms = [S.tensor(ctx, f"a{k}", np.shape(x)) for k, x in enumerate(inputs)]
    outs = TensorSemantics(S.SymbolicDomain(ctx)).run_block(block, dict(zip(block.args, syms)))
    pairs = [(s.t, z3.BitVecVal(int(v), 32)) for sym, x in zip(syms, inputs)
             for s, v in zip(sym.reshape(-1), np.asarray(x).reshape(-1))]

    def value(e):
        return z3.simplify(z3.substitute(e.t, *pairs)).as_signed_long()

    return [np.vectorize(value, otypes=[np.int64])(np.asarray(o, dtype=object)) for o in outs]


PAD_CONV = """
func.func @f(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %d: index, %e: index):
    tensor.yield %z : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  %e0 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e0 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}"""
DEPTHWISE = """
func.func @f(%x: tensor<1x3x7x7xf32>, %w: tensor<3x2x2xf32>, %b: tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x3x7x7xf32>, tensor<3x2x2xf32>) outs(%b : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %r : tensor<1x3x3x3xf32>
}"""
BATCH_MATMUL = """
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x2xf32>, %c: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x2xf32>) outs(%c : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  func.return %r : tensor<2x3x2xf32>
}"""
# a row max (reduction generic into a -inf-free init), then x - max broadcast back over the row
ROW_MAX_SUB = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%x: tensor<3x4xf32>, %m0: tensor<3xf32>) -> tensor<3x4xf32> {
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x4xf32>) outs(%m0 : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.maximumf %in, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<3x4xf32>, tensor<3xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}"""
POOL_REDUCE = """
func.func @f(%x: tensor<1x5x5x2xf32>) -> tensor<1x1x3x2xf32> {
  %p = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x5x5x2xf32>) -> tensor<1x3x3x2xf32>
  %s = tosa.reduce_sum %p {axis = 1 : i32} : (tensor<1x3x3x2xf32>) -> tensor<1x1x3x2xf32>
  func.return %s : tensor<1x1x3x2xf32>
}"""
SLICES = """
func.func @f(%x: tensor<2x3xf32>, %d: tensor<4x5xf32>) -> tensor<5x4xf32> {
  %r = tensor.insert_slice %x into %d[1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x5xf32>
  %e = tensor.empty() : tensor<5x4xf32>
  %t = linalg.transpose ins(%r : tensor<4x5xf32>) outs(%e : tensor<5x4xf32>) permutation = [1, 0]
  func.return %t : tensor<5x4xf32>
}"""


def _t(x):
    return torch.from_numpy(np.asarray(x, np.float64))


def _slices_ref(x, d):
    r = np.array(d, copy=True)
    r[1:3, 2:5] = x
    return r.T


CASES = {
    "pad_conv": (PAD_CONV, [(1, 2, 4, 4), (3, 2, 3, 3)], lambda x, w: F.conv2d(_t(x), _t(w), padding=1).numpy()),
    "depthwise_strided_dilated": (DEPTHWISE, [(1, 3, 7, 7), (3, 2, 2), (1, 3, 3, 3)], lambda x, w, b: (
        F.conv2d(_t(x), _t(w)[:, None], stride=2, dilation=2, groups=3) + _t(b)).numpy()),
    "batch_matmul": (BATCH_MATMUL, [(2, 3, 4), (2, 4, 2), (2, 3, 2)],
                     lambda a, b, c: (torch.bmm(_t(a), _t(b)) + _t(c)).numpy()),
    # the init of the max is a tensor input: the reduction combines with it (max(init, max over row))
    "row_max_sub": (ROW_MAX_SUB, [(3, 4), (3,)],
                    lambda x, m0: x - np.maximum(m0, x.max(axis=1))[:, None]),
    "max_pool_padded_then_reduce": (POOL_REDUCE, [(1, 5, 5, 2)], lambda x: F.max_pool2d(
        _t(x).permute(0, 3, 1, 2), 3, stride=2, padding=1).permute(0, 2, 3, 1).sum(dim=1, keepdim=True).numpy()),
    "insert_slice_transpose": (SLICES, [(2, 3), (4, 5)], _slices_ref),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_meaning_in_both_domains_matches_torch(name):
    text, shapes, ref = CASES[name]
    rng = np.random.default_rng(3)
    inputs = [rng.integers(-3, 4, size=s).astype(np.float32) for s in shapes]
    want = ref(*inputs)
    fn = _fn(text)
    (num,) = _numeric(fn, inputs)
    np.testing.assert_array_equal(num, want)
    (sym,) = _symbolic_then_substituted(fn, inputs)
    np.testing.assert_array_equal(sym, want)


NEGATE = """
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %r = tosa.add %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = tosa.sin %r : (tensor<3xf32>) -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}"""


@register_semantics
class _SubtractingAdd(TensorSemantics):
    @impl(tosa.AddOp)
    def add_as_sub(self, op, a):
        return [self.d.binary("sub", a[0], a[1])]


def test_a_subclass_overrides_one_op_and_inherits_the_rest():
    fn = _fn(NEGATE)
    add = next(op for op in fn.walk() if op.name == "tosa.add")
    x, y = np.array([1, 2, 3], np.float32), np.array([5, 1, 0], np.float32)
    np.testing.assert_array_equal(_SubtractingAdd(NumpyDomain()).apply(add, [x, y]), [[-4, 1, 3]])
    np.testing.assert_array_equal(TensorSemantics(NumpyDomain()).apply(add, [x, y]), [[6, 3, 3]])
    assert _SubtractingAdd.impls[linalg.MatmulOp] is TensorSemantics.impls[linalg.MatmulOp]


@pytest.mark.parametrize("domain", ["numpy", "symbolic"])
def test_an_op_without_semantics_is_named_with_its_domain(domain):
    fn = _fn(NEGATE)
    sin = next(op for op in fn.walk() if op.name == "tosa.sin")
    d = NumpyDomain() if domain == "numpy" else S.SymbolicDomain(S.Ctx("uf"))
    with pytest.raises(SemanticsError, match=f"no {domain} semantics for 'tosa.sin'") as e:
        TensorSemantics(d).apply(sin, [np.zeros(3, np.float32)])
    assert e.value.op is sin


def test_isel_verify_proves_a_padded_conv_on_hlscnn(tmp_path, step_opt):
    # tensor.pad had numpy semantics only; with one table the host pad before HLSCNN is proven too
    f = tmp_path / "padconv.mlir"
    f.write_text(PAD_CONV.replace("@f", "@padconv"))
    r = step_opt([str(f), "-p", "isel-verify{targets=hlscnn}", "-o", "/dev/null"])
    assert r.code == 0, r.err
    # 1 x 3 x 4 x 4 outputs, one hlscnn.conv2d
    assert r.err.splitlines()[0] == (f"{f}:2:1: remark: isel-verify: @padconv: 1 invocations (hlscnn=1) "
                                     "equivalent to the input on all 48 outputs (z3: unsat)")


def test_term_estimate_counts_a_reduction_generic_over_its_whole_domain():
    from steplus.passes.isel.equivalence import op_terms

    fn = _fn(ROW_MAX_SUB)
    red, ew = [op for op in fn.walk() if op.name == "linalg.generic"]
    # the body (maximumf, yield) runs at each of the 3 x 4 domain points, not once per result element
    assert op_terms(red) == 3 * 4 * 2
    assert op_terms(ew) == 3 * 4 * 2
    conv = next(op for op in _fn(DEPTHWISE).walk() if op.name == "linalg.depthwise_conv_2d_nchw_chw")
    assert op_terms(conv) == 2 * (3 * 3 * 3) * (2 * 2)  # a product and a sum per output and kernel tap


EMBEDDING = """
#m0 = affine_map<(d0, d1) -> (d0, 0)>
#m1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%ids: tensor<3x1xi64>, %table: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %e = tensor.empty() : tensor<3x3xf32>
  %r = linalg.generic {indexing_maps = [#m0, #m1], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<3x1xi64>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %j = linalg.index 1 : index
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %table[%k, %j] : tensor<5x3xf32>
    linalg.yield %v : f32
  } -> tensor<3x3xf32>
  func.return %r : tensor<3x3xf32>
}"""


def test_a_lookup_by_symbolic_index_is_a_located_isel_verify_error(tmp_path, step_opt):
    # step-run evaluates the lookup; isel-verify cannot index a tensor by a term and says so at the op
    f = tmp_path / "emb.mlir"
    f.write_text(EMBEDDING)
    ids = np.array([[4], [0], [2]], np.float32)
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    (y,) = _numeric(_fn(EMBEDDING), [ids, table])
    np.testing.assert_array_equal(y, table[[4, 0, 2]])
    r = step_opt([str(f), "-p", "isel-verify", "-o", "/dev/null"])
    assert r.code == 1
    assert r.err.splitlines()[0] == (f"{f}:6:3: error: isel-verify: casting a symbolic value to index "
                                     "is not supported")


HALF_DIV = """
#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %two = arith.constant 2.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %two : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}"""
HALF_MUL = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = arith.constant dense<VALUE> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.mul ins(%x, %h : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}"""


def test_a_counterexample_over_functions_no_spec_uses_proves_nothing():
    from steplus.passes.isel.equivalence import AbstractionGap, prove

    # x / 2 and x * 0.5 are equal numbers but different terms once / is uninterpreted: not an error
    verdict, n = prove(_fn(HALF_DIV), _fn(HALF_MUL.replace("VALUE", "0.5")), "uf", timeout_ms=20000)
    assert n == 4 and isinstance(verdict, AbstractionGap) and verdict.status == "unknown"
    assert "uninterpreted fdiv" in verdict.reason
    # with only + and · in play a counterexample stands: x * 0.5 is not x * 0.25
    verdict, _ = prove(_fn(HALF_MUL.replace("VALUE", "0.5")), _fn(HALF_MUL.replace("VALUE", "0.25")), "uf",
                       timeout_ms=20000)
    assert verdict.status == "sat" and not isinstance(verdict, AbstractionGap)
