"""The op -> implementation registry of the tensor-op semantics (xDSL's interpreter `@impl` style).

xDSL's `@impl(OpClass)` / `@register_impls` key implementations by operation *class*; the tensor
programs isel and step-run read use ops from several dialect definitions (xDSL's linalg and TOSA,
steplus' `linalg_ext` / `tosa_ext` additions, the ila dialect) and a few generic forms, so this
registry works the same way keyed by op *name*: `@impl("linalg.add", "tosa.add")` marks a method,
`@register_semantics` collects the marked methods of a class and its bases (a subclass's
definition overrides its base's, as in xDSL), and `Semantics.apply(op, args)` dispatches.

Example::

    @register_semantics
    class Mine(TensorSemantics):
        @impl("tosa.negate")
        def negate(self, op, a):
            return [self.d.unary("neg", a[0])]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from xdsl.ir import Block, Operation, SSAValue

from steplus.passes.isel.semantics.domain import Domain

_IMPL_KEY = "_steplus_semantics_names"

OpImpl = Callable[[Any, Operation, list[Any]], list[Any]]
F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S", bound=type)


class SemanticsError(Exception):
    """An op the semantics cannot evaluate (no implementation, or an unsupported form).

    `op`, when set, is the op at fault; the caller adds its tool's prefix and location."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.message = message
        self.op = op


def impl(*names: str) -> Callable[[F], F]:
    """Mark a method as the implementation of the ops named `names`."""

    def mark(f: F) -> F:
        setattr(f, _IMPL_KEY, names)
        return f

    return mark


def register_semantics(cls: S) -> S:
    """Collect the `@impl` methods of `cls` and its bases into `cls.impls` (subclass first)."""
    table: dict[str, OpImpl] = {}
    for klass in cls.mro():
        for val in vars(klass).values():
            for name in getattr(val, _IMPL_KEY, ()):
                table.setdefault(name, val)
    cls.impls = table
    return cls


class Semantics:
    """Evaluates ops over one value domain (`self.d`); `impls` maps op names to methods."""

    impls: ClassVar[dict[str, OpImpl]] = {}

    def __init__(self, domain: Domain):
        self.d = domain
        self.env: dict[SSAValue, Any] = {}

    def apply(self, op: Operation, args: list[Any]) -> list[Any]:
        """The values of `op`'s results, given its operands' values."""
        f = self.impls.get(op.name)
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
