"""Allspark as passes over the `pim` dialect: `pim-orchestrate`, `pim-verify-schedule`.

`pim-orchestrate` solves the scheduling ILP for every `pim.model` and writes the
schedule into it as IR: one `pim.stage` per model stage, one `pim.layer` per
temporal layer with its scheme `[g, m]`, branch count, the cost model's cycles
and the Algorithm 1 rectangles its branches are bound to.
`pim-verify-schedule` reads a schedule back (solved or written by hand) and
checks the partition candidates (Sec. VI-A), constraints 1-5 and the placement
(rectangles inside the mesh, disjoint); the first violation is an error at the
offending op that names the constraint.

The workload comes from the model name (`passes/allspark/vit.py`) or, for a
`pim.model` with `source = "ir"` (`convert-torch-to-pim`), from its stages' shapes.

```mlir
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
}) : () -> ()
```

`step-opt in.mlir -p 'pim-orchestrate,pim-verify-schedule'` fills and checks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import BlockInsertPoint, InsertPoint, Rewriter

from steplus.dialects.pim import MAX_COUNT, LayerOp, ModelOp, StageOp, body_ops
from steplus.dialects.target.pim import MIB, PimConfigError, PimHardware, preset, with_overrides
from steplus.dialects.target.attrs import pim_target_of
from steplus.passes.allspark.ilp_compact import ScheduleError
from steplus.passes.allspark.orchestrate import (
    ILP_FORMS,
    MAX_BATCH,
    MAX_TIME_LIMIT,
    Result,
    layer_rects,
    orchestrate,
)
from steplus.passes.allspark.partition import Scheme
from steplus.passes.allspark.schedule import layers_of, verify
from steplus.passes.allspark.vit import BlockGroup, Stage, VitModel, WorkloadError, build
from steplus.utils.diagnostics import OpDiagnosticError


def _int(v: int) -> IntegerAttr[I64]:
    return IntegerAttr(v, i64)


def machine_of(op: ModelOp) -> PimHardware:
    """The preset a `pim.model` names, with its mesh / memory overrides; when the
    enclosing module carries a `#target.pim` (`dialects/target/attrs.py`), that
    machine (the same preset, with the attribute's changed fields) is the base."""
    try:
        target = pim_target_of(op)
        if target is not None and target.name != op.preset.data:
            raise PimConfigError(f"pim.model: preset '{op.preset.data}' is not the module's "
                                 f"#target.pim preset '{target.name}'")
        hw = target if target is not None else preset(op.preset.data)
        changes: dict[str, object] = {}
        if op.rows is not None:
            changes["rows"] = op.rows.value.data
        if op.cols is not None:
            changes["cols"] = op.cols.value.data
        if op.node_cap_mib is not None:
            changes["node_cap_bytes"] = op.node_cap_mib.value.data * MIB
        return with_overrides(hw, **changes) if changes else hw
    except ValueError as e:  # PimConfigError, or a module attribute that is not a #target.pim
        raise OpDiagnosticError(op, str(e)) from None


_IR_FIELDS = ("channels", "heads", "head_dim", "tokens", "mlp_ratio", "merge_in", "grid")
MAX_EXTRA = 1 << 40  # bound on a group's extra weights / MACs per token (PVT's SR conv: ~2**24)


def _ir_groups(s: StageOp) -> tuple[BlockGroup, ...]:
    if s.groups is not None:
        v = [int(x) for x in s.groups.get_values()]
        groups = tuple(BlockGroup(v[i], v[i + 1], v[i + 2], v[i + 3])
                       for i in range(0, len(v), 4))
        if sum(g.blocks for g in groups) != s.blocks.value.data or min(
                (g.blocks for g in groups), default=0) < 1:
            raise OpDiagnosticError(s, f"pim.stage: groups hold "
                                       f"{sum(g.blocks for g in groups)} blocks, not "
                                       f"{s.blocks.value.data} (each group at least 1)")
        if any(g.kv_tokens < 1 for g in groups):
            raise OpDiagnosticError(s, "pim.stage: a group attends to no keys")
        if any(g.kv_tokens > MAX_COUNT or not 0 <= g.extra_weight_params <= MAX_EXTRA
               or not 0 <= g.extra_macs_per_token <= MAX_EXTRA for g in groups):
            raise OpDiagnosticError(s, f"pim.stage: a group's keys must be at most {MAX_COUNT} "
                                       f"and its extra weights and MACs in [0, {MAX_EXTRA}]")
        return groups
    if s.kv_tokens is None:
        raise OpDiagnosticError(s, "pim.stage: source 'ir' needs kv_tokens or groups")
    if not 1 <= s.kv_tokens.value.data <= MAX_COUNT:
        raise OpDiagnosticError(s, f"pim.stage: 'kv_tokens' must be in [1, {MAX_COUNT}], got "
                                   f"{s.kv_tokens.value.data}")
    return (BlockGroup(s.blocks.value.data, s.kv_tokens.value.data),)


def _ir_workload(op: ModelOp) -> VitModel:
    stages = []
    for s in [o for o in body_ops(op) if isinstance(o, StageOp)]:
        missing = [f for f in _IR_FIELDS if getattr(s, f) is None]
        if missing:
            raise OpDiagnosticError(s, f"pim.stage: source 'ir' needs {', '.join(missing)}")
        v = {f: getattr(s, f).value.data for f in _IR_FIELDS if f != "grid"}
        if min(v.values()) < 1:
            raise OpDiagnosticError(s, "pim.stage: workload sizes must be positive")
        if max(v.values()) > MAX_COUNT:  # heads = 2**20 took 100 s, tokens = 2**63 all memory
            big = next(f for f in v if v[f] > MAX_COUNT)
            raise OpDiagnosticError(s, f"pim.stage: '{big}' must be at most {MAX_COUNT}, got "
                                       f"{v[big]}")
        grid = tuple(int(x) for x in s.grid.get_values())  # pyright: ignore[reportOptionalMemberAccess]
        if len(grid) != 2 or min(grid) < 1:
            raise OpDiagnosticError(s, "pim.stage: grid must be [rows, cols]")
        bgrid = (1, 1) if s.branch_grid is None else tuple(
            int(x) for x in s.branch_grid.get_values())
        if bgrid[0] * bgrid[1] != s.branches.value.data:
            raise OpDiagnosticError(s, f"pim.stage: {s.branches.value.data} branches need a "
                                       f"branch_grid (rows x cols = branches)")
        inter = "none" if s.interaction is None else s.interaction.data
        stages.append(Stage(s.index.value.data, (grid[0], grid[1]), v["channels"], v["heads"],
                            v["head_dim"], v["mlp_ratio"], v["merge_in"], (bgrid[0], bgrid[1]),
                            v["tokens"], _ir_groups(s), inter))
    if not stages:
        raise OpDiagnosticError(op, "pim.model: source 'ir' needs its pim.stage ops")
    family, _, size = op.model.data.partition("-")
    return VitModel(op.model.data, family, size, op.img.value.data, tuple(stages))


def workload_of(op: ModelOp) -> VitModel:
    """The model's workload: its stages' shapes (source "ir") or the named model."""
    if op.source is not None and op.source.data == "ir":
        return _ir_workload(op)
    try:
        return build(op.model.data, op.img.value.data)
    except WorkloadError as e:
        raise OpDiagnosticError(op, str(e)) from None


def batch_of(op: ModelOp) -> int:
    """Inputs per inference (`batch`, default 1), bounded like `pim-orchestrate --batch`."""
    b = 1 if op.batch is None else op.batch.value.data
    if not 1 <= b <= MAX_BATCH:
        raise OpDiagnosticError(op, f"pim.model: batch must be in [1, {MAX_BATCH}], got {b}")
    return b


def stage_op(st: Stage, reuse: bool = False, workload: bool = False) -> StageOp:
    """A `pim.stage` for ``st``; with ``workload`` it carries the shapes (source "ir")."""
    props: dict[str, object] = {
        "index": _int(st.index), "branches": _int(st.branches), "blocks": _int(st.blocks),
        "heads": _int(st.heads), "tokens": _int(st.tokens)}
    if workload:
        props.update(channels=_int(st.channels), head_dim=_int(st.head_dim),
                     mlp_ratio=_int(st.mlp_ratio), merge_in=_int(st.merge_in),
                     grid=DenseArrayBase.from_list(i64, list(st.grid)))
        if len(st.groups) == 1 and not (st.groups[0].extra_weight_params
                                        or st.groups[0].extra_macs_per_token):
            props["kv_tokens"] = _int(st.groups[0].kv_tokens)
        else:
            props["groups"] = DenseArrayBase.from_list(i64, [
                x for g in st.groups for x in (g.blocks, g.kv_tokens, g.extra_weight_params,
                                               g.extra_macs_per_token)])
        if st.branch_grid != (1, 1):
            props["branch_grid"] = DenseArrayBase.from_list(i64, list(st.branch_grid))
        if st.interaction != "none":
            props["interaction"] = StringAttr(st.interaction)
    if reuse:
        props["reuse"] = UnitAttr()
    return StageOp.create(properties=props,  # pyright: ignore[reportArgumentType]
                          regions=[Region(Block())])


def attach_schedule(op: ModelOp, res: Result, stream: list[int] | None = None) -> None:
    """Write an orchestration result into ``op`` (replacing any schedule it holds).

    ``stream[s]``: weight bytes per node stage ``s + 1`` re-fetches in every temporal
    layer (a baseline over node memory, `stream_bytes`)."""
    vit, hw = res.model, res.hw
    from_ir = op.source is not None and op.source.data == "ir"
    if not op.body.blocks:
        Rewriter.insert_block(Block(), BlockInsertPoint.at_end(op.body))
    block = op.body.block
    for old in list(block.ops):
        Rewriter.erase_op(old)
    for st, rep in zip(vit.stages, res.stages):
        stage = stage_op(st, rep.reuse, from_ir)
        if stream is not None and stream[st.index - 1]:
            stage.stream_bytes = _int(stream[st.index - 1])
        Rewriter.insert_op(stage, InsertPoint.at_end(block))
        for lay in rep.layers:
            rects = [x for r in layer_rects(hw, lay) for x in r]
            layer = LayerOp.create(properties={  # pyright: ignore[reportArgumentType]
                "scheme": DenseArrayBase.from_list(i64, [lay.scheme.g, lay.scheme.m]),
                "branches": _int(lay.branches),
                "placement": DenseArrayBase.from_list(i64, rects),
                "cycles": _int(lay.cost.total)})
            Rewriter.insert_op(layer, InsertPoint.at_end(stage.body.block))
    if res.batch != 1:
        op.batch = _int(res.batch)
    op.attributes["latency_cycles"] = _int(res.cycles)
    op.attributes["status"] = StringAttr(res.status)


@dataclass(frozen=True)
class PimOrchestratePass(ModulePass):
    """Schedule every `pim.model` with the Allspark ILP and attach the schedule as IR.

    Options: `time_limit` (seconds, at most 3600; the best schedule found is kept and
    marked `status = "time-limit"`), `form` (`compact`, `literal` or `cpsat`).
    A model that cannot be scheduled is an error at its `pim.model` naming the
    constraint (e.g. `constraint 5, memory capacity`).  An existing schedule is
    replaced.

    ```mlir
    "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
    }) : () -> ()
    ```
    """

    name = "pim-orchestrate"
    time_limit: float = 60.0
    """ILP solver time limit in seconds (at most 3600); the best schedule found is kept."""
    form: str = "compact"
    """ILP formulation: `compact` (HiGHS), `literal` (the seed's eqs. 1-12, small instances) or
    `cpsat` (the compact form on OR-Tools CP-SAT).
    One of: compact, literal, cpsat."""

    def __post_init__(self) -> None:
        # a bad option is a usage error of the command line (exit 2), before any file is read
        if not 0 < self.time_limit <= MAX_TIME_LIMIT:
            raise ValueError(f"time-limit must be in (0, {MAX_TIME_LIMIT:g}] seconds, "
                             f"got {self.time_limit:g}")
        if self.form not in ILP_FORMS:
            raise ValueError(f"form must be one of {', '.join(ILP_FORMS)}, got '{self.form}'")

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for model_op in [o for o in op.walk() if isinstance(o, ModelOp)]:
            self._schedule(model_op)

    def _schedule(self, op: ModelOp) -> None:
        hw = machine_of(op)
        vit = workload_of(op)
        try:
            res = orchestrate(vit, vit.img, hw, self.time_limit, self.form,
                              batch=batch_of(op))
        except (ScheduleError, ValueError) as e:
            raise OpDiagnosticError(op, str(e)) from None
        attach_schedule(op, res)


_WHERE = re.compile(r"stage (\d+)(?:, temporal layer (\d+))?")


def _locate(op: ModelOp, message: str):
    """The op a verifier message is about: its stage / temporal layer, else the model."""
    m = _WHERE.search(message)
    if not m:
        return op
    stages = body_ops(op)
    i = int(m.group(1)) - 1
    if not 0 <= i < len(stages):
        return op
    stage = stages[i]
    if m.group(2) is None or not isinstance(stage, StageOp):
        return stage
    layers = layer_ops(stage)
    j = int(m.group(2)) - 1
    return layers[j] if 0 <= j < len(layers) else stage


def layer_ops(stage: StageOp) -> list[LayerOp]:
    """The temporal layers of a stage, in order."""
    return [o for o in body_ops(stage) if isinstance(o, LayerOp)]


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def check_model(op: ModelOp, hw: PimHardware | None = None) -> None:
    """Raise ``OpDiagnosticError`` at the first op of ``op``'s schedule breaking a rule
    (on ``hw`` instead of the machine the op names, when given)."""
    hw = hw or machine_of(op)
    vit = workload_of(op)
    stages = [s for s in body_ops(op) if isinstance(s, StageOp)]
    if len(stages) != len(vit.stages):
        raise OpDiagnosticError(op, f"schedule has {len(stages)} stages, {vit.name} has "
                                    f"{len(vit.stages)}")
    spec: list[list[tuple[Scheme, int | None]]] = []
    for st, stage in zip(vit.stages, stages):
        if stage.branches.value.data != st.branches:
            raise OpDiagnosticError(stage, f"stage {st.index} has {st.branches} branches, "
                                           f"not {stage.branches.value.data}")
        rows: list[tuple[Scheme, int | None]] = []
        for lay in layer_ops(stage):
            g, m = lay.g_m
            rows.append((Scheme(g, m), lay.branches.value.data))
        spec.append(rows)
    try:
        layers = layers_of(vit, hw, spec, batch_of(op))
    except ScheduleError as e:
        msg = str(e).removeprefix("schedule: ")
        raise OpDiagnosticError(_locate(op, msg), msg) from None
    # a stage that streams the weights it cannot keep (a baseline) is charged for them
    # instead of obeying constraint 5
    streams = any(s.stream_bytes is not None and s.stream_bytes.value.data for s in stages)
    errors = verify(vit, hw, layers, memory=not streams)
    if errors:
        raise OpDiagnosticError(_locate(op, errors[0]), errors[0])
    for stage in stages:
        for j, lay in enumerate(layer_ops(stage), 1):
            rects = lay.rects()
            for k, (r, c, h, w) in enumerate(rects):
                if r + h > hw.rows or c + w > hw.cols:
                    raise OpDiagnosticError(
                        lay, f"stage {stage.index.value.data}, temporal layer {j}: rectangle "
                             f"({r}, {c}, {h}, {w}) leaves the {hw.rows}x{hw.cols} mesh "
                             f"(placement)")
                for other in rects[:k]:
                    if _overlap(other, (r, c, h, w)):
                        raise OpDiagnosticError(
                            lay, f"stage {stage.index.value.data}, temporal layer {j}: "
                                 f"rectangles {other} and {(r, c, h, w)} share nodes "
                                 f"(placement: one branch per node)")


@dataclass(frozen=True)
class PimVerifySchedulePass(ModulePass):
    """Check every scheduled `pim.model` against the seed's constraints 1-5.

    Also checks that each scheme is a partition candidate (Sec. VI-A) and that a
    layer's placement rectangles lie inside the mesh and do not share nodes.
    The error is reported at the `pim.layer`, `pim.stage` or `pim.model` at
    fault and names the constraint.

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

    name = "pim-verify-schedule"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for model_op in [o for o in op.walk() if isinstance(o, ModelOp)]:
            check_model(model_op)


__all__ = ["PimOrchestratePass", "PimVerifySchedulePass", "check_model", "layer_ops"]
