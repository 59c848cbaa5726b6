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


# -- hierarchical and windowed models (Swin, PVT, Twins) -------------------------------------

from examples.allspark.zoo import export as zoo_export  # noqa: E402
from steplus.lowering.torch_to_pim import read_pt2, workload_from_ops  # noqa: E402
from steplus.passes.allspark.vit import Stage  # noqa: E402


def gemms(st: Stage) -> list[tuple[str, int, int, int]]:
    """(name, M, K, N) of one branch's GEMMs in one block of each block shape, and of the
    stage's embedding (over the whole grid)."""
    c, h, d, n, a = st.channels, st.heads, st.head_dim, st.tokens, st.mlp_ratio
    out = [("embed", st.grid[0] * st.grid[1], st.merge_in, c), ("qkv", n, c, 3 * h * d)]
    for g in st.groups:
        out += [(f"qk[kv={g.kv_tokens}]", n, d, g.kv_tokens), (f"av[kv={g.kv_tokens}]", n,
                                                                  g.kv_tokens, d)]
    return out + [("proj", n, h * d, c), ("fc1", n, c, a * c), ("fc2", n, a * c, c)]


def merged(st: Stage) -> dict[tuple[int, int, int], int]:
    """Block groups by shape (equal shapes in two groups cost the same as one group)."""
    out: dict[tuple[int, int, int], int] = {}
    for g in st.groups:
        key = (g.kv_tokens, g.extra_weight_params, g.extra_macs_per_token)
        out[key] = out.get(key, 0) + g.blocks
    return out


def test_swin_t_224_gemm_shapes_by_hand() -> None:
    # Swin-T (Liu et al. 2021): C = 96, heads 3/6/12/24 of d = 32, depths 2/2/6/2, 7x7
    # windows, MLP 4C, 4x4 patch embedding (48 inputs), 2x2 merging 4C -> 2C.  224/4 = 56,
    # then 28, 14, 7: 8x8, 4x4, 2x2, 1 windows of 49 tokens; shifted windows except in
    # the last stage (one window: no shift)
    m = workload_from_graph(zoo_export("swin-t", 224).graph, "swin-t", 224)
    assert [(s.branch_grid, s.tokens, s.blocks, s.interaction) for s in m.stages] == [
        ((8, 8), 49, 2, "shifted"), ((4, 4), 49, 2, "shifted"), ((2, 2), 49, 6, "shifted"),
        ((1, 1), 49, 2, "none")]
    assert gemms(m.stages[0]) == [("embed", 3136, 48, 96), ("qkv", 49, 96, 288),
                                  ("qk[kv=49]", 49, 32, 49), ("av[kv=49]", 49, 49, 32),
                                  ("proj", 49, 96, 96), ("fc1", 49, 96, 384),
                                  ("fc2", 49, 384, 96)]
    assert gemms(m.stages[3]) == [("embed", 49, 1536, 768), ("qkv", 49, 768, 2304),
                                  ("qk[kv=49]", 49, 32, 49), ("av[kv=49]", 49, 49, 32),
                                  ("proj", 49, 768, 768), ("fc1", 49, 768, 3072),
                                  ("fc2", 49, 3072, 768)]
    assert m.stages == build("swin-t", 224).stages  # and the workload table agrees


def test_swin_b_640_padded_windows_by_hand() -> None:
    # Swin-B: C = 128, heads 4/8/16/32, depths 2/2/18/2.  640/4 = 160: windows padded to
    # 161 = 23 x 7 (529 windows), then 80 -> 84 (12x12 = 144), 40 -> 42 (36), 20 -> 21 (9)
    m = workload_from_graph(zoo_export("swin-b", 640).graph, "swin-b", 640)
    assert [(s.grid, s.branches, s.channels, s.heads, s.blocks, s.merge_in)
            for s in m.stages] == [((160, 160), 529, 128, 4, 2, 48),
                                   ((80, 80), 144, 256, 8, 2, 512),
                                   ((40, 40), 36, 512, 16, 18, 1024),
                                   ((20, 20), 9, 1024, 32, 2, 2048)]
    assert all(s.interaction == "shifted" and s.head_dim == 32 for s in m.stages)
    assert m.stages == build("swin-b", 640).stages


