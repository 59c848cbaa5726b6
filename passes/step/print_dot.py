"""`step-print-dot`: a Graphviz view of each `step.graph`, stream types on the edges.

Every operator is a node labelled with its result name and op name; every
stream is an edge from its producer to its consumer, labelled with its type's
dims and element (`[B_0, 224] 16x64xf32`). Graph arguments are `arg` nodes.
The DOT text goes to stderr, or to the file `out=` names (the IR, unchanged,
stays alone on stdout), e.g.

```
step-opt examples/step/swiglu_tm32_tn128.mlir -p 'step-print-dot{out="g.dot"}' -o /dev/null
dot -Tsvg g.dot > g.svg
```

writes `digraph "swiglu_tm32_tn128" { ... "n0" -> "n2" [label="[2, 4, 1] 32x256xf32"]; ... }`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import SelectorType, StreamType, TileType, TupleType, dim_to_text
from steplus.passes.step.reports import emit_report


def _element(t: Attribute) -> str:
    if isinstance(t, TileType):
        r, c = t.rows.data, t.cols.data
        return f"{'?' if r < 0 else r}x{'?' if c < 0 else c}x{t.scalar}"
    if isinstance(t, SelectorType):
        return f"sel<{t.choices.data}>"
    if isinstance(t, TupleType):
        return "(" + ", ".join(_element(e) for e in t.elements.data) + ")"
    return str(t)


def edge_label(t: Attribute) -> str:
    if isinstance(t, StreamType):
        return "[" + ", ".join(dim_to_text(d) for d in t.dims) + "] " + _element(t.element)
    return str(t)


def _quote(s: str) -> str:
    return '"' + s.replace('"', '\\"') + '"'


def graph_to_dot(graph: GraphOp) -> str:
    ids: dict[Operation | SSAValue, str] = {}
    lines = [f"digraph {_quote(graph.sym_name.data)} {{", "  rankdir=TB;",
             "  node [shape=box, fontname=monospace];"]
    for arg in graph.body.block.args:
        ids[arg] = f"a{arg.index}"
        lines.append(f"  {ids[arg]} [label={_quote('%' + (arg.name_hint or str(arg.index)))}, shape=ellipse];")
    for i, op in enumerate(graph.body.block.ops):
        ids[op] = f"n{i}"
        names = [r.name_hint for r in op.results if r.name_hint]
        label = (f"%{names[0]}\\n" if names else "") + op.name.removeprefix("step.")
        lines.append(f"  {ids[op]} [label={_quote(label)}];")
    for op in graph.body.block.ops:
        for v in op.operands:
            owner = v.owner
            src = ids.get(v) if v in ids else (
                ids.get(owner) if isinstance(owner, Operation) else None)
            if src is not None:
                lines.append(f"  {src} -> {ids[op]} [label={_quote(edge_label(v.type))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class StepPrintDotPass(ModulePass):
    """Write each step.graph as Graphviz DOT with stream types on the edges.

    The DOT goes to stderr, or to the file named by `out` (the IR stays alone
    on stdout). Example: `step-opt g.mlir -p 'step-print-dot{out="g.dot"}'`
    then `dot -Tsvg g.dot`; a load feeding a store gives
    `n0 -> n1 [label="[4] 16x16xf32"];`.
    """

    name = "step-print-dot"

    out: str = ""
    """Write the DOT to this file instead of stderr."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graphs = [g for g in op.walk() if isinstance(g, GraphOp)]
        if graphs or self.out:
            emit_report(self.name, self.out, "".join(graph_to_dot(g) for g in graphs))
