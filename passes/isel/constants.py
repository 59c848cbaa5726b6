"""The constant reader isel uses: `constant_array`, `splat_value` (defined in `dialects/semantics/constants.py`,
the op-semantics registry's home, so that every layer above reads constants the same way)."""

from steplus.dialects.semantics.constants import CONSTANT_OPS, ConstantError, constant_array, splat_value, value_attr

__all__ = ["CONSTANT_OPS", "ConstantError", "constant_array", "splat_value", "value_attr"]
