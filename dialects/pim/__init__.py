"""The `pim` dialect: a vision transformer's Allspark schedule on a PIM mesh, as IR.

A `pim.model` names the workload (model, input size) and the machine (a
`dialects/target/pim.py` preset, optionally with another mesh or node memory).
`pim-orchestrate` fills it with one `pim.stage` per model stage (its branches,
blocks, heads and patches per branch, and whether weights are reused across
temporal layers) and, inside each stage, one `pim.layer` per temporal layer:
the partition scheme `[g, m]` (head groups, patch chunks), how many branches run
in it, and their placement, the `m x g` node rectangles Algorithm 1 lays out,
as `row, col, rows, cols` quadruples.  `pim-verify-schedule` checks a schedule
(solved or written by hand) against the seed's constraints 1-5 and reports the
first one broken at the op.

The ops verify their own shape (positive counts, a scheme of two entries, one
rectangle per branch inside the mesh); the constraints that need the workload
are the passes' job.

Example (a written schedule for Swin-T at 224^2; `pim-verify-schedule` accepts it):

```mlir
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 6, 2>, branches = 16 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseArrayBase,
    I64,
    IntegerAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Dialect, Operation
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    opt_region_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import HasParent, NoTerminator
from xdsl.utils.exceptions import VerifyException

MAX_COUNT = 1 << 20  # bound on branch, block and mesh counts read from IR
INTERACTIONS = ("none", "shifted", "focal", "subsample", "cross")


def _positive(op: IRDLOperation, name: str, attr: IntegerAttr) -> int:
    v = attr.value.data
    if not 1 <= v <= MAX_COUNT:
        raise VerifyException(f"{op.name}: '{name}' must be in [1, {MAX_COUNT}], got {v}")
    return v


def body_ops(op: IRDLOperation) -> list[Operation]:
    """The ops of a `pim.model` / `pim.stage` body (an empty region holds none)."""
    region = op.regions[0]
    return list(region.block.ops) if region.blocks else []


def _check_body(op: IRDLOperation, kind: type[IRDLOperation] | tuple[type[IRDLOperation], ...],
                what: str) -> None:
    if len(op.regions[0].blocks) > 1:
        raise VerifyException(f"{op.name}: body must have at most one block")
    for inner in body_ops(op):
        if not isinstance(inner, kind):
            raise VerifyException(f"{op.name}: holds only {what} ops, got {inner.name}")


def _ints(attr: DenseArrayBase[I64]) -> tuple[int, ...]:
    return tuple(int(x) for x in attr.get_values())


@irdl_op_definition
class ModelOp(IRDLOperation):
    """A workload on a PIM machine; holds its stages once scheduled.

    `model` and `img` name the vision transformer and its input size (what
    `pim-orchestrate --model/--img` takes), `preset` the machine; `rows`,
    `cols` and `node_cap_mib` override the preset's mesh and memory per node.
    `source = "ir"`: the workload is the stages' own shape properties (`channels`,
    `heads`, `head_dim`, `tokens`, `kv_tokens` or `groups`, `mlp_ratio`, `merge_in`,
    `grid`, `blocks`, and for windowed stages `branch_grid` and `interaction`), as
    `lowering/torch_to_pim.py` (`convert-torch-to-pim`) writes them from a
    `torch.export` graph; otherwise (`"table"`, the default) `model` names it.
    `batch` (default 1): inputs per inference (eq. 12's `N_bt`); `pim-lower-phases`
    sends every input's feature maps and the weights once per phase.

    ```mlir
    "pim.model"() <{model = "vit-b", img = 224 : i64, preset = "allspark-16x16"}> ({
    }) : () -> ()
    ```
    """

    name = "pim.model"
    model = prop_def(StringAttr)
    """The vision transformer (e.g. `vit-b`, `swin-t`), as `pim-orchestrate --model` takes it."""
    img = prop_def(IntegerAttr[I64])
    """Input image size in pixels (square), as `pim-orchestrate --img` takes it; >= 1."""
    preset = prop_def(StringAttr)
    """The PIM machine preset (e.g. `allspark-16x16`): mesh size and memory per node."""
    rows = opt_prop_def(IntegerAttr[I64])
    """Mesh rows, overriding the preset's; >= 1."""
    cols = opt_prop_def(IntegerAttr[I64])
    """Mesh columns, overriding the preset's; >= 1."""
    node_cap_mib = opt_prop_def(IntegerAttr[I64])
    """Memory per node in MiB, overriding the preset's; >= 1."""
    source = opt_prop_def(StringAttr)
    """Where the workload comes from: `"table"` (default, `model` names it) or `"ir"` (the stages' shape properties)."""
    batch = opt_prop_def(IntegerAttr[I64])
    """Inputs per inference (eq. 12's `N_bt`), default 1."""
    body = region_def()
    traits = traits_def(NoTerminator())

    def verify_(self) -> None:
        _positive(self, "img", self.img)
        if self.source is not None and self.source.data not in ("table", "ir"):
            raise VerifyException(f"pim.model: source must be 'table' or 'ir', got "
                                  f"'{self.source.data}'")
        for key in ("rows", "cols", "node_cap_mib", "batch"):
            attr = getattr(self, key)
            if attr is not None:
                _positive(self, key, attr)
        _check_body(self, StageOp, "pim.stage")


@irdl_op_definition
class StageOp(IRDLOperation):
    """One model stage: `branches` computational branches of `blocks` blocks each.

    Holds its temporal layers in order (`pim.layer`).  `reuse` marks a stage
    whose nodes keep weights across temporal layers (Table V's reuse column).
    `stream_bytes`: weight bytes per node that do not fit node memory and are
    re-fetched in every temporal layer (a fixed-scheme baseline, eq. 13's cost);
    constraint 5 is then not checked.

    Workload properties (a `pim.model` with `source = "ir"`): `channels` (C),
    `heads` and `head_dim` per branch, `tokens` (query patches per branch),
    `mlp_ratio`, `merge_in` (input width of the patch embedding / merging),
    `grid` (patch resolution), `branch_grid` (windows as rows x cols, default
    `[1, 1]`), `interaction` (`none`, `shifted`, `focal`, `subsample`, `cross`),
    and the keys attended: `kv_tokens` when every block has the same shape, else
    `groups`, one `blocks, kv_tokens, extra_weights, extra_macs_per_token`
    quadruple per block shape (e.g. Twins' local and global blocks, a
    spatial-reduction convolution's weights).

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
      "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
      }) : () -> ()
    }) : () -> ()
    ```
    """

    name = "pim.stage"
    index = prop_def(IntegerAttr[I64])
    """The stage number in the model, from 1."""
    branches = prop_def(IntegerAttr[I64])
    """Computational branches of the stage (e.g. attention windows), each on its own sub-arrays; >= 1."""
    blocks = prop_def(IntegerAttr[I64])
    """Transformer blocks per branch; >= 1."""
    heads = opt_prop_def(IntegerAttr[I64])
    """Attention heads per branch."""
    tokens = opt_prop_def(IntegerAttr[I64])
    """Query patches (tokens) per branch."""
    reuse = opt_prop_def(UnitAttr)
    """Present when the stage's nodes keep their weights across temporal layers (Table V's reuse column)."""
    # the workload, when the pim.model's `source` is "ir" (e.g. read from a torch graph)
    channels = opt_prop_def(IntegerAttr[I64])
    """Embedding width C of the stage (workload, `source = "ir"`)."""
    head_dim = opt_prop_def(IntegerAttr[I64])
    """Width of one attention head (workload)."""
    mlp_ratio = opt_prop_def(IntegerAttr[I64])
    """The MLP's hidden width over `channels` (workload)."""
    merge_in = opt_prop_def(IntegerAttr[I64])
    """Input width of the patch embedding or patch merging before the stage (workload)."""
    kv_tokens = opt_prop_def(IntegerAttr[I64])
    """Keys attended per query when every block has the same shape (workload; else `groups`)."""
    grid = opt_prop_def(DenseArrayBase[I64])
    """Patch resolution `[rows, cols]` of the stage (workload)."""
    branch_grid = opt_prop_def(DenseArrayBase[I64])
    """The branches (windows) as `[rows, cols]`, rows x cols = `branches`; default `[1, 1]`."""
    groups = opt_prop_def(DenseArrayBase[I64])
    """One `blocks, kv_tokens, extra_weights, extra_macs_per_token` quadruple per block shape (workload; instead of `kv_tokens`)."""
    interaction = opt_prop_def(StringAttr)
    """How branches exchange features: `none`, `shifted`, `focal`, `subsample` or `cross` (workload)."""
    stream_bytes = opt_prop_def(IntegerAttr[I64])
    """Weight bytes per node that do not fit node memory, re-fetched every temporal layer (eq. 13); constraint 5 is then not checked."""
    body = region_def()
    traits = traits_def(NoTerminator(), HasParent(ModelOp))

    def verify_(self) -> None:
        for key in ("index", "branches", "blocks"):
            _positive(self, key, getattr(self, key))
        if self.stream_bytes is not None and not 0 <= self.stream_bytes.value.data < 1 << 40:
            raise VerifyException("pim.stage: stream_bytes must be non-negative")
        if self.interaction is not None and self.interaction.data not in INTERACTIONS:
            raise VerifyException(f"pim.stage: interaction must be one of "
                                  f"{', '.join(INTERACTIONS)}, got '{self.interaction.data}'")
        if self.groups is not None:
            v = _ints(self.groups)
            if not v or len(v) % 4 or min(v) < 0:
                raise VerifyException("pim.stage: groups must be non-negative (blocks, "
                                      "kv_tokens, extra_weights, extra_macs) quadruples")
        if self.branch_grid is not None:
            v = _ints(self.branch_grid)
            if len(v) != 2 or min(v) < 1 or v[0] * v[1] != self.branches.value.data:
                raise VerifyException(f"pim.stage: branch_grid must be [rows, cols] with "
                                      f"rows x cols = branches, got {list(v)}")
        _check_body(self, (LayerOp, InteractOp), "pim.layer and pim.interact")


@irdl_op_definition
class LayerOp(IRDLOperation):
    """A temporal layer: `branches` identical `[g, m]` sub-arrays running in parallel.

    `scheme = [g, m]`: `g` head groups of `m` patch chunks (Table V).
    `placement` (optional): one `row, col, rows, cols` rectangle per branch, in
    the order branches are bound; each rectangle has `m x g` or `g x m` nodes.
    `cycles` (optional): the cost model's time of the layer.

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
      "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 4, 2>, branches = 1 : i64,
                        placement = array<i64: 0, 0, 2, 4>}> : () -> ()
      }) : () -> ()
    }) : () -> ()
    ```
    """

    name = "pim.layer"
    scheme = prop_def(DenseArrayBase[I64])
    """`[g, m]`: `g` head groups of `m` patch chunks per sub-array (Table V); both >= 1."""
    branches = prop_def(IntegerAttr[I64])
    """Identical sub-arrays running in parallel, one per branch bound to this layer; >= 1."""
    placement = opt_prop_def(DenseArrayBase[I64])
    """One `row, col, rows, cols` rectangle per branch (binding order), each `m x g` or `g x m` nodes."""
    cycles = opt_prop_def(IntegerAttr[I64])
    """The cost model's time of the layer, in cycles."""
    program = opt_region_def()
    traits = traits_def(HasParent(StageOp), NoTerminator())

    @property
    def g_m(self) -> tuple[int, int]:
        g, m = _ints(self.scheme)
        return g, m

    def rects(self) -> list[tuple[int, int, int, int]]:
        if self.placement is None:
            return []
        v = _ints(self.placement)
        return [(v[i], v[i + 1], v[i + 2], v[i + 3]) for i in range(0, len(v), 4)]

    def verify_(self) -> None:
        if self.program is not None:
            _check_body(self, (ComputeOp, RingOp), "pim.compute and pim.ring")
        s = _ints(self.scheme)
        if len(s) != 2 or min(s) < 1 or max(s) > MAX_COUNT:
            raise VerifyException(f"pim.layer: scheme must be [g, m] with g, m >= 1, got "
                                  f"{list(s)}")
        n = _positive(self, "branches", self.branches)
        if self.placement is None:
            return
        v = _ints(self.placement)
        if len(v) != 4 * n:
            raise VerifyException(f"pim.layer: placement must hold {n} rectangles "
                                  f"(row, col, rows, cols), got {len(v)} integers")
        g, m = s
        for r, c, h, w in self.rects():
            if min(r, c) < 0 or (h, w) not in ((m, g), (g, m)):
                raise VerifyException(f"pim.layer: rectangle ({r}, {c}, {h}, {w}) is not an "
                                      f"{m}x{g} sub-array at a non-negative position")


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """Intra-node computation of a temporal layer on every node of its sub-arrays.

    `cycles` is the layer's `T_c` (eq. 15) on one node; `phase` names it.

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
      "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> ({
          "pim.compute"() <{phase = "blocks", cycles = 1000 : i64}> : () -> ()
          "pim.ring"() <{phase = "k", axis = "patch", rounds = 12 : i64, bytes = 64 : i64}> : () -> ()
        }) : () -> ()
      }) : () -> ()
    }) : () -> ()
    ```
    """

    name = "pim.compute"
    phase = prop_def(StringAttr)
    """Name of the computation (e.g. `blocks`), used in reports."""
    cycles = prop_def(IntegerAttr[I64])
    """The layer's intra-node time `T_c` (eq. 15) on one node, in cycles; >= 0."""
    traits = traits_def(HasParent(LayerOp))

    def verify_(self) -> None:
        if not 0 <= self.cycles.value.data < 1 << 62:
            raise VerifyException("pim.compute: cycles must be non-negative")


RING_AXES = ("patch", "group", "mesh")


@irdl_op_definition
class RingOp(IRDLOperation):
    """`rounds` rounds of a cyclic transfer: every node sends `bytes` to its successor.

    `axis = "patch"` rings run over the `m` patch nodes of a head group (K, V,
    shared weights), `axis = "group"` over the `g` head groups (gathers), inside
    each sub-array of the layer (Sec. V-B).  `axis = "mesh"`: every node of the
    layer receives `bytes` from its neighbour on a boustrophedon path through the
    whole mesh (a baseline streaming the weights it cannot keep, `phase = "stream"`).

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
      "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64}> ({
          "pim.ring"() <{phase = "k", axis = "patch", rounds = 18 : i64, bytes = 416 : i64}> : () -> ()
        }) : () -> ()
      }) : () -> ()
    }) : () -> ()
    ```
    """

    name = "pim.ring"
    phase = prop_def(StringAttr)
    """What is transferred (e.g. `k`, `v`, `stream`), used in reports."""
    axis = prop_def(StringAttr)
    """`patch` (the `m` nodes of a head group), `group` (the `g` head groups) or `mesh` (a path through the whole mesh)."""
    rounds = prop_def(IntegerAttr[I64])
    """Rounds of the cyclic transfer; >= 1."""
    bytes = prop_def(IntegerAttr[I64])
    """Bytes every node sends to its successor per round; >= 1."""
    traits = traits_def(HasParent(LayerOp))

    def verify_(self) -> None:
        if self.axis.data not in RING_AXES:
            raise VerifyException(f"pim.ring: axis must be 'patch', 'group' or 'mesh', got "
                                  f"'{self.axis.data}'")
        _positive(self, "rounds", self.rounds)
        if not 1 <= self.bytes.value.data < 1 << 40:
            raise VerifyException("pim.ring: bytes must be positive")


@irdl_op_definition
class InteractOp(IRDLOperation):
    """Local-global interaction of a stage: feature maps exchanged between sub-arrays.

    Every `row, col, row, col` quadruple of `pairs` is one message of `bytes`
    from the first node to the second (the anchors of two dependent branches'
    sub-arrays), all sent at once, `times` times per inference (once per block).

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
      "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
        "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64}> : () -> ()
        "pim.interact"() <{bytes = 18816 : i64, times = 6 : i64,
                           pairs = array<i64: 0, 0, 4, 0, 4, 0, 0, 0>}> : () -> ()
      }) : () -> ()
    }) : () -> ()
    ```
    """

    name = "pim.interact"
    bytes = prop_def(IntegerAttr[I64])
    """Bytes of one message (each pair, each time)."""
    times = prop_def(IntegerAttr[I64])
    """How many times per inference the messages are sent (once per block)."""
    pairs = prop_def(DenseArrayBase[I64])
    """One `row, col, row, col` quadruple per message: sender node, then receiver node."""
    traits = traits_def(HasParent(StageOp))

    def messages(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        v = _ints(self.pairs)
        return [((v[i], v[i + 1]), (v[i + 2], v[i + 3])) for i in range(0, len(v), 4)]

    def verify_(self) -> None:
        _positive(self, "times", self.times)
        if not 1 <= self.bytes.value.data < 1 << 40:
            raise VerifyException("pim.interact: bytes must be positive")
        v = _ints(self.pairs)
        if len(v) % 4 or min(v, default=0) < 0:
            raise VerifyException("pim.interact: pairs must be non-negative row, col, row, "
                                  "col quadruples")


Pim = Dialect("pim", [ModelOp, StageOp, LayerOp, ComputeOp, RingOp, InteractOp], [])
