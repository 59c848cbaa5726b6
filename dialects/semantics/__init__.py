# pyright: strict
"""The one registry of op semantics: the op class -> implementation tables, over any value domain.

Each op's meaning is written once, as an `@impl(OpClass)` method, in xDSL's interpreter style
(`registry.py`: `impl`, `register_semantics`, `Semantics.apply` dispatching on the op's class):

- `ArithSemantics` (`arith.py`): the scalar / elementwise `arith` and `math` ops, with MLIR's
  integer division, remainder and shift rules (`integers.py`: truncating division, exact in 64
  bits, division by zero an `IntegerDivisionByZero`, `INT_MIN / -1` wrapping);
- `TensorSemantics` (`tensor_ops.py`, a subclass): `tensor.*`, `linalg.*` (`linalg.generic` in
  `generic.py`, whose body ops are `ArithSemantics`' methods), the TOSA ops torch-mlir emits and
  the host layout ops of the ila dialect.

A method is generic over the value domain (`domain.py`): `NumpyDomain` gives float32 numpy
arrays (step-run `--backend ila`, `runtime/ila/host.py`); `TypedNumpyDomain` gives numpy values
of the program's own types (the reactive runtimes, `runtime/reactive/ops.py`); the symbolic
domain of isel-verify (`passes/isel/symbolic.py`) gives object arrays of z3 terms.  Users
subclass a table to add ops (the ILA accelerator ops in `runtime/ila/host.py`, the abstract
specifications in `passes/isel/equivalence.py`).  The step library functions of `step.apply`
(`dialects/step/functions.py`) name functions, not ops, and keep their own table.

Why in dialects/: every layer above (passes, lowering, runtime, tools) reads an op's meaning, so
its home is the lowest layer that knows the op classes; it reads constants with `constants.py`.

Example::

    from steplus.dialects.semantics import NumpyDomain, TensorSemantics

    outs = TensorSemantics(NumpyDomain()).run_block(func_op.body.block, dict(zip(args, inputs)))
"""

# pyright: strict

from steplus.dialects.semantics.arith import ArithSemantics
from steplus.dialects.semantics.domain import Domain, NumpyDomain, TypedNumpyDomain, numpy_dtype
from steplus.dialects.semantics.generic import eval_generic
from steplus.dialects.semantics.registry import (IntegerDivisionByZero, Semantics, SemanticsError, impl,
                                                 register_semantics)
from steplus.dialects.semantics.tensor_ops import TensorSemantics, accelerator_attrs, result_shape, windows_nhwc

__all__ = ["ArithSemantics", "Domain", "IntegerDivisionByZero", "NumpyDomain", "Semantics", "SemanticsError",
           "TensorSemantics", "TypedNumpyDomain", "accelerator_attrs", "eval_generic", "impl", "numpy_dtype",
           "register_semantics", "result_shape", "windows_nhwc"]
