"""`step-run --check`: a falsifier for the properties and contracts of a Lustre node.

The Lustre frontend compiles a node's assumptions (`assert e;`, a contract's
`assume`) and properties (`--%PROPERTY e;`, `check e;`, a contract's
`guarantee`, each mode's `require => ensure` and the modes' exhaustiveness)
into an observer node `n$check`: the node's outputs, then one bool per
observer (`lustre.observers` names them). This module runs it tick by tick on
the lus interpreter:

- with `--input` files, over the given ticks;
- otherwise on `--runs` runs of `--ticks` ticks of seeded random inputs
  (`--seed`; bools fair coins, ints mostly small, enums their constructors,
  reals normal). When a tick's inputs make an assumption false, they are drawn
  again from the same state (up to `MAX_REDRAWS` times), so that runs stay
  within the assumptions (an oracle's constraint, an imported node's
  guarantee); a run stops at a tick where every draw breaks one: only ticks
  within the assumptions count (Kind 2's reading: a guarantee must hold as
  long as the assumptions have held).

It reports the first tick where a property is false, at the property's source
position, with the input trace up to that tick; `--cex DIR` writes the trace
as one CSV per input, so that the printed replay command finds the same
violation from the files:

    step-run prog.lus --node abs --check --ticks 50 --runs 200 --seed 1
    prog.lus:4:15: error: property 'out >= 0' of @abs is violated at tick 0 (run 3)
    ...
    step-run prog.lus --node abs --check --ticks 1 --input i=cex/i.csv   # replays it

Kind 2 reachability checks (`check reachable e from m within n`, observers
of kind `reachable`) are witnesses to find: the report says at which tick of
which run each first held, or that none was found (exit status unchanged).

Exit status: 0 when no property is violated, 1 when one is (or on an error).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from steplus.dialects import lus
from steplus.dialects.lus.input_ranges import input_problem, input_ranges, observers
from steplus.runtime.reactive import ReactiveError
from steplus.runtime.reactive.interpreter import NodeRunner, counting_ticks
from steplus.runtime.reactive.ops import numpy_dtype
from steplus.tools.cli import EXIT_USER_ERROR, InputError, UsageError
from steplus.tools.inputs import load_inputs, node_signature, require_all
from steplus.tools.loading import read_input
from steplus.tools.source import SourceFile

__all__ = ["CapacityWatch", "Violation", "CheckReport", "capacity_watch", "check_main",
           "falsify", "run_check"]

MAX_RUNS = 100_000


@dataclass
class Violation:
    name: str  # the property's name
    offset: int  # its source offset
    tick: int
    run: int
    trace: dict[str, list[object]]  # input name -> values up to `tick`


@dataclass
class CheckReport:
    properties: int
    assumptions: int
    runs: int = 0
    ticks: int = 0  # ticks checked within the assumptions
    cut: int = 0  # runs stopped early by a false assumption
    violation: Violation | None = None
    input_names: list[str] = field(default_factory=list)
    # Kind 2 reachability checks: name -> (run, tick) of the first witness, or None
    reached: dict[str, tuple[int, int] | None] = field(default_factory=dict)


def _random_stream(rng: np.random.Generator, t, ticks: int,
                   spec: tuple[str, int, int] | None) -> np.ndarray:
    dtype = numpy_dtype(t)
    if spec is not None and spec[2] - spec[1] <= 2000:
        return rng.integers(spec[1], spec[2] + 1, ticks).astype(dtype)
    if spec is not None:  # a wide subrange: mostly small values, within it
        small = rng.integers(-10, 11, ticks) + min(max(0, spec[1]), spec[2] - 10)
        large = rng.integers(-1000, 1001, ticks)
        mix = np.where(rng.random(ticks) < 0.8, small, large)
        return np.clip(mix, spec[1], spec[2]).astype(dtype)
    if dtype == np.bool_:
        return rng.random(ticks) < 0.5
    if np.issubdtype(dtype, np.integer):
        small = rng.integers(-10, 11, ticks)
        large = rng.integers(-1000, 1001, ticks)
        return np.where(rng.random(ticks) < 0.8, small, large).astype(dtype)
    return (rng.standard_normal(ticks) * 10).astype(dtype)


MAX_REDRAWS = 100
"""Times a tick's random inputs are drawn again when they break an assumption."""


