"""`lus-initialization`: no value is observed in a cycle where it is undefined.

`lus.pre %x` is undefined in the first cycle of its clock. As in Heptagon and
Lustre V6, every value of a node gets an *initialization depth* `d`: its first
`d` cycles *on its own clock* may be undefined (0: always defined). Values are
followed through the instantaneous dependencies and the delays, clock by
clock (the clocks come from `lus-clock-analysis`), to a fixed point (graph
regions may use values before their definition):

- inputs, static and state arguments, constants: 0 (a state argument is
  assumed defined, so the next state given to `lus.yield` must be);
- `lus.pre %x`: `d(x) + 1` (`pre (pre x)` is undefined in two cycles);
- `lus.fby %init %next`: 1 if `%init` may be undefined, and `d(next) + 1` if
  `%next` may be (`0 fby (pre x)` is undefined in its second cycle);
- `lus.merge "w" %t %f` (the `->` of Lustre is `merge "1(0)"`): a branch on
  the merge's own clock is read in the cycles where `w` selects it, so only
  those of its undefined cycles count (`merge "1(0)" %init (pre %x)` is
  defined); a branch on the sub-clock `on "w"` is undefined in the cycles of
  the first `d` occurrences of its bit of `w`;
- `lus.merge %c %t %f`: a branch on the merge's clock counts as is; a branch
  on a sub-clock with `d > 0` is undefined at a cycle of the merge's clock that
  no depth bounds (the first cycle where `%c` holds): the initialization of a
  `pre` on a sub-clock must be done on that sub-clock;
- `lus.when`: the depth of its input (exactly, for a k-periodic word);
- `lus.instance` results: 0 (the callee's outputs are checked in the callee);
- any other op: the largest depth of its operands.

A value with `d > 0` must not be observed: an output or the next state of
the node (`lus.yield`), an instance argument, the condition of
`lus.when`/`lus.merge`/`scf.if`. The error is at that use, with a note at the
`pre` it comes from:

```mlir
lus.node @bad(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %p = lus.pre %x : i32
  %q = lus.pre %p : i32
  %y = lus.merge "1(0)" %c0 %q : i32
  lus.yield (%y : i32)  // error: %y may be read uninitialized in the first 2 cycles
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects import lus
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.lus.causality import in_lustre, instantaneous_deps, value_name
from steplus.passes.lus.clocks import Base, NodeClocks, Var, equal, infer_node, resolve

CAP = 256
"""Depths above this are `INF` (a cycle through `pre` alone never defines)."""
INF = CAP + 1
"""Undefined at cycles no depth bounds."""


def _bump(d: int) -> int:
    return d if d == 0 else min(d + 1, INF)


def _selected(word: str, bit: bool, limit: int) -> list[int] | None:
    """The positions of the first `limit` cycles where `word` is `bit`
    (fewer if it has fewer), or None if `limit` is `INF` and it has infinitely
    many (the period contains `bit`)."""
    prefix, period = lus.parse_kperiodic(word)
    want = "1" if bit else "0"
    if limit >= INF and want in period:
        return None
    found = [k for k, ch in enumerate(prefix) if ch == want][:limit]
    if want in period:
        k = len(prefix)
        while len(found) < limit:  # at most `limit` <= CAP periods
            found.extend(k + j for j, ch in enumerate(period) if ch == want)
            k += len(period)
    return found[:limit]


def _word_depth(positions: list[int] | None) -> int:
    if positions is None:
        return INF
    return max(positions) + 1 if positions else 0


def _merge_branch(op: lus.MergeOp, branch: SSAValue, bit: bool, d: int,
                  clocks: NodeClocks) -> int:
    """How many first cycles of the merge's clock `branch` may make undefined."""
    if d == 0:
        return 0
    same = equal(clocks.of(branch), clocks.of(op.result))
    if op.word is None:
        return d if same else INF
    word = op.word.data
    if not same:  # the k-th cycle of the branch is the k-th `bit` of the word
        return _word_depth(_selected(word, bit, d))
    # On the merge's clock: read in the cycles k < d where the word is `bit`.
    prefix, period = lus.parse_kperiodic(word)
    if d >= INF:
        if ("1" if bit else "0") in period:
            return INF
        return _word_depth([k for k, ch in enumerate(prefix) if (ch == "1") == bit])
    return _word_depth([k for k in range(d) if lus.kperiodic_value(word, k) == bit])


