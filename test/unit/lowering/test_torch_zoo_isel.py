"""Issue 26 item 6: an MoE layer reaches the ILA accelerators through the torch.export recognition.

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
