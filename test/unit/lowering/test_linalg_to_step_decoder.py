"""A whole MoE decoder layer (issue 18 items 2-4) at small shapes: the recognizers lower
its attention and MoE FFN; convert-linalg-to-step its RMSNorms, projections (the 1/sqrt(d)
scale of q fused into the q projection, the first residual into the output projection),
the last residual add and the router (logits + the step library's row top-k functions).
Running every lowered part in the fabric's functional mode — the MoE bound to the indices
the lowered router computed, only two views and a reshape (no arithmetic) in torch between
them — gives the PyTorch module's output (rtol 1e-5, f32)."""

from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import REPO  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import run_part  # noqa: E402

from steplus.examples.workloads.decoder_torch import CONFIGS, DecoderLayer, decoder_inputs  # noqa: E402

DENSE = "tile=4x32x32 schedule=mnk"


def _layer(model: str, cached: int):
    cfg = CONFIGS[model].small()
    layer = DecoderLayer(cfg)
    args = decoder_inputs(cfg, batch=4, cached=cached, seed=7)
    return cfg, layer, args, torch.export.export(layer, args)


BOOKKEEPING = ("sym_size", "_assert_scalar", "sym_constrain_range", "ge", "le")


def _run_with_fabric(ep, low, args):
    """Interpret the exported graph: a node a lowered part computes takes the fabric's
    value; a node a part covers (its inside) is not run; the rest runs in torch.
    Returns (output, parts run in order, the ops torch ran)."""
    owner = {out: p for p in low.graphs for out in p.outputs}
    inside = {n.name for p in low.graphs for n in p.covered} - set(owner)
    done: dict = {}
    ran, torch_ops = [], []

    class Fabric(torch.fx.Interpreter):
        def run_node(self, n):
            part = owner.get(n.name)
            if part is None:
                if n.name in inside or any(b in str(n.target) for b in BOOKKEEPING):
                    return None
                if n.op == "call_function":
                    torch_ops.append(str(n.target))
                return super().run_node(n)
            if id(part) not in done:
                env = {node.name: v.detach().numpy() for node, v in self.env.items()
                       if isinstance(v, torch.Tensor)}
                routing = None
                if part.kind == "moe":  # the router part's indices and weights (the fabric's)
                    (router,) = [p for p in low.graphs if p.role == "router"]
                    weights, idx = (env[name] for name in router.outputs)
                    assert np.array_equal(idx, np.round(idx))
                    routing = (idx.astype(np.int64), weights)
                done[id(part)] = run_part(part, env, routing)
                ran.append(part.role or part.kind)
            return torch.from_numpy(done[id(part)][n.name].astype(np.float32))

    out = Fabric(ep.graph_module, garbage_collect_values=False).run(*args)
    return (out[0] if isinstance(out, tuple) else out), ran, torch_ops


PARTS = ["norm", "projection", "attention", "projection", "norm", "router", "moe",
         "elementwise"]  # graph order: RMSNorm, q/k/v (q scaled), ..., the last residual


@pytest.mark.parametrize("model,tile_n,cached", [("qwen", 2, 40), ("mixtral", None, 31)])
def test_the_decoder_layer_on_the_fabric_equals_the_pytorch_module(model, tile_n, cached):
    cfg, layer, args, ep = _layer(model, cached)
    expected = layer(*args).detach().numpy()
    low = lower_exported(ep, tile_n=tile_n, tile_f=16, dense=DENSE)
    got, ran, torch_ops = _run_with_fabric(ep, low, args)
    assert ran == PARTS
    # what torch still runs: views of row-major memory, no arithmetic
    assert sorted(torch_ops) == ["aten.reshape.default"] + ["aten.view.default"] * 2
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_the_unlowered_glue_is_one_located_remark():
    _cfg, _layer_mod, _args, ep = _layer("qwen", 40)
    low = lower_exported(ep, tile_n=2, tile_f=16, dense=DENSE)
    (glue,) = [r for r in low.remarks if "not lowered by the recognizers" in r.message]
    assert glue.where.endswith("decoder_torch.py:" + str(_line("k_new = (h @ w_k).view")))
    assert glue.message == ("3 op(s) outside the recognized layers are not lowered by the "
                             "recognizers nor by convert-linalg-to-step (option dense) "
                             "(aten.reshape.default, aten.view.default)")