def _when_depth(op: lus.WhenOp, d: int) -> int:
    if d == 0 or d >= INF or op.word is None:
        return d
    keep = op.negated is None
    return sum(1 for k in range(d) if lus.kperiodic_value(op.word.data, k) == keep)


_Source = tuple[Operation, str]
"""Where an undefined value comes from: an op and the note to attach there."""


class _Depths:
    """The initialization depth of every value of one node (fixed point)."""

    def __init__(self, node: lus.NodeOp):
        self.clocks = infer_node(node)
        self.depth: dict[SSAValue, int] = {}
        self.source: dict[SSAValue, _Source] = {}
        self._solve(node)

    def of(self, v: SSAValue) -> int:
        return self.depth.get(v, 0)

    def _from(self, values: list[SSAValue]) -> _Source | None:
        return next((self.source[v] for v in values if self.of(v) and v in self.source), None)

    def _delayed(self, v: SSAValue, here: _Source) -> tuple[int, _Source]:
        """The depth of the previous value of `v` on its clock (`pre v`)."""
        d = self.of(v)
        return min(d + 1, INF), self.source.get(v, here) if d else here

    def _rule(self, op: Operation) -> tuple[int, _Source | None]:
        """The depth of op's results and the pre it comes from."""
        if isinstance(op, lus.PreOp):
            return self._delayed(op.input, (op, "the uninitialized lus.pre is here"))
        if isinstance(op, lus.FbyOp):
            d = max(1 if self.of(op.init) else 0, _bump(self.of(op.next)))
            return d, self._from([op.init, op.next])
        if isinstance(op, lus.MergeOp):
            d = max(
                _merge_branch(op, op.on_true, True, self.of(op.on_true), self.clocks),
                _merge_branch(op, op.on_false, False, self.of(op.on_false), self.clocks),
            )
            return d, self._from([op.on_true, op.on_false])
        if isinstance(op, lus.WhenOp):
            return _when_depth(op, self.of(op.input)), self._from([op.input])
        if isinstance(op, lus.InstanceOp):
            return 0, None
        deps = instantaneous_deps(op)
        return max((self.of(v) for v in deps), default=0), self._from(deps)

    def _solve(self, node: lus.NodeOp) -> None:
        block = node.body.block
        pending = list(block.ops)[::-1]  # popped in program order: a chain is one sweep
        queued = set(pending)

        def update(value: SSAValue, d: int, source: _Source | None) -> None:
            if d <= self.of(value):
                return
            self.depth[value] = d
            if source is not None:
                self.source[value] = source
            for use in value.uses:
                user = block.find_ancestor_op_in_block(use.operation)
                if user is not None and user not in queued:
                    queued.add(user)
                    pending.append(user)

        while pending:  # depths only grow, up to INF: this terminates
            op = pending.pop()
            queued.discard(op)
            d, source = self._rule(op)
            for r in op.results:
                update(r, d, source)


def _observed(op: Operation) -> list[SSAValue]:
    """The operands of `op` that must be defined in every cycle they are read."""
    if isinstance(op, lus.YieldOp | lus.InstanceOp):
        return list(op.operands)
    if isinstance(op, lus.WhenOp | lus.MergeOp) and op.condition is not None:
        return [op.condition]
    if op.name == "scf.if":
        return [op.operands[0]]
    return []


def _when(d: int) -> str:
    if d >= INF:
        return "in cycles of its clock that no initialization guards"
    return f"in the first {'cycle' if d == 1 else f'{d} cycles'} of its clock"


