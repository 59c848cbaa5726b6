"""`isel`: instruction selection onto accelerator ILAs by equality saturation.

Each function body is imported into an egglog e-graph (`frontend`), saturated
with the import rules, the IR-accelerator rules of the chosen targets and — in
`flexible` mode — the compiler-IR rewrites (`terms`), extracted with the
accelerator cost model and rebuilt as IR with `ila.invoke`s (`rebuild`).

Example:

```
step-opt -p 'isel{targets=flexasr,hlscnn,vta mode=flexible}' examples/isel/maxpool128.mlir
```
turns the (4,4)/(2,2) max-pool into `ila.windows` + four
`ila.invoke "flexasr.maxpool"` (none with `mode=exact`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from steplus.dialects.ila import TARGETS
from steplus.dialects.target.ila import HLSCNN
from steplus.passes.isel.lstm_fold import fold_lstm_steps
from steplus.utils.attrs import int_prop, int_values, shape_of
from steplus.utils.diagnostics import emit


MAX_ITERATIONS = 10_000  # saturation reaches a fixpoint or the node limit long before (D2A: 40-45)
MAX_NODE_LIMIT = 100_000_000  # e-nodes; egglog holds ~1 KB each, so this is the machine's memory


def check_limits(p) -> None:
    """Validate the saturation-limit options of isel / isel-verify (ValueError -> usage error)."""
    if not (isinstance(p.iterations, int) and 1 <= p.iterations <= MAX_ITERATIONS):
        raise ValueError(f"{p.name}: iterations must be an integer in [1, {MAX_ITERATIONS}], got {p.iterations!r}")
    if not (isinstance(p.node_limit, int) and 1 <= p.node_limit <= MAX_NODE_LIMIT):
        raise ValueError(f"{p.name}: node-limit must be an integer in [1, {MAX_NODE_LIMIT}], got {p.node_limit!r}")
    if not (isinstance(p.time_limit, (int, float)) and p.time_limit > 0):
        raise ValueError(f"{p.name}: time-limit must be a positive number of seconds, got {p.time_limit!r}")


MODES = ("exact", "flexible")


def check_mode(p) -> None:
    """Validate the `mode` option of isel / isel-verify (ValueError -> usage error)."""
    if p.mode not in MODES:
        raise ValueError(f"{p.name}: mode must be one of {', '.join(MODES)}, got '{p.mode}'")


def parse_targets(p) -> tuple[str, ...]:
    """The `targets` option of isel / isel-verify as a tuple of known, distinct names (else ValueError)."""
    spec = p.targets
    names = spec if isinstance(spec, tuple) else (spec,)
    names = tuple(x.strip() for part in names for x in str(part).split(","))
    known = ", ".join(TARGETS)
    if not any(names):
        raise ValueError(f"{p.name}: targets must name at least one of {known}")
    for t in names:
        if t not in TARGETS:
            raise ValueError(f"{p.name}: unknown target '{t}' in targets (allowed: {known})")
    for i, t in enumerate(names):
        if t in names[:i]:
            raise ValueError(f"{p.name}: target '{t}' is given twice in targets")
    return names


# the time limit is a safety net, not the stop: saturation stops by iterations and e-graph size, which
# give the same selection on any machine (flexmatch's 5 s wall-clock limit made the invocation counts
# depend on machine load, issue 24); full-size LSTM-WLM saturates in ~16 s on a loaded 2-core machine
TIME_LIMIT = 300.0


@dataclass(frozen=True)
class Limits:
    """Saturation limits (spec §5.4: flexmatch used 5 s, 100 000 e-nodes, 40-45 iterations; here the
    iteration and node limits stop saturation and the time limit is a safety)."""

    iterations: int = 40
    node_limit: int = 100_000
    time_limit: float = TIME_LIMIT


LIMIT_TEXT = {"iterations": "iteration limit ({0.iterations} iterations)",
              "nodes": "node limit ({0.node_limit} e-nodes)", "time": "time limit ({0.time_limit:g} s)"}


_PROGRESS: ContextVar[Callable[[str], None] | None] = ContextVar("isel_progress", default=None)


@contextmanager
def saturation_progress(report: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, every isel saturation iteration calls `report`
    with a line such as `@lstm: saturating, iteration 7, 48210 e-nodes, 12 s`
    (how a tool's status line follows a long isel; the passes import no tool)."""
    token = _PROGRESS.set(report)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def _progress_of(fn: func.FuncOp):
    report = _PROGRESS.get()
    if report is None:
        return None
    name = fn.sym_name.data
    return lambda s: report(f"@{name}: saturating, iteration {s.iterations}, "
                            f"{s.nodes} e-nodes, {s.seconds:.0f} s")


