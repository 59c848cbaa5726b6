"""A vision transformer's Allspark workload read from its `torch.export` graph.

The stages, branches, blocks and GEMM shapes come from the graph, not from a
name table.  The graph is an in-memory `torch.export` graph (duck-typed FX
nodes, `lowering/linalg_to_step/fx_graph.py`) or a `.pt2` archive written by
`torch.export.save`, read by :func:`read_pt2` from its JSON graph with neither
torch nor unpickling.  What is read:

- every `aten.scaled_dot_product_attention` is one block's attention: its query
  `(..., heads, N, d)` gives the heads, head width and query tokens per branch,
  the leading dimensions over the batch the branches (windows), its key the
  tokens attended; the linear computing the query gives the width C;
- two attentions fed by one QKV linear are one cross-shaped block (CSWin:
  horizontal and vertical stripes, half the heads each, `interaction = cross`);
- consecutive blocks of one width C are a stage;
- a stage's embedding is the last dense strided convolution (patch embedding,
  CSWin's stem and merges) or width-changing linear `k -> C` (Swin's patch
  merging) that its first query depends on: its input width is `merge_in`, its
  output the patch grid;
- convolutions that only the keys depend on (not the queries) are a
  spatial-reduction layer (PVT, Twins' GSA): their weights and MACs per query
  token go into the block group (`extra_weight_params`, `extra_macs_per_token`);
- the FFN ratio is the stage's linear `a C -> C` (fc2);
- windows: a branch of `N = w^2` tokens on a `H x W` grid is a `w x w` window of
  a `ceil(H/w) x ceil(W/w)` partition (padded, as Swin and Twins pad); an
  `aten.roll` in the stage makes it shifted windows, a global attention in a
  windowed stage (Twins' GSA) sub-sampled context whose queries are grouped per
  window, like the stage's local blocks (the workload table's convention); keys
  that include pooled tokens (`avg_pool2d` on the key side only) make it Focal's
  fine-and-coarse context (`focal`).

Depthwise convolutions (Twins' position encoding), norms, biases, class heads
are not part of the workload (as in `passes/allspark/vit.py`).

Example::

    ep = torch.export.export(swin, (x,))
    model = workload_from_graph(ep.graph, "swin-t", img=224)   # a VitModel
    module = module_from_graph(ep.graph, "swin-t", 224)         # a pim.model, source "ir"

Through `step-opt` (`convert-torch-to-pim` reads the `.pt2` archive)::

    python examples/allspark/export_pim.py swin-t 224 --pt2 swin.pt2
    echo '' | step-opt -p 'convert-torch-to-pim{export="swin.pt2"},pim-orchestrate'
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from steplus.dialects.pim import ModelOp
from steplus.dialects.target.pim import PimConfigError, preset as machine_preset
from steplus.lowering.linalg_to_step.fx_graph import MAX_NODES, name_of, shape_of, where_of
from steplus.passes.allspark.ir import stage_op
from steplus.passes.allspark.vit import MAX_IMAGE, BlockGroup, Stage, VitModel, WorkloadError
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.utils.safe_files import open_regular

SDPA = "aten.scaled_dot_product_attention.default"
CONV = "aten.conv2d.default"
LINEAR = "aten.linear.default"
ROLL = "aten.roll.default"
POOLS = ("aten.avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
MAX_PT2_BYTES = 256 << 20  # bound on the JSON graph read from a .pt2 archive
MAX_DIM = 1 << 24  # bound on one tensor size the workload reads (a ViT's are below 10**6)


@dataclass(eq=False)
class _Val:
    """A tensor of the graph: its shape and the op computing it (None: an input)."""

    name: str
    shape: tuple[int, ...] | None
    producer: _Op | None = None


@dataclass(eq=False)
class _Op:
    """One call of the graph: its ATen target, arguments (`_Val`s or constants) and
    its first result's shape; `meta["stack_trace"]` locates it (`where_of`)."""

    name: str
    target: str
    args: list[Any]
    out: tuple[int, ...] | None
    meta: dict[str, Any] = field(default_factory=dict[str, Any])

    def tensors(self) -> list[_Val]:
        out: list[_Val] = []
        for a in self.args:
            if isinstance(a, _Val):
                out.append(a)
            elif isinstance(a, list):
                out += [x for x in a if isinstance(x, _Val)]  # pyright: ignore[reportUnknownVariableType]
        return out


