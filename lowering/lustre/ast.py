"""The abstract syntax of the Lustre subset steplus imports.

Every node carries `pos`, the character offset in the source of the construct
it comes from, so that errors (and the lus ops lowered from it) are located at
the offending Lustre text.

Example (what `x = 0 -> pre x + 1;` parses to)::

    Equation(pos=..., lhs=[Name(pos=..., name="x")],
             rhs=Binary(pos=..., op="->", lhs=Const(pos=..., value=0, kind="int"),
                        rhs=Binary(pos=..., op="+", lhs=Unary(pos=..., op="pre", ...),
                                   rhs=Const(pos=..., value=1, kind="int"))))
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Expr:
    """Base class of expressions; `pos` is the offset of the expression's first token."""

    pos: int


@dataclass
class Const(Expr):
    """A literal: `kind` is `int`, `real` or `bool`."""

    value: int | float | bool
    kind: str


@dataclass
class Var(Expr):
    """A reference to a variable, a constant or an enum constructor; `targs`
    Kind 2's type arguments `C@<t>` (a constructor of a polymorphic type)."""

    name: str
    targs: list[TypeRef] | None = None


@dataclass
class Unary(Expr):
    """`-e`, `not e`, `pre e`, `current e`, or a cast `int(e)` / `real(e)`."""

    op: str
    arg: Expr


@dataclass
class Binary(Expr):
    """Arithmetic, boolean, comparison, `->` and `fby`; `op` is the Lustre spelling."""

    op: str
    lhs: Expr
    rhs: Expr


@dataclass
class If(Expr):
    cond: Expr
    then: Expr
    other: Expr
    # Kind 2's `when c then a else b`: node calls in a branch run only when it
    # is taken (frames.py makes it a `merge`)
    lazy: bool = False


@dataclass
class Clock:
    """`c` (`ctor` True), `not c` (`ctor` False) or `C(c)` (an enum constructor
    name, or True/False for `true(c)`/`false(c)`); `pos` is where it starts."""

    pos: int
    var: str
    ctor: bool | str


@dataclass
class When(Expr):
    arg: Expr
    clock: Clock


@dataclass
class Merge(Expr):
    """`merge c (tag -> e) ...`; tags are True/False or enum constructor names.

    `implicit` marks Kind 2's `merge(c; a; b)`, whose branches may be written
    without `when` (they are then put on the branch's clock)."""

    var: str
    var_pos: int
    cases: list[tuple[bool | str, int, Expr]]
    implicit: bool = False
    # a Kind 2 `when` block's merge (frames.py): a `pre`, `->`, `fby` in an
    # implicit branch runs on the branch's clock
    clocked: bool = False


@dataclass
class Tuple(Expr):
    items: list[Expr]


@dataclass
class Call(Expr):
    """A node instance, possibly reset (`restart`/`every`) or activated.

    `activate` is the activation condition (Kind 2 `activate N every c`,
    Lustre V4 `condact`); `default` the values held before the first
    activation (`initial default`, condact's third argument), which also puts
    the result back on the caller's clock.
    """

    node: str
    node_pos: int
    args: list[Expr]
    reset: Expr | None = None
    activate: Expr | None = None
    default: list[Expr] | None = None
    targs: list[TypeRef] | None = None  # Kind 2's `f@<t>(a)` (poly.py)


@dataclass
class ArrayLit(Expr):
    """`[e0, e1, ...]`."""

    items: list[Expr]


@dataclass
class Repeat(Expr):
    """`e ^ n`: an array of n copies of e (n a constant)."""

    arg: Expr
    count: Expr


@dataclass
class Index(Expr):
    """`a[i]` (i constant or not) or, with `hi`, the slice `a[i..hi]` (constants)."""

    arg: Expr
    index: Expr
    hi: Expr | None = None


@dataclass
class Field(Expr):
    """`r.f`."""

    arg: Expr
    field: str


@dataclass
class RecordLit(Expr):
    """`T {f = e; ...}`."""

    type: str
    inits: list[tuple[str, int, Expr]]  # (field, its offset, value)
    targs: list[TypeRef] | None = None  # Kind 2's `P@<t> {f = e}`