def _culprit(depths: _Depths, value: SSAValue, limit: int = 10_000) -> Operation | None:
    """Where an undefined output goes wrong: following the operands that may
    be undefined back toward the `pre`, the last `lus.merge`/`lus.fby` met
    (the guard that does not cover enough cycles: `0 -> pre (pre x)`, or a
    merge reading a sub-clock `pre` that is guarded on the base clock), else
    the op computing the value."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    found: Operation = owner
    seen: set[Operation] = set()
    op: Operation | None = owner
    while op is not None and op not in seen and len(seen) < limit:
        seen.add(op)
        if isinstance(op, lus.MergeOp | lus.FbyOp):
            found = op
        if isinstance(op, lus.PreOp):
            break
        nxt = next((v for v in op.operands if depths.of(v)), None)
        op = nxt.owner if nxt is not None and isinstance(nxt.owner, Operation) else None
    return found


def undefined_reads(node: lus.NodeOp) -> list[tuple[SSAValue, Operation, bool]]:
    """Every observed value of `node` that may be undefined, with the `pre` it
    comes from and whether that `pre` is on the node's base clock (or on the
    clock of its context: an input-free stream): what `check_node` rejects,
    all of them instead of the first. The Lustre frontend reads such a `pre`
    as Kind 2 does, from an oracle (`lowering/lustre/undefined.py`)."""
    depths = _Depths(node)
    out: list[tuple[SSAValue, Operation, bool]] = []
    for user in node.body.block.ops:
        for value in _observed(user):
            source = depths.source.get(value)
            if depths.of(value) and source is not None:
                pre = source[0]
                clock = resolve(depths.clocks.of(pre.results[0])) if pre.results else None
                out.append((value, pre, isinstance(clock, Base | Var)))
    return out


def _first_at_or_after(word: str, bit: bool, m: int) -> int:
    """The first cycle k >= m where `word` is `bit` (INF if none)."""
    prefix, period = lus.parse_kperiodic(word)
    for k in range(m, max(m, len(prefix)) + len(period) + 1):
        if lus.kperiodic_value(word, k) == bit:
            return k if k <= CAP else CAP
    return INF


def _occurrences_before(word: str, bit: bool, m: int) -> int:
    """How many cycles k < m `word` is `bit` at (the index, on the sub-clock
    `on word`, of the first such cycle at or after m)."""
    return sum(1 for k in range(m) if lus.kperiodic_value(word, k) == bit)


class _Needs:
    """Backward from the observed values: from which cycle on (of its own
    clock) each value of one node is read, `INF` for never (Kind 2's reading
    of `pre`: the `pre`s whose first cycle is read are the undefined ones).
    The sets of cycles are approximated from above by `from m on` (capped at
    `CAP`): a fixed point of one sweep per change, linear in a chain of
    `pre`s however deep."""

    def __init__(self, node: lus.NodeOp, clocks: NodeClocks):
        self.clocks = clocks
        self.need: dict[SSAValue, int] = {}
        self.reader: dict[SSAValue, SSAValue] = {}
        self._solve(node)

    def of(self, v: SSAValue) -> int:
        return self.need.get(v, INF)

    def _operands(self, op: Operation, m: int) -> list[tuple[SSAValue, int]]:
        """The operands of op and the cycle from which each is read, when
        op's results are read from cycle m on."""
        if isinstance(op, lus.PreOp):  # pre x at k is x at k - 1
            return [(op.input, max(m - 1, 0))]
        if isinstance(op, lus.FbyOp):  # init at cycle 0 only, next one cycle late
            return [(op.init, 0 if m == 0 else INF), (op.next, max(m - 1, 0))]
        if isinstance(op, lus.MergeOp):
            out: list[tuple[SSAValue, int]] = []
            for branch, bit in ((op.on_true, True), (op.on_false, False)):
                same = equal(self.clocks.of(branch), self.clocks.of(op.result))
                if op.word is None:
                    out.append((branch, m if same else 0))
                    continue
                first = _first_at_or_after(op.word.data, bit, m)
                if same or first >= INF:
                    out.append((branch, first))
                else:
                    out.append((branch, _occurrences_before(op.word.data, bit, first)))
            return out
        if isinstance(op, lus.WhenOp):
            if op.word is None:  # the m-th true of a flow is at m or later
                return [(op.input, m)]
            at = _selected(op.word.data, op.negated is None, m + 1)
            if at is None:
                return [(op.input, CAP)]
            return [(op.input, INF if len(at) <= m else min(at[m], CAP))]
        return [(v, m) for v in instantaneous_deps(op)]

    def _solve(self, node: lus.NodeOp) -> None:
        block = node.body.block
        pending: list[Operation] = []
        queued: set[Operation] = set()

        def update(value: SSAValue, m: int, reader: SSAValue) -> None:
            if m >= self.of(value):
                return
            self.need[value] = m
            self.reader[value] = reader
            owner = value.owner
            if isinstance(owner, Operation):
                op = block.find_ancestor_op_in_block(owner)
                if op is not None and op not in queued:
                    queued.add(op)
                    pending.append(op)

        for user in block.ops:
            for value in _observed(user):
                update(value, 0, value)
        while pending:  # needs only fall, from INF down to 0: this terminates
            op = pending.pop()
            queued.discard(op)
            needed = [(self.of(r), r) for r in op.results if self.of(r) < INF]
            if not needed:
                continue
            m, r = min(needed, key=lambda t: t[0])
            for v, mv in self._operands(op, m):
                if mv < INF:
                    update(v, mv, self.reader.get(r, r))