def _where(op: _Op) -> str:
    return where_of(op)


# -- reading a graph ----------------------------------------------------------------------


def ops_from_fx(graph) -> list[_Op]:
    """The call nodes of an in-memory `torch.export` graph, in order."""
    nodes = list(graph.nodes)
    if len(nodes) > MAX_NODES:
        raise WorkloadError(f"graph has {len(nodes)} nodes (limit {MAX_NODES})")
    vals: dict[Any, _Val] = {}
    ops: list[_Op] = []

    def val(n) -> _Val:
        if n not in vals:
            vals[n] = _Val(getattr(n, "name", "?"), shape_of(n))
        return vals[n]

    def conv(a):
        if isinstance(a, (list, tuple)):
            return [conv(x) for x in a]  # pyright: ignore[reportUnknownVariableType]
        return val(a) if hasattr(a, "op") and hasattr(a, "meta") else a

    for n in nodes:
        if getattr(n, "op", None) != "call_function":
            continue
        op = _Op(n.name, name_of(n), [conv(a) for a in n.args], shape_of(n),
                 {"stack_trace": (n.meta or {}).get("stack_trace")})
        val(n).producer = op
        ops.append(op)
    return ops


def _sizes(tv: dict[str, Any], name: str) -> tuple[int, ...] | None:
    meta = tv.get(name)
    if not isinstance(meta, dict):
        return None
    out = []
    for d in meta.get("sizes", []):  # pyright: ignore[reportUnknownVariableType]
        # `type(...) is int`: JSON's true/false are not sizes
        if not isinstance(d, dict) or type(d.get("as_int")) is not int:  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            return None  # a symbolic size
        out.append(d["as_int"])  # pyright: ignore[reportUnknownArgumentType]
    return tuple(out)  # pyright: ignore[reportUnknownArgumentType]


def read_pt2(path: str) -> list[_Op]:
    """The call nodes of a `torch.export.save` archive, from its JSON graph only
    (no torch, nothing unpickled); `WorkloadError` for anything else."""
    try:
        # only a regular file, opened without waiting (a FIFO, /dev/zero: "not a regular file")
        with open_regular(path) as f:
            data = _graph_json(path, f)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError) as e:  # RuntimeError: an encrypted member; NotImplementedError: a
        # compression method zipfile does not have
        raise WorkloadError(f"{path}: cannot read a .pt2 archive: "
                            f"{getattr(e, 'strerror', None) or e}") from None
    return _ops_from_json(path, data)


def _graph_json(path: str, f: Any) -> bytes:
    """The bytes of the archive's JSON graph, at most `MAX_PT2_BYTES`."""
    with zipfile.ZipFile(f) as z:
        members = [i for i in z.infolist() if i.filename.endswith(
            ("models/model.json", "serialized_exported_program.json"))]
        if not members:
            raise WorkloadError(f"{path}: not a torch.export archive (no models/model.json)")
        if members[0].file_size > MAX_PT2_BYTES:
            raise WorkloadError(f"{path}: graph of {members[0].file_size} bytes (limit "
                                f"{MAX_PT2_BYTES >> 20} MiB)")
        # zipfile stops at the declared size and checks the CRC, so a member whose
        # header lies about its size is an error, not an unbounded read
        return z.read(members[0])


