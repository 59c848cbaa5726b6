"""Execute a lowered `pim.model` (after `pim-lower-phases`) on the link-level NoC simulator.

Per temporal layer: the `pim.compute` cycles, plus every `pim.ring` replayed on
all the layer's sub-arrays at once (their `placement` rectangles), one
barrier-synchronised round at a time (:func:`steplus.runtime.pim.noc.simulate_layer`,
XY routing, link contention).  Per stage: each `pim.interact` sends all its
messages at once and waits for the last, `times` times.  The sum is the
simulated latency, including the local-global interaction that eq. 12 leaves
out; the analytical figure next to it is the layers' `cycles` (eq. 12).

Used by ``pim-orchestrate --simulate``; from Python::

    module = parse(...)                      # a pim.model
    PimOrchestratePass().apply(ctx, module)
    PimLowerPhasesPass().apply(ctx, module)
    [sim] = simulate_module(module)          # sim.total, sim.analytical, sim.interaction
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.dialects.builtin import I64, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Region
from xdsl.printer import Printer

from steplus.dialects.target.pim import PimHardware
from steplus.dialects.pim import Pim, ComputeOp, InteractOp, ModelOp, RingOp, StageOp, body_ops
from steplus.passes.allspark.baselines import BASELINES, BaselineMemoryError, baseline
from steplus.passes.allspark.ilp_compact import ScheduleError
from steplus.passes.allspark.ir import attach_schedule, layer_ops, machine_of
from steplus.passes.allspark.lower import lower_model
from steplus.passes.allspark.orchestrate import Result
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.utils.safe_files import FileTooLarge, read_regular
from steplus.runtime.pim.noc import Message, Phase, neighbour_messages, simulate, simulate_layer

MAX_MESSAGES = 1_000_000  # bound on messages one interaction may inject


class ProgramError(ScheduleError):
    """The module is not a lowered pim program; the message says what is missing."""


@dataclass
class StageSim:
    index: int
    compute: int = 0
    rings: int = 0  # simulated ring cycles
    rings_free: int = 0  # the same rounds without hops or contention (eqs. 13-14 per phase)
    interaction: int = 0
    analytical: int = 0  # sum of the layers' eq. 12 cycles
    wait_cycles: int = 0
    stream: int = 0  # simulated cycles re-fetching weights that do not fit (baselines)

    @property
    def total(self) -> int:
        return self.compute + self.rings + self.interaction + self.stream


@dataclass
class ProgramSim:
    model: str
    img: int
    cycle_ns: float
    stages: list[StageSim] = field(default_factory=list[StageSim])

    @property
    def total(self) -> int:
        return sum(s.total for s in self.stages)

    @property
    def analytical(self) -> int:
        return sum(s.analytical for s in self.stages)

    @property
    def interaction(self) -> int:
        return sum(s.interaction for s in self.stages)

    @property
    def stream(self) -> int:
        return sum(s.stream for s in self.stages)

    @property
    def latency_ms(self) -> float:
        return self.total * self.cycle_ns / 1e6


def simulate_model(op: ModelOp, hw: PimHardware | None = None) -> ProgramSim:
    """Run a lowered model; ``hw`` replaces the machine the op names."""
    hw = hw or machine_of(op)
    out = ProgramSim(op.model.data, op.img.value.data, hw.cycle_ns)
    for stage in [s for s in body_ops(op) if isinstance(s, StageOp)]:
        ss = StageSim(stage.index.value.data)
        if not layer_ops(stage):
            raise ProgramError(f"pim.model '{out.model}': stage {ss.index} has no temporal "
                               f"layer; run pim-orchestrate and pim-lower-phases first")
        for lay in layer_ops(stage):
            if lay.program is None or lay.cycles is None:
                raise ProgramError(f"pim.model '{out.model}': stage {ss.index} has a layer "
                                   f"without a program; run pim-lower-phases first")
            g, m = lay.g_m
            phases: list[Phase] = []
            for o in body_ops(lay):
                if isinstance(o, ComputeOp):
                    ss.compute += o.cycles.value.data
                elif isinstance(o, RingOp) and o.axis.data == "mesh":
                    nbytes = o.bytes.value.data
                    res = simulate(neighbour_messages(lay.rects(), hw.rows, hw.cols, nbytes),
                                   hw.rows, hw.cols, hw.link_bytes_per_cycle,
                                   hw.router_delay_cycles)
                    ss.stream += o.rounds.value.data * res.makespan
                    ss.wait_cycles += o.rounds.value.data * res.wait_cycles
                elif isinstance(o, RingOp):
                    phases.append(Phase(o.phase.data, o.axis.data == "patch",
                                        o.rounds.value.data, o.bytes.value.data))
            sim = simulate_layer(lay.rects(), m, g, phases, hw.rows, hw.cols,
                                 hw.link_bytes_per_cycle, hw.router_delay_cycles)
            ss.rings += sim.simulated
            ss.rings_free += sim.analytical
            ss.wait_cycles += sim.wait_cycles
            ss.analytical += lay.cycles.value.data
        for inter in [o for o in body_ops(stage) if isinstance(o, InteractOp)]:
            msgs = inter.messages()
            if len(msgs) > MAX_MESSAGES:
                raise ProgramError(f"pim.interact of stage {ss.index}: {len(msgs)} messages "
                                   f"(limit {MAX_MESSAGES})")
            nbytes = inter.bytes.value.data
            res = simulate([Message(a, b, nbytes) for a, b in msgs if a != b],
                           hw.rows, hw.cols, hw.link_bytes_per_cycle, hw.router_delay_cycles)
            ss.interaction += inter.times.value.data * res.makespan
            ss.wait_cycles += inter.times.value.data * res.wait_cycles
        out.stages.append(ss)
    return out


def simulate_module(module: builtin.ModuleOp) -> list[ProgramSim]:
    """Simulate every lowered `pim.model` of ``module``."""
    sims = [simulate_model(o) for o in module.walk() if isinstance(o, ModelOp)]
    if not sims:
        raise ProgramError("no pim.model in the module")
    return sims



MAX_FILE_BYTES = 64 << 20


def run_file(path: str) -> list[str]:
    """Parse a lowered module (e.g. `step-opt ... -p 'pim-orchestrate,pim-lower-phases'`
    output), simulate every pim.model in it and return one report line per model."""
    try:  # a regular file only, opened without waiting (a FIFO: "not a regular file")
        data = read_regular(path, MAX_FILE_BYTES)
    except FileTooLarge:
        raise ProgramError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB") from None
    except OSError as e:
        raise ProgramError(f"{path}: {e.strerror}") from None
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Pim)
    try:
        module = Parser(ctx, data.decode("utf-8", errors="replace"), path).parse_module()
        module.verify()
    except (ParseError, VerifyException) as e:
        lines = [ln for ln in str(e).strip().splitlines() if ln.strip() and ln.strip() != "^"]
        where = lines[0] if lines and isinstance(e, ParseError) else path
        raise ProgramError(f"{where}: error: {lines[-1] if lines else 'cannot parse'}") from None
    out = []
    for sim in simulate_module(module):
        ms = sim.cycle_ns / 1e6
        out.append(f"{sim.model} {sim.img}x{sim.img}: simulated latency {sim.latency_ms:.4f} ms "
                   f"vs eq. 12 {sim.analytical * ms:.4f} ms, of which local-global "
                   f"interaction {sim.interaction * ms:.4f} ms")
    return out


def module_text(module: ModuleOp) -> str:
    """``module`` in the form step-opt prints and parses."""
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    return buf.getvalue() + "\n"


def result_module(res: Result, preset_name: str, mesh: bool = False,
                  node_cap_mib: float | None = None,
                  ir_workload: bool = False) -> tuple[ModuleOp, ModelOp]:
    """An orchestration result as a lowered `pim.model` (pim-orchestrate + pim-lower-phases).

    ``mesh`` / ``node_cap_mib`` record the overrides ``res.hw`` was built with.  A
    baseline (``res.method`` B, P or AH) that streams weights it cannot keep
    (``res.spilled_bytes``) gets each stage's streamed bytes as `stream_bytes`.
    ``ir_workload``: the stages carry ``res.model``'s shapes (`source = "ir"`, e.g. a
    workload read from a torch graph) instead of naming the table's model.
    """
    hw = res.hw
    props: dict[str, StringAttr | IntegerAttr[I64]] = {
        "model": StringAttr(res.model.name), "img": IntegerAttr(res.model.img, i64),
        "preset": StringAttr(preset_name)}
    if ir_workload:
        props["source"] = StringAttr("ir")
    if mesh:
        props["rows"], props["cols"] = IntegerAttr(hw.rows, i64), IntegerAttr(hw.cols, i64)
    if node_cap_mib:
        if node_cap_mib != int(node_cap_mib):
            raise ProgramError("--simulate and --emit-mlir take a whole --node-cap-mib")
        props["node_cap_mib"] = IntegerAttr(int(node_cap_mib), i64)
    op = ModelOp.create(properties=dict(props), regions=[Region(Block())])
    module = ModuleOp([op])
    attach_schedule(op, res, res.stream or None)
    try:
        lower_model(op, hw)
    except OpDiagnosticError as e:
        raise ProgramError(e.message) from None
    return module, op


def simulate_result(res: Result, preset_name: str, mesh: bool = False,
                    node_cap_mib: float | None = None,
                    ir_workload: bool = False) -> ProgramSim:
    """Lower an orchestration or baseline result (:func:`result_module`) and simulate it."""
    _, op = result_module(res, preset_name, mesh, node_cap_mib, ir_workload)
    return simulate_model(op, res.hw)


def simulation_lines(res: Result, preset_name: str, mesh: bool = False,
                     node_cap_mib: float | None = None, baselines: bool = False,
                     simulate: bool = True) -> tuple[ModuleOp, list[str]]:
    """``res`` lowered (:func:`result_module`) and, with ``simulate``, simulated, as the
    report lines ``pim-orchestrate --simulate`` prints; with ``baselines`` each baseline's
    schedule is lowered and simulated too, and its speedup is simulated over simulated."""
    module, op = result_module(res, preset_name, mesh, node_cap_mib)
    if not simulate:
        return module, []
    sim = simulate_model(op, res.hw)
    ms = res.hw.cycle_ns / 1e6
    per = f" ({sim.latency_ms / res.batch:.4f} ms per image)" if res.batch > 1 else ""
    lines = [f"simulated latency {sim.latency_ms:.4f} ms{per} (phase programs on the NoC "
             f"simulator) vs eq. 12 {sim.analytical * ms:.4f} ms "
             f"({100 * (sim.total / sim.analytical - 1):+.2f}%), of which local-global "
             f"interaction {sim.interaction * ms:.4f} ms"]
    for kind in BASELINES if baselines else ():
        try:
            b = baseline(res.model, res.model.img, res.hw, kind, bind=False, batch=res.batch)
        except BaselineMemoryError:
            lines.append(f"baseline {kind} simulated: cannot run (constraint 5, memory "
                         f"capacity)")
            continue
        bs = simulate_result(b, preset_name, mesh, node_cap_mib)
        lines.append(f"baseline {kind} simulated: latency {bs.latency_ms:.4f} ms, speedup "
                     f"{bs.total / sim.total:.2f}x (simulated over simulated), of which weight "
                     f"streaming {bs.stream * ms:.4f} ms and local-global interaction "
                     f"{bs.interaction * ms:.4f} ms")
    return module, lines
