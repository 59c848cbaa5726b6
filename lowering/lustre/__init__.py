"""The Lustre frontend: Lustre V6 / Heptagon / Kind 2 core-language source to
the `lus` dialect.

`import_lustre(text, filename)` parses the source with the grammar
`lustre.lark` (lark, LALR), lowers every node to a `lus.node` and returns the
module with a table op -> source offset, so that diagnostics of the lus passes
are reported at the Lustre source (`tools.source.LocationTable` accepts it).
Errors in the source raise `LustreError` (a character offset and a message).

Example::

    from steplus.lowering.lustre import import_lustre

    result = import_lustre("node integr(i: int) returns (s: int);"
                           "let s = i + (0 -> pre s); tel", "integr.lus")
    print(result.module)      # lus.node @integr(%i: i32) -> (i32) { ... }
"""

from __future__ import annotations

import gc
from collections import deque
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from steplus.lowering.lustre import ast, free_consts
from steplus.utils.diagnostics import emit
from steplus.utils.source_formats import lustre_dialect_of
from steplus.lowering.lustre.frames import desugar_blocks
from steplus.lowering.lustre.machine_ints import MACHINE_INTS
from steplus.lowering.lustre.oracles import add_oracles
from steplus.lowering.lustre.quantifiers import expand_quantifiers
from steplus.lowering.lustre.sized import depth_assumptions
from steplus.lowering.lustre.set_capacity import capacity_observers
from steplus.lowering.lustre.parser import LustreError, main_node, parse_program
from steplus.lowering.lustre.program import NodeKey, Program
from steplus.lowering.lustre.undefined import MAX_ROUNDS, find_undefined, read_undefined

__all__ = ["LustreError", "LustreModule", "import_lustre", "lustre_main_node",
           "lustre_to_module"]


@dataclass
class LustreModule:
    """The lus module of a Lustre program, with source offsets for its ops."""

    module: ModuleOp
    op_offsets: dict[Operation, int]
    main: str | None  # the node marked --%MAIN (Kind 2), if any
    # (source offset, message): a `pre` read undefined, from an oracle (undefined.py)
    warnings: list[tuple[int, str]] = field(default_factory=list[tuple[int, str]])


def import_lustre(text: str, filename: str = "<stdin>", dialect: str | None = None
                  ) -> LustreModule:
    """Parse and lower Lustre source; raises `LustreError` (located) on error.

    `dialect` (`lustre` or `heptagon`; by default from the file suffix, `.ept`
    is Heptagon) decides the rules where the two differ: in `lustre`, `pre` of
    a constant expression is that constant in every cycle (Kind 2 leaves its
    first value unconstrained and accepts the program; steplus picks the
    constant); in `heptagon` it is an initialization error like any `pre` read
    in the first cycle."""
    paused = gc.isenabled()
    gc.disable()  # building 10^5 small objects: collections would scan them all, often
    try:
        return _import(text, filename, dialect)
    finally:
        if paused:
            gc.enable()


def _import(text: str, filename: str, dialect: str | None) -> LustreModule:
    """Import; in Kind 2's reading (`lustre`), again while the initialization
    analysis finds `pre`s read undefined in their first cycle, each then read
    from an oracle (`undefined.py`)."""
    dialect = dialect or lustre_dialect_of(filename) or "lustre"
    marked: dict[int, tuple[list[str], str]] = {}
    result, prog, warnings = _import_once(text, dialect, marked)
    for rounds in range(MAX_ROUNDS if dialect == "lustre" else 0):
        known = {t for t in ("int", "real", "bool")} | set(MACHINE_INTS) | set(prog.types)
        new = find_undefined(result.module, result.op_offsets, prog.pre_ltypes, known,
                             first=rounds == 0)
        new = {pos: v for pos, v in new.items() if pos not in marked}
        if not new:
            break
        marked.update(new)
        try:
            result, prog, warnings = _import_once(text, dialect, marked)
        except LustreError as e:  # the oracle does not fit: the analysis reports the pre
            if e.message.startswith("unsupported construct"):
                raise  # e.g. an oracle in a polymorphic node
            for pos in new:
                del marked[pos]
            break
    result.warnings = warnings
    return result


