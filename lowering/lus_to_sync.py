"""`convert-lus-to-sync`: lus nodes to reactive-SSA `sync.node`s.

Each `lus.node` (normalized first with `lus-normalize` if it still has
`fby`/`pre`) becomes a `sync.node` whose body is one `scf.while` main loop,
one iteration per tick:

- the state arguments become loop-carried values; a state read only through
  the normal form's `lus.merge "1(0)" %init %state` with a constant `%init`
  starts as that constant and the merge disappears (the seed's
  `scf.while(%state = %c0)`); any other state starts as `sync.undef`;
- inputs are read with `sync.input`, ops on a sub-clock run under `scf.if`
  on the clock's activation condition (consecutive ops on one clock share one
  `scf.if`; the else branch yields `sync.undef`);
- `lus.when` is the identity, `lus.merge` is `sync.select`,
  `lus.instance @f` is `sync.inst @f <n>` (instance numbers from 1 per node);
- k-periodic words (`when`/`merge` on a word, `lus.kperiodic`, clocks
  `on "w"`) read a loop-carried i32 counter per (clock, word), which advances
  in the ticks where the word's parent clock is active;
- outputs are written with `sync.output`, then `sync.tick`, then the next
  state is carried past the tick with `sync.sync` and yielded.

Example: the integrator

```mlir
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
```

becomes

```mlir
sync.node @integr(%i: !sync.sigin<i32>) -> (%out0: !sync.sigout<i32>) {
  %c0 = arith.constant 0 : i32
  %0 = scf.while (%s = %c0) : (i32) -> i32 {
    %true = arith.constant true
    scf.condition(%true) %s : i32
  } do {
  ^bb0(%s_1 : i32):
    %i_1 = sync.input(%i) : i32
    %incr = arith.addi %s_1, %i_1 : i32
    %e = sync.output(%out0 : %incr) : i32
    %t = sync.tick(%e) : i32
    %n = sync.sync(%t, %incr : i32)
    scf.yield %n : i32
  }
  sync.halt
}
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import BoolAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from steplus.dialects import lus, sync
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.passes.lus.clocks import Base, Clock, On, Var, infer_node, resolve, schedule
from steplus.passes.lus.normalize import normalize_node

I32 = IntegerType(32)
I1 = IntegerType(1)


def _const_i32(block: Block, value: int) -> SSAValue:
    op = arith.ConstantOp(IntegerAttr(value, I32))
    block.add_op(op)
    return op.result


def _const_bool(block: Block, value: bool) -> SSAValue:
    op = arith.ConstantOp(BoolAttr(value, I1))
    block.add_op(op)
    return op.result


def _is_constant_like(op: Operation) -> bool:
    return (not op.operands and not op.regions
            and not isinstance(op, lus.KPeriodicOp | lus.InstanceOp))


@dataclass
class _WordCounter:
    """A loop-carried position in a k-periodic word."""

    word: str
    parent: Clock
    index: int  # position among the loop-carried values
    current: SSAValue | None = None
    next: SSAValue | None = None


@dataclass
class _NodeLowering:
    node: lus.NodeOp
    clocks: object
    mapping: dict[SSAValue, SSAValue] = field(default_factory=dict)
    counters: dict[tuple, _WordCounter] = field(default_factory=dict)
    activations: dict[tuple, SSAValue | None] = field(default_factory=dict)
    bits: dict[tuple, SSAValue] = field(default_factory=dict)
    instances: int = 0

    # --- clocks -------------------------------------------------------------

    def clock_key(self, c: Clock) -> tuple:
        c = resolve(c)
        if isinstance(c, Base | Var):
            return ("base",)
        assert isinstance(c, On)
        cond = c.cond if isinstance(c.cond, str) else id(c.cond)
        return (self.clock_key(c.parent), cond, c.negated)

    def clock_of(self, op: Operation) -> Clock:
        values = [*op.results, *op.operands]
        for v in values:
            owner = v.owner
            if isinstance(owner, Operation) and _is_constant_like(owner):
                continue
            return self.clocks.of(v)
        return Base()

    def activation(self, c: Clock, block: Block) -> SSAValue | None:
        """An i1 that is true in the ticks where clock `c` is active (None: always)."""
        c = resolve(c)
        key = self.clock_key(c)
        if key in self.activations:
            return self.activations[key]
        if isinstance(c, Base | Var):
            return None
        assert isinstance(c, On)
        parent = self.activation(c.parent, block)
        if isinstance(c.cond, str):
            cond = self.word_bit(c.cond, c.parent, block)
        else:
            cond = self.mapping[c.cond]
        if c.negated:
            op = arith.XOrIOp(cond, _const_bool(block, True))
            block.add_op(op)
            cond = op.result
        if parent is not None:
            op = arith.SelectOp(parent, cond, _const_bool(block, False))
            block.add_op(op)
            cond = op.result
        self.activations[key] = cond
        return cond

    def word_bit(self, word: str, parent: Clock, block: Block) -> SSAValue:
        """The value of `word` at the current position of its counter."""
        key = (self.clock_key(parent), word)
        if key in self.bits:
            return self.bits[key]
        counter = self.counters[key]
        prefix, period = lus.parse_kperiodic(word)
        bits = prefix + period
        ones = [i for i, b in enumerate(bits) if b == "1"]
        zeros = [i for i, b in enumerate(bits) if b == "0"]
        positions, negate = (ones, False) if len(ones) <= len(zeros) else (zeros, True)
        acc: SSAValue | None = None
        for p in positions:
            eq = arith.CmpiOp(counter.current, _const_i32(block, p), "eq")
            block.add_op(eq)
            if acc is None:
                acc = eq.result
            else:
                orr = arith.OrIOp(acc, eq.result)
                block.add_op(orr)
                acc = orr.result
        if acc is None:
            acc = _const_bool(block, False)
        if negate:
            op = arith.XOrIOp(acc, _const_bool(block, True))
            block.add_op(op)
            acc = op.result
        self.bits[key] = acc
        return acc

    def collect_counters(self, ops: list[Operation]) -> None:
        def need(word: str, parent: Clock) -> None:
            key = (self.clock_key(parent), word)
            if key not in self.counters:
                self.counters[key] = _WordCounter(word, parent, len(self.counters))

        def walk_clock(c: Clock) -> None:
            c = resolve(c)
            if isinstance(c, On):
                walk_clock(c.parent)
                if isinstance(c.cond, str):
                    need(c.cond, c.parent)

        for op in ops:
            if isinstance(op, lus.KPeriodicOp):
                need(op.word.data, Base())
            elif isinstance(op, lus.WhenOp | lus.MergeOp) and op.word is not None:
                ck = self.clocks.of(op.input if isinstance(op, lus.WhenOp) else op.result)
                need(op.word.data, ck)
            for v in op.results:
                walk_clock(self.clocks.of(v))

    def advance_counters(self, block: Block) -> None:
        for c in self.counters.values():
            prefix, period = lus.parse_kperiodic(c.word)
            one = arith.AddiOp(c.current, _const_i32(block, 1))
            block.add_op(one)
            wrap = arith.CmpiOp(one.result, _const_i32(block, len(prefix) + len(period)), "eq")
            block.add_op(wrap)
            nxt = arith.SelectOp(wrap.result, _const_i32(block, len(prefix)), one.result)
            block.add_op(nxt)
            parent = self.activation(c.parent, block)
            if parent is not None:
                nxt = arith.SelectOp(parent, nxt.result, c.current)
                block.add_op(nxt)
            c.next = nxt.results[0]


def _initial_states(node: lus.NodeOp) -> dict[SSAValue, Operation]:
    """State arguments read only by `merge "1(0)" %const %state`: their constant."""
    found: dict[SSAValue, Operation] = {}
    for arg in node.state_args:
        uses = list(arg.uses)
        if len(uses) != 1:
            continue
        merge = uses[0].operation
        if (
            isinstance(merge, lus.MergeOp)
            and merge.word is not None
            and merge.word.data == "1(0)"
            and merge.on_false is arg
            and isinstance(merge.on_true.owner, Operation)
            and _is_constant_like(merge.on_true.owner)
        ):
            found[arg] = merge
    return found


def lower_node(node: lus.NodeOp) -> sync.NodeOp:
    """Lower one normalized lus node to a sync node."""
    clocks = infer_node(node)
    low = _NodeLowering(node, clocks)
    yield_op = node.body.block.last_op
    assert isinstance(yield_op, lus.YieldOp)
    inputs = [*node.static_args, *node.input_args]
    out_types = [v.type for v in yield_op.outputs]
    snode = sync.NodeOp(node.sym_name.data, [a.type for a in inputs], out_types)
    entry = snode.body.block
    for sig, arg in zip(entry.args, inputs):
        sig.name_hint = arg.name_hint
    for k, sig in enumerate(entry.args[len(inputs):]):
        sig.name_hint = f"out{k}"

    inits = _initial_states(node)
    ops = [op for op in schedule(node, clocks) if op not in inits.values()]
    low.collect_counters(ops)
    state_types = [a.type for a in node.state_args]
    init_values: list[SSAValue] = []
    for arg in node.state_args:
        if arg in inits:
            const = inits[arg].on_true.owner.clone()
            entry.add_op(const)
            init_values.append(const.results[0])
        else:
            undef = sync.UndefOp(arg.type)
            entry.add_op(undef)
            init_values.append(undef.result)
    for _ in low.counters:
        init_values.append(_const_i32(entry, 0))
    carried_types = [*state_types, *([I32] * len(low.counters))]

    before = Block(arg_types=carried_types)
    names = [a.name_hint for a in node.state_args] + ["word"] * len(low.counters)
    for barg, name in zip(before.args, names):
        barg.name_hint = name
    true = arith.ConstantOp(BoolAttr(True, I1))
    before.add_ops([true, scf.ConditionOp(true, *before.args)])
    body = Block(arg_types=carried_types)
    for barg, arg in zip(body.args, node.state_args):
        barg.name_hint = arg.name_hint
        low.mapping[arg] = barg
    for counter, barg in zip(low.counters.values(), body.args[len(state_types):]):
        barg.name_hint = "word"
        counter.current = barg
    for arg, merge in inits.items():
        low.mapping[merge.result] = low.mapping[arg]
    for sig, arg in zip(entry.args, inputs):
        read = sync.InputOp(sig)
        read.result.name_hint = arg.name_hint
        body.add_op(read)
        low.mapping[arg] = read.result

    _lower_ops(low, ops, body)

    low.advance_counters(body)
    tokens = []
    for sig, v in zip(entry.args[len(inputs):], yield_op.outputs):
        out = sync.OutputOp(sig, low.mapping[v])
        body.add_op(out)
        tokens.append(out.token)
    tick = sync.TickOp(tokens)
    body.add_op(tick)
    carried = [low.mapping[v] for v in yield_op.state]
    carried += [c.next for c in low.counters.values()]
    if carried:
        synced = sync.SyncOp(tick.result, carried)
        body.add_op(synced)
        carried = list(synced.results)
    body.add_op(scf.YieldOp(*carried))
    loop = scf.WhileOp(init_values, carried_types, Region(before), Region(body))
    entry.add_ops([loop, sync.HaltOp()])
    return snode


def _lower_ops(low: _NodeLowering, ops: list[Operation], body: Block) -> None:
    group: list[Operation] = []
    group_key: tuple | None = None

    def flush() -> None:
        nonlocal group, group_key
        if group:
            _emit_group(low, group, body)
        group, group_key = [], None

    for op in ops:
        if isinstance(op, lus.WhenOp):
            flush()
            low.mapping[op.result] = low.mapping[op.input]
            continue
        if isinstance(op, lus.MergeOp):
            flush()
            if op.word is not None:
                cond = low.word_bit(op.word.data, low.clocks.of(op.result), body)
            else:
                cond = low.mapping[op.condition]
            sel = sync.SelectOp(cond, low.mapping[op.on_true], low.mapping[op.on_false])
            sel.result.name_hint = op.result.name_hint
            body.add_op(sel)
            low.mapping[op.result] = sel.result
            continue
        if isinstance(op, lus.KPeriodicOp):
            flush()
            low.mapping[op.result] = low.word_bit(op.word.data, Base(), body)
            continue
        if _is_constant_like(op):
            clone = op.clone()
            body.add_op(clone)
            for r, c in zip(op.results, clone.results):
                low.mapping[r] = c
            continue
        if isinstance(op, lus.FbyOp | lus.PreOp):
            raise OpDiagnosticError(op, "convert-lus-to-sync: run lus-normalize first")
        key = low.clock_key(low.clock_of(op))
        if key != group_key:
            flush()
            group_key = key
        group.append(op)
    flush()


def _clone_lowered(low: _NodeLowering, op: Operation, block: Block) -> None:
    if isinstance(op, lus.InstanceOp):
        low.instances += 1
        new = sync.InstOp(
            op.callee.root_reference.data,
            low.instances,
            [low.mapping[a] for a in op.args],
            [r.type for r in op.res],
        )
    else:
        new = op.clone(value_mapper=low.mapping)  # extends it: no copy per op (was quadratic)
    for r, n in zip(op.results, new.results):
        n.name_hint = r.name_hint
        low.mapping[r] = n
    block.add_op(new)


def _emit_group(low: _NodeLowering, group: list[Operation], body: Block) -> None:
    act = low.activation(low.clock_of(group[0]), body)
    if act is None:
        for op in group:
            _clone_lowered(low, op, body)
        return
    then = Block()
    # The branch shares the mapping: its results are remapped to the scf.if's below.
    inner = _NodeLowering(low.node, low.clocks, low.mapping, low.counters,
                          low.activations, low.bits, low.instances)
    for op in group:
        _clone_lowered(inner, op, then)
    low.instances = inner.instances
    results = [r for op in group for r in op.results]
    types: list[Attribute] = [r.type for r in results]
    then.add_op(scf.YieldOp(*[inner.mapping[r] for r in results]))
    other = Block()
    undefs = [sync.UndefOp(t) for t in types]
    other.add_ops([*undefs, scf.YieldOp(*[u.result for u in undefs])])
    branch = scf.IfOp(act, types, Region(then), Region(other))
    body.add_op(branch)
    for r, n in zip(results, branch.results):
        n.name_hint = r.name_hint
        low.mapping[r] = n


@dataclass(frozen=True)
class ConvertLusToSyncPass(ModulePass):
    """Lower every lus node to a `sync.node` with a `scf.while` main loop.

    Example: `step-opt -p convert-lus-to-sync examples/lus/integrator.mlir`
    gives `sync.node @integr(%i: !sync.sigin<i32>) -> (%out0: !sync.sigout<i32>)`
    whose loop carries the state `%s` (started at the fby's constant), reads
    `sync.input`, writes `sync.output`, then `sync.tick` and `sync.sync`.
    """

    name = "convert-lus-to-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in [n for n in op.walk() if isinstance(n, lus.NodeOp)]:
            normalize_node(node)
            lowered = lower_node(node)
            Rewriter.replace_op(node, lowered, [])
