"""`lus-initialization`: a `pre` value must not be observed in the first cycle.

`lus.pre %x` is undefined in the first cycle of its clock. The analysis
propagates "possibly undefined in the first cycle" through the instantaneous
dependencies of a node (fixed point; graph regions may use values before
their definition), with two guards that make a value defined again:

- `lus.fby %init %next` is undefined only if `%init` is (it reads `%next` a
  cycle later);
- `lus.merge "w" %t %f` with a k-periodic word takes `%t` in the first cycle if
  the word starts with 1, `%f` if it starts with 0, so only that branch counts
  (`merge "1(0)" %init (pre %x)` is the classic initialised `pre`).

A possibly undefined value must not reach an output or the next state of the
node (`lus.yield`), an instance argument, or the condition of `when`/`merge`.
The error is reported at that use, with a note at the `pre` it comes from:

```mlir
lus.node @bad(%x: i32) -> (i32) {
  %p = lus.pre %x : i32
  lus.yield (%p : i32)   // error: %p may be read uninitialized in the first cycle
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
from steplus.passes.diagnostics import OpDiagnosticError
from steplus.passes.lus.causality import instantaneous_deps, value_name


def _first_bit(word: str) -> bool:
    prefix, period = lus.parse_kperiodic(word)
    return (prefix or period)[0] == "1"


def _undefined_sources(node: lus.NodeOp) -> dict[SSAValue, Operation]:
    """Values possibly undefined in the first cycle -> the pre they come from."""
    bad: dict[SSAValue, Operation] = {}
    ops = list(node.body.block.ops)
    changed = True
    while changed:
        changed = False
        for op in ops:
            if isinstance(op, lus.PreOp):
                source: Operation | None = op
            elif isinstance(op, lus.FbyOp):
                source = bad.get(op.init)
            elif isinstance(op, lus.MergeOp) and op.word is not None:
                branch = op.on_true if _first_bit(op.word.data) else op.on_false
                source = bad.get(branch)
            else:
                source = next((bad[d] for d in instantaneous_deps(op) if d in bad), None)
            if source is None:
                continue
            for r in op.results:
                if r not in bad:
                    bad[r] = source
                    changed = True
    return bad


def _checked_uses(op: Operation) -> list[SSAValue]:
    if isinstance(op, lus.YieldOp | lus.InstanceOp):
        return list(op.operands)
    if isinstance(op, lus.WhenOp | lus.MergeOp) and op.condition is not None:
        return [op.condition]
    return []


@dataclass(frozen=True)
class LusInitializationPass(ModulePass):
    """Reject reads of a `pre` value in the first cycle of its clock.

    Example: `step-opt -p lus-initialization prog.mlir`; the error is at the
    use, e.g. `%p may be read uninitialized in the first cycle (from lus.pre)`.
    """

    name = "lus-initialization"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for node in op.walk():
            if not isinstance(node, lus.NodeOp):
                continue
            bad = _undefined_sources(node)
            for user in node.body.block.ops:
                for value in _checked_uses(user):
                    if value in bad:
                        pre = bad[value]
                        raise OpDiagnosticError(
                            user,
                            f"{value_name(value)} may be read uninitialized in the "
                            "first cycle (it depends on a lus.pre not guarded by "
                            "lus.fby or lus.merge \"1(...)\")",
                            notes=[(pre, "the uninitialized lus.pre is here")],
                        )
