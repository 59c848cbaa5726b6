"""Hand modules between steplus (xDSL) and upstream MLIR's Python bindings.

The bridge is the generic textual form, which both sides print and parse.
Upstream MLIR is reached through `iree.compiler.ir` (the MLIR Python bindings
shipped by `iree-base-compiler`); steplus dialects are unregistered there, so
the upstream context allows unregistered dialects, while the upstream dialects
(builtin, func, arith, scf, tensor, ...) are verified by real MLIR.

Example::

    from steplus.lowering.mlir_bridge import to_mlir, from_mlir, parse_xdsl

    module = parse_xdsl(open("examples/lus/integrator.mlir").read())
    upstream = to_mlir(module)          # iree.compiler.ir.Module, verified
    back = from_mlir(upstream)          # xDSL ModuleOp again
    assert back.is_structurally_equivalent(module)
"""

from __future__ import annotations

from io import StringIO
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from steplus.dialects.program_dialects import get_all_dialects


class InteropError(Exception):
    """Upstream MLIR rejected a module (parse or verification failure)."""


def steplus_context() -> Context:
    """An xDSL context with every dialect step-opt knows."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_xdsl(text: str, ctx: Context | None = None, name: str = "<input>") -> ModuleOp:
    """Parse MLIR text (custom or generic form) into an xDSL module."""
    return Parser(ctx or steplus_context(), text, name).parse_module()


def generic_text(module: ModuleOp) -> str:
    """The generic form of an xDSL module, as upstream MLIR parses it."""
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def to_mlir(module: ModuleOp, context: Any = None) -> Any:
    """Convert an xDSL module to an upstream `iree.compiler.ir.Module` and verify it.

    Raises `InteropError` with upstream MLIR's message if it rejects the module."""
    from iree.compiler import ir

    ctx = context if context is not None else ir.Context()
    ctx.allow_unregistered_dialects = True
    try:
        with ctx:
            upstream = ir.Module.parse(generic_text(module))
            if not upstream.operation.verify():
                raise InteropError("upstream MLIR failed to verify the module")
    except ir.MLIRError as e:
        raise InteropError(str(e)) from None
    return upstream


def from_mlir(upstream: Any, ctx: Context | None = None) -> ModuleOp:
    """Convert an upstream MLIR module (or operation) back into an xDSL module."""
    operation = getattr(upstream, "operation", upstream)
    text = operation.get_asm(print_generic_op_form=True)
    return parse_xdsl(text, ctx, "<upstream-mlir>")