def select_function(fn: func.FuncOp, targets, flexible: bool, limits: Limits = Limits(), report=None,
                    offload: str = "always") -> int:
    """Run isel on one function; return the number of ila.invoke ops created.

    When a limit stops saturation, a warning at the function names it (the
    result is still a valid selection).  `report`, if given, is a list that
    receives the function's `terms.Saturation`.  `offload` is isel's option
    (`offload.cost_model_for`: `profitable` keeps a FlexASR call that does not pay on the host)."""
    from steplus.passes.isel import terms as T
    from steplus.passes.isel.offload import cost_model_for
    from steplus.passes.isel.views import RealImporter
    from steplus.passes.isel.opcheck import check_ops
    from steplus.passes.isel.rebuild import Rebuilder, RebuildError

    if not fn.body.blocks or len(fn.body.blocks) != 1:
        return 0
    block = fn.body.blocks[0]
    check_ops(fn, "isel")
    imp = RealImporter(block)
    roots = imp.run()
    if not roots:
        return 0
    # rebuild in the order of the anchors so memoised values dominate later uses
    roots.sort(key=lambda r: block.get_operation_index(r[2]))
    eg = repeating_egraph()
    lets = let_shallow(eg, [t for _, t, _ in roots])
    facts = imp.constant_facts()
    if facts:
        eg.register(*facts)
    sat = T.saturate(eg, targets, flexible, limits.iterations, limits.node_limit, limits.time_limit,
                     progress=_progress_of(fn))
    if report is not None:
        report.append(sat)
    if sat.stopped is not None:
        why = ("the selection is valid but may miss matches, and depends on this machine's speed and load: it may "
               "differ between runs (raise time-limit, or lower iterations / node-limit, for a reproducible stop)"
               if sat.stopped == "time" else "the selection is valid but may miss matches")
        emit(fn, "warning", f"isel: @{fn.sym_name.data}: saturation stopped by the "
                            f"{LIMIT_TEXT[sat.stopped].format(limits)} after {sat.iterations} iterations, "
                            f"{sat.nodes} e-nodes, {sat.seconds:.2f} s; {why}")
    memo, intern, created = {}, {}, set()
    bests = extract_all(eg, lets, cost_model_for(offload))
    failed = [user for (_, _, user), best in zip(roots, bests) if best is None]
    if failed:
        emit(failed[0], "warning", f"isel: @{fn.sym_name.data}: egglog's extractor failed on {len(failed)} of "
                                   f"{len(roots)} values (an internal error of egglog); they stay on the host")
    unbuilt = []
    for (v, _, user), best in zip(roots, bests):
        if best is None:
            continue
        rb = Rebuilder(imp, user, memo, intern)
        try:
            new = rb.value(best)
        except RebuildError as e:  # the value stays as it is (what rb built is erased below, unused)
            unbuilt.append(e)
            continue
        finally:
            created.update(rb.created)
        if new is not v and new.type == v.type:
            for use in list(v.uses):
                if use.operation not in imp.modelled:
                    use.operation.operands[use.index] = new
    if unbuilt:
        emit(unbuilt[0].op, "warning", f"isel: @{fn.sym_name.data}: {len(unbuilt)} selected values could not be "
                                       f"rebuilt ({unbuilt[0].message.removeprefix('isel: ')}); they stay as they are")
    erasable = set(imp.modelled) | created
    for op in reversed(list(block.ops)):
        if op in erasable or op.name in _PURE or (op.name == "linalg.generic" and _on_tensors(op)):
            if all(not r.uses for r in op.results) and op.name != "func.return":
                Rewriter.erase_op(op)
    # invocations built for a value that ended up unused (torch's softmax guard reads the scores) are gone
    return sum(1 for op in created if op.name == "ila.invoke" and op.parent is not None)


