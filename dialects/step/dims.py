"""Stream dimensions: a safe parser from text to sympy, and `as_dim`.

A dimension's text comes from `.mlir` files and from the Python frontend,
so it is untrusted. It is parsed by a grammar of its own (never by
`sympy.sympify`, which evaluates Python): Python's `ast` reads the text and
a whitelist of node kinds is turned into sympy objects directly.

Grammar (see SECURITY.md):

```
dim    := int | name | ?name | dim (+ | - | * | / | // | %) dim
        | -dim | +dim | (dim) | dim ** int | func(dim, ...)
func   := ceil | ceiling | floor        (one argument)
        | min | Min | max | Max         (1 to 16 arguments)
        | mod | Mod                     (two arguments; `mod(B, 4)` is `B % 4`)
```

`a // b` is `floor(a/b)`. Names are ASCII identifiers not starting with
`__`; `?C` is a ragged symbol. Limits: text length, node count, nesting
depth, min/max arguments, integer literals at most 2**63 - 1, `**` only with an integer literal
exponent of magnitude at most 16 and not nested in another power. Division
or `mod` by zero, a non-integer or negative constant dimension, and a
result that is not finite are errors.

Example:

```python
from steplus.dialects.step.dims import parse_dim_text
parse_dim_text("ceil(B/16)")      # ceiling(B/16)
parse_dim_text("?C + 1")          # ?C + 1 (ragged)
parse_dim_text("(lambda: 3)()")   # DimError: ... 'lambda' is not allowed
```
"""

from __future__ import annotations

import ast
import fractions
import functools
import numbers
import re
from collections.abc import Callable
from typing import cast

import sympy
from xdsl.utils.exceptions import VerifyException

MAX_DIM_TEXT = 8192
"""Longest dimension text accepted (characters)."""
MAX_DIM_NODES = 2048
"""Most syntax nodes in one dimension expression."""
MAX_DIM_DEPTH = 64
"""Deepest nesting of parentheses / function calls / operators of different kinds."""
MAX_DIM_LITERAL = 2**63 - 1
"""Largest integer literal and largest static dimension (the int64 range)."""
MAX_DIM_EXPONENT = 16
"""Largest magnitude of the integer exponent of `**`."""
MAX_DIM_ARGS = 16
"""Most arguments of one `min` / `max`."""
MAX_DIM_MINMAX_COST = 512
"""Budget of `min` / `max` work: the sum over their calls of (arguments)**2
(sympy compares the arguments pairwise)."""

_CACHED_TEXT = 512  # texts up to this length are memoized


class DimError(VerifyException, ValueError):
    """A stream dimension's text (or value) is not a valid dimension."""


class RaggedSymbol(sympy.Symbol):
    """A symbol whose value differs between the groups of a stream (`?C`)."""

    def _sympystr(self, printer) -> str:  # noqa: ANN001
        return f"?{self.name}"


@functools.lru_cache(maxsize=65536)
def dim_symbol(name: str, ragged: bool = False) -> sympy.Symbol:
    """The symbol a dimension text names (`B`, or ragged `?C`); memoized (a
    symbol with assumptions costs tens of microseconds to make, and the
    analyses make the same ones again and again)."""
    cls = RaggedSymbol if ragged else sympy.Symbol
    return cls(name, integer=True, nonnegative=True)