def test_pvt_s_224_spatial_reduction_by_hand() -> None:
    # PVT-S (Wang et al. 2021, Table 1): C = 64/128/320/512, heads 1/2/5/8 (d = 64), depths
    # 3/4/6/3, MLP ratios 8/8/4/4, patch 4 then 2 (48, 4*64, 4*128, 4*320 inputs), SR
    # ratios 8/4/2/1: keys (56/8)^2 = (28/4)^2 = (14/2)^2 = 49 = 7^2.  The SR conv is a
    # (49 x sr^2 C) @ (sr^2 C x C) GEMM: sr^2 C^2 weights, C^2 MACs per query token
    m = workload_from_graph(zoo_export("pvt-s", 224).graph, "pvt-s", 224)
    assert [(s.grid, s.tokens, s.channels, s.heads, s.head_dim, s.mlp_ratio, s.merge_in)
            for s in m.stages] == [((56, 56), 3136, 64, 1, 64, 8, 48),
                                   ((28, 28), 784, 128, 2, 64, 8, 256),
                                   ((14, 14), 196, 320, 5, 64, 4, 512),
                                   ((7, 7), 49, 512, 8, 64, 4, 1280)]
    assert [merged(s) for s in m.stages] == [
        {(49, 64 * 64 * 64, 64 * 64): 3}, {(49, 16 * 128 * 128, 128 * 128): 4},
        {(49, 4 * 320 * 320, 320 * 320): 6}, {(49, 0, 0): 3}]
    assert all(s.branches == 1 and s.interaction == "none" for s in m.stages)
    assert gemms(m.stages[0])[2:4] == [("qk[kv=49]", 3136, 64, 49), ("av[kv=49]", 3136, 49, 64)]
    assert m.stages == build("pvt-s", 224).stages


def test_twins_s_224_lsa_gsa_by_hand() -> None:
    # Twins-SVT-S (Chu et al. 2021): C = 64/128/256/512, heads 2/4/8/16 (d = 32), depths
    # 2/2/10/4 alternating LSA (7x7 windows) and GSA (SR 8/4/2/1: 49 keys), MLP 4, patch
    # 4 then 2.  LSA blocks: ceil(depth/2) over 64/16/4/1 windows of 49; GSA queries are
    # grouped per window like LSA's (the workload table's convention)
    m = workload_from_graph(zoo_export("twins-s", 224).graph, "twins-s", 224)
    assert [(s.branches, s.tokens, s.channels, s.heads, s.head_dim, s.merge_in, s.interaction)
            for s in m.stages] == [(64, 49, 64, 2, 32, 48, "subsample"),
                                   (16, 49, 128, 4, 32, 256, "subsample"),
                                   (4, 49, 256, 8, 32, 512, "subsample"),
                                   (1, 49, 512, 16, 32, 1024, "none")]
    assert [merged(s) for s in m.stages] == [
        {(49, 0, 0): 1, (49, 64 * 64 * 64, 64 * 64): 1},
        {(49, 0, 0): 1, (49, 16 * 128 * 128, 128 * 128): 1},
        {(49, 0, 0): 5, (49, 4 * 256 * 256, 256 * 256): 5},
        {(49, 0, 0): 4}]  # 7x7: LSA's one window and GSA's 49 keys are the same shape
    ref = build("twins-s", 224)
    assert [merged(s) for s in ref.stages] == [merged(s) for s in m.stages]
    assert orchestrate(m, 224, "allspark-16x16", bind=False).cycles == orchestrate(
        ref, 224, "allspark-16x16", bind=False).cycles


def test_twins_b_640_global_keys_by_hand() -> None:
    # Twins-B at 640: grid 160 -> 23x23 windows; GSA keys (160/8)^2 = 400, (80/4)^2 = 400,
    # (40/2)^2 = 400, 20^2 = 400 (SR 1: no reduction conv)
    m = workload_from_graph(zoo_export("twins-b", 640).graph, "twins-b", 640)
    assert [s.branches for s in m.stages] == [529, 144, 36, 9]
    assert [sorted(k[0] for k in merged(s)) for s in m.stages] == [[49, 400]] * 4
    assert m.stages == build("twins-b", 640).stages


def test_pt2_archive_reads_like_the_graph(tmp_path) -> None:
    import torch

    path = str(tmp_path / "pvt-t.pt2")
    ep = zoo_export("pvt-t", 224)
    torch.export.save(ep, path)
    assert workload_from_ops(read_pt2(path), "pvt-t") == workload_from_graph(
        ep.graph, "pvt-t", 224)


def test_batched_export_gives_the_per_image_workload() -> None:
    ep = zoo_export("swin-t", 224, batch=2)
    assert workload_from_graph(ep.graph, "swin-t", 224).stages == build("swin-t", 224).stages


