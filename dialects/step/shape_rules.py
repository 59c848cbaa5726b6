"""Shape rules of the step operators (seed appendix tables 2-6): the machinery each op's rule uses.

Every operator with results owns its rule: the op class derives from
`InferShapes` and defines `infer_shapes(self, ins, fresh)` (xDSL's
`infer_result_type`, MLIR's `InferTypeOpInterface`), beside its verifier in
`dialects/step/ops/`. The rule takes the stream types of the operands and
returns, for every result, the inferred `ResultShape`: the dims (sympy,
outermost first) and the element type when the table determines it (`None`
keeps the written element, e.g. the tile shape of a `linear_offchip_load`).
The same rule serves three callers, so no table is written twice:

- the op's verifier (the `INFER_SHAPES` trait, `verify_result_shapes`): a written dimension that
  contradicts the rule where both are static is an error;
- `step-infer-shapes` (`inference.infer_graph`): fills in `_` and checks
  symbolic dims too;
- the Python frontend (`builder.Graph.emit`): computes each result type.

Where a table introduces a new dimension the rule asks `fresh(key, base,
ragged)` for a fresh symbol and lists it in `ResultShape.fresh`; a fresh
dimension agrees with any written dimension (the written one names it):

| op | fresh dims |
|---|---|
| `partition`, `parallelize` | the outer dim of result i, regular (`B_i`, seed Fig. 3) |
| `reassemble` | the concatenated dim, ragged (`?B_sel`, seed Fig. 4) |
| `flat_map` | the `rank + 1` dims each element expands to, ragged |
| `cache_read_addr_gen`, `filter_last_tile` | the per-request length, ragged |

Closed-form dims: `eager_merge` sums the inputs' outer dims, `reshape` splits
`D` into `ceiling(D/S), S`, `flatten` multiplies, `promote` adds `Min(1, D)`
(= `1 if D > 0 else 0` for a non-negative integer `D`).

A rule raises `ShapeError` when the operands contradict each other (e.g. the
two inputs of `zip` differ in a dimension); `ShapeError.static` says whether
the contradiction holds for every value of the symbols' (two different
numbers, a bad property) -- only those are verifier errors.

Example:

```python
from steplus.dialects.step.shape_rules import rule_for
shapes = rule_for(op)(op, [v.type for v in op.operands], fresh)   # = op.infer_shapes(...)
shapes[0].dims      # [ceiling(B/16), 16] for a step.reshape of [B] by 16
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, cast

import sympy
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException
from xdsl.traits import HasParent, OpTrait

from steplus.dialects.step.dims import dim_symbol, rename_symbols, to_expr
from steplus.dialects.step.types import (
    BufferType,
    RaggedSymbol,
    StreamType,
    TupleType,
)

Dims = list[sympy.Expr]
Fresh = Callable[[str, str, bool], sympy.Symbol]
"""`fresh(key, base, ragged)`: a fresh symbol, stable per (operator, key)."""

PLACEHOLDER = sympy.Symbol("_", integer=True, nonnegative=True)
"""A written dimension `_` asks step-infer-shapes to fill it in."""


class ShapeError(Exception):
    """The operands of an operator contradict its shape rule.

    `static`: the contradiction holds whatever the symbols' values (two
    different numbers, a property out of range); a verifier reports only
    those, `step-infer-shapes` all."""

    def __init__(self, message: str, static: bool = True):
        super().__init__(message)
        self.static = static


@dataclass
class ResultShape:
    """The inferred shape of one result."""

    dims: Dims
    element: Attribute | None = None
    fresh: set[sympy.Symbol] = field(default_factory=set[sympy.Symbol])


def sym(d: int | sympy.Expr) -> sympy.Expr:
    """A dimension as a sympy expression."""
    return to_expr(d)


_SAMPLES = ((1009, 37), (2, 3))
"""(first value, step): dims are non-negative integers; the symbols of a
difference take these distinct values in turn (large ones tell `ceiling(B/16)`
from `Min(1, B)`, small ones catch the rest)."""


def equal_dims(a: sympy.Expr, b: sympy.Expr) -> bool:
    """True if two dims are the same expression for every value of the symbols.

    Cheap first: structural equality, then `expand`; a difference that is
    non-zero at some sample point is unequal (no `simplify`, which dominated
    step-dynamic-tiling); only a difference that vanishes at every sample
    and does not expand to 0 goes to `simplify`. Memoized up to the names of
    the symbols: the per-expert comparisons of a MoE graph (`ceiling(B_3/16)`
    against `ceiling(B_3/16)*1`, ...) are decided once."""
    a, b = to_expr(a), to_expr(b)
    if a == b:
        return True
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: (_name(s), type(s).__name__))
    if not symbols:
        return _equal_dims(a, b)
    renaming = {s: _canonical_symbol(i, type(s), tuple(sorted(s.assumptions0.items())))
                for i, s in enumerate(symbols)}
    return _equal_dims(rename_symbols(a, renaming), rename_symbols(b, renaming))


@functools.lru_cache(maxsize=1024)
def _canonical_symbol(index: int, cls: type, assumptions: tuple) -> sympy.Symbol:
    """The `index`-th stand-in symbol, of a class and assumptions."""
    return cls(f"_dim{index}", **dict(assumptions))


@functools.lru_cache(maxsize=8192)
def _equal_dims(a: sympy.Expr, b: sympy.Expr) -> bool:
    diff = a - b
    if diff == 0 or sympy.expand(diff) == 0:
        return True
    if _nonzero_somewhere(diff):
        return False
    return sympy.simplify(diff) == 0


@functools.lru_cache(maxsize=4096)
def promoted_dim(d: sympy.Expr) -> sympy.Expr:
    """`Min(1, d)`, the outer dim `step.promote` adds (1 if d > 0 else 0).

    A plain dimension symbol (a non-negative integer, not known positive)
    leaves nothing to evaluate, so the Min is built without sympy's costly
    argument comparison; other dims are evaluated (`Min(1, B + 1)` is 1)."""
    d = to_expr(d)
    if d.is_Symbol and d.is_nonnegative and d.is_positive is not True:
        return sympy.Min(1, d, evaluate=False)
    return sympy.Min(1, d)


def _nonzero_somewhere(diff: sympy.Expr) -> bool:
    syms = sorted(diff.free_symbols, key=_name)
    for first, step in _SAMPLES:
        value = diff.xreplace({s: sympy.Integer(first + step * i) for i, s in enumerate(syms)})
        if value.is_Number and value != 0:
            return True
    return False


def has_placeholder(e: sympy.Expr | Attribute) -> bool:
    if isinstance(e, StreamType | BufferType):
        return any(has_placeholder(d) for d in e.dims) or has_placeholder(e.element)
    if isinstance(e, TupleType):
        return any(has_placeholder(x) for x in e.elements.data)
    if isinstance(e, Attribute):
        return False
    e = to_expr(e)
    if e.is_Atom:  # a number or a symbol: no traversal
        return e == PLACEHOLDER
    return _has_placeholder(e)


@functools.lru_cache(maxsize=8192)
def _has_placeholder(e: sympy.Expr) -> bool:
    return PLACEHOLDER in e.free_symbols


def same(a: Dims, b: Dims, what_a: str, what_b: str) -> None:
    """Operand dims that must agree; a contradiction names the dimension
    (static when both are numbers)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y or has_placeholder(x) or has_placeholder(y):
            continue
        x, y = to_expr(x), to_expr(y)
        static = bool(x.is_Integer and y.is_Integer)
        if not static and equal_dims(x, y):
            continue
        raise ShapeError(
            f"dimension {i} of {what_a} is {sympy.sstr(x)} but dimension {i} of "
            f"{what_b} is {sympy.sstr(y)}", static=static)