_RAGGED_REF = re.compile(r"(?<![A-Za-z0-9_])\?([A-Za-z_][A-Za-z0-9_]*)")
_RAGGED_PREFIX = "__ragged_"  # user names may not start with `__`: no collision
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCS: dict[str, tuple[Callable[..., sympy.Expr], int, int]] = {
    # name: (constructor, min args, max args)
    "ceil": (lambda a: _rounded(sympy.ceiling, a), 1, 1),
    "ceiling": (lambda a: _rounded(sympy.ceiling, a), 1, 1),
    "floor": (lambda a: _rounded(sympy.floor, a), 1, 1),
    "min": (lambda *a: _min(*a), 1, MAX_DIM_ARGS),
    "Min": (lambda *a: _min(*a), 1, MAX_DIM_ARGS),
    "max": (sympy.Max, 1, MAX_DIM_ARGS),
    "Max": (sympy.Max, 1, MAX_DIM_ARGS),
    "mod": (lambda a, b: _mod(a, b), 2, 2),
    "Mod": (lambda a, b: _mod(a, b), 2, 2),
}
_MINMAX = frozenset(n for n in _FUNCS if n.lower() in ("min", "max"))
_BAD_VALUES = (sympy.zoo, sympy.oo, -sympy.oo, sympy.nan)


class _Reject(Exception):
    """Why a dimension text is rejected (wrapped into a DimError with the text)."""


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def parse_dim_text(text: str) -> sympy.Expr:
    """Parse a dimension's text (`"4"`, `"B"`, `"?C"`, `"ceil(B/16)"`) into sympy.

    Raises `DimError` (a `VerifyException` and a `ValueError`) naming the text
    and the reason."""
    if not isinstance(text, str):
        raise DimError(f"a stream dimension text must be a string, got {type(text).__name__}")
    if text.isascii() and text.isdigit() and len(text) <= 19:
        return _integer(int(text), text)
    if len(text) <= _CACHED_TEXT:
        return _parse_cached(text)
    return _parse(text)


@functools.lru_cache(maxsize=65536)
def _parse_cached(text: str) -> sympy.Expr:
    return _parse(text)


def _parse(text: str) -> sympy.Expr:
    try:
        expr = _Builder(_syntax(text)).build()
        if not isinstance(expr, sympy.Expr) or expr.has(*_BAD_VALUES):
            raise _Reject("the value is not a finite number or expression")
        if expr.is_number:
            return _integer(expr, text)
    except _Reject as e:
        raise DimError(f"invalid stream dimension '{_short(text)}': {e}") from None
    return expr


def _integer(value: object, text: str) -> sympy.Integer:
    if type(value) is int and 0 <= value <= MAX_DIM_LITERAL:
        return sympy.Integer(value)  # the common case, without sympy comparisons
    v = sympy.Integer(value) if isinstance(value, int) else value
    if not (isinstance(v, sympy.Integer) and 0 <= v <= MAX_DIM_LITERAL):
        raise DimError(f"stream dimension '{_short(text)}' must be a non-negative integer "
                       f"(at most 2**63 - 1)")
    return v


def _syntax(text: str) -> ast.expr:
    if len(text) > MAX_DIM_TEXT:
        raise _Reject(f"longer than {MAX_DIM_TEXT} characters")
    if not text.isascii() or not text.isprintable():
        raise _Reject("only printable ASCII characters are allowed")
    if any(n.startswith("__") for n in _NAME.findall(text)):
        raise _Reject("names starting with '__' are reserved")
    body = _RAGGED_REF.sub(lambda m: _RAGGED_PREFIX + m.group(1), text)
    try:
        tree = ast.parse(body.strip(), mode="eval")
    except SyntaxError as e:
        raise _Reject(f"syntax error ({e.msg})") from None
    except ValueError:
        raise _Reject("syntax error") from None
    except (RecursionError, MemoryError):
        raise _Reject("nested too deeply") from None
    nodes = minmax = 0
    for node in ast.walk(tree):
        nodes += isinstance(node, ast.expr)
        if nodes > MAX_DIM_NODES:
            raise _Reject(f"more than {MAX_DIM_NODES} terms")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _MINMAX):
            minmax += len(node.args) ** 2
            if minmax > MAX_DIM_MINMAX_COST:
                raise _Reject("too many min/max arguments")
    return tree.body


