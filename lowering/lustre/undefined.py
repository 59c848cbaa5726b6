"""Kind 2's reading of a `pre` in the first cycle of its clock: an undefined value.

A `.lus` file is read as Kind 2 reads it: `pre x` in the first cycle of its
clock, where nothing guards it with `->` or `fby`, is *undefined* there, any
value of its type (Kind 2 proves properties for every such value). steplus
runs it as an *oracle* (`oracles.py`): the `pre` at line L, column C reads the
extra input `pre.L.C` in that cycle, `pre.L.C -> pre x` (one input per
scalar part, `pre.L.C.0`, `pre.L.C.1`, ... for an array, a record or a tuple),
passed up through the callers like every oracle (`f.L'.C'.pre.L.C`).
`step-run --check` and the results table draw it at random like the other
inputs; `step-run` takes it from `--input` like any input and, when it is not
given, uses 0 / 0.0 / false (`default_undefined`). Each such `pre` gets a
warning at its position naming the variable that reads it.

Only the `pre`s the initialization analysis (`passes/lus/initialization.py`)
finds observed in their first cycle are read so, and only on the node's base
clock (a `pre` on a sub-clock stays an initialization error). Lustre V6
(`--format lustre-v6`) and Heptagon (`.ept`) reject every such read.

Example::

    node counter(x: int) returns (y: int);
    let y = pre x + 1; tel    -- warning at 2:9: 'y' reads 'pre' in its first
                              -- cycle: the oracle input 'pre.2.9'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from steplus.dialects import lus
from steplus.lowering.lustre import ast
from steplus.lowering.lustre.oracles import node_roots, rewrite
from steplus.passes.lus.causality import value_name
from steplus.passes.lus.initialization import first_cycle_reads, undefined_reads
from steplus.utils.diagnostics import OpDiagnosticError

MAX_ROUNDS = 16
"""Most re-imports. The first reads every `pre` whose first cycle is read
from an oracle (`first_cycle_reads`, a fixed point over the node, however deep
a chain `pre pre ... x`); later rounds read those the initialization check
still finds (`undefined_reads`), normally none, so one re-import suffices."""

_NAME = re.compile(r"(?:^|\.)pre\.\d+\.\d+(?:\.[A-Za-z0-9_]+)*$")  # parts: .0, .has0


def is_undefined_input(name: str) -> bool:
    """Is `name` the oracle input of an undefined `pre` (`pre.L.C`, `pre.L.C.k`,
    or passed up by an instance, `f.L.C.pre.L.C`)? Lustre names hold no dots,
    and `pre` is a keyword: no variable or other oracle is named so."""
    return _NAME.search(name) is not None


def default_undefined(names: list[str], dtypes: Mapping[str, np.dtype],
                      inputs: dict[str, np.ndarray], ticks: int) -> None:
    """Fill the undefined-`pre` oracles that `inputs` lacks with zeros (0, 0.0,
    false) for `ticks` ticks (step-run's documented default)."""
    for name in names:
        if name not in inputs and is_undefined_input(name):
            inputs[name] = np.zeros(ticks, dtype=dtypes[name])


def _where(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def find_undefined(module: ModuleOp, offsets: Mapping[Operation, int],
                   pre_ltypes: Mapping[Operation, list[str]], known: set[str],
                   first: bool = True) -> dict[int, tuple[list[str], str]]:
    """The source positions of the `pre`s read undefined in `module`, each with
    the Lustre types of its scalar parts and the name of a variable reading it.
    A node whose clocks or causality fail is skipped (the lus checks report
    it), as is a `pre` on a sub-clock or of a type an input cannot have.

    `first`: every `pre` whose first cycle is read, in one fixed point
    (`first_cycle_reads`: `pre pre x` gives both); otherwise those the
    initialization check would reject next (`undefined_reads`: the innermost
    of a chain), which the importer asks after the first re-import, for what
    the first analysis's approximation may have left."""
    found: dict[int, tuple[list[str], str]] = {}
    for node in module.ops:
        if not isinstance(node, lus.NodeOp) or not any(
                isinstance(op, lus.PreOp) for op in node.body.block.ops):
            continue  # no `pre`: nothing undefined (and no analysis to pay for)
        try:
            reads = first_cycle_reads(node) if first else undefined_reads(node)
        except OpDiagnosticError:
            continue
        if not reads:
            continue
        for value, pre, on_base in reads:
            pos = offsets.get(pre)
            if pos is None or not on_base or pos in found:
                continue
            ltypes = pre_ltypes.get(pre, [])
            if ltypes and all(t in known for t in ltypes):
                reader = value_name(value)  # `'y$3'`, a frame's copy of y: `'y'`
                found[pos] = (ltypes, re.sub(r"\$\d+'$", "'", reader))
    return found


def read_undefined(prog: ast.Program, text: str,
                   marked: Mapping[int, tuple[list[str], str]]) -> list[tuple[int, str]]:
    """Rewrite each marked `pre e` of `prog` (in place, before `add_oracles`)
    as `any -> pre e` with the oracle named `pre.L.C`; returns the warnings
    (source offset, message)."""
    warnings: list[tuple[int, str]] = []
    if not marked:
        return warnings
    for node in prog.nodes:
        made: dict[int, ast.Expr] = {}  # one oracle per `pre` of the node
        fresh: set[int] = set()  # the `pre`s rewritten (visited again after)

        def repl(e: ast.Expr, made: dict[int, ast.Expr] = made, fresh: set[int] = fresh,
                 node: ast.Node = node) -> ast.Expr | None:
            if not (isinstance(e, ast.Unary) and e.op == "pre" and e.pos in marked) \
                    or id(e) in fresh:
                return None
            if e.pos not in made:
                ltypes, _ = marked[e.pos]
                line, col = _where(text, e.pos)
                base = f"pre.{line}.{col}"
                types = [ast.TypeRef(e.pos, t) for t in ltypes]
                if node.tparams and isinstance(e.arg, ast.Var) and len(types) == 1:
                    # `pre x` with `x: T` in a polymorphic node: T, per instance
                    declared = {d.name: d.type for d in [*node.inputs, *node.outputs,
                                                         *node.locals]}
                    t = declared.get(e.arg.name)
                    if t is not None and t.name in node.tparams and not t.args:
                        types = [t]
                anys: list[ast.Expr] = [
                    ast.Any(e.pos, t, name=base if len(types) == 1 else f"{base}.{k}")
                    for k, t in enumerate(types)]
                made[e.pos] = anys[0] if len(anys) == 1 else ast.Tuple(e.pos, anys)
            fresh.add(id(e))
            return ast.Binary(e.pos, "->", made[e.pos], e)

        for root, put in node_roots(node):
            put(rewrite(root, repl))
        for pos in made:
            line, col = _where(text, pos)
            ltypes, reader = marked[pos]
            name = f"pre.{line}.{col}" + (".0 ..." if len(ltypes) > 1 else "")
            by = "" if reader == "this expression" else f" (by {reader})"
            warnings.append((pos, (
                f"this 'pre' is read in the first cycle of its clock{by}, where Kind 2 "
                f"leaves it undefined: it is the oracle input '{name}' there (0 when "
                "step-run is not given it; --format lustre-v6 rejects the program)")))
    return sorted(set(warnings))


__all__ = ["MAX_ROUNDS", "default_undefined", "find_undefined", "is_undefined_input",
           "read_undefined"]