# ops without side effects that isel erases once the selection leaves them unused (torch's softmax
# guard leaves its mask generics so)
_PURE = ("arith.constant", "tensor.empty", "tosa.const_shape", "linalg.fill", "tosa.const", "tensor.collapse_shape",
         "tensor.expand_shape")


def _on_tensors(op) -> bool:
    """A linalg.generic on tensors (results, no buffers): pure."""
    from xdsl.dialects.builtin import TensorType

    return bool(op.results) and all(isinstance(v.type, TensorType) for v in (*op.operands, *op.results))


def repeating_egraph():
    """An egglog e-graph whose `run(schedule)`, called again with the same schedule, re-sends the
    command the first call made instead of making it again.

    `terms.saturate` runs one iteration per `run` call (it checks the limits in between), and
    egglog 13 turns the schedule into its command on every call in Python: it merges the
    declarations of every rule of the combined rule set again (`Declarations.create`, with a
    `runtime_checkable` protocol `isinstance` per declaration), ~40 ms an iteration whatever the
    e-graph's size.  The command is the same each time (the rules are registered on the first
    call), so re-sending it runs the same iteration: a 104-node layer norm saturated in 0.37 CPU s,
    now 0.09; LSTM-WLM's 11 iterations in 2.75, now 2.25.  Should egglog's internals differ
    (another version), every call takes egglog's own path."""
    import egglog.egraph as egg

    class RepeatingEGraph(egg.EGraph):
        _last: tuple | None = None

        def run(self, limit_or_schedule, /, *until, ruleset=None):
            if isinstance(limit_or_schedule, int) or until or ruleset is not None:
                return super().run(limit_or_schedule, *until, ruleset=ruleset)
            try:  # everything looked up before the command runs, so a fallback never runs it twice
                output_type, report_of = egg.bindings.RunScheduleOutput, egg.RunReport._from_bindings
                run_program, last = self._run_program, self._last
                if last is None or last[0] is not limit_or_schedule:
                    self._add_decls(limit_or_schedule)
                    last = self._last = (limit_or_schedule,
                                         self._state.run_schedule_to_egg(limit_or_schedule.schedule))
            except AttributeError:
                return super().run(limit_or_schedule)
            (out,) = run_program(last[1])
            if not isinstance(out, output_type):  # as egglog's own run checks
                raise TypeError(f"egglog answered a run with {type(out).__name__}")
            return report_of(out.report, self._state)

    return RepeatingEGraph()