def _min(*args: sympy.Expr) -> sympy.Expr:
    """`sympy.Min(*args)`. `Min(1, D)` of a dimension symbol that may be 0
    (what `step.promote` adds, one per expert in a dynamically tiled MoE)
    leaves nothing to evaluate: built directly, without sympy's costly
    argument comparison (the same expression; Min orders its arguments)."""
    if len(args) == 2:
        one, d = sorted(args, key=lambda x: not x.is_Number)
        if (one == 1 and d.is_Symbol and d.is_nonnegative and d.is_positive is not True):
            return sympy.Min(one, d, evaluate=False)
    return sympy.Min(*args)


def _rounded(fn: Callable[[sympy.Expr], sympy.Expr], a: sympy.Expr) -> sympy.Expr:
    """`fn(a)` (`ceiling` or `floor`). For `a = q*S`, a rational times one
    symbol (`B_3/16`), sympy's evaluation (costly: it asks the assumptions
    whether `q*S` is an integer) depends only on `q` and the symbol's class
    and assumptions, never its name: it runs once per kind and the result is
    renamed back (a MoE graph's `ceiling(B_e/16)`, one per expert, costed
    ~1 ms each to parse)."""
    if (a.is_Mul and len(a.args) == 2 and a.args[0].is_Rational
            and isinstance(a.args[1], sympy.Symbol)):
        q, s = a.args
        stand_in = _stand_in(type(s), tuple(sorted(s.assumptions0.items())))
        return rename_symbols(_rounded_of(fn, q, stand_in), {stand_in: s})
    return fn(a)


@functools.lru_cache(maxsize=256)
def _stand_in(cls: type, assumptions: tuple) -> sympy.Symbol:
    """A symbol of a class and assumptions that no dimension text can name
    (user names never start with `__`)."""
    return cls("__dim", **dict(assumptions))


@functools.lru_cache(maxsize=1024)
def _rounded_of(fn: Callable[[sympy.Expr], sympy.Expr], q: sympy.Expr,
                stand_in: sympy.Symbol) -> sympy.Expr:
    return fn(q * stand_in)