def test_bad_archives_are_located_errors(tmp_path) -> None:
    import zipfile

    bad = tmp_path / "bad.pt2"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("m/models/model.json", "{not json")
    with pytest.raises(WorkloadError, match="not a torch.export graph"):
        read_pt2(str(bad))
    with pytest.raises(WorkloadError, match="cannot read a .pt2 archive"):
        read_pt2(str(tmp_path / "missing.pt2"))


def test_graphs_the_frontend_does_not_read_are_located_errors() -> None:
    import torch
    from torch import nn

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 8, 4, 4)

        def forward(self, x):
            return self.c(x)

    class NoFfn(nn.Module):  # one attention block without an MLP
        def __init__(self):
            super().__init__()
            self.c, self.qkv = nn.Conv2d(3, 64, 4, 4), nn.Linear(64, 192)

        def forward(self, x):
            x = self.c(x).flatten(2).transpose(1, 2)
            q, k, v = self.qkv(x).reshape(1, -1, 3, 2, 32).permute(2, 0, 3, 1, 4).unbind(0)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    x = torch.empty(1, 3, 64, 64)
    with pytest.raises(WorkloadError, match="no scaled_dot_product_attention in the graph"):
        workload_from_graph(torch.export.export(Cnn(), (x,)).graph, "cnn")
    with pytest.raises(WorkloadError, match=r"test_torch_to_pim.py:\d+: no FFN linear aC -> 64"):
        workload_from_graph(torch.export.export(NoFfn(), (x,)).graph, "noffn")


def test_twins_ir_round_trips_through_text_and_the_passes() -> None:
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    from steplus.dialects.pim import ModelOp, Pim
    from steplus.lowering.torch_to_pim import module_from_graph
    from steplus.passes.allspark.ir import PimOrchestratePass, workload_of
    from steplus.passes.allspark.lower import PimLowerPhasesPass
    from steplus.runtime.pim.program import module_text, simulate_module

    module = module_from_graph(zoo_export("twins-s", 224).graph, "twins-s", 224)
    text = module_text(module)
    assert "groups = array<i64: 1, 49, 0, 0, 1, 49, 262144, 4096>" in text  # LSA, GSA (SR 8)
    assert 'interaction = "subsample"' in text and "branch_grid = array<i64: 8, 8>" in text
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Pim)
    parsed = Parser(ctx, text).parse_module()
    op = next(o for o in parsed.walk() if isinstance(o, ModelOp))
    got = workload_of(op)
    assert [merged(s) for s in got.stages] == [merged(s) for s in build("twins-s", 224).stages]
    PimOrchestratePass().apply(ctx, parsed)
    PimLowerPhasesPass().apply(ctx, parsed)
    [sim] = simulate_module(parsed)
    assert sim.analytical == orchestrate("twins-s", 224, "allspark-16x16", bind=False).cycles


def test_cswin_t_cross_shaped_stripes_by_hand() -> None:
    # CSWin-T (Dong et al. 2022, Table 1): C = 64/128/256/512, heads 2/4/8/16, depths
    # 1/2/21/1, stripe widths 1/2/7/7, a 7x7 stride-4 stem (3 * 49 = 147 inputs) and 3x3
    # stride-2 merges (9 * C/2 inputs).  Each block splits its heads in half: horizontal
    # and vertical stripes of sw x W tokens (d = C / h).  224^2: grid 56 -> 56 + 56 stripes
    # of 56 tokens, 28 -> 14 + 14 of 56, 14 -> 2 + 2 of 98; the last stage (7 <= 7) is one
    # full attention with all 16 heads
    m = workload_from_graph(zoo_export("cswin-t", 224).graph, "cswin-t", 224)
    assert [(s.branch_grid, s.tokens, s.heads, s.head_dim, s.channels, s.blocks, s.merge_in,
             s.interaction) for s in m.stages] == [
        ((1, 112), 56, 1, 32, 64, 1, 147, "cross"),
        ((1, 28), 56, 2, 32, 128, 2, 9 * 64, "cross"),
        ((1, 4), 98, 4, 32, 256, 21, 9 * 128, "cross"),
        ((1, 1), 49, 16, 32, 512, 1, 9 * 256, "none")]
    assert gemms(m.stages[2])[2:4] == [("qk[kv=98]", 98, 32, 98), ("av[kv=98]", 98, 98, 32)]
    assert m.stages == build("cswin-t", 224).stages