def _import_once(text: str, dialect: str, marked: dict[int, tuple[list[str], str]]
                 ) -> tuple[LustreModule, Program, list[tuple[int, str]]]:
    from steplus.lowering.lustre.to_lus import NodeLowering

    try:
        tree = parse_program(text, dialect)
        free_consts.apply(tree)  # `--const N=4`
        desugar_blocks(tree, text)
        warnings = read_undefined(tree, text, marked)
        add_oracles(tree, text)
        prog = Program(tree, dialect)
        offsets: dict[Operation, int] = {}
        pending = deque(NodeKey(n.name) for n in tree.nodes
                        if not n.tparams and n.name not in prog.sized_nodes)
        prog.add_observers = lambda n: _add_observers(prog, n, text)
        for n in tree.nodes:
            if n.name not in prog.sized_nodes:  # those per instance, their sizes known
                prog.add_observers(n)
        pending.extend(NodeKey(n.name, observe=True) for n in tree.nodes
                       if n.observers and not n.tparams and n.name not in prog.sized_nodes)
        done: set[NodeKey] = set()
        nodes = []
        while pending:
            key = pending.popleft()
            if key in done:
                continue
            done.add(key)
            low = NodeLowering(prog, prog.nodes[key.name], key, offsets, pending.append)
            nodes.append(low.lower())
    except RecursionError:
        raise LustreError(0, "input is nested too deeply to process") from None
    module = ModuleOp(nodes)
    return LustreModule(module, offsets, main_node(text, tree)), prog, warnings


def _add_observers(prog: Program, node: ast.Node, text: str) -> None:
    """The observers the types of `node` add to its own (subranges, set
    capacities, refinements), and its quantifiers expanded."""
    _subrange_observers(prog, node)
    capacity_observers(prog, node)
    _refinement_observers(text, node)
    depth_assumptions(prog, node)  # recursive calls with flows as arguments (sized.py)
    expand_quantifiers(prog, node, text)


def _subrange_observers(prog: Program, node: ast.Node) -> None:
    """Kind 2 checks that outputs and locals of a subrange type stay in it: a
    property each, `lo <= y and y <= hi` (inputs are assumed in range: step-run
    checks them at the input)."""
    for d in [*node.outputs, *node.locals]:
        r = prog.int_range(d.type)
        if r is None:
            continue
        lo, hi = r
        var = ast.Var(d.pos, d.name)
        test: ast.Expr = ast.Binary(d.pos, "and",
                                    ast.Binary(d.pos, "<=", ast.Const(d.pos, lo, "int"), var),
                                    ast.Binary(d.pos, "<=", var, ast.Const(d.pos, hi, "int")))
        for tag, ctor in reversed(node.guards.get(d.name, [])):  # a datatype's field
            test = ast.Binary(d.pos, "=>", ast.Tester(d.pos, ctor, ast.Var(d.pos, tag)), test)
        node.observers.append(ast.Observer(d.pos, "property",
                                           f"{d.name} in subrange [{lo}, {hi}]", test))


def _refinement_observers(text: str, node: ast.Node) -> None:
    """Kind 2 refinement types `subtype {v: t | p}`: an input's predicate is an
    assumption, an output's or a local's a property (what step-run --check
    evaluates)."""
    for path, kind, pred in node.refinements:
        src = " ".join(_predicate_text(text, pred.pos).split())
        node.observers.append(ast.Observer(
            pred.pos, "assume" if kind == "input" else "property",
            f"{path} refined by {src}"[:60], pred))


def _predicate_text(text: str, pos: int) -> str:
    """A refinement's predicate from `pos`: up to the `}` closing `subtype {..}`,
    the `;` or `)` ending a refined parameter (`o: pos | o <= N;`), at depth 0."""
    depth = 0
    for k in range(pos, min(len(text), pos + 400)):
        ch = text[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth > 0:
            depth -= 1
        elif ch in ")};" and depth == 0:
            return text[pos:k]
    return text[pos:pos + 400]


def lustre_to_module(text: str, filename: str, dialect: str | None = None
                     ) -> tuple[ModuleOp, dict[Operation, int]]:
    """`import_lustre` for the tools: a source error is an xDSL `ParseError`
    spanning the offending token, so step-opt reports it like a .mlir error."""
    from xdsl.utils.exceptions import ParseError
    from xdsl.utils.lexer import Input, Span

    try:
        result = import_lustre(text, filename, dialect)
    except LustreError as e:
        pos = max(0, min(e.pos, len(text)))
        raise ParseError(Span(pos, pos + 1, Input(text, filename)), e.message) from None
    if result.warnings:  # a `pre` read undefined: a warning at it (stderr)
        at: dict[int, Operation] = {}
        for op, pos in result.op_offsets.items():
            at.setdefault(pos, op)
        for pos, message in result.warnings:
            emit(at.get(pos), "warning", message)
    return result.module, result.op_offsets


def lustre_main_node(path: str, text: str | None = None) -> str | None:
    """The node a Lustre file (or `text`, read from it already) marks `--%MAIN`
    (None if none, or if the file cannot be read or parsed: the caller reports
    those errors)."""
    try:
        if text is None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        return main_node(text, parse_program(text, lustre_dialect_of(path) or "lustre"))
    except (OSError, UnicodeDecodeError, LustreError):
        return None
