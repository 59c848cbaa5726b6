"""Real PyTorch modules through the dense ATen path (issue 26 items 1-3): modules written
the way the PyTorch docs and HuggingFace write them, with their weights as `nn.Parameter`s,
exported with `torch.export` as they are (no rewritten `forward`), lowered with
`lower_exported(ep, dense=...)` and run on the fabric's functional mode with
`run_exported`: the output equals the module's (rtol 1e-5, f32), and every part has a
cycle count (`part_cycles`, the fabric simulator's timing mode).

- parameters are off-chip tensors: `nn.Linear`/`nn.LayerNorm`/`nn.RMSNorm` weights are
  the placeholders the parts load, their values read from the exported program;
- shapes: rank 3 and 4 inputs fold their leading dims into the rows (`[B, S, D]` ->
  `[B*S, D]`), biases broadcast along rows, views that keep the last dim join a region;
- ops: `nn.Linear` (bias or not), GELU (exact and tanh), ReLU, ReLU6, SiLU, LayerNorm,
  RMSNorm (module and the HuggingFace form), softmax over the last dim;
- what cannot be lowered (a convolution with an even kernel's 'same' padding, an integer tensor)
  is not lowered — a remark at the model's line — and runs in torch: never a different
  computation.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from steplus.dialects.step import ops as so  # noqa: E402
from steplus.lowering.linalg_to_step import glue  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402


class TransformerMLP(nn.Module):
    """A ViT/BERT-style block tail: fc1 -> GELU -> fc2, residual, LayerNorm, a ReLU6 head."""

    def __init__(self, dim=16, hidden=32, classes=8, approximate="none"):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU(approximate=approximate)
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)
        self.head_act = nn.ReLU6()

    def forward(self, x):
        h = self.norm(self.fc2(self.act(self.fc1(x))) + x)
        return self.head_act(self.head(h)).softmax(dim=-1)


class LlamaRMSNorm(nn.Module):
    """HuggingFace's LlamaRMSNorm."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class LlamaMLP(nn.Module):
    """HuggingFace's LlamaMLP after its RMSNorm, with the residual."""

    def __init__(self, hidden_size=16, intermediate_size=32):
        super().__init__()
        self.post_attention_layernorm = LlamaRMSNorm(hidden_size)
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(self.act_fn(self.gate_proj(h)) * self.up_proj(h))


class ImageHead(nn.Module):
    """A classifier on NCHW features: flatten the pixels, RMSNorm (nn.RMSNorm), ReLU MLP."""

    def __init__(self, channels=16, classes=8):
        super().__init__()
        self.norm = nn.RMSNorm(channels)
        self.fc = nn.Linear(channels, 32)
        self.relu = nn.ReLU()
        self.out = nn.Linear(32, classes)

    def forward(self, x):  # x: [B, H, W, C] (channels last)
        return self.out(self.relu(self.fc(self.norm(x))))