def base_name(dims: Dims, default: str) -> str:
    """The name fresh symbols derive from: the single outer symbol, if any."""
    if len(dims) == 1 and isinstance(dims[0], sympy.Symbol) and dims[0] != PLACEHOLDER:
        return dims[0].name
    return default


def yielded(region) -> Attribute | None:
    """The type a function region yields (the element of a map/accum/scan/flat_map result)."""
    last = region.block.last_op
    if last is not None and last.name == "step.yield" and len(last.operands) == 1:
        return last.operands[0].type
    return None


def check_inputs(ins: Sequence[StreamType]) -> None:
    """Merged inputs (reassemble, eager_merge): the same rank and inner dims."""
    for i, s in enumerate(ins[1:], start=1):
        if s.rank != ins[0].rank:
            raise ShapeError(f"input #{i} has {s.rank} dims, input #0 has {ins[0].rank}")
        same(s.dims[1:], ins[0].dims[1:], f"input #{i} (inner)", "input #0 (inner)")


def chunks(d: sympy.Expr, size: int) -> sympy.Expr:
    """`ceiling(d/size)`. For a symbol, sympy's evaluation (costly: it asks the
    assumptions whether `d/size` is an integer) depends only on the symbol's
    class and assumptions, so it runs once per kind of symbol and size and the
    result is renamed back."""
    d = to_expr(d)
    if not d.is_Symbol:
        return sympy.ceiling(d / size)
    stand_in = _canonical_symbol(0, type(d), tuple(sorted(d.assumptions0.items())))
    return rename_symbols(_ceiling_of(stand_in, size), {stand_in: d})


@functools.lru_cache(maxsize=256)
def _ceiling_of(symbol: sympy.Symbol, size: int) -> sympy.Expr:
    return sympy.ceiling(symbol / size)


def is_ragged(d: sympy.Expr) -> bool:
    """A dimension with a ragged (data-dependent) symbol in it."""
    if isinstance(d, sympy.Symbol):
        return isinstance(d, RaggedSymbol)
    return _has_ragged(to_expr(d))


@functools.lru_cache(maxsize=8192)
def _has_ragged(e: sympy.Expr) -> bool:
    return any(isinstance(x, RaggedSymbol) for x in e.free_symbols)


def _name(s: sympy.Basic) -> str:
    """The name of a free symbol of a dimension (every one is a `sympy.Symbol`)."""
    return cast(sympy.Symbol, s).name