@dataclass
class Pattern:
    """A Kind 2 `match` pattern: `C`, `C(p, ...)`, a variable or `_` (`args` None)."""

    pos: int
    name: str
    args: list[Pattern] | None = None


@dataclass
class Match(Expr):
    """Kind 2's `match e with | p : e1 | ... end` (adts.py)."""

    arg: Expr
    cases: list[tuple[Pattern, Expr]]


@dataclass
class BitConcat(Expr):
    """Kind 2's bit-vector concatenation `a ++ b` (machine_ints.py)."""

    lhs: Expr
    rhs: Expr


@dataclass
class BitExtract(Expr):
    """Kind 2's bit-vector extraction `a[hi:lo]` (machine_ints.py)."""

    arg: Expr
    hi: int
    lo: int


@dataclass
class Ascription(Expr):
    """Kind 2's `(e : t)`: e, of type t (its refinement is not checked)."""

    arg: Expr
    type: TypeRef


@dataclass
class Tester(Expr):
    """Kind 2's constructor tester `C?(e)`."""

    ctor: str
    arg: Expr


@dataclass
class RecordUpdate(Expr):
    """`r[f := e; ...]` (Kind 2)."""

    arg: Expr
    updates: list[tuple[str, int, Expr]]


@dataclass
class Iterate(Expr):
    """Heptagon's `map<<f, n>>(args)` and `fold<<f, n>>(array, init)`."""

    kind: str  # "map" or "fold"
    node: str
    node_pos: int
    size: Expr
    args: list[Expr]


@dataclass
class Any(Expr):
    """Kind 2's `any T` / `any { x: T | p }` / `any@<T>`: an arbitrary value of
    type T, an oracle (`oracles.py` makes it an input of the node); also the
    value of a free constant `const c: T;` (held constant); with `choose`,
    Kind 2's `choose { x: T | p }` (a function of p's variables); `name`
    names the oracle input instead of `any.L.C` (`undefined.py`'s `pre.L.C`)."""

    type: TypeRef
    choose: bool = False
    name: str | None = None


@dataclass
class Quantifier(Expr):
    """Kind 2's `forall (x: T; ...) e` / `exists (...) e` (`quantifiers.py`)."""

    kind: str  # "forall" or "exists"
    params: list[Decl]
    body: Expr


@dataclass
class Name:
    pos: int
    name: str


@dataclass
class TypeRef:
    pos: int
    name: str  # int, real, bool, or a declared type name
    # Kind 2's `subrange [lo, hi] of int` (name "int"): the bounds (None: `*`)
    bounds: tuple[Expr | None, Expr | None] | None = None
    # `t ^ n` (name "^"): the element type and the size; Kind 2's
    # `history(x)` (name "history"): `size` the variable x
    elem: TypeRef | None = None
    size: Expr | None = None
    # `struct {f: t; ...}` (name "{}"): the fields in order
    fields: list[tuple[str, TypeRef]] | None = None
    # `subtype {v: t | p}` (name "|", `elem` t): the variable and the predicate
    refine: tuple[str, Expr] | None = None
    # Kind 2's type application `Opt<int>` (name "Opt"): the arguments
    args: list[TypeRef] | None = None
    # a tuple type `[int, bool]` (name "[]"): the element types
    items: list[TypeRef] | None = None
    # the constructor tag of an algebraic data type value (adts.py; name the
    # instance, e.g. "Opt<int>": an enumeration of its constructors)
    tag: bool = False


@dataclass
class Decl:
    """A parameter, output or local variable."""

    pos: int
    name: str
    type: TypeRef
    clock: Clock | None = None
    static: bool = False
    # an oracle input held constant (a free constant): its value at the first
    # tick (after a reset) for the whole run (`oracles.py`)
    held: bool = False
    # an input of the check variant `n$check` only: a quantifier's witness
    # (`quantifiers.py`); a local computed there only (a `history(x)` value)
    witness: bool = False


@dataclass
class Equation:
    pos: int
    lhs: list[Name]
    rhs: Expr
    # Kind 2's `A[i] = e`: the index variable, e defines every element A[k]
    # with i the constant k (`A[i][j] = e`: the list of index variables)
    index: str | list[str] | None = None