def _randomize(module, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():  # LayerNorm/RMSNorm weights away from 1, biases from 0
            p.copy_(torch.randn(p.shape, generator=g) * 0.5 + (1.0 if p.dim() == 1 else 0.0))
    return module.eval()


def _export(module, *args):
    return torch.export.export(module, args)


@pytest.fixture(scope="module")
def mlp():
    m = _randomize(TransformerMLP(), 1)
    x = torch.randn(2, 4, 16, generator=torch.Generator().manual_seed(2))
    return m, (x,), _export(m, x)


@pytest.fixture(scope="module")
def llama():
    m = _randomize(LlamaMLP(), 3)
    x = torch.randn(2, 4, 16, generator=torch.Generator().manual_seed(4))
    return m, (x,), _export(m, x)


def _check(module, args, ep, dense, parts):
    low = lower_exported(ep, dense=dense)
    out, ran, torch_ops = run_exported(ep, low, args)
    assert ran == parts  # part roles, in graph order
    expected = module(*args).detach().numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    cycles = [part_cycles(p) for p in low.graphs]
    assert all(c > 0 for c in cycles)
    return low, torch_ops


def _functions(part) -> list[str]:
    return [a.fn.data for a in part.module.walk() if isinstance(a, so.ApplyOp)]


def test_transformer_mlp_runs_on_the_fabric_equal_to_torch(mlp):
    module, args, ep = mlp
    low, torch_ops = _check(module, args, ep, "tile=4x16x16", ["projection"] * 3)
    assert torch_ops == []  # everything, the views of [2, 4, 16] included, on the fabric
    fc1, fc2, head = low.graphs
    # the parameters are the parts' off-chip inputs, read by name from the program
    assert fc1.inputs == {"arg0": "x", "arg1": "p_fc1_weight", "arg2": "p_fc1_bias"}
    assert fc2.inputs == {"arg0": "gelu", "arg1": "p_fc2_weight", "arg2": "p_fc2_bias",
                          "arg3": "x", "arg4": "p_norm_weight", "arg5": "p_norm_bias"}
    # nn.Linear's [out, in] weight read transposed, the bias a row broadcast, exact GELU
    assert _functions(fc1) == ["matmul_t", "add", "zero", "add", "gelu"]
    # fc2 + bias + residual, LayerNorm: mean, centred variance, rsqrt, affine
    assert _functions(fc2) == [
        "matmul_t", "add", "zero", "add", "add", "row_sum", "add", "zero",
        "div_scalar[16.0]", "sub", "square", "row_sum", "add", "zero", "div_scalar[16.0]",
        "add_scalar[9.999999747378752e-06]", "rsqrt", "mul", "mul", "add"]
    # head + ReLU6 (max then min) + softmax (row max, exp, row sum, divide)
    assert _functions(head) == [
        "matmul_t", "add", "zero", "add", "max_scalar[0.0]", "min_scalar[6.0]", "row_max",
        "max", "neg_inf", "sub", "exp", "row_sum", "add", "zero", "div"]


def test_gelu_tanh_lowers_to_its_formula():
    m = _randomize(TransformerMLP(approximate="tanh"), 5)
    x = torch.randn(2, 4, 16, generator=torch.Generator().manual_seed(6))
    low, _ = _check(m, (x,), _export(m, x), "tile=8x16x16", ["projection"] * 3)
    assert "tanh" in _functions(low.graphs[0])


def test_llama_mlp_with_rmsnorm_equals_torch(llama):
    module, args, ep = llama
    low, torch_ops = _check(module, args, ep, "tile=4x16x16 schedule=mn_mk",
                            ["norm", "projection", "projection"])
    assert torch_ops == []
    norm, gate_up, down = low.graphs
    assert norm.inputs == {"arg0": "x", "arg1": "p_post_attention_layernorm_weight"}
    # gate and up share their left operand: one part, two outputs; silu * up fused
    assert gate_up.outputs == ["mul_2"]
    assert _functions(gate_up).count("matmul_t") == 2 and "silu" in _functions(gate_up)


def test_rank_4_channels_last_features_fold_into_rows():
    m = _randomize(ImageHead(), 7)
    x = torch.randn(2, 3, 3, 16, generator=torch.Generator().manual_seed(8))
    low, torch_ops = _check(m, (x,), _export(m, x), "tile=6x8x16 schedule=mn_mk",
                            ["norm", "projection", "projection"])
    assert torch_ops == []
    # [2, 3, 3, 16] is read as 18 rows of 16; the RMSNorm's eps is torch's f32 epsilon
    assert low.graphs[0].lowered.loads[0] == (0, (18, 16))
    assert "add_scalar[1.1920928955078125e-07]" in _functions(low.graphs[0])


class ConvThenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 2, padding="same")  # one side more: not lowered
        self.fc = nn.Linear(4, 4)

    def forward(self, x, tokens):
        y = self.conv(x).permute(0, 2, 3, 1)        # NCHW -> NHWC
        return self.fc(y).softmax(dim=1), tokens + 1  # softmax over H (moved), an int add