Rule = Callable[[Operation, Sequence[StreamType], Fresh], list[ResultShape]]
"""A shape rule: `(op, operand types, fresh) -> result shapes` (an op's `infer_shapes`)."""


class InferShapes:
    """The interface of an operator that owns its shape rule.

    An op class derives from it (`class ReshapeOp(InferShapes, IRDLOperation)`),
    defines `infer_shapes`, and carries the `INFER_SHAPES` trait, which is its
    verifier: `verify_rules` (the op's own rules), then the written result
    shapes against the rule (`verify_result_shapes`), then `verify_body` (its
    regions, for the ops that have them). No op calls the shape check by hand.
    `RESULT_NAMES` names its results in verifier messages (default: `result`,
    or `result #i` for several).
    """

    RESULT_NAMES: ClassVar[tuple[str, ...]] = ()

    def infer_shapes(self, ins: Sequence[StreamType], fresh: Fresh) -> list[ResultShape]:
        """The inferred shape of every result from the operand types `ins`."""
        raise NotImplementedError

    def verify_rules(self) -> None:
        """The op's own rules, checked before its result shapes (none by default)."""

    def verify_body(self) -> None:
        """The op's regions, checked after its result shapes (none by default)."""


@dataclass(frozen=True)
class InferShapesTrait(OpTrait):
    """The verifier of an `InferShapes` op: its parent (`HasParent`), its
    rules, its result shapes against its shape rule where both are static,
    then its regions.

    Example: `traits = traits_def(IN_GRAPH, INFER_SHAPES)` (ops/base.py); a
    `step.promote` written `-> !step.stream<[2, 4], ...>` from a `[4]` stream
    is "step.promote: the new outer dim is 1 (or 0), got 2" (its rules), one
    written `-> !step.stream<[1, 5], ...>` is "step.promote: result dimension
    1 is 5, expected 4" (the shape rule).
    """

    def verify(self, op: Operation) -> None:
        if not isinstance(op, InferShapes):
            raise VerifyException(f"{op.name}: the InferShapes trait needs an op with a "
                                  f"shape rule (a subclass of InferShapes)")
        # xDSL keeps traits in a frozenset: the parent contract is checked
        # here first, so its message wins whatever order the set iterates in
        for parent in op.get_traits_of_type(HasParent):
            parent.verify(op)
        op.verify_rules()
        verify_result_shapes(op)
        op.verify_body()


INFER_SHAPES = InferShapesTrait()
"""The trait every op with a shape rule carries (last, after its parent trait)."""


def rule_for(op: Operation) -> Rule | None:
    """The shape rule of `op` (`type(op).infer_shapes`), None for an op without results."""
    return cast(Rule, type(op).infer_shapes) if isinstance(op, InferShapes) else None


def _verifier_fresh(key: str, base: str, ragged: bool) -> sympy.Symbol:
    return new_symbol(f"_fresh_{key}", ragged)


def verify_result_shapes(op: Operation) -> None:
    """Compare every written result stream type of `op` with its rule's result:
    the number of dims, and each dimension (and buffer dimension) where both the
    written and the inferred one are numbers. A static operand contradiction
    (`ShapeError.static`) is an error too; a symbolic one is left to
    `step-infer-shapes`. Raises `VerifyException` naming the op and the result."""
    rule = rule_for(op)
    if rule is None:
        return
    try:
        shapes = rule(op, cast("list[StreamType]", [o.type for o in op.operands]),
                      _verifier_fresh)
    except ShapeError as e:
        if e.static:
            raise VerifyException(f"{op.name}: {e}") from None
        return
    names = getattr(op, "RESULT_NAMES", ())
    for i, (res, shape) in enumerate(zip(op.results, shapes)):
        what = names[i] if i < len(names) else ("result" if len(op.results) == 1 else f"result #{i}")
        out = res.type
        if not isinstance(out, StreamType):
            continue
        _compare(op, out.dims, shape.dims, what)
        inf = shape.element
        if isinstance(inf, BufferType) and isinstance(out.element, BufferType):
            _compare(op, out.element.dims, inf.dims,
                     "buffer" if what == "result" else f"{what} buffer")


def _compare(op: Operation, written: Sequence[sympy.Expr], inferred: Sequence[sympy.Expr],
             what: str) -> None:
    if len(written) != len(inferred):
        raise VerifyException(f"{op.name}: {what} has {len(written)} dims, expected {len(inferred)}")
    for k, (w, d) in enumerate(zip(written, inferred)):
        # only two numbers can contradict (a fresh dim or `_` is a symbol)
        if getattr(d, "is_Integer", False) and getattr(w, "is_Integer", False) and w != d:
            raise VerifyException(f"{op.name}: {what} dimension {k} is {w}, expected {d}")


def new_symbol(name: str, ragged: bool) -> sympy.Symbol:
    """A dimension symbol with the assumptions `parse_dim_text` gives it
    (`dims.dim_symbol`: the same object for the same name)."""
    return dim_symbol(name, ragged)