def _ops_from_json(path: str, data: bytes) -> list[_Op]:
    try:
        doc = json.loads(data)
        graph = doc["graph_module"]["graph"]
        nodes, tv = graph["nodes"], graph["tensor_values"]
        if not isinstance(nodes, list) or not isinstance(tv, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError, RecursionError):
        raise WorkloadError(f"{path}: the archive's graph is not a torch.export graph") \
            from None
    if len(nodes) > MAX_NODES:  # pyright: ignore[reportUnknownArgumentType]
        raise WorkloadError(f"{path}: graph has {len(nodes)} nodes (limit {MAX_NODES})")  # pyright: ignore[reportUnknownArgumentType]
    vals: dict[str, _Val] = {}

    def val(name: str) -> _Val:
        if name not in vals:
            vals[name] = _Val(name, _sizes(tv, name))  # pyright: ignore[reportUnknownArgumentType]
        return vals[name]

    def arg(a: Any) -> Any:
        if not isinstance(a, dict) or len(a) != 1:  # pyright: ignore[reportUnknownArgumentType]
            return None
        (kind, v), = a.items()  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
        if kind == "as_tensor" and isinstance(v, dict):
            return val(str(v.get("name")))  # pyright: ignore[reportUnknownMemberType]
        if kind == "as_tensors" and isinstance(v, list):
            return [val(str(x.get("name"))) for x in v if isinstance(x, dict)]  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
        if kind == "as_optional_tensor" and isinstance(v, dict):
            return arg(v)
        return v

    ops: list[_Op] = []
    try:
        for i, n in enumerate(nodes):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            target = str(n["target"]).removeprefix("torch.ops.")  # pyright: ignore[reportUnknownArgumentType]
            args = [arg(x.get("arg")) for x in n.get("inputs", [])]  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
            outs: list[_Val] = []
            for o in n.get("outputs", []):  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
                got = arg(o)
                outs += got if isinstance(got, list) else [got] if isinstance(got, _Val) else []  # pyright: ignore[reportUnknownArgumentType]
            meta = n.get("metadata") or {}  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
            op = _Op(str(n.get("name", f"node{i}")), target, args,  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
                     outs[0].shape if outs else None,
                     {"stack_trace": meta.get("stack_trace") if isinstance(meta, dict) else None})  # pyright: ignore[reportUnknownMemberType]
            for o in outs:
                o.producer = op
            ops.append(op)
    except (AttributeError, KeyError, TypeError):
        raise WorkloadError(f"{path}: a graph node is not in torch.export's schema") from None
    return ops


# -- deriving the workload ------------------------------------------------------------------


def _checked(shape: tuple[int, ...], what: str, op: _Op) -> tuple[int, ...]:
    """``shape`` if every size is in [1, MAX_DIM] (an empty or negative tensor is no
    layer of a vision transformer; a huge one would only overflow the IR's i64)."""
    if not all(1 <= d <= MAX_DIM for d in shape):
        raise WorkloadError(f"{_where(op)}: {what} has shape {list(shape)}: sizes must be in "
                            f"[1, {MAX_DIM}]")
    return shape


def _need(v: Any, what: str, op: _Op) -> tuple[int, ...]:
    if not isinstance(v, _Val) or v.shape is None:
        raise WorkloadError(f"{_where(op)}: {what} has no static shape")
    return _checked(v.shape, what, op)


def _ancestors(v: _Val, stop: dict[int, _Op] | None = None) -> dict[int, _Op]:
    """The ops ``v`` depends on (by id; bounded by the graph), not walking past ``stop``."""
    seen: dict[int, _Op] = {}
    todo = [v]
    while todo and len(seen) <= MAX_NODES:
        x = todo.pop()
        op = x.producer
        if op is None or id(op) in seen or (stop is not None and id(op) in stop):
            continue
        seen[id(op)] = op
        todo += op.tensors()
    return seen


def _out(op: _Op, what: str) -> tuple[int, ...]:
    if op.out is None:
        raise WorkloadError(f"{_where(op)}: {what} has no static shape")
    return _checked(op.out, what, op)


@dataclass
class _Attn:
    op: _Op
    index: int  # position in the op list
    heads: int
    tokens: int
    head_dim: int
    branches: int  # per image
    kv: int
    extra_w: int = 0
    extra_m: int = 0
    channels: int = 0  # input width of the query's projection (C)
    block: int = 0  # id of that projection: attentions sharing it are one block
    pooled: bool = False  # keys include pooled tokens (Focal's coarse level)


def _is_patch_conv(op: _Op) -> bool:
    """A dense convolution with a stride > 1 (patch embedding, merging or reduction)."""
    if op.target != CONV or len(op.args) < 4:
        return False
    x, w = op.args[0], op.args[1]
    if not (isinstance(x, _Val) and isinstance(w, _Val) and x.shape and w.shape):
        return False
    stride = op.args[3]
    return (isinstance(stride, (list, tuple)) and len(w.shape) == 4
            and all(isinstance(t, int) and t > 1 for t in stride)  # pyright: ignore[reportUnknownVariableType]
            and w.shape[1] == x.shape[1])  # groups = 1