@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel:UserWarning")
def test_what_cannot_be_lowered_stays_in_torch_with_a_remark():
    m = _randomize(ConvThenLinear(), 9)
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(10))
    tokens = torch.arange(6).reshape(2, 3)
    ep = _export(m, x, tokens)
    low = lower_exported(ep, dense="tile=4x4x4")
    # the NCHW -> NHWC permute (a gather of elements), the softmax over dim 1 (moved to
    # the last dim and back) and the linear
    assert [p.role for p in low.graphs] == ["move", "move", "norm", "move", "projection"]
    fc = low.graphs[-1]
    assert _functions(fc) == ["matmul_t", "add", "zero", "add"]
    (rest,) = [r for r in low.remarks if "not lowered by the recognizers" in r.message]
    for op in ("aten.conv2d.padding", "aten.add.Tensor"):
        assert op in rest.message
    assert "aten.softmax.int" not in rest.message
    (y, t), ran, torch_ops = run_exported(ep, low, (x, tokens))
    want_y, want_t = m(x, tokens)
    np.testing.assert_allclose(y.numpy(), want_y.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert torch.equal(t, want_t)  # the integer add ran in torch: exact
    assert ran == ["move", "projection", "move", "norm", "move"]
    assert sorted(torch_ops) == ["aten.add.Tensor", "aten.conv2d.padding"]


def test_a_row_op_whose_row_is_several_tiles_is_a_remark(mlp):
    """LayerNorm and softmax reduce whole rows: with N tiled (8 of 16 columns) the
    centred value would wait for its row's mean; the part is a remark naming the option."""
    _module, _args, ep = mlp
    low = lower_exported(ep, dense="tile=4x8x16")
    msgs = [r.message for r in low.remarks if r.message.startswith("not lowered (")]
    assert any("tile N whole" in m and "(option dense)" in m for m in msgs)


@pytest.mark.parametrize("s,out,kind", [
    ((2, 4, 16), (2, 4, 16), "full"), ((16,), (2, 4, 16), "row"),
    ((1, 1, 16), (2, 4, 16), "row"), ((2, 4, 1), (2, 4, 16), "col"),
    ((4, 16), (2, 4, 16), None), ((2, 1, 16), (2, 4, 16), None)])
def test_broadcasts_of_the_folded_view(s, out, kind):
    assert glue.bcast(s, out) == kind


def test_fold():
    assert glue.fold((2, 3, 5, 7)) == (30, 7)
    assert glue.fold((7,)) == (1, 7)
    assert glue.fold((4, 7)) == (4, 7)


class TokenClassifier(nn.Module):
    """Embedding + learned positions (per token) + dropout (eval) + a Linear head."""

    def __init__(self, vocab=20, dim=16, classes=8):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens, pos):
        return self.out(self.drop(self.tok_embeddings(tokens) + pos))


def test_embedding_is_a_gather_driven_by_the_index_stream():
    m = _randomize(TokenClassifier(), 11)
    g = torch.Generator().manual_seed(12)
    tokens = torch.randint(0, 20, (2, 6), generator=g)
    pos = torch.randn(2, 6, 16, generator=g)
    ep = _export(m, tokens, pos)
    low, torch_ops = _check(m, (tokens, pos), ep, "tile=4x8x16",
                            ["gather", "elementwise", "projection"])
    gather = low.graphs[0]
    assert gather.inputs == {"arg0": "tokens", "arg1": "p_tok_embeddings_weight"}
    ops = [o for o in next(iter(gather.module.body.block.ops)).body.block.ops]
    load, rows, store = ops
    assert isinstance(load, so.LinearOffChipLoadOp) and isinstance(rows, so.RandomOffChipLoadOp)
    assert isinstance(store, so.LinearOffChipStoreOp)
    assert str(load.output.type) == "!step.stream<[12], !step.tile<1x1xi64>>"  # addresses
    assert str(rows.output.type) == "!step.stream<[12], !step.tile<1x16xf32>>"
    assert rows.operands[0] is load.output
    assert torch_ops == []  # the eval-mode dropout is the identity: a view in the region