def _snapshot(r: NodeRunner) -> tuple:
    """The state of a running instance (and of its instances), to step a tick again."""
    return (dict(r.memory), set(r.started), dict(r.counters), list(r.state),
            dict(r.word_counts), {op: _snapshot(c) for op, c in r.children.items()})


def _restore(r: NodeRunner, snap: tuple) -> None:
    memory, started, counters, state, words, children = snap
    r.memory, r.started, r.counters, r.state = dict(memory), set(started), dict(counters), \
        list(state)
    r.word_counts = dict(words)
    for op in list(r.children):
        if op in children:
            _restore(r.children[op], children[op])
        else:  # created by the tick being undone
            del r.children[op]


def falsify(module: ModuleOp, name: str, ticks: int, runs: int = 100, seed: int = 0,
            inputs: dict[str, np.ndarray] | None = None) -> CheckReport:
    """Run the observer node `@<name>$check`; see the module docstring."""
    checker = next((op for op in module.walk() if isinstance(op, lus.NodeOp)
                    and op.sym_name.data == f"{name}$check"), None)
    if checker is None:
        raise UsageError(f"@{name} has no property, assumption or contract to check "
                         "(--%PROPERTY, check, assert, (*@contract ... *))")
    obs = observers(checker)
    first = len(checker.output_types) - len(obs)
    kinds = [k for k, _, _ in obs]
    report = CheckReport(kinds.count("property"), kinds.count("assume"))
    report.reached = {n: None for k, n, _ in obs if k == "reachable"}
    args = list(checker.input_args)
    report.input_names = [a.name_hint or f"arg{k}" for k, a in enumerate(args)]
    ranges = input_ranges(checker)
    rng = np.random.default_rng(seed)
    total_runs = 1 if inputs is not None else runs
    for run in range(total_runs):
        if inputs is not None:
            streams = [np.asarray(inputs[n]) for n in report.input_names]
        else:
            streams = [_random_stream(rng, a.type, ticks, ranges.get(n))
                       for a, n in zip(args, report.input_names)]
        runner = NodeRunner(module, f"{name}$check")
        dtypes = [numpy_dtype(a.type) for a in args]
        step = counting_ticks(lambda values: runner.step(
            [np.asarray(v).astype(d)[()] for v, d in zip(values, dtypes)]))
        report.runs += 1
        cut = False
        for t in range(ticks):
            saved = _snapshot(runner) if inputs is None else None
            for attempt in range(MAX_REDRAWS + 1):
                out = step([s[t] for s in streams])
                values = out[first:]
                if all(k != "assume" or bool(v) for k, v in zip(kinds, values)):
                    break
                if saved is None or attempt == MAX_REDRAWS:
                    cut = True
                    break
                # this tick's inputs broke an assumption: draw them again (from
                # the same state), so the run goes on within the assumptions
                _restore(runner, saved)
                for s, a, n in zip(streams, args, report.input_names):
                    s[t] = _random_stream(rng, a.type, 1, ranges.get(n))[0]
            if cut:
                report.cut += 1
                break
            report.ticks += 1
            for (k, rname, _), v in zip(obs, values):
                if k == "reachable" and v and report.reached.get(rname) is None:
                    report.reached[rname] = (run, t)
            bad = next((j for j, (k, v) in enumerate(zip(kinds, values))
                        if k == "property" and not bool(v)), None)
            if bad is not None:
                _, pname, offset = obs[bad]
                trace = {n: [s[i].item() for i in range(t + 1)]
                         for n, s in zip(report.input_names, streams)}
                report.violation = Violation(pname, offset, t, run, trace)
                return report
    return report


def _print_reached(report: CheckReport) -> None:
    """Kind 2 reachability checks: the witness found, or none (which proves nothing)."""
    for rname, where in report.reached.items():
        if where is None:
            print(f"reachable '{rname}': not reached in {report.runs} run(s) (no witness found; "
                  "that does not prove it unreachable)")
        else:
            print(f"reachable '{rname}': reached at tick {where[1]} (run {where[0] + 1})")


def _fmt(v: object) -> str:
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    return f"{v:.9g}" if isinstance(v, float) else str(v)