def let_shallow(eg, terms: list, batched: bool = True) -> list:
    """Add `terms` to `eg` as one egglog let per distinct constructor node, each node's operands
    referring to their own lets by name; return the lets of `terms`.

    An importer's terms share their operands' subterms (a value's term is inside every user's).
    Handed to `eg.let` whole, egglog 13's Python bindings turn each term into one nested action,
    binding subterms with several parents to synthetic `$__expr_N` lets in an order that varies
    from process to process — and for some of those orders egglog's Rust side adds nodes the
    command does not contain (on the zoo LSTM LM, `tanh(cols(gates, 32, ..))`, the f gate's
    slice under the g gate's tanh), so ~15 % of runs selected a wrong program (issue 24;
    docs/rationale/ila.md).  Here every node is a let of one constructor over let references
    and literals: egglog converts no nested or shared term, and the commands are the same in
    every process (nodes in post-order, first occurrence first).

    The lets go to egglog as one program (`eg.register` of every `let` action, in that order)
    rather than one `eg.let` call each: egglog 13 ran a program and merged the e-graph's whole
    declarations into each returned reference per call (LSTM-WLM's 1,924 lets: 0.47 -> 0.31 CPU s).
    A reference names its let and carries its node's declarations only.  Should egglog's
    internals differ (another version), or with `batched=False`, each node is an `eg.let`."""
    import egglog

    expr_parts, get_callable_args, get_callable_fn = egglog.expr_parts, egglog.get_callable_args, egglog.get_callable_fn
    internal: Any = egglog  # egglog 13's internals (declarations, runtime), used if present
    try:
        internals = (internal.runtime.RuntimeExpr.__from_values__, internal.declarations.TypedExprDecl,
                     internal.declarations.LetRefDecl)
    except AttributeError:
        internals = None
    if not batched:
        internals = None

    lets: dict = {}  # a node's egglog declaration (compared by identity) -> its let
    actions = []
    out = []
    for term in terms:
        stack = [(term, False)]
        while stack:  # iterative post-order: an LSTM unrolled over a long sequence nests deeply
            e, ready = stack.pop()
            key = expr_parts(e).expr
            if key in lets:
                continue
            fn = get_callable_fn(e)
            if fn is None:  # a literal: stays inline
                continue
            args = get_callable_args(e)
            if not ready:
                stack.append((e, True))
                stack.extend((a, False) for a in reversed(args))
                continue
            shallow = fn(*(lets.get(expr_parts(a).expr, a) for a in args))
            name = f"n{len(lets)}"
            if internals is None:
                lets[key] = eg.let(name, shallow)
            else:  # the reference `eg.let` returns, without running anything yet
                expr_of, typed, let_ref = internals
                actions.append(egglog.let(name, shallow))
                lets[key] = expr_of(shallow.__egg_decls__, typed(shallow.__egg_typed_expr__.tp, let_ref(name)))
        out.append(lets.get(expr_parts(term).expr, term))
    if actions:
        eg.register(*actions)
    return out


def extract_all(eg, exprs: list, cost_model) -> list:
    """The cheapest term of each of `exprs` under `cost_model` (None where egglog's extractor panics).

    `EGraph.extract` computes the costs of the whole e-graph on every call: with one call
    per root, a model with a thousand roots (LSTM-WLM's unrolled steps) spent minutes in
    the Python cost callback.  One egglog extractor serves every root here; should
    egglog's internals differ (another version), it falls back to one `extract` per root.

    The extractor iterates its costs to a fixpoint and asks for a node's cost again in every
    round (LSTM-WLM: 325,645 calls for 19,257 distinct (node, child costs)); egglog 13's
    `_CostModel.fold` looks a result up in `fold_results` but never stores one, so each call
    ran `cost_model` in Python.  `_memo_cost_model` stores it: `cost_model` is a function of
    the node and its children's costs, so the costs, and the terms extracted, are the same."""
    try:
        from egglog import bindings
        from egglog.egraph import to_runtime_expr

        runtime = [to_runtime_expr(e) for e in exprs]
        for r in runtime:
            eg._add_decls(r)
            eg.register(r)
        if not runtime:
            return []
        tp = runtime[0].__egg_typed_expr__.tp
        model = _memo_cost_model()(cost_model, eg).to_bindings_cost_model()
        sort = eg._state.type_ref_to_egg(tp)
        extractor = bindings.Extractor([sort], eg._state.egraph, model)
        out = []
        for r in runtime:
            termdag = bindings.TermDag()
            value = eg._state.typed_expr_to_value(r.__egg_typed_expr__)
            try:
                _, term = extractor.extract_best(eg._state.egraph, termdag, value, sort)
            except BaseException as e:  # noqa: BLE001 (pyo3's PanicException derives from BaseException)
                if type(e).__name__ != "PanicException":
                    raise
                out.append(None)  # egglog 13's extractor can panic (extract.rs unwrap): this value stays as it is
                continue
            out.append(eg._from_termdag(termdag, term, tp))
        return out
    except (ImportError, AttributeError, TypeError):
        return [eg.extract(e, cost_model=cost_model) for e in exprs]


def _memo_cost_model():
    """egglog's `_CostModel` with `fold` memoised (see `extract_all`); made on first use, so that
    importing isel does not reach into egglog's internals."""
    from egglog.egraph import _CostModel

    class MemoCostModel(_CostModel):
        def fold(self, _fn: str, index: int, children_costs: list):
            key = (index, tuple(children_costs))
            results = self.fold_results
            try:
                return results[key]
            except KeyError:
                pass
            cost = results[key] = self.call_model(self.enode_cost_expressions[index], children_costs)
            return cost

    return MemoCostModel


