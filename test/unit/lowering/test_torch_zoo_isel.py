"""Issue 26 item 6: an MoE layer reaches the ILA accelerators through the torch.export recognition;
the other seven zoo models on the isel route as they are (both routes for every zoo model).

The HF Mixtral block of the zoo (`nn.ModuleList` of `nn.Linear` experts): the
router and the combine on the host, each expert's SwiGLU FFN exported by
torch-mlir at its token count, compiled by flexible isel and run on the ILA
simulators. Expected values: the torch module's output; the accelerators compute
in their own number formats (FlexASR's AdaptivFloat), so the agreement is the
isel route's usual one (a few percent relative error, as `step-run --backend ila`
reports for the example models), not float32's."""

from __future__ import annotations

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir", reason="torch-mlir is not installed")

from conftest import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "examples"))
from torch_zoo import ZOO  # noqa: E402
from torch_zoo.isel_moe import moe_on_ilas  # noqa: E402


@pytest.mark.slow  # ~20 s: four torch-mlir exports and isel runs
def test_the_mixtral_block_runs_its_experts_on_the_ilas():
    module, args = ZOO["mixtral_moe"].build()
    ep = torch.export.export(module, args)
    r = moe_on_ilas(ep, args)
    want = module(*args)[0].detach().numpy().reshape(r.output.shape)
    idx = torch.topk(torch.softmax(module.gate(args[0].view(-1, 32)), -1), 2).indices
    assert r.tokens == [int((idx == e).sum()) for e in range(4)]  # torch's routing
    assert sum(r.tokens) == 8 * 2
    assert r.invocations["flexasr"] > 0  # the expert projections went to an accelerator
    err = np.linalg.norm(r.output - want) / np.linalg.norm(want)
    assert err < 0.05, err
    assert all(e < 0.05 for e in r.expert_errors), r.expert_errors


# The isel route for the other seven: torch-mlir's linalg-on-tensors export of the module as it
# is, step-run's ILA pipeline, the ILA simulators. The accelerators isel picks (our own isel,
# pinned here) and the agreement with torch (the accelerators' number formats: a few percent).
ACCELERATORS = {
    "llama_mlp": {"flexasr"},             # projections as FlexASR linears
    "gqa_decode": {"flexasr"},            # projections
    "resnet_basic_block": {"hlscnn"},     # convolutions
    "mobilenet_v2_block": {"hlscnn"},     # convolutions (the depthwise one stays on the host)
    "transformer_encoder": {"flexasr"},
    "lstm_lm": {"flexasr"},               # LSTM cells, projections
    "gru_classifier": set(),              # FlexASR has no GRU: everything on the host
}


@pytest.mark.slow  # 4-11 s each: a torch-mlir export and isel
@pytest.mark.parametrize("name", sorted(ACCELERATORS))
def test_zoo_model_on_the_ila_route(name):
    import warnings

    from torch_mlir import fx

    from steplus.runtime.ila.host import run_function
    from steplus.tools.loading import load_module
    from torch_zoo.isel_moe import PIPELINE

    module, args = ZOO[name].build()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        text = str(fx.export_and_import(module, *args, output_type="linalg-on-tensors",
                                        func_name="forward"))
    compiled = load_module("<zoo>", PIPELINE, source=("<zoo>", text))
    inputs = [a.numpy() for a in torch.utils._pytree.tree_leaves(args)]
    (out, *_), stats = run_function(compiled, "forward", inputs, backend="ila")
    want = torch.utils._pytree.tree_leaves(module(*args))[0].detach().numpy()
    assert {k for k, v in stats.invocations.items() if v} == ACCELERATORS[name]
    err = np.linalg.norm(np.asarray(out) - want) / np.linalg.norm(want)
    assert err < 0.05, err