def _line(text: str) -> int:
    src = (REPO / "examples" / "workloads" / "decoder_torch.py").read_text().splitlines()
    return next(i + 1 for i, ln in enumerate(src) if text in ln)


def test_bf16_arguments_keep_their_element_type():
    """Shapes-only export (meta, bf16): every dense part loads the layer's arguments
    (x, weights) as bf16 tiles and what another part computed as f32 (parts store f32)."""
    from steplus.dialects.step import ops as so

    cfg = CONFIGS["mixtral"].small()
    args = decoder_inputs(cfg, batch=4, cached=40, device="meta", dtype=torch.bfloat16)
    ep = torch.export.export(DecoderLayer(cfg), args)
    placeholders = {n.name for n in ep.graph.nodes if n.op == "placeholder"}
    low = lower_exported(ep, dense=DENSE)
    dense = [p for p in low.graphs if p.kind == "dense"]
    assert [len(p.outputs) for p in dense if p.role == "projection"] == [3, 1]  # q/k/v; o
    kinds: set = set()
    for p in dense:
        loads = [o for o in p.module.walk() if isinstance(o, so.LinearOffChipLoadOp)]
        got = [str(o.output.type.element.scalar) for o in loads]
        want = ["bf16" if p.inputs[f"arg{arg}"] in placeholders else "f32"
                for arg, _view in p.lowered.loads]
        assert got == want
        kinds |= set(got)
        stores = [o for o in p.module.walk() if isinstance(o, so.LinearOffChipStoreOp)]
        assert len(stores) == len(p.outputs)
    assert kinds == {"bf16", "f32"}


def test_regions_that_cannot_be_tiled_are_remarks():
    """A dense tile of 3 rows divides no row count here (B = 4; q has 4 x 16 rows): every
    region and the router is a remark naming its nodes and the option, nothing is lowered
    in their place, and the glue remark counts their ops: 19 + 3 views + 1 reshape."""
    _cfg, _layer_mod, _args, ep = _layer("qwen", 40)
    low = lower_exported(ep, tile_n=2, tile_f=16, dense="tile=3x32x32 schedule=mnk")
    assert sorted(p.kind for p in low.graphs) == ["attention", "moe"]
    regions = [r.message for r in low.remarks if r.message.startswith("not lowered (")]
    assert len(regions) == 5
    assert regions[0] == ("not lowered (pow_1, mean, add, rsqrt, mul, mul_1): element-wise "
                          "'square': tile size 3 does not divide M=4 (option tile; padding is "
                          "not supported) (option dense)")
    assert any(r.message == "router not lowered: linalg.matmul #0: tile size 3 does not "
               "divide M=4 (option tile; padding is not supported) (option dense)"
               for r in low.remarks)
    assert low.remarks[-1].message.startswith("23 op(s) outside the recognized layers")


@pytest.mark.parametrize("model,fn", [("qwen", "row_softmax_topk[2]"),
                                      ("mixtral", "row_topk_softmax[2]")])
def test_the_lowered_router_equals_the_modules_route(model, fn):
    """The router graph: logits matmul, then the router form's row function and the
    indices; on the fabric its weights and indices equal `TopKMoE.route` (torch)."""
    from steplus.dialects.step import ops as so

    cfg, layer, args, ep = _layer(model, 31)
    low = lower_exported(ep, tile_n=2, tile_f=16, dense=DENSE)
    (router,) = [p for p in low.graphs if p.role == "router"]
    fns = [a.fn.data for a in router.module.walk() if isinstance(a, so.ApplyOp)]
    assert fns == ["matmul", "add", "zero", fn, "row_topk_index[2]"]
    h = torch.randn(4, cfg.hidden, generator=torch.Generator().manual_seed(3))
    idx, weights = layer.moe.route(h, args[9])  # args[9]: w_router
    got = run_part(router, {router.inputs["arg0"]: h.numpy(),
                            router.inputs["arg1"]: args[9].numpy()})
    w_name, i_name = router.outputs
    np.testing.assert_array_equal(got[i_name], idx.numpy())
    np.testing.assert_allclose(got[w_name], weights.numpy(), rtol=1e-5)