@dataclass
class Escape:
    """A transition of a Heptagon automaton: `c then S` (`reset`) or `c continue S`."""

    pos: int
    cond: Expr
    target: str
    target_pos: int
    reset: bool


@dataclass
class State:
    """`state S do eqs (until|unless) escapes`."""

    pos: int
    name: str
    equations: list[Equation]
    until: list[Escape] = field(default_factory=list)
    unless: list[Escape] = field(default_factory=list)


@dataclass
class Automaton:
    """A Heptagon automaton, an equation of the node: its states, the first initial."""

    pos: int
    states: list[State]


@dataclass
class IfBlock:
    """Kind 2's `if c then eqs [else eqs] fi` (`when`: `when c then ... end`),
    an equation of a node or of a block (`frames.py`)."""

    pos: int
    cond: Expr
    then: list[Equation | IfBlock | Frame]
    other: list[Equation | IfBlock | Frame]
    when: bool = False


@dataclass
class Frame:
    """Kind 2's `frame (x, ...) init-eqs let body tel` (`frames.py`)."""

    pos: int
    names: list[Name]
    init: list[Equation | IfBlock | Frame]
    body: list[Equation | IfBlock | Frame]


@dataclass
class ConstDecl:
    pos: int
    name: str
    type: TypeRef | None
    value: Expr


@dataclass
class TypeDecl:
    """An enumeration (`ctors`) or an alias of another type (`alias`)."""

    pos: int
    name: str
    ctors: list[Name] = field(default_factory=list)
    alias: TypeRef | None = None
    # a Kind 2 `datatype` with payloads or type parameters (adts.py): each
    # constructor's fields (name, offset, type), and the type parameters
    payloads: list[list[tuple[str, int, TypeRef]]] | None = None
    params: list[str] = field(default_factory=list)


@dataclass
class Observer:
    """A property or an assumption of a node, compiled as an observer.

    `kind` is `property` (`--%PROPERTY e;`, `check e;`, a contract's
    `guarantee`, a mode's `require => ensure`, the modes' exhaustiveness),
    `assume` (`assert e;`, a contract's `assume`) or `reachable` (`check
    reachable e;`: a witness to find); `name` what a report calls it."""

    pos: int
    kind: str
    name: str
    expr: Expr
    # `reachable` (Kind 2's `check reachable e from m within n`): the bounds on
    # the tick (None: none); frames.py makes them part of `expr`
    bounds: tuple[int | None, int | None] | None = None


@dataclass
class Node:
    pos: int
    name: str
    inputs: list[Decl]
    outputs: list[Decl]
    locals: list[Decl]
    consts: list[ConstDecl]
    equations: list[Equation | Automaton | Frame | IfBlock]
    end: int = 0  # offset just past `tel`
    observers: list[Observer] = field(default_factory=list)
    modes: dict[str, Expr] = field(default_factory=dict)  # mode -> its requires (`::m`)
    # an array or record variable, or a part of one, -> the names of its scalar
    # leaves (`a` -> `a[0]`, `a[1]`; `r` -> `r.x`, `r.y`; `l[0]` -> `l[0].x` ...):
    # the frontend scalarizes arrays and records (Program.scalarize)
    arrays: dict[str, list[str]] = field(default_factory=dict)
    # refinement types met by Program.scalarize: (variable path, kind of
    # declaration "input"/"output"/"local", the predicate on that path)
    refinements: list[tuple[str, str, Expr]] = field(default_factory=list)
    # a leaf inside a datatype's constructor fields -> the (tag leaf,
    # constructor) pairs under which it exists (adts.py)
    guards: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # Kind 2 type parameters `node f<T>(...)`: monomorphized per use (poly.py)
    tparams: list[str] = field(default_factory=list)
    # Kind 2 `node imported f(...)`: no body; `oracles.py` makes its outputs oracles
    imported: bool = False
    # Kind 2 `function rec f(...)`: instantiated per constant arguments (sized.py)
    rec: bool = False
    # a contract's `decreases e;` (Kind 2's termination measure): bounds the
    # unrolling of a recursive call whose arguments are not constant (sized.py)
    decreases: Expr | None = None


@dataclass
class Program:
    consts: list[ConstDecl]
    types: list[TypeDecl]
    nodes: list[Node]
