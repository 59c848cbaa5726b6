"""A vision transformer's Allspark workload read from its `torch.export` graph.

The stages, blocks, heads, patches per branch and GEMM shapes come from the
graph (duck-typed FX nodes, `lowering/linalg_to_step/fx_graph.py`), not from a
name table:

- the patch embedding is the `aten.conv2d` with stride = kernel: its weight
  gives `C`, the input channels and the patch size (`merge_in = 3 p^2`), its
  output the patch grid;
- every `aten.scaled_dot_product_attention` is one block: its query gives the
  heads, head width and query tokens `N` (patches + class token), its key the
  tokens attended;
- the FFN ratio is the `aten.linear` mapping `a C -> C` (fc2).

Today this covers single-branch models (ViT: global attention over the whole
image, one stage); a graph whose attentions differ in shape (a hierarchical
or windowed model) is refused with a message saying so.

Example::

    ep = torch.export.export(vit, (x,))
    model = workload_from_graph(ep.graph, "vit-b", img=224)   # a VitModel
    module = module_from_graph(ep.graph, "vit-b", 224)         # a pim.model, source "ir"

`python examples/allspark/export_pim.py vit-b 224 > vit.mlir` writes the latter; then
`step-opt vit.mlir -p 'pim-orchestrate,pim-lower-phases'` schedules and lowers it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Region

from steplus.dialects.pim import ModelOp
from steplus.lowering.linalg_to_step.fx_graph import MAX_NODES, is_op, shape_of, where_of
from steplus.passes.allspark.ir import stage_op
from steplus.passes.allspark.vit import BlockGroup, Stage, VitModel, WorkloadError


def _shape(node, what: str) -> tuple[int, ...]:
    s = shape_of(node)
    if s is None:
        raise WorkloadError(f"{where_of(node)}: {what} has no static shape")
    return s


def workload_from_graph(graph, name: str, img: int) -> VitModel:
    """The Allspark workload of the ViT whose `torch.export` graph is ``graph``."""
    nodes = list(graph.nodes)
    if len(nodes) > MAX_NODES:
        raise WorkloadError(f"graph has {len(nodes)} nodes (limit {MAX_NODES})")
    convs = [n for n in nodes if is_op(n, "aten.conv2d.default")]
    attns = [n for n in nodes if is_op(n, "aten.scaled_dot_product_attention.default")]
    linears = [n for n in nodes if is_op(n, "aten.linear.default")]
    if len(convs) != 1:
        raise WorkloadError(f"expected one patch-embedding conv2d, found {len(convs)}")
    if not attns:
        raise WorkloadError("no scaled_dot_product_attention in the graph: not a transformer "
                            "the frontend reads")
    conv = convs[0]
    x, w = conv.args[0], conv.args[1]
    xs, ws, out = _shape(x, "the image"), _shape(w, "the patch weight"), _shape(conv, "conv")
    c, cin, ph, pw = ws
    if ph != pw:
        raise WorkloadError(f"{where_of(conv)}: patch {ph}x{pw} is not square")
    if xs[2] != img or xs[3] != img:
        raise WorkloadError(f"{where_of(conv)}: graph input is {xs[2]}x{xs[3]}, not {img}x{img}")
    if img % ph:
        raise WorkloadError(f"image size {img} is not a multiple of the patch size {ph}; "
                            f"e.g. {img // ph * ph}")
    grid = (out[2], out[3])
    shapes = {(_shape(a.args[0], "query"), _shape(a.args[1], "key")) for a in attns}
    if len(shapes) != 1:
        raise WorkloadError(f"{where_of(attns[0])}: attentions of {len(shapes)} different "
                            f"shapes: hierarchical or windowed models are not derived from "
                            f"graphs yet (ViT only)")
    (q, k), = shapes
    _, heads, tokens, head_dim = q
    kv_tokens = k[2]
    if heads * head_dim != c:
        raise WorkloadError(f"{where_of(attns[0])}: {heads} heads x {head_dim} != width {c}")
    ratios = {_shape(n.args[1], "weight")[1] // c for n in linears
              if _shape(n.args[1], "weight")[0] == c and _shape(n.args[1], "weight")[1] > c}
    if len(ratios) != 1:
        raise WorkloadError(f"cannot read the FFN ratio: linears aC -> C with a in "
                            f"{sorted(ratios)}" if ratios else "no FFN linear aC -> C found")
    (ratio,) = ratios
    stage = Stage(1, grid, c, heads, head_dim, ratio, cin * ph * pw, (1, 1), tokens,
                  (BlockGroup(len(attns), kv_tokens),), "none")
    family, _, size = name.partition("-")
    return VitModel(name, family, size, img, (stage,))


def module_from_graph(graph, name: str, img: int, preset: str = "allspark-16x16") -> ModuleOp:
    """A `pim.model` (source "ir") whose stages carry the workload read from ``graph``."""
    model = workload_from_graph(graph, name, img)
    op = ModelOp.create(properties={  # pyright: ignore[reportArgumentType]
        "model": StringAttr(name), "img": IntegerAttr(img, i64), "preset": StringAttr(preset),
        "source": StringAttr("ir")}, regions=[Region(Block())])
    for st in model.stages:
        op.body.block.add_op(stage_op(st, workload=True))
    return ModuleOp([op])