def _mod(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    _nonzero(b, "mod")
    return sympy.Mod(a, b)


def _nonzero(b: sympy.Expr, what: str) -> None:
    if b.is_zero:
        raise _Reject(f"{what} by zero")


_ADD = (ast.Add, ast.Sub)
_MUL = (ast.Mult, ast.Div)


class _Builder:
    """Turns a whitelisted `ast` expression into sympy (depth-limited)."""

    def __init__(self, root: ast.expr):
        self.root = root

    def build(self) -> sympy.Expr:
        return self._expr(self.root, 0)

    def _expr(self, node: ast.expr, depth: int) -> sympy.Expr:
        if depth > MAX_DIM_DEPTH:
            raise _Reject(f"nested more than {MAX_DIM_DEPTH} levels deep")
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            v = self._expr(node.operand, depth + 1)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise _Reject(f"{_describe(node)} is not allowed")

    @staticmethod
    def _constant(node: ast.Constant) -> sympy.Integer:
        if type(node.value) is not int:
            raise _Reject(f"only integer literals are allowed, got {node.value!r}"[:120])
        if node.value > MAX_DIM_LITERAL:
            raise _Reject("integer literal larger than 2**63 - 1")
        return sympy.Integer(node.value)

    @staticmethod
    def _name(name: str) -> sympy.Symbol:
        if name.startswith(_RAGGED_PREFIX):
            return dim_symbol(name[len(_RAGGED_PREFIX):], ragged=True)
        if name in _FUNCS:
            raise _Reject(f"'{name}' is a function, not a symbol")
        return dim_symbol(name)

    def _binop(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        if isinstance(node.op, _ADD):
            # a + b - c + ...: a left-deep chain, built iteratively.
            terms = []
            cur: ast.expr = node
            while isinstance(cur, ast.BinOp) and isinstance(cur.op, _ADD):
                v = self._expr(cur.right, depth + 1)
                terms.append(-v if isinstance(cur.op, ast.Sub) else v)
                cur = cur.left
            terms.append(self._expr(cur, depth + 1))
            return sympy.Add(*terms)
        if isinstance(node.op, _MUL):
            factors = []
            cur = node
            while isinstance(cur, ast.BinOp) and isinstance(cur.op, _MUL):
                v = self._expr(cur.right, depth + 1)
                if isinstance(cur.op, ast.Div):
                    _nonzero(v, "division")
                    v = 1 / v
                factors.append(v)
                cur = cur.left
            factors.append(self._expr(cur, depth + 1))
            return sympy.Mul(*factors)
        if isinstance(node.op, ast.Pow):
            return self._pow(node, depth)
        a, b = self._expr(node.left, depth + 1), self._expr(node.right, depth + 1)
        if isinstance(node.op, ast.FloorDiv):
            _nonzero(b, "division")
            return _rounded(sympy.floor, a / b)
        if isinstance(node.op, ast.Mod):
            return _mod(a, b)
        raise _Reject(f"operator {_describe(node.op)} is not allowed")

    def _pow(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        e = node.right
        sign = 1
        while isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub | ast.UAdd):
            sign = -sign if isinstance(e.op, ast.USub) else sign
            e = e.operand
        if not (isinstance(e, ast.Constant) and type(e.value) is int
                and e.value <= MAX_DIM_EXPONENT):
            raise _Reject(f"the exponent of '**' must be an integer literal of at most "
                          f"{MAX_DIM_EXPONENT}")
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)
               for n in ast.walk(node.left)):
            raise _Reject("nested powers are not allowed")
        base = self._expr(node.left, depth + 1)
        if sign < 0:
            _nonzero(base, "division")
        return base ** (sign * e.value)

    def _call(self, node: ast.Call, depth: int) -> sympy.Expr:
        if not isinstance(node.func, ast.Name):
            raise _Reject(f"{_describe(node.func)} is not allowed")
        name = node.func.id
        if name not in _FUNCS:
            raise _Reject(f"unknown function '{name}'; allowed: {', '.join(sorted(_FUNCS))}")
        fn, lo, hi = _FUNCS[name]
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise _Reject(f"{name}() takes positional arguments only")
        if not lo <= len(node.args) <= hi:
            count = str(lo) if lo == hi else f"{lo} to {hi}"
            raise _Reject(f"{name}() takes {count} argument(s), got {len(node.args)}")
        return fn(*(self._expr(a, depth + 1) for a in node.args))


def _describe(node: ast.AST) -> str:
    names = {ast.Lambda: "'lambda'", ast.Attribute: "attribute access ('.')",
             ast.Subscript: "subscripting ('[]')", ast.Compare: "a comparison",
             ast.BoolOp: "'and'/'or'", ast.IfExp: "'if'/'else'",
             ast.BitXor: "'^'", ast.BitAnd: "'&'", ast.BitOr: "'|'",
             ast.LShift: "'<<'", ast.RShift: "'>>'", ast.MatMult: "'@'"}
    return names.get(type(node), f"'{type(node).__name__}'")


def rename_symbols(expr: sympy.Expr, renaming: dict) -> sympy.Expr:
    """`expr` with symbols replaced by symbols of the same class and
    assumptions, rebuilt without re-evaluating anything (a renaming changes no
    value, and re-evaluating `Min(1, B)` is costly). Unlike `xreplace` under
    `sympy.evaluate(False)`, it leaves sympy's global state and cache alone."""
    if expr in renaming:
        return renaming[expr]
    if not expr.args:
        return expr
    args = tuple(rename_symbols(cast(sympy.Expr, a), renaming) for a in expr.args)
    if all(x is y for x, y in zip(args, expr.args)):
        return expr
    func = cast(Callable[..., sympy.Expr], expr.func)
    try:
        return func(*args, evaluate=False)
    except TypeError:  # a node without an `evaluate` option
        return func(*args)


