# pyright: strict
"""The op -> implementation registry of op semantics, keyed by op *class* as xDSL's interpreters are.

As in `xdsl.interpreter` (`@register_impls` on a class, `@impl(arith.DivSIOp)` on its methods),
`@impl(OpClass, ...)` marks a method as the meaning of those op classes and `@register_semantics`
collects the marked methods of a class and of its bases into `cls.impls` (a subclass's method
overrides its base's).  `Semantics.apply(op, args)` dispatches on `type(op)`; an op whose class
is a subclass of a registered one (xDSL's `linalg.MatmulOp` and steplus' `MatmulOpWithMaps`)
finds its base's implementation through the MRO.  Unlike xDSL's interpreter, a method is
generic over a value domain (`self.d`, `domain.py`): the same method is the numpy meaning
(step-run, the reactive runtime) and the z3 one (isel-verify).

Example::

    @register_semantics
    class Mine(TensorSemantics):
        @impl(tosa_ext.NegateOp)
        def negate(self, op, a):
            return [self.d.unary("neg", a[0])]
"""

# pyright: strict

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

from xdsl.ir import Block, Operation, SSAValue

from steplus.dialects.semantics.domain import Domain
from steplus.dialects.semantics.errors import IntegerDivisionByZero, SemanticsError

__all__ = ["IntegerDivisionByZero", "OpImpl", "Semantics", "SemanticsError", "impl", "register_semantics"]

_IMPL_KEY = "_steplus_semantics_ops"

OpImpl = Callable[[Any, Operation, list[Any]], list[Any]]
F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S", bound=type)


def impl(*ops: type[Operation]) -> Callable[[F], F]:
    """Mark a method as the implementation of the op classes `ops`."""
    for o in ops:
        given = cast(object, o)  # checked at run time too: an op name string was the old key
        if not (isinstance(given, type) and issubclass(given, Operation)):
            raise TypeError(f"@impl takes operation classes, not {o!r}")

    def mark(f: F) -> F:
        setattr(f, _IMPL_KEY, ops)
        return f

    return mark


def register_semantics(cls: S) -> S:
    """Collect the `@impl` methods of `cls` and its bases into `cls.impls` (subclass first)."""
    table: dict[type[Operation], OpImpl] = {}
    for klass in cls.mro():
        for val in vars(klass).values():
            for op_cls in getattr(val, _IMPL_KEY, ()):
                table.setdefault(op_cls, val)
    setattr(cls, "impls", table)
    setattr(cls, "_resolved", {})
    return cls


class Semantics:
    """Evaluates ops over one value domain (`self.d`); `impls` maps op classes to methods."""

    impls: ClassVar[dict[type[Operation], OpImpl]] = {}
    _resolved: ClassVar[dict[type[Operation], OpImpl | None]] = {}

    def __init__(self, domain: Domain):
        self.d = domain
        self.env: dict[SSAValue, Any] = {}

    @classmethod
    def lookup(cls, op_type: type[Operation]) -> OpImpl | None:
        """The implementation of `op_type`: its own, or that of its nearest registered base."""
        try:
            return cls._resolved[op_type]
        except KeyError:
            pass
        found = next((cls.impls[k] for k in op_type.__mro__ if k in cls.impls), None)
        cls._resolved[op_type] = found
        return found

    @classmethod
    def supports(cls, op: Operation) -> bool:
        """Whether the table gives `op` a meaning."""
        return cls.lookup(type(op)) is not None

    def apply(self, op: Operation, args: list[Any]) -> list[Any]:
        """The values of `op`'s results, given its operands' values."""
        f = self.lookup(type(op))
        if f is None:
            raise SemanticsError(f"no {self.d.name} semantics for '{op.name}'", op)
        return f(self, op, args)

    def eval_op(self, op: Operation, args: list[Any]) -> list[Any]:
        """`apply` as `run_block` calls it (subclasses wrap errors and add checks here)."""
        return self.apply(op, args)

    def run_block(self, block: Block, env: dict[SSAValue, Any]) -> list[Any] | None:
        """Evaluate `block`'s ops in order; the operands of its `func.return` / `ila.yield`, or None."""
        self.env = env
        for op in block.ops:
            if op.name in ("func.return", "ila.yield"):
                return [env[v] for v in op.operands]
            for r, v in zip(op.results, self.eval_op(op, [env[v] for v in op.operands])):
                env[r] = v
        return None
