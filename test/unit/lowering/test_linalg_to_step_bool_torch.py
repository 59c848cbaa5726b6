"""Boolean tensors in the dense path (TORCH-WILD-3 item 1): masks a region holds as 0/1 floats,
against torch (rtol 1e-5 f32, 1e-2 bf16) on the fabric's functional mode, every part simulated.

- tensor-tensor compares (`x > y`, `y >= x`, `x != y`, row/column broadcast), compares with a
  number, `&`, `|`, `^`, `~` of masks, a bool user input;
- `torch.where(m, a, b)` (the library's `where_else[0.0](m, a) + where_then[0.0](m, b)`: exact,
  one term is 0), `torch.where(m, x, c)` (`where_else[c]`), `torch.where(m, c, y)` and
  `x.masked_fill(m, c)` (`where_then[c]`), `.bool()` of a float tensor (`ne_scalar[0.0]`),
  `m.any(-1, keepdim=True)` / `m.all(...)` (row max of the mask);
- a `-inf`/`inf` fill (`where(m, x, -inf)`, `masked_fill(m, float('inf'))`) is the library's
  `where_else[-inf]` / `where_then[inf]`: the fill is copied, exact in f32 and bf16;
- a mask read by an op torch runs (a NaN fill) is not lowered: torch computes it too, and the
  result is still the module's;
- the library functions' semantics against torch.where.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from steplus.dialects.step.functions import get_function  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402


class BoolForms(torch.nn.Module):
    def forward(self, x, y, keep):
        m = (x > y) & ~keep
        n = (x < 0.5) | (y >= x)
        a = torch.where(m, x, y)
        b = x.masked_fill(n, -1e4)
        c = torch.where(n, x, 0.0)
        d = torch.where(keep, 2.0, y)
        e = (a - b).bool()
        f = e.float() * c + d
        g = m.any(dim=-1, keepdim=True)
        h = (n ^ keep).all(dim=-1, keepdim=True)
        return f + g.float() - h.to(x.dtype) + (x != y).float()


class RowColumnCompares(torch.nn.Module):
    """Compares of a tensor with a row `[D]` and a column `[.., 1]` (its row means)."""

    def __init__(self):
        super().__init__()
        self.threshold = torch.nn.Parameter(torch.randn(8))

    def forward(self, x):
        above = x > self.threshold
        big = x >= x.mean(-1, keepdim=True)
        return torch.where(above | big, x, x * 0.5)


class InfiniteFills(torch.nn.Module):
    """`where(m, x, -inf)` and `masked_fill(m, +-inf)` outside an attention."""

    def forward(self, x, y):
        a = torch.where(x > y, x, float("-inf")) + 1.0
        b = x.masked_fill(x < y, float("inf")).masked_fill(y > 1.0, float("-inf"))
        return torch.cat([a, b * 2.0], dim=-1)


class NanFill(torch.nn.Module):
    """`where(m, x, nan)`: no library fill (NaN is no member name), left to torch (the
    compare with it: torch reads it as a bool)."""

    def forward(self, x, y):
        return torch.where(x > y, x, float("nan")) + 1.0


def _args(seed: int):
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(2, 3, 8, generator=g), torch.randn(2, 3, 8, generator=g)
    keep = torch.rand(2, 3, 8, generator=g) > 0.5
    y[0, 0, :3] = x[0, 0, :3]  # equal elements: ne/ge take both sides
    return x, y, keep


def _run(module, args, tile="2x8x8", rtol=1e-5):
    ep = torch.export.export(module.eval(), args)
    low = lower_exported(ep, dense=f"tile={tile} schedule=mnk")
    out, ran, torch_ops = run_exported(ep, low, args)
    want = module(*args)
    np.testing.assert_allclose(out.detach().float().numpy(), want.detach().float().numpy(),
                               rtol=rtol, atol=rtol / 10)
    assert all(part_cycles(p) > 0 for p in low.graphs)
    applied = sorted({o.fn.data for p in low.graphs for o in p.module.walk()
                      if o.name == "step.apply"})
    return low, ran, torch_ops, applied


def test_masks_where_and_masked_fill_are_lowered_and_equal_torch():
    low, ran, torch_ops, applied = _run(BoolForms(), _args(0))
    assert torch_ops == []  # no compare, logical op, where or cast left to torch
    assert set(ran) == {"elementwise"}
    for fn in ("gt", "ge", "ne", "lt_scalar[0.5]", "mul", "max", "rsub_scalar[1.0]",
               "where_else[0.0]", "where_then[0.0]", "where_then[-10000.0]",
               "where_then[2.0]", "ne_scalar[0.0]", "row_max"):
        assert fn in applied, fn


def test_masks_in_bf16_equal_torch():
    x, y, keep = _args(1)
    module = BoolForms().to(torch.bfloat16)
    _run(module, (x.bfloat16(), y.bfloat16(), keep), rtol=1e-2)


def test_compares_with_a_row_and_a_column_broadcast():
    torch.manual_seed(0)
    low, ran, torch_ops, applied = _run(RowColumnCompares(), (torch.randn(4, 8),), tile="4x8x8")
    assert torch_ops == []
    assert ran == ["norm"]  # one region (its row mean makes it a norm part)
    assert {"gt", "ge", "max", "where_else[0.0]", "where_then[0.0]"} <= set(applied)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_infinite_fills_are_lowered_and_exact(dtype):
    x, y, _ = _args(2)
    x, y = x.to(dtype), y.to(dtype)
    module = InfiniteFills()
    ep = torch.export.export(module, (x, y))
    low = lower_exported(ep, dense="tile=2x8x8 schedule=mnk")
    out, ran, torch_ops = run_exported(ep, low, (x, y))
    want = module(x, y).float()
    assert torch_ops == []  # the compares, fills and the cat all on the fabric
    applied = {o.fn.data for p in low.graphs for o in p.module.walk() if o.name == "step.apply"}
    assert {"where_else[-inf]", "where_then[inf]", "where_then[-inf]"} <= applied
    out = out.float()
    # the infinities where torch has them, with their signs; the finite elements as torch's
    assert torch.equal(torch.isposinf(out), torch.isposinf(want))
    assert torch.equal(torch.isneginf(out), torch.isneginf(want))
    assert torch.isinf(want).sum() > 8 and not torch.isnan(out).any()
    fin = torch.isfinite(want)
    rtol = 1e-5 if dtype == torch.float32 else 1e-2
    np.testing.assert_allclose(out[fin].numpy(), want[fin].numpy(), rtol=rtol, atol=rtol / 10)


def test_a_mask_torch_reads_stays_in_torch():
    x, y, _ = _args(2)
    ep = torch.export.export(NanFill(), (x, y))
    low = lower_exported(ep, dense="tile=2x8x8 schedule=mnk")
    out, ran, torch_ops = run_exported(ep, low, (x, y))
    want = NanFill()(x, y)
    assert torch_ops == ["aten.gt.Tensor", "aten.where.ScalarOther"]
    assert ran == ["elementwise"]  # the + 1.0
    assert torch.equal(torch.isnan(out), x <= y)
    np.testing.assert_allclose(out[x > y].numpy(), want[x > y].numpy(), rtol=1e-6)


@pytest.mark.parametrize("then", [True, False])
def test_where_families_are_torch_where(then):
    g = torch.Generator().manual_seed(3)
    m = (torch.rand(4, 1, generator=g) > 0.5).float()  # a column mask, broadcast
    x = torch.randn(4, 6, generator=g)
    f = get_function(f"where_{'then' if then else 'else'}[-2.5]")
    assert f is not None and f.arity == 2
    assert f.out_shape([(4, 1), (4, 6)]) == (4, 6) and f.flops([(4, 1), (4, 6)]) == 24
    want = torch.where(m.bool(), -2.5, x) if then else torch.where(m.bool(), x, -2.5)
    np.testing.assert_array_equal(f.numpy(m.numpy(), x.numpy()), want.numpy())
    assert get_function("where_then[nan]") is None  # a fill is a number or an infinity
    assert get_function("add_scalar[-inf]") is None  # only a fill may be infinite
    inf = get_function(f"where_{'then' if then else 'else'}[-inf]")
    assert inf is not None
    for dt in (np.float32, ml_dtypes.bfloat16):
        got = inf.numpy(m.numpy().astype(dt), x.numpy().astype(dt))
        assert got.dtype == dt  # the tile's dtype: -inf is exact in it
        want = torch.where(m.bool() == then, float("-inf"), x.to(torch.float32)).numpy()
        np.testing.assert_array_equal(got.astype(np.float32), want.astype(dt).astype(np.float32))


def _expand_mask(mask, dtype, tgt_len=None):
    """transformers' `AttentionMaskConverter._expand_mask` (BART, Whisper's decoder, OPT,
    CLIP's text model): `[bsz, seq_len]` -> `[bsz, 1, tgt_seq_len, src_seq_len]`."""
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