def _producers(v: Any) -> list[_Op]:
    """The ops ``v`` depends on, nearest first (breadth-first, bounded by the graph)."""
    out: list[_Op] = []
    seen: set[int] = set()
    todo = [v] if isinstance(v, _Val) else []
    i = 0
    while i < len(todo) and len(out) <= MAX_NODES:
        op = todo[i].producer
        i += 1
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        out.append(op)
        todo += op.tensors()
    return out


def _q_linear(q: _Val) -> _Op | None:
    """The linear layer nearest above the query (QKV or Q projection): its input width
    is the block's C, and the attentions it feeds belong to one block."""
    for op in _producers(q):
        if op.target == LINEAR:
            return op
    return None


def _attention(op: _Op, index: int, batch: int) -> _Attn:
    q = _need(op.args[0], "the query", op)
    k = _need(op.args[1], "the key", op)
    if len(q) < 4 or len(k) != len(q):
        raise WorkloadError(f"{_where(op)}: attention query {list(q)} is not (batch, ..., "
                            f"heads, tokens, width)")
    heads, tokens, d = q[-3:]
    lead = math.prod(q[:-3])
    if lead % batch:
        raise WorkloadError(f"{_where(op)}: {lead} attention batches are not a multiple of "
                            f"the {batch} images")
    att = _Attn(op, index, heads, tokens, d, lead // batch, k[-2])
    proj = _q_linear(op.args[0])
    if proj is None:
        raise WorkloadError(f"{_where(op)}: no linear projection computes this attention's "
                            f"query")
    att.channels, att.block = _need(proj.args[1], "the query weight", proj)[1], id(proj)
    # what only the keys depend on: spatial reduction (PVT's SRA, Twins' GSA)
    q_side = _ancestors(op.args[0])
    for other in _ancestors(op.args[1], q_side).values():
        if other.target in POOLS:
            att.pooled = True
        if _is_patch_conv(other):
            w = _need(other.args[1], "the reduction weight", other)
            o = _out(other, "the reduction")
            att.extra_w += math.prod(w)
            macs = math.prod(o[1:]) * math.prod(w[1:])  # per image
            att.extra_m += -(-macs // (att.branches * tokens))
    return att


def _embedding(ops: list[_Op], lo: int, hi: int, width: int) -> tuple[int, tuple[int, int], int]:
    """``merge_in``, grid and patch size (1: a merging linear) of the stage embedding:
    the last one between op ``lo`` and the attention ``ops[hi]`` that its query
    depends on (a key-side reduction convolution is not an embedding)."""
    query_side = _ancestors(ops[hi].args[0])
    for op in reversed(ops[lo:hi]):
        if id(op) not in query_side:
            continue
        if _is_patch_conv(op):
            w = _need(op.args[1], "the patch weight", op)
            out = _out(op, "the patch embedding")
            if w[0] != width:
                continue
            return w[1] * w[2] * w[3], (out[2], out[3]), op.args[3][0]
        if op.target == LINEAR:
            x = _need(op.args[0], "the merging input", op)
            w = _need(op.args[1], "the merging weight", op)
            if w[0] == width and w[1] != width and len(x) == 4:  # NHWC patch merging
                return w[1], (x[1], x[2]), 1
    raise WorkloadError(f"{_where(ops[hi])}: no patch embedding (conv2d with stride = "
                        f"kernel) or patch merging (linear k -> {width}) before this "
                        f"stage's first attention")


def _mlp_ratio(ops: list[_Op], lo: int, hi: int, width: int, first: _Op) -> int:
    ratios = set()
    for op in ops[lo:hi]:
        if op.target == LINEAR:
            w = _need(op.args[1], "a linear weight", op)
            if len(w) == 2 and w[0] == width and w[1] > width and w[1] % width == 0:
                ratios.add(w[1] // width)
    if len(ratios) != 1:
        raise WorkloadError(f"{_where(first)}: cannot read the FFN ratio of this stage: "
                            f"linears aC -> C with a in {sorted(ratios)}" if ratios else
                            f"{_where(first)}: no FFN linear aC -> {width} in this stage")
    return ratios.pop()


def workload_from_ops(ops: list[_Op], name: str, img: int | None = None) -> VitModel:
    """The workload of the graph whose calls are ``ops`` (see the module docstring)."""
    convs = [o for o in ops if o.target == CONV]
    if not convs:
        raise WorkloadError("no conv2d patch embedding in the graph")
    image = _need(convs[0].args[0], "the image", convs[0])
    if len(image) != 4 or image[1] != 3:
        raise WorkloadError(f"{_where(convs[0])}: the graph input {list(image)} is not a "
                            f"batch of 3-channel images")
    batch = image[0]
    if image[2] != image[3]:
        raise WorkloadError(f"{_where(convs[0])}: image {image[2]}x{image[3]} is not square")
    if img is not None and image[2] != img:
        raise WorkloadError(f"{_where(convs[0])}: graph input is {image[2]}x{image[3]}, not "
                            f"{img}x{img}")
    img = image[2]
    if not 32 <= img <= MAX_IMAGE:
        raise WorkloadError(f"image size must be in [32, {MAX_IMAGE}], got {img}")
    attns = [_attention(o, i, batch) for i, o in enumerate(ops) if o.target == SDPA]
    if not attns:
        raise WorkloadError("no scaled_dot_product_attention in the graph: not a transformer "
                            "the frontend reads")
    # attentions fed by one projection are one block: CSWin's horizontal and vertical
    # stripes, each with half the heads (a cross-shaped block)
    blocks: list[_Attn] = []
    cross: set[int] = set()
    for a in attns:
        prev = blocks[-1] if blocks else None
        if prev is not None and prev.block == a.block:
            if (a.heads, a.head_dim, a.tokens, a.kv) != (prev.heads, prev.head_dim, prev.tokens,
                                                        prev.kv):
                raise WorkloadError(f"{_where(a.op)}: the attentions of one block differ in "
                                    f"shape (non-square stripes are not read)")
            prev.branches += a.branches
            cross.add(id(prev))
        else:
            blocks.append(_Attn(a.op, a.index, a.heads, a.tokens, a.head_dim, a.branches, a.kv,
                                a.extra_w, a.extra_m, a.channels, a.block, a.pooled))
    runs: list[list[_Attn]] = []
    for a in blocks:
        if runs and runs[-1][0].channels == a.channels:
            runs[-1].append(a)
        else:
            runs.append([a])
    stages = []
    for s, run in enumerate(runs):
        first = run[0]
        lo = runs[s - 1][-1].index + 1 if s else 0
        hi = runs[s + 1][0].index if s + 1 < len(runs) else len(ops)
        width = first.channels
        merge_in, grid, patch = _embedding(ops, lo, first.index, width)
        if s == 0 and img % patch:
            raise WorkloadError(f"image size {img} is not a multiple of the patch size "
                                f"{patch}; e.g. {img // patch * patch}")
        for a in run:
            if (a.heads, a.head_dim) != (first.heads, first.head_dim):
                raise WorkloadError(f"{_where(a.op)}: {a.heads} heads of {a.head_dim} in a "
                                    f"stage of {first.heads} heads of {first.head_dim}")
        if any(id(a) in cross for a in run):
            if not all(id(a) in cross and a.branches == first.branches for a in run):
                raise WorkloadError(f"{_where(first.op)}: a stage mixing cross-shaped and "
                                    f"other blocks is not read")
            ratio = _mlp_ratio(ops, first.index, hi, width, first.op)
            stages.append(Stage(s + 1, grid, width, first.heads, first.head_dim, ratio,
                                merge_in, (1, first.branches), first.tokens,
                                (BlockGroup(len(run), first.kv),), "cross"))
            continue
        if first.heads * first.head_dim != width:
            raise WorkloadError(f"{_where(first.op)}: {first.heads} heads of {first.head_dim} "
                                f"do not make the block's width {width}")
        local = [a for a in run if a.branches > 1]
        ref = local[0] if local else first
        if local:
            side = math.isqrt(ref.tokens)
            if side * side != ref.tokens:
                raise WorkloadError(f"{_where(ref.op)}: {ref.branches} branches of "
                                    f"{ref.tokens} tokens are not square windows")
            bgrid = (math.ceil(grid[0] / side), math.ceil(grid[1] / side))
            if bgrid[0] * bgrid[1] != ref.branches:
                raise WorkloadError(f"{_where(ref.op)}: {ref.branches} windows of "
                                    f"{side}x{side} do not tile the {grid[0]}x{grid[1]} grid")
        else:
            bgrid = (1, 1)
        sub = False
        for a in run:
            if a.branches == ref.branches and a.tokens == ref.tokens:
                continue
            if local and a.branches == 1 and a.tokens >= grid[0] * grid[1]:
                sub = True  # global (sub-sampled) attention, queries grouped per window
                continue
            raise WorkloadError(f"{_where(a.op)}: attention over {a.branches} branches of "
                                f"{a.tokens} tokens in a stage of {ref.branches} of "
                                f"{ref.tokens}")
        shifted = any(o.target == ROLL for o in ops[first.index:run[-1].index])
        focal = any(a.pooled for a in run)
        inter = ("shifted" if shifted else "focal" if focal else "subsample" if sub
                 else "none") if local else "none"
        groups: dict[tuple[int, int, int], int] = {}
        for a in run:
            key = (a.kv, a.extra_w, a.extra_m)
            groups[key] = groups.get(key, 0) + 1
        ratio = _mlp_ratio(ops, first.index, hi, width, first.op)
        stages.append(Stage(s + 1, grid, width, first.heads, first.head_dim, ratio, merge_in,
                            bgrid, ref.tokens,
                            tuple(BlockGroup(n, kv, w, m) for (kv, w, m), n in groups.items()),
                            inter))
    family, _, size = name.partition("-")
    return VitModel(name, family, size, img, tuple(stages))


def workload_from_graph(graph, name: str, img: int | None = None) -> VitModel:
    """The Allspark workload of the model whose `torch.export` graph is ``graph``."""
    return workload_from_ops(ops_from_fx(graph), name, img)


def model_op(model: VitModel, preset: str = "allspark-16x16") -> ModelOp:
    """A `pim.model` (source "ir") whose stages carry ``model``'s workload."""
    op = ModelOp.create(properties={  # pyright: ignore[reportArgumentType]
        "model": StringAttr(model.name), "img": IntegerAttr(model.img, i64),
        "preset": StringAttr(preset), "source": StringAttr("ir")}, regions=[Region(Block())])
    for st in model.stages:
        op.body.block.add_op(stage_op(st, workload=True))
    return op


def module_from_graph(graph, name: str, img: int | None = None,
                      preset: str = "allspark-16x16") -> ModuleOp:
    """A module holding the `pim.model` (source "ir") read from ``graph``."""
    return ModuleOp([model_op(workload_from_graph(graph, name, img), preset)])


@dataclass(frozen=True)
class ConvertTorchToPimPass(ModulePass):
    """Read a `torch.export.save` archive (`.pt2`) into a `pim.model` (source "ir").

    The stages, windows, heads, tokens, keys and GEMM widths come from the exported
    graph (see `lowering/torch_to_pim.py`); the model is appended to the module, ready
    for `pim-orchestrate`.  Only the archive's JSON graph is read (nothing unpickled).
    Options: `export` (the `.pt2` path), `model` (its name, default the file's stem),
    `preset` (the machine).

    ```mlir
    builtin.module {
    }
    ```

    `step-opt empty.mlir -p 'convert-torch-to-pim{export="swin-t.pt2"},pim-orchestrate'`
    """

    name = "convert-torch-to-pim"
    export: str = ""
    """Path of the `.pt2` archive written by `torch.export.save`."""
    model: str = ""
    """Model name recorded on the `pim.model` (default: the archive's file stem)."""
    preset: str = "allspark-16x16"
    """Machine preset (`dialects/target/pim.py`)."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if not self.export:
            raise OpDiagnosticError(op, "convert-torch-to-pim: give the archive: "
                                        "export=\"model.pt2\"")
        try:
            machine_preset(self.preset)
        except PimConfigError as e:
            raise OpDiagnosticError(op, f"convert-torch-to-pim: {e}") from None
        name = self.model or Path(self.export).stem
        try:
            model = workload_from_ops(read_pt2(self.export), name)
        except WorkloadError as e:
            raise OpDiagnosticError(op, f"convert-torch-to-pim: {e}") from None
        except (TypeError, IndexError, AttributeError, ValueError) as e:  # a malformed graph
            raise OpDiagnosticError(op, f"convert-torch-to-pim: {self.export}: the graph is not "
                                        f"in the form torch.export writes ({e})") from None
        Rewriter.insert_op(model_op(model, self.preset), InsertPoint.at_end(op.body.block))


__all__ = ["ConvertTorchToPimPass", "model_op", "module_from_graph", "ops_from_fx", "read_pt2",
           "workload_from_graph", "workload_from_ops"]