class ConvBNBlock(nn.Module):
    """torchvision-style: conv, BatchNorm2d, in-place ReLU, residual; a BatchNorm1d."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.bn_feat = nn.BatchNorm1d(6)

    def forward(self, x, feat):
        out = self.bn(self.conv(x))
        out += x
        return self.relu(out), self.bn_feat(feat)


def test_eval_batch_norm_folds_into_a_per_row_affine():
    m = _randomize(ConvBNBlock(), 13)
    g = torch.Generator().manual_seed(14)
    with torch.no_grad():  # running statistics of a trained model
        for bn in (m.bn, m.bn_feat):
            bn.running_mean.copy_(torch.randn(bn.num_features, generator=g))
            bn.running_var.copy_(torch.rand(bn.num_features, generator=g) + 0.5)
    x, feat = torch.randn(2, 4, 4, 4, generator=g), torch.randn(3, 6, generator=g)
    ep = _export(m, x, feat)
    low = lower_exported(ep, dense="tile=8x2")
    (y, f), ran, torch_ops = run_exported(ep, low, (x, feat))
    want_y, want_f = m(x, feat)
    np.testing.assert_allclose(y.numpy(), want_y.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f.numpy(), want_f.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert torch_ops == []
    assert ran == ["im2col", "conv", "move", "elementwise", "elementwise"]  # conv of 2 images
    bn2d = next(p for p in low.graphs if "batch_norm" in p.outputs[0] or
                any("batch_norm" in k for k in p.derive))
    # NCHW [2, 4, 4, 4] is read as 32 rows of 4: one scale and one shift per row (n, c, h)
    assert sorted(bn2d.derive) == ["batch_norm:scale", "batch_norm:shift"]
    assert _functions(bn2d) == ["mul", "add", "add", "max_scalar[0.0]"]  # + x, in-place ReLU
    shapes = {name: view for (arg, view), name in
              zip(bn2d.lowered.loads, [bn2d.inputs[f"arg{a}"] for a, _ in bn2d.lowered.loads])}
    assert shapes["batch_norm:scale"] == (32, 1)


def test_training_mode_ops_are_not_lowered():
    m = TokenClassifier().train()
    tokens = torch.randint(0, 20, (2, 6))
    ep = _export(m, tokens, torch.randn(2, 6, 16))
    low = lower_exported(ep, dense="tile=4x8x16")
    (rest,) = [r for r in low.remarks if "not lowered by the recognizers" in r.message]
    assert "aten.dropout.default" in rest.message  # random numbers: never lowered


class PickRows(nn.Module):
    """Rows of a computed tensor picked by a runtime index tensor."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, idx):
        return torch.index_select(self.proj(x), 0, idx)


def test_index_select_is_a_gather_of_a_computed_tensor():
    m = _randomize(PickRows(), 15)
    x, idx = torch.randn(6, 8), torch.tensor([5, 0, 5, 2])
    ep = _export(m, x, idx)
    low, torch_ops = _check(m, (x, idx), ep, "tile=2x8", ["projection", "gather"])
    assert torch_ops == []
    gather = low.graphs[0]
    assert gather.inputs == {"arg0": "idx", "arg1": "linear"}
    assert "!step.tile<1x8xf32>" in str(gather.module)  # rows of the stored f32 result


class PatchEmbedTail(nn.Module):
    """ViT's learned position embedding ([1, N, D] over the batch) and a per-sample gate
    ([B, 1, D] over the tokens): broadcasts a move part materializes (rows re-read)."""

    def __init__(self, tokens=3, dim=8):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, gate):
        return (self.proj(x) + self.pos_embed) * gate


