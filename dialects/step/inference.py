"""Shape inference over a `step.graph`: fill in and check every result stream type.

`infer_graph` is what `step-infer-shapes` (passes/step/infer_shapes.py) runs and what
the Python frontend (`builder.Graph.module`) checks its graphs with.

For every operator its own rule (`op.infer_shapes`, the `InferShapes`
interface of `shape_rules`; seed appendix tables 2-6) computes the result
types from the operand types and properties. Each
written result dimension is then

- `_` (the placeholder): replaced by the inferred dimension;
- a fresh dimension of the table (Partition's `B_i`, Reassemble's ragged
  `?B_sel`, FlatMap's dims, ...): kept -- the written symbol names it;
- anything else: checked; it must equal the inferred expression for every
  value of the symbols, otherwise the pass fails naming the dimension.

Graph regions may have feedback edges, so the inference runs to a fixed
point; a placeholder that is still unknown at the end is an error, as is a
placeholder in a graph argument (arguments are the program's inputs).
"""

from __future__ import annotations

from typing import cast

import sympy
from xdsl.ir import Attribute, Operation, SSAValue

from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import BufferType, StreamType, dim_to_text
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.utils.gc_pause import gc_paused
from steplus.dialects.step.shape_rules import (
    PLACEHOLDER,
    ResultShape,
    ShapeError,
    equal_dims,
    has_placeholder,
    new_symbol,
    rule_for,
)


class _FreshNames:
    """Fresh symbols that clash with no symbol of the graph, stable per (op, key)."""

    def __init__(self, used: set[str]):
        self.used = used
        self.made: dict[tuple[int, str], sympy.Symbol] = {}

    def for_op(self, op: Operation):
        def fresh(key: str, base: str, ragged: bool) -> sympy.Symbol:
            k = (id(op), key)
            if k not in self.made:
                name, n = base, 1
                while name in self.used:
                    name, n = f"{base}_{n}", n + 1
                self.used.add(name)
                self.made[k] = new_symbol(name, ragged)
            return self.made[k]

        return fresh


def _symbol_names(t: Attribute) -> set[str]:
    if isinstance(t, StreamType | BufferType):
        names = {cast(sympy.Symbol, s).name for d in t.dims for s in d.free_symbols}
        return names | _symbol_names(t.element)
    return set()


def _what(op: Operation, index: int) -> str:
    return "result" if len(op.results) == 1 else f"result #{index}"


def _reconcile_dims(op: Operation, written: list[sympy.Expr], inferred: list[sympy.Expr],
                    fresh: set[sympy.Symbol], what: str) -> list[sympy.Expr]:
    if len(written) != len(inferred):
        raise OpDiagnosticError(
            op, f"{what}: inferred {len(inferred)} dims, written {len(written)}")
    out = []
    for i, (w, d) in enumerate(zip(written, inferred)):
        if w == PLACEHOLDER:
            out.append(w if has_placeholder(d) else d)
        elif has_placeholder(w):
            raise OpDiagnosticError(
                op, f"dimension {i} of {what}: the placeholder _ must be a whole dimension")
        elif has_placeholder(d) or d in fresh or equal_dims(w, d):
            out.append(w)
        else:
            raise OpDiagnosticError(
                op, f"dimension {i} of {what}: inferred {sympy.sstr(d)}, "
                f"written {sympy.sstr(w)}")
    return out


def _reconcile(op: Operation, index: int, written: StreamType, shape: ResultShape) -> StreamType:
    what = _what(op, index)
    dims = _reconcile_dims(op, written.dims, shape.dims, shape.fresh, what)
    element = written.element
    inf = shape.element
    if isinstance(inf, BufferType) and isinstance(element, BufferType):
        bdims = _reconcile_dims(op, element.dims, inf.dims, shape.fresh, f"{what} buffer")
        if element.element != inf.element:
            raise OpDiagnosticError(
                op, f"element of {what} buffer: inferred {inf.element}, written {element.element}")
        element = BufferType(bdims, element.element)
    elif inf is not None and inf != element and not has_placeholder(inf):
        raise OpDiagnosticError(op, f"element of {what}: inferred {inf}, written {element}")
    if element == written.element and all(
            w.data == dim_to_text(d) for w, d in zip(written.shape.data, dims)):
        return written  # the common case: the same text, no new attribute
    new = StreamType(dims, element)
    return written if new == written else new


@gc_paused  # allocation-heavy on a large heap (utils.gc_pause)
def infer_graph(graph: GraphOp) -> dict[SSAValue, StreamType]:
    """Infer (and check) the stream type of every value of `graph`.

    Returns value -> inferred type; the IR is not changed (`step-infer-shapes`
    writes the types with a rewrite pattern). Raises `OpDiagnosticError` on a
    contradiction.
    """
    block = graph.body.block
    types: dict[SSAValue, StreamType] = {}
    used: set[str] = set()
    for arg in block.args:
        if isinstance(arg.type, StreamType):
            if has_placeholder(arg.type):
                raise OpDiagnosticError(
                    graph, f"graph argument #{arg.index} has a placeholder dimension; "
                    "arguments are inputs and must be written out")
            types[arg] = arg.type
            used |= _symbol_names(arg.type)
    ops = list(block.ops)
    for op in ops:
        for r in op.results:
            if isinstance(r.type, StreamType):
                types[r] = r.type
                used |= _symbol_names(r.type)
    names = _FreshNames(used)
    for _ in range(len(ops) + 2):
        changed = False
        for op in ops:
            rule = rule_for(op)
            if rule is None or not all(o in types for o in op.operands):
                continue
            try:
                shapes = rule(op, [types[o] for o in op.operands], names.for_op(op))
            except ShapeError as e:
                raise OpDiagnosticError(op, str(e)) from None
            for i, (res, shape) in enumerate(zip(op.results, shapes)):
                new = _reconcile(op, i, types[res], shape)
                if new != types[res]:
                    types[res] = new
                    changed = True
        if not changed:
            break
    for op in ops:
        for i, r in enumerate(op.results):
            if r in types and has_placeholder(types[r]):
                dims = types[r].dims
                k = next((j for j, d in enumerate(dims) if has_placeholder(d)), None)
                where = f"dimension {k}" if k is not None else "a buffer dimension"
                raise OpDiagnosticError(
                    op, f"cannot infer {where} of {_what(op, i)}: it depends on "
                    "values whose dimensions are unknown")
    return types
