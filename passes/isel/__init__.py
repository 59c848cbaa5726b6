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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass

from steplus.dialects.ila import TARGETS
from steplus.passes.diagnostics import OpDiagnosticError


def _parse_targets(spec, op) -> tuple[str, ...]:
    names = spec if isinstance(spec, tuple) else tuple(x for x in str(spec).split(",") if x)
    for t in names:
        if t not in TARGETS:
            raise OpDiagnosticError(op, f"isel: unknown target '{t}' (known: {', '.join(TARGETS)})")
    return names


def select_function(fn: func.FuncOp, targets, flexible: bool, iterations: int = 40) -> int:
    """Run isel on one function; return the number of ila.invoke ops created."""
    from steplus.passes.isel import terms as T
    from steplus.passes.isel.frontend import Importer
    from steplus.passes.isel.rebuild import Rebuilder

    if not fn.body.blocks or len(fn.body.blocks) != 1:
        return 0
    block = fn.body.blocks[0]
    imp = Importer(block)
    roots = imp.run()
    if not roots:
        return 0
    # rebuild in the order of the anchors so memoised values dominate later uses
    roots.sort(key=lambda r: block.get_operation_index(r[2]))
    eg = T.make_egraph()
    lets = [eg.let(f"root{i}", t) for i, (_, t, _) in enumerate(roots)]
    T.saturate(eg, targets, flexible, iterations)
    count = 0
    memo = {}
    for (v, _, user), let in zip(roots, lets):
        best = eg.extract(let, cost_model=T.cost_model)
        rb = Rebuilder(imp, user)
        rb.memo = memo
        new = rb.value(best)
        count += sum(1 for op in rb.created if op.name == "ila.invoke")
        if new is not v:
            for use in list(v.uses):
                if use.operation not in imp.modelled:
                    use.operation.operands[use.index] = new
    for op in reversed(list(block.ops)):
        if op in imp.modelled or op.name in ("arith.constant", "tensor.empty", "tosa.const_shape", "linalg.fill"):
            if all(not r.uses for r in op.results) and op.name != "func.return":
                op.detach()
                op.erase()
    return count


@dataclass(frozen=True)
class IselPass(ModulePass):
    """Select accelerator invocations by e-graph matching (exact or flexible)."""

    name = "isel"

    targets: tuple[str, ...] = ("flexasr", "hlscnn", "vta")
    mode: str = "flexible"
    iterations: int = 40

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.mode not in ("exact", "flexible"):
            raise OpDiagnosticError(op, f"isel: mode must be 'exact' or 'flexible', got '{self.mode}'")
        targets = _parse_targets(self.targets, op)
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            select_function(fn, targets, self.mode == "flexible", self.iterations)
