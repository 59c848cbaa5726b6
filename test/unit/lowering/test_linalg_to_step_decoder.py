"""A whole MoE decoder layer (issue 18 items 3-4) at small shapes: the recognizers lower
its attention and MoE FFN, convert-linalg-to-step its projections, and running every
lowered part in the fabric's functional mode — the unlowered glue (RMSNorm, the
1/sqrt(d) scale, reshapes, the router, residual adds) in torch between them — gives
the PyTorch module's output (rtol 1e-5, f32)."""

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


def _run_with_fabric(ep, low, args):
    """Interpret the exported graph; every node a lowered part computes takes the
    fabric's value instead of torch's. Returns (output, parts run)."""
    owner = {out: p for p in low.graphs for out in p.outputs}
    done: dict = {}
    ran = []

    class Fabric(torch.fx.Interpreter):
        def run_node(self, n):
            part = owner.get(n.name)
            if part is None:
                return super().run_node(n)
            if id(part) not in done:
                env = {k: v.detach().numpy() for k, v in
                       ((node.name, self.env[node]) for node in self.env)
                       if isinstance(v, torch.Tensor)}
                routing = None
                if part.kind == "moe":  # the router's choices, as torch computed them
                    topk = next(x for x in self.env if str(x.target) == "aten.topk.default")
                    _values, idx = self.env[topk]
                    weights = _routing_weights(self.env, topk)
                    routing = (idx.numpy(), weights)
                done[id(part)] = run_part(part, env, routing)
                ran.append(part.kind)
            return torch.from_numpy(done[id(part)][n.name].astype(np.float32))

    out = Fabric(ep.graph_module, garbage_collect_values=False).run(*args)
    return (out[0] if isinstance(out, tuple) else out), ran


def _routing_weights(env, topk) -> np.ndarray:
    """The [B, K] tensor the experts' `weights[tok, slot]` gathers read."""
    gather = next(x for x in env if str(x.target) == "aten.index.Tensor")
    return env[gather.args[0]].detach().numpy()


@pytest.mark.parametrize("model,tile_n,cached", [("qwen", 2, 40), ("mixtral", None, 31)])
def test_the_decoder_layer_on_the_fabric_equals_the_pytorch_module(model, tile_n, cached):
    cfg, layer, args, ep = _layer(model, cached)
    expected = layer(*args).detach().numpy()
    low = lower_exported(ep, tile_n=tile_n, tile_f=16, dense=DENSE)
    assert sorted(p.kind for p in low.graphs) == ["attention", "dense", "dense", "moe"]
    got, ran = _run_with_fabric(ep, low, args)
    assert sorted(ran) == ["attention", "dense", "dense", "moe"]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_the_unlowered_glue_is_one_located_remark():
    _cfg, _layer_mod, _args, ep = _layer("qwen", 40)
    low = lower_exported(ep, tile_n=2, tile_f=16, dense=DENSE)
    (glue,) = [r for r in low.remarks if "not lowered by the recognizers" in r.message]
    assert glue.where.endswith("decoder_torch.py:" + str(_line("rms_norm(x, w_ln1")))
    assert glue.message.startswith("19 op(s) outside the recognized layers")
    for op in ("aten.rsqrt.default", "aten.mean.dim", "aten.add.Tensor", "aten.view.default"):
        assert op in glue.message


def _line(text: str) -> int:
    src = (REPO / "examples" / "workloads" / "decoder_torch.py").read_text().splitlines()
    return next(i + 1 for i, ln in enumerate(src) if text in ln)


def test_bf16_projections_keep_their_element_type():
    """Shapes-only export (meta, bf16): the projections load bf16 tiles, accumulate and
    store f32 (2 bytes per weight element off-chip, as the MoE and attention graphs)."""
    from steplus.dialects.step import ops as so

    cfg = CONFIGS["mixtral"].small()
    args = decoder_inputs(cfg, batch=4, cached=40, device="meta", dtype=torch.bfloat16)
    low = lower_exported(torch.export.export(DecoderLayer(cfg), args), dense=DENSE)
    dense = [p for p in low.graphs if p.kind == "dense"]
    assert [len(p.outputs) for p in dense] == [3, 1]  # q/k/v share their input; o alone
    for p in dense:
        loads = [o for o in p.module.walk() if isinstance(o, so.LinearOffChipLoadOp)]
        assert {str(o.output.type.element.scalar) for o in loads} == {"bf16"}
        stores = [o for o in p.module.walk() if isinstance(o, so.LinearOffChipStoreOp)]
        assert len(stores) == len(p.outputs)