def dim_symbols(expr: sympy.Basic) -> set[sympy.Symbol]:
    """The free symbols of a dimension, typed as what they are (every free symbol
    of a dimension is a `sympy.Symbol`; sympy types them `Basic`)."""
    return cast(set[sympy.Symbol], expr.free_symbols)


def as_dim(value: object) -> sympy.Expr:
    """A dimension as sympy: an int (or numpy integer) or a sympy expression
    is taken as is (ints bounded to 0..2**63 - 1), a string goes through the
    dimension parser. Never hands a string to `sympy.sympify`."""
    if isinstance(value, sympy.Expr):
        return value
    if isinstance(value, str):
        return parse_dim_text(value)
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise DimError(f"a stream dimension must be an int, a string or a sympy "
                       f"expression, got {type(value).__name__}")
    return _integer(int(value.__index__()), str(value))  # type: ignore[attr-defined]


def to_expr(value: object) -> sympy.Expr:
    """An already-computed quantity (a dimension, a metric, a count) as sympy:
    a sympy expression as is, an int or numpy integer as an Integer, a
    Fraction or float as a Rational / Float. Text is refused (TypeError):
    text is user input and goes through `parse_dim_text`. This is what the
    passes use where `sympy.sympify` would evaluate a string as Python."""
    if isinstance(value, sympy.Basic):
        return value  # type: ignore[return-value]
    if isinstance(value, (str, bytes, bool)):
        raise TypeError(f"to_expr takes a number or a sympy expression, got {type(value).__name__}"
                        " (parse text with parse_dim_text)")
    if isinstance(value, numbers.Integral) or hasattr(value, "__index__"):
        return sympy.Integer(int(value))  # type: ignore[call-overload]
    if isinstance(value, fractions.Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, numbers.Real):
        return sympy.Float(float(value))
    raise TypeError(f"to_expr takes a number or a sympy expression, got {type(value).__name__}")


def evaluate_bound(expr: sympy.Expr, values: dict) -> int | None:
    """The value of `expr` when every free symbol is in `values` (symbol ->
    int), computed exactly in Python (integers and fractions), or None when
    some symbol is unbound, a node kind is not one a dimension uses, or the
    value is not an integer. The same integer `expr.xreplace(values)`
    evaluates to, without building and re-evaluating sympy nodes (Max over
    bound arguments compares them through sympy's relational machinery: most
    of `step-specialize`'s time on the Qwen graphs)."""
    v = _exact(expr, values)
    if v is None or v.denominator != 1:
        return None
    return int(v.numerator)


def _exact(e: sympy.Basic, values: dict) -> fractions.Fraction | None:
    if e.is_Integer:
        return fractions.Fraction(int(cast(sympy.Integer, e)))
    if e.is_Rational:
        r = cast(sympy.Rational, e)
        return fractions.Fraction(int(r.p), int(r.q))
    if e.is_Symbol:
        v = values.get(e)
        return None if v is None else fractions.Fraction(int(v))
    args = [_exact(a, values) for a in e.args]
    if any(a is None for a in args):
        return None
    xs = cast(list[fractions.Fraction], args)
    if e.is_Add:
        return sum(xs, fractions.Fraction(0))
    if e.is_Mul:
        out = fractions.Fraction(1)
        for x in xs:
            out *= x
        return out
    if e.is_Pow:
        base, exp = xs
        if exp.denominator != 1 or (base == 0 and exp < 0):
            return None
        return base ** int(exp)
    func = e.func
    if func is sympy.Max:
        return max(xs)
    if func is sympy.Min:
        return min(xs)
    if func is sympy.ceiling:
        return fractions.Fraction(-((-xs[0].numerator) // xs[0].denominator))
    if func is sympy.floor:
        return fractions.Fraction(xs[0].numerator // xs[0].denominator)
    if func is sympy.Mod:
        a, b = xs
        return None if b == 0 else a - b * fractions.Fraction((a / b).numerator // (a / b).denominator)
    return None