class ExpandMask(torch.nn.Module):
    def forward(self, x, attention_mask):
        return x + _expand_mask(attention_mask, x.dtype)


def test_transformers_expand_mask_lowers_its_bool_cast_and_masked_fill():
    """`inverted.masked_fill(inverted.to(torch.bool), finfo.min)`: the `.bool()` and the
    `masked_fill` are the library's `ne_scalar[0.0]` and `where_then[finfo.min]`; the
    integer mask's expand and its int64 -> float32 cast stay in torch (integer tensors)."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 1, 6, 6, generator=g)
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0  # the second sequence's last two tokens are padding
    low, ran, torch_ops, applied = _run(ExpandMask(), (x, mask), tile="2x6x6")
    assert torch_ops == ["aten.unsqueeze.default", "aten.unsqueeze.default",
                         "aten.expand.default", "aten.to.dtype"]
    assert {"rsub_scalar[1.0]", "ne_scalar[0.0]", "add",
            f"where_then[{float(torch.finfo(torch.float32).min)!r}]"} <= set(applied)


class MaskChain(torch.nn.Module):
    """40 masks each read by two masks: whether a mask is lowered (every reader lowered) is
    decided once per node, not once per path (2^40 paths)."""

    def forward(self, x):
        m = x > 0
        for i in range(40):
            m = (m & (x > i * 0.01)) ^ (m | (x < -i * 0.01))
        return torch.where(m, x, 0.0)


def test_a_deep_chain_of_masks_is_decided_once_per_node():
    from steplus.lowering.linalg_to_step import glue

    ep = torch.export.export(MaskChain(), (torch.randn(4, 8),))
    glue._mask_lowerable.cache_clear()
    nodes = [n for n in ep.graph.nodes if n.op == "call_function"]
    assert all(glue.lowerable(n) for n in nodes)
    info = glue._mask_lowerable.cache_info()
    masks = sum(glue._dtype(n) == glue.BOOL for n in nodes)
    assert info.misses == masks  # each mask's readers walked once (2^40 paths otherwise)


_LINALG_FILL = """#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel",
      "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x8xf32>)
      outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %2 = arith.cmpf ogt, %in, %in_1 : f32
    %3 = arith.select %2, %in, %cst : f32
    linalg.yield %3 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"""


@pytest.mark.parametrize("op", ["select", "addf"])
def test_torch_mlir_linalg_infinite_fill(tmp_path, op):
    """torch-mlir's `torch.where(x > y, x, -inf)`: `arith.select` of the compare with the
    constant 0xFF800000 is `where_else[-inf]` (and prints/parses back); an infinity an
    arithmetic op reads (`x + -inf`) is still a located error."""
    from steplus.lowering.linalg_to_step import lower_module
    from steplus.lowering.linalg_to_step.body import OpDiagnosticError
    from steplus.tools.loading import load_module

    text = _LINALG_FILL
    if op == "addf":
        text = text.replace("arith.select %2, %in, %cst : f32", "arith.addf %in, %cst : f32")
    path = tmp_path / "fill.mlir"
    path.write_text(text)
    module = load_module(str(path), None, False)
    if op == "addf":
        with pytest.raises(OpDiagnosticError,
                           match=r"element-wise .add_scalar\[-inf\]. has no step library"):
            lower_module(module, tile="2x8x8", schedule="mnk")
        return
    lower_module(module, tile="2x8x8", schedule="mnk")
    module.verify()
    applied = [o.fn.data for o in module.walk() if o.name == "step.apply"]
    assert applied == ["gt", "where_else[-inf]"]
    again = tmp_path / "step.mlir"
    again.write_text(str(module))
    reparsed = load_module(str(again), None, False)
    assert [o.fn.data for o in reparsed.walk() if o.name == "step.apply"] == applied