def run_check(args: argparse.Namespace, module: ModuleOp, name: str,
              inputs: dict[str, np.ndarray] | None, source: SourceFile | None) -> int:
    """`step-run --check`: print the report; 0 if no property is violated, else 1."""
    if not 1 <= args.runs <= MAX_RUNS:
        raise UsageError(f"--runs must be 1 to {MAX_RUNS}")
    if not 0 <= (args.seed or 0) < 1 << 64:  # numpy's generators take no negative seed
        raise UsageError("--seed must be 0 to 2^64 - 1")
    ticks = 50 if args.ticks is None else args.ticks
    if not 1 <= ticks <= args.max_ticks:
        raise UsageError(f"--ticks must be 1 to {args.max_ticks} with --check")
    report = falsify(module, name, ticks, args.runs, args.seed or 0, inputs)
    how = ("the given inputs" if inputs is not None else
           f"{report.runs} random run(s) of up to {ticks} ticks (seed {args.seed or 0})")
    v = report.violation
    if v is None:
        print(f"@{name}: {report.properties} propert{'y' if report.properties == 1 else 'ies'}"
              f", {report.assumptions} assumption(s): no violation in {how}; "
              f"{report.ticks} tick(s) within the assumptions"
              + (f", {report.cut} run(s) cut by an assumption" if report.cut else ""))
        _print_reached(report)
        return 0
    where = args.input_file or "<stdin>"
    if source is not None:
        loc = source.loc_of_offset(v.offset)
        where = f"{source.name}:{loc.line}:{loc.col}"
    print(f"{where}: error: property '{v.name}' of @{name} is violated at tick {v.tick}"
          + ("" if inputs is not None else
             f" (run {v.run + 1} of {args.runs}, seed {args.seed or 0})"))
    print("input trace, one line per tick: " + " ".join(report.input_names))
    for t in range(v.tick + 1):
        print(f"tick {t}: " + " ".join(_fmt(v.trace[n][t]) for n in report.input_names))
    if args.cex:
        try:
            os.makedirs(args.cex, exist_ok=True)
            for n in report.input_names:
                with open(os.path.join(args.cex, f"{n}.csv"), "w", encoding="utf-8") as f:
                    f.write("".join(f"{int(x) if isinstance(x, bool) else x}\n"
                                    for x in v.trace[n]))
        except OSError as e:
            raise InputError([f"{args.cex}: error: cannot write the trace: {e}"]) from None
        files = " ".join(f"--input {n}={os.path.join(args.cex, n + '.csv')}"
                         for n in report.input_names)
        consts = "".join(f" --const {c}" for c in getattr(args, "const", None) or ())
        print(f"replay: step-run {args.input_file} --node {name} --check --ticks {v.tick + 1} "
              f"{files}{consts}")
    sys.stdout.flush()
    return 1