@dataclass(frozen=True)
class IselPass(ModulePass):
    """Select accelerator invocations by e-graph matching (exact or flexible).

    Options: `targets`, `mode` (exact|flexible) and the saturation limits
    `iterations` (40), `node-limit` (100000 e-nodes) and `time-limit` (300
    seconds per function, a safety: the first two stop saturation the same way on
    any machine, a stop by time depends on the machine's load and says so); a limit
    that stops saturation is reported as a warning, e.g. `isel{node-limit=500}` on
    the ResMLP block:

    ```
    resmlp.mlir:3:1: warning: isel: @resmlp: saturation stopped by the node limit (500 e-nodes) after 2 iterations, ...
    ```

    A matmul or convolution left on the host gets a remark saying why, e.g.
    `remark: isel: 'linalg.depthwise_conv_2d_nchw_chw' stays on the host: no target has a
    grouped (depthwise) convolution`.

    Example: `step-opt examples/isel/maxpool128.mlir -p 'isel{targets=flexasr mode=flexible}'`
    maps the (4,4)/(2,2) max-pool on 128x128 to an `ila.windows` and four
    `ila.invoke "flexasr.maxpool"`; with `mode=exact` nothing matches.
    """

    name = "isel"

    targets: tuple[str, ...] = ("flexasr", "hlscnn", "vta")
    """Accelerators to select onto.
    One of: flexasr, hlscnn, vta."""
    mode: str = "flexible"
    """`exact`: patterns match whole shapes only; `flexible`: also tiled, padded and windowed matches.
    One of: exact, flexible."""
    iterations: int = 40
    """Stop equality saturation after this many iterations."""
    node_limit: int = 100_000
    """Stop equality saturation past this many e-nodes."""
    time_limit: float = TIME_LIMIT
    """A safety: stop saturation after this many seconds per function (such a stop depends on load)."""
    lstm: str = "sequence"
    """`sequence`: fold the per-step FlexASR LSTM calls of a sequence into one call over it (D2A's
    LSTM-WLM 1/1, `lstm_fold.py`); `step`: one call per step.
    One of: sequence, step."""
    offload: str = "always"
    """`always`: every call the targets' rules admit (D2A's counts: FlexASR's driver pads a linear layer,
    so a 10-class head on one row runs 64 outputs); `profitable`: a FlexASR linear call only when its
    MMIO commands and PE steps cost less than the host's GEMM (`passes/isel/offload.py`).
    One of: always, profitable."""

    def __post_init__(self):
        check_limits(self)
        check_mode(self)
        parse_targets(self)
        if self.lstm not in LSTM_FORMS:
            raise ValueError(f"{self.name}: lstm must be one of {', '.join(LSTM_FORMS)}, got '{self.lstm}'")
        if self.offload not in ("always", "profitable"):
            raise ValueError(f"{self.name}: offload must be one of always, profitable, got '{self.offload}'")

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        targets = parse_targets(self)
        limits = Limits(self.iterations, self.node_limit, self.time_limit)
        try:
            for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
                select_function(fn, targets, self.mode == "flexible", limits, offload=self.offload)
                if self.lstm == "sequence":
                    fold_lstm_steps(fn)
                host_remarks(fn, targets, self.offload)
        finally:
            release_egraphs()


LSTM_FORMS = ("sequence", "step")

_HOST_KINDS = ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_2d_nchw_fchw", "linalg.depthwise_conv_2d_nchw_chw",
               "tosa.matmul", "tosa.conv2d", "tosa.depthwise_conv2d")


