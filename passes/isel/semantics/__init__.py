"""One home for the meaning of the tensor ops isel reads: the op -> implementation table.

Each tensor / linalg / TOSA / host-ila op's semantics is written once, as an `@impl` method of
`TensorSemantics` (`tensor_ops.py`; `linalg.generic` in `generic.py`), in xDSL's interpreter
style (`registry.py`: `impl`, `register_semantics`, keyed by op name).  The method is generic
over the value domain (`domain.py`): `NumpyDomain` gives float32 numpy arrays, the meaning
`step-run --backend ila` executes (`runtime/ila/host.py` subclasses the table with the
accelerator ops that run on the ILA simulators); `passes/isel/symbolic.SymbolicDomain` gives
object arrays of z3 terms, the meaning `isel-verify` proves equal before and after isel
(`passes/isel/verify.py` subclasses it with the accelerators' abstract specifications).  Only
primitives differ per domain (a float max vs a z3 `If`, float32 rounding vs uninterpreted
functions); layout ops (slices, pads, windows, im2col) are shared numpy indexing.

Why here, in passes/isel/: the table is the meaning of the ops isel rewrites and isel-verify
proves, and it reads constants through `passes.isel.constants`; a pass must not import the
runtime (layers: utils < dialects < passes < lowering < runtime < tools), while the runtime may
import a pass-level module.  It is not in dialects/ because the ops it covers come from several
dialects (xDSL's linalg/TOSA/tensor/arith, steplus' ila) and reading a constant's blob and
bounding its size is pass-level work.

Example::

    from steplus.passes.isel.semantics import NumpyDomain, TensorSemantics

    outs = TensorSemantics(NumpyDomain()).run_block(func_op.body.block, dict(zip(args, inputs)))
"""

from steplus.passes.isel.semantics.domain import Domain, NumpyDomain
from steplus.passes.isel.semantics.generic import eval_generic
from steplus.passes.isel.semantics.registry import Semantics, SemanticsError, impl, register_semantics
from steplus.passes.isel.semantics.tensor_ops import TensorSemantics, accelerator_attrs, result_shape, windows_nhwc

__all__ = ["Domain", "NumpyDomain", "Semantics", "SemanticsError", "TensorSemantics", "accelerator_attrs",
           "eval_generic", "impl", "register_semantics", "result_shape", "windows_nhwc"]
