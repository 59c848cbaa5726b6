"""The Allspark workload read from a torch.export graph equals the published shapes."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from examples.allspark.vit_timm import export  # noqa: E402
from steplus.lowering.torch_to_pim import workload_from_graph  # noqa: E402
from steplus.passes.allspark.orchestrate import orchestrate  # noqa: E402
from steplus.passes.allspark.vit import WorkloadError, build  # noqa: E402


@pytest.mark.parametrize("name,img", [("vit-t", 224), ("vit-b", 224), ("vit-b", 640)])
def test_graph_workload_equals_the_papers_shapes(name: str, img: int) -> None:
    got = workload_from_graph(export(name, img).graph, name, img)
    # ViT (Dosovitskiy et al., Table 1): ViT-B 768 wide, 12 heads of 64, 12 blocks, MLP
    # 3072 = 4 x 768, 16x16 patches; 224/16 = 14, 14^2 + 1 class token = 197 tokens
    [st] = got.stages
    width = {"vit-t": 192, "vit-b": 768}[name]
    side = img // 16
    assert (st.channels, st.heads * st.head_dim, st.blocks, st.mlp_ratio) == (
        width, width, 12, 4)
    assert (st.grid, st.tokens, st.merge_in) == ((side, side), side * side + 1, 3 * 16 * 16)
    assert got.stages == build(name, img).stages  # the same workload as the table


def test_graph_workload_schedules_like_the_named_model() -> None:
    got = workload_from_graph(export("vit-t", 224).graph, "vit-t", 224)
    a = orchestrate(got, 224, "allspark-16x16", bind=False)
    b = orchestrate("vit-t", 224, "allspark-16x16", bind=False)
    assert a.cycles == b.cycles


def test_graph_of_another_size_is_refused() -> None:
    with pytest.raises(WorkloadError, match="graph input is 224x224, not 640x640"):
        workload_from_graph(export("vit-t", 224).graph, "vit-t", 640)


def test_pytorch_vit_reaches_a_simulated_schedule() -> None:
    from steplus.dialects.pim import RingOp
    from steplus.runtime.pim.program import result_module, simulate_model

    got = workload_from_graph(export("vit-t", 224).graph, "vit-t", 224)
    res = orchestrate(got, 224, "allspark-16x16")
    module, op = result_module(res, "allspark-16x16")
    sim = simulate_model(op)
    assert sim.analytical == res.cycles
    assert sim.interaction == 0  # one global branch: no local-global interaction
    assert res.cycles <= sim.total  # hops only add
    assert any(isinstance(o, RingOp) for o in module.walk())  # lowered phase programs


def test_module_from_graph_schedules_from_its_own_ir() -> None:
    from xdsl.context import Context

    from steplus.dialects.pim import ModelOp
    from steplus.lowering.torch_to_pim import module_from_graph
    from steplus.passes.allspark.ir import PimOrchestratePass, workload_of
    from steplus.passes.allspark.lower import PimLowerPhasesPass
    from steplus.runtime.pim.program import simulate_module

    module = module_from_graph(export("vit-t", 224).graph, "vit-t", 224)
    op = next(o for o in module.walk() if isinstance(o, ModelOp))
    assert workload_of(op).stages == build("vit-t", 224).stages  # read back from the IR
    PimOrchestratePass().apply(Context(), module)
    PimLowerPhasesPass().apply(Context(), module)
    [sim] = simulate_module(module)
    assert sim.analytical == orchestrate("vit-t", 224, "allspark-16x16", bind=False).cycles
