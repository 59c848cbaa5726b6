"""The dialects a steplus program may use: ours plus the upstream ones it mixes in.

`get_all_dialects()` is what `step-opt` registers (and `steplus_context` in
`lowering/mlir_bridge.py`): the steplus dialects, and xDSL's builtin, func,
arith, math, scf, cf, memref, tensor, linalg and tosa, where `tosa`, `linalg`
and `builtin` are the extended versions of `tosa_ext`, `linalg_ext` and
`resources`. It lives with the dialects so that every layer can build a
context without importing the tools.
"""

from collections.abc import Callable

from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.ir import Dialect

from steplus.dialects import get_all_dialects as get_steplus_dialects

# The upstream dialects a user mixes into steplus programs.
MIXED_IN_XDSL_DIALECTS = (
    "builtin",
    "func",
    "arith",
    "math",
    "scf",
    "cf",
    "memref",
    "tensor",
    "linalg",
    "tosa",
)


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Our dialects plus the xDSL dialects that steplus programs mix in."""
    upstream = get_xdsl_dialects()
    dialects = {name: upstream[name] for name in MIXED_IN_XDSL_DIALECTS}

    def tosa() -> Dialect:
        from steplus.dialects.tosa_ext import extended_tosa

        return extended_tosa()

    dialects["tosa"] = tosa

    def linalg() -> Dialect:
        from steplus.dialects.linalg_ext import extended_linalg

        return extended_linalg()

    dialects["linalg"] = linalg

    def builtin() -> Dialect:
        from steplus.dialects.resources import builtin_with_blobs

        return builtin_with_blobs()

    dialects["builtin"] = builtin
    dialects.update(get_steplus_dialects())
    return dialects