def first_cycle_reads(node: lus.NodeOp) -> list[tuple[SSAValue, Operation, bool]]:
    """Every `lus.pre` of `node` whose first cycle is read (Kind 2 leaves that
    value undefined), with the observed value that reads it and whether the
    `pre` is on the node's base clock, all at once: reading those from oracles
    makes `check_node` pass (up to sub-clock `pre`s, which stay errors). The
    same answers as iterating `undefined_reads` (each round finds the
    innermost `pre` of a chain) in one fixed point."""
    clocks = infer_node(node)
    needs = _Needs(node, clocks)
    out: list[tuple[SSAValue, Operation, bool]] = []
    for op in node.body.block.ops:
        if isinstance(op, lus.PreOp) and needs.of(op.result) == 0:
            clock = resolve(clocks.of(op.result))
            out.append((needs.reader.get(op.result, op.result), op,
                        isinstance(clock, Base | Var)))
    return out


def check_node(node: lus.NodeOp) -> None:
    """Raise `OpDiagnosticError` at the first observed use of a possibly
    undefined value of `node`: at the user, or for an output (whose use, the
    `lus.yield`, is the node itself in a Lustre program) at the guard that
    does not cover it."""
    depths = _Depths(node)
    for user in node.body.block.ops:
        for value in _observed(user):
            d = depths.of(value)
            if d == 0:
                continue
            source = depths.source.get(value)
            where = user
            if isinstance(user, lus.YieldOp) and in_lustre(node):  # the yield is the header
                where = _culprit(depths, value) or user
            why = ("(it depends on a 'pre' not guarded by '->' or 'fby' on the clock of "
                   "the 'pre')" if in_lustre(node) else "(it depends on a lus.pre not guarded "
                   "by lus.fby or lus.merge \"1(...)\" on the clock of the lus.pre)")
            notes = [source] if source else []
            if in_lustre(node):
                notes = [(op, "the uninitialized 'pre' is here") for op, _ in notes]
            raise OpDiagnosticError(
                where, f"{value_name(value)} may be read uninitialized {_when(d)} {why}",
                notes=notes)


@dataclass(frozen=True)
class LusInitializationPass(ModulePass):
    """Reject reads of values that may be undefined in the first cycles of their clock.

    A `pre` not initialized on its clock is undefined for as many cycles as
    its `pre` depth.

    Example: `step-opt -p lus-initialization prog.mlir`; the error is at the
    use, e.g. `%p may be read uninitialized in the first cycle of its clock`.
    """

    name = "lus-initialization"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in op.walk():
            if isinstance(node, lus.NodeOp):
                check_node(node)