def test_batch_broadcasts_are_materialized_by_move_parts():
    m = _randomize(PatchEmbedTail(), 16)
    g = torch.Generator().manual_seed(17)
    x, gate = torch.randn(2, 3, 8, generator=g), torch.randn(2, 1, 8, generator=g)
    ep = _export(m, x, gate)
    low, torch_ops = _check(m, (x, gate), ep, "tile=3x8", ["move", "move", "projection"])
    assert torch_ops == []
    pos, gt = low.graphs[:2]
    assert pos.inputs == {"arg0": "p_pos_embed"} and gt.inputs == {"arg0": "gate"}
    addrs = [next(o for o in p.module.walk() if isinstance(o, so.MetadataGenOp))
             for p in (pos, gt)]
    assert list(addrs[0].values.get_values()) == [0, 1, 2, 0, 1, 2]  # [N, D] per sample
    assert list(addrs[1].values.get_values()) == [0, 0, 0, 1, 1, 1]  # one row per sample


class FillOperands(nn.Module):
    """Creation ops of one value read as data: a zero residual (`torch.zeros`), a constant
    offset (`torch.full`), `zeros_like(x) - x`."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x) + torch.zeros(4, 8)
        y = torch.relu(y) * torch.full((4, 8), 0.5)
        return torch.zeros_like(y) - y


def test_creation_ops_of_one_value_are_scalars_of_the_bodies():
    """`torch.zeros`/`full`/`zeros_like` read by element-wise ops are neither loaded nor
    computed by torch: scalar functions (`add_scalar[0.0]`, `mul_scalar[0.5]`,
    `rsub_scalar[0.0]`); the fabric equals torch."""
    torch.manual_seed(5)
    m, x = FillOperands().eval(), torch.randn(4, 8)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=4x8x8")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ran == ["projection"] and torch_ops == []
    (part,) = low.graphs
    fns = [a.fn.data for a in part.module.walk() if isinstance(a, so.ApplyOp)]
    assert {"add_scalar[0.0]", "mul_scalar[0.5]", "rsub_scalar[0.0]"} <= set(fns)
    assert sorted(part.inputs.values()) == ["p_fc_bias", "p_fc_weight", "x"]


class PatchNorm(nn.Module):
    """`nn.LayerNorm([S, D])` over the last two dims (a whole sequence normalized), between
    a projection and a ReLU."""

    def __init__(self):
        super().__init__()
        self.fc, self.norm = nn.Linear(8, 8), nn.LayerNorm([3, 8])

    def forward(self, x):
        return torch.relu(self.norm(self.fc(x)))


def test_layer_norm_over_several_dims_is_a_region_of_its_own():
    """The norm's rows are its normalized dims flattened (`[2, 3, 8]` -> `[2, 24]`, the
    `[3, 8]` weight and bias one row of 24): a region between the projection and the
    ReLU; the fabric equals torch."""
    torch.manual_seed(7)
    m = PatchNorm().eval()
    with torch.no_grad():  # not the identity affine of a fresh LayerNorm
        m.norm.weight.normal_()
        m.norm.bias.normal_()
    x = torch.randn(2, 3, 8)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=2x24x8")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ran == ["projection", "norm", "elementwise"] and torch_ops == []
    (norm,) = [p for p in low.graphs if p.role == "norm"]
    assert norm.lowered.result_shapes == [(2, 24)]


class ColumnSoftmax(nn.Module):
    """Attention weights normalized over the queries (`dim=1` of `[B, S, T]`), then a
    projection."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(torch.softmax(x, dim=1))


def test_softmax_over_another_dim_is_moved_to_the_last():
    """The softmax of dim 1 is a gather to `[B, T, S]`, the row softmax (rows of S), a
    gather back; the fabric equals torch and torch computes nothing."""
    torch.manual_seed(8)
    m, x = ColumnSoftmax().eval(), torch.randn(2, 5, 4)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=2x4x4")
    out, ran, torch_ops = run_exported(ep, low, (x,))
    np.testing.assert_allclose(out.numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ran == ["move", "norm", "move", "projection"] and torch_ops == []
    soft = low.graphs[1]
    assert soft.lowered.result_shapes == [(8, 5)]  # B*T rows of the S softmaxed values
    assert all(part_cycles(p) > 0 for p in low.graphs)