def _conv_reason(op, targets) -> str:
    """Why `linalg.conv_2d_nchw_fchw` did not go to HLSCNN (spec §2.1 limits, as terms.hlscnn_rules)."""
    if "hlscnn" not in targets:
        return "hlscnn is not among the targets"
    n, c, h, w = shape_of(op.operands[0])
    k = shape_of(op.operands[1])[0]
    strides, dil = list(int_prop(op, "strides")), list(int_prop(op, "dilations"))
    lim = HLSCNN
    checks = [(n == 1, f"batch {n} is not 1"), (dil == [1, 1], "dilation is not 1"),
              (max(strides) <= lim.max_stride, f"stride {max(strides)} > {lim.max_stride}"),
              (k <= lim.max_filters, f"{k} filters > {lim.max_filters}"),
              (k * h * w <= lim.max_output_positions,
               f"HLSCNN's output scratchpad needs K*H*W*{lim.out_value_bytes} = "
               f"{k * h * w * lim.out_value_bytes} B > {lim.spad_bytes >> 10} KiB"),
              (max(h, w) <= lim.max_height and c <= lim.max_channels,
               "input larger than HLSCNN's size registers")]
    failed = [text for ok, text in checks if not ok]
    return "; ".join(failed) if failed else "its init is not zero (a bias add isel does not split off)"


def _gemm_reason(op, targets, offload: str = "always") -> str:
    """Why a matmul stayed on the host: the guards of each target's GEMM rule it fails (`terms`), or
    with `offload=profitable` that FlexASR's padded call does not pay (`offload`)."""
    from steplus.passes.isel.offload import flexasr_linear_cost, flexasr_linear_pays, host_gemm_cost
    from steplus.passes.isel.terms import gemm_guard_failures

    shapes = [list(shape_of(v)) for v in op.operands[:2]]
    if op.name != "linalg.matmul" or len(shapes[0]) != 2:
        return (f"no target's shape preconditions hold for operands {shapes[0]} x {shapes[1]} "
                "(flexasr.linear: in <= 4080; vta.dense: every dim % 16) or its init is not zero")
    (m, k), n = shapes[0], shapes[1][1]
    fails = {t: gemm_guard_failures(t, m, k, n) for t in ("flexasr", "vta") if t in targets}
    if offload == "profitable" and fails.get("flexasr") == [] and not flexasr_linear_pays(m, k, n):
        fails["flexasr"] = [f"the padded call does not pay (offload=profitable): {flexasr_linear_cost(m, k, n)} "
                            f"MMIO commands and PE steps vs {host_gemm_cost(m, k, n)} host vector steps"]
    text = "; ".join(f"{t}: {', '.join(f)}" for t, f in fails.items() if f)
    if not fails:
        return f"[{m}, {k}] x [{k}, {n}]: neither flexasr nor vta is among the targets"
    if all(fails.values()):
        return f"[{m}, {k}] x [{k}, {n}] fails {text}"
    held = " and ".join(t for t, f in fails.items() if not f)
    return (f"[{m}, {k}] x [{k}, {n}]: " + (f"{text}; " if text else "") + f"the guards of {held} hold, but the "
            "extracted program does not map it (exact mode: not the pattern as written, e.g. FlexASR's linear "
            "layer needs a bias_add; or its init is not zero)")


def host_remarks(fn: func.FuncOp, targets, offload: str = "always") -> None:
    """A remark at each matmul / convolution isel left on the host, saying why."""
    for op in fn.walk():
        if op.name not in _HOST_KINDS:
            continue
        if op.name == "tosa.conv2d" and any(int_values(op.attributes.get("pad", op.properties.get("pad"))) or ()):
            why = ("it is padded: HLSCNN has no padding and isel folds no pad into a TOSA convolution (it maps "
                   "unpadded ones; export with output_type='linalg-on-tensors' for a host pad + HLSCNN)")
        elif op.name in ("linalg.depthwise_conv_2d_nchw_chw", "tosa.depthwise_conv2d"):
            why = "no target has a grouped (depthwise) convolution"
        elif op.name == "linalg.conv_2d_nchw_fchw":
            why = _conv_reason(op, targets)
        elif op.name == "tosa.conv2d":
            why = "it is dilated or its zero points are not 0"
        else:
            why = _gemm_reason(op, targets, offload)
        emit(op, "remark", f"isel: '{op.name}' stays on the host: {why}")


def release_egraphs() -> None:
    """Free the e-graphs of this thread now: egglog's Rust e-graph must be dropped on the thread
    that made it (step-opt runs passes on a worker thread; a later collection on the main thread
    printed "EGraph is unsendable, but is being dropped on another thread")."""
    import gc

    gc.collect()