def check_main(args: argparse.Namespace, source: ModuleOp, name: str, node: lus.NodeOp) -> int:
    """`step-run --check` on node `@name` of the (lus) module `source`."""
    if args.stream or args.output or args.per_tick or args.backend not in (None, "reactive"):
        raise UsageError("--check runs on the lus interpreter; it takes no --stream, "
                         "--output, --per-tick or other --backend")
    inputs = None
    if args.input:
        sigs = node_signature(node)
        inputs = load_inputs(args.input, sigs, f"@{name}")
        require_all(sigs, inputs, f"@{name}")
        if args.ticks is None:
            args.ticks = min(len(v) for v in inputs.values())
        for n, values in inputs.items():
            problem = input_problem(node, n, values[: args.ticks])
            if problem is not None:
                raise InputError([f"{args.input_file}: error: @{name}: {problem}"])
    path: str | None = args.input_file
    src = None
    if path is not None and path != "-":
        try:
            src = SourceFile(path, read_input(path)[1])
        except InputError:
            src = None
    try:
        return run_check(args, source, name, inputs, src)
    except ReactiveError as e:
        print(f"{args.input_file}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR


class CapacityWatch:
    """A plain run (no `--check`) of a node with set or map outputs or locals,
    or calling a recursive function unrolled by depth: it runs `n$check`, whose
    capacity properties say when a set or map of the node overflowed its slots
    (Kind 2 sets, `lowering/lustre/sets.py`) and whose depth assumptions say
    when a recursion went past its unrolled levels (`lowering/lustre/sized.py`);
    its other observers are ignored. `inputs` adds the check node's extra inputs
    (quantifier witnesses: 0), `split` cuts its outputs to the node's and
    names the first overflow."""

    def __init__(self, checker: lus.NodeOp, node: lus.NodeOp, path: str | None, values):
        self.values = values  # lowering/lustre/set_values.py, loaded for Lustre sets only
        self.name = checker.sym_name.data
        self.first = len(checker.output_types) - len(observers(checker))
        self.count = len(node.output_types)
        self.watched = watched_observers(checker, values)
        self.sigs = node_signature(checker)
        self.path = path
        self.source: SourceFile | None = None

    def inputs(self, given: dict[str, np.ndarray], ticks: int) -> dict[str, np.ndarray]:
        out = dict(given)
        for s in self.sigs:
            out.setdefault(s.name, np.zeros(ticks, s.dtype))
        return out

    def tick_inputs(self, names: list[str], values: list) -> list:
        """One tick's inputs of the check node from the node's (`--stream`)."""
        given = dict(zip(names, values))
        return [given[s.name] if s.name in given else s.dtype.type(0) for s in self.sigs]

    def split(self, columns: list, first_tick: int = 0) -> tuple[list, tuple[int, str] | None]:
        """The node's output columns, and the first tick where a set or map
        overflowed with its error (None if none did); the columns start at
        tick `first_tick` (`--stream`: one tick at a time)."""
        ticks = min((len(c) for c in columns), default=0)
        worst: tuple[int, int] | None = None
        for j, _, _, _, _ in self.watched:
            col = columns[self.first + j]
            bad = next((t for t in range(ticks) if not bool(col[t])), None)
            if bad is not None and (worst is None or bad < worst[0]):
                worst = (bad, j)
        if worst is None:
            return columns[:self.count], None
        _, kind, var, cap, pos = next(w for w in self.watched if w[0] == worst[1])
        return columns[:self.count], self._error(first_tick + worst[0], kind, var, cap, pos)

    def headers(self, node: Operation, columns: list) -> tuple[int, str] | None:
        """The first overflow of a set or map output of the node itself, by its
        header (a backend that cannot run the check node: the locals are not
        watched)."""
        found = self.values.header_overflows(node, columns)
        return None if not found else self._error(*found[0])

    def _error(self, tick: int, kind: str, var: str, cap: int, pos: int) -> tuple[int, str]:
        where = self.path or "<stdin>"
        if self.source is None and self.path not in (None, "-"):
            try:
                self.source = SourceFile(self.path, read_input(self.path)[1])
            except InputError:
                self.source = None
        if self.source is not None:
            loc = self.source.loc_of_offset(pos)
            where = f"{self.source.name}:{loc.line}:{loc.col}"
        if kind == "recursion":
            return tick, (f"{where}: error: the recursion of '{var}' goes deeper than {cap} "
                          f"levels at tick {tick} (a 'function rec' called with flows is "
                          f"unrolled {cap} levels: its decreases measure must stay below {cap})")
        return tick, (f"{where}: error: {kind} capacity {cap} exceeded at tick {tick} "
                      f"('{var}' would hold more than {cap} elements)")


def watched_observers(checker: Operation, values) -> list[tuple[int, str, str, int, int]]:
    """What a plain run watches in `n$check`: its sets' and maps' capacity
    properties and its depth assumptions (a recursion unrolled to a bounded
    depth), each (index among the observers, kind, name, bound, source offset)."""
    from steplus.lowering.lustre.sized import depth_observers_of

    return sorted(values.capacity_observers_of(checker)
                  + depth_observers_of(observers(checker)))


def capacity_watch(module: ModuleOp, name: str, node: lus.NodeOp, path: str | None
                   ) -> CapacityWatch | None:
    """The watch for a plain run of `@name` if its check node has capacity
    properties (a set or map output or local) or depth assumptions, else None."""
    from steplus.lowering.lustre import set_values

    checker = next((op for op in module.walk() if isinstance(op, lus.NodeOp)
                    and op.sym_name.data == f"{name}$check"), None)
    if checker is None or not watched_observers(checker, set_values):
        return None
    return CapacityWatch(checker, node, path, set_values)