def test_focal_t_fine_and_pooled_keys_by_hand() -> None:
    # Focal-T (Yang et al. 2021): Swin-T's widths, heads and depths, 7x7 windows; keys of
    # a window: the 13x13 fine tokens around it + one pooled token per window.  224^2:
    # 8x8 windows -> 169 + 64 = 233 keys, 4x4 -> 169 + 16 = 185, 2x2 -> 169 + 4 = 173
    # (grid 14 >= 13), and the 7x7 map -> 49 + 1 = 50 (one window, no interaction)
    m = workload_from_graph(zoo_export("focal-t", 224).graph, "focal-t", 224)
    assert [(s.branches, s.tokens, merged(s), s.interaction) for s in m.stages] == [
        (64, 49, {(233, 0, 0): 2}, "focal"), (16, 49, {(185, 0, 0): 2}, "focal"),
        (4, 49, {(173, 0, 0): 6}, "focal"), (1, 49, {(50, 0, 0): 2}, "none")]
    assert gemms(m.stages[0])[2:4] == [("qk[kv=233]", 49, 32, 233), ("av[kv=233]", 49, 233, 32)]
    assert m.stages == build("focal-t", 224).stages


# -- hostile archives (issue 24) ----------------------------------------------------------


def _archive(path, image_sizes: list) -> str:
    """A .pt2 whose graph is one conv2d of an image of ``image_sizes`` (JSON values)."""
    import json
    import zipfile

    node = {"target": "torch.ops.aten.conv2d.default", "name": "conv",
            "inputs": [{"arg": {"as_tensor": {"name": "x"}}},
                       {"arg": {"as_tensor": {"name": "w"}}}],
            "outputs": [{"as_tensor": {"name": "y"}}]}
    graph = {"nodes": [node], "tensor_values": {
        "x": {"sizes": [{"as_int": d} for d in image_sizes]}}}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("m/models/model.json", json.dumps({"graph_module": {"graph": graph}}))
    return str(path)


@pytest.mark.parametrize("batch", [0, -1, 10**30])
def test_empty_negative_or_huge_sizes_are_errors(tmp_path, batch: int) -> None:
    # batch 0 divided by zero (an internal error); -1 and 10**30 were accepted
    ops = read_pt2(_archive(tmp_path / "x.pt2", [batch, 3, 224, 224]))
    with pytest.raises(WorkloadError, match=rf"the image has shape \[{batch}, 3, 224, 224\]: "
                                            r"sizes must be in \[1, 16777216\]"):
        workload_from_ops(ops, "x")


def test_json_booleans_are_not_sizes(tmp_path) -> None:
    ops = read_pt2(_archive(tmp_path / "x.pt2", [True, 3, 224, 224]))
    with pytest.raises(WorkloadError, match="the image has no static shape"):
        workload_from_ops(ops, "x")


def test_only_regular_files_are_read(tmp_path) -> None:
    import os

    fifo = tmp_path / "fifo.pt2"
    os.mkfifo(fifo)  # opening it used to wait for a writer forever
    zero = tmp_path / "zero.pt2"
    zero.symlink_to("/dev/zero")  # read until the machine ran out of time
    for p in (fifo, zero):
        with pytest.raises(WorkloadError, match="cannot read a .pt2 archive: not a regular file"):
            read_pt2(str(p))


def test_corrupt_compressed_graph_is_an_error(tmp_path) -> None:
    import zipfile

    path = tmp_path / "c.pt2"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("m/models/model.json", b" " * 4096)
    data = bytearray(path.read_bytes())
    start = data.find(b"model.json") + len(b"model.json")  # the local header's name ends
    data[start:start + 8] = b"\xff" * 8  # the deflate stream starts: an invalid block type
    path.write_bytes(bytes(data))
    # zlib.error escaped as "internal error in pass"
    with pytest.raises(WorkloadError, match="cannot read a .pt2 archive: Error -3 while "
                                            "decompressing data"):
        read_pt2(str(path))


def test_export_pim_checks_its_options_before_exporting(tmp_path, capsys) -> None:
    from examples.allspark.export_pim import main as export_main

    # a missing --pt2 folder was a RuntimeError traceback after the export; an unknown
    # preset was written into the pim.model for a later pass to refuse
    for argv, msg in [
        (["vit-t", "224", "--pt2", str(tmp_path / "no" / "x.pt2")],
         f"--pt2 {tmp_path / 'no' / 'x.pt2'}: no such folder"),
        (["vit-t", "224", "--preset", "bogus"], "unknown preset 'bogus' (choose from "
                                                "allspark-16x16, allspark-24x24, allspark-8x8)"),
    ]:
        with pytest.raises(SystemExit) as e:
            export_main(argv)
        assert e.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"export_pim.py: error: {msg}"
