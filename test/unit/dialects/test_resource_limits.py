"""dense_resource constants: a hostile type cannot make `resource_array`
allocate more than `MAX_RESOURCE_BYTES` (a 4-byte splat blob expands to
the whole type)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.parser import Parser

from steplus.dialects.resources import MAX_RESOURCE_BYTES, ResourceError, resource_array
from steplus.tools.registry import get_all_dialects


def _constant(shape: str, blob: str):
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    text = (f"%c = arith.constant dense_resource<r> : tensor<{shape}xf32>\n"
            f'{{-#\n  dialect_resources: {{\n    builtin: {{\n      r: "{blob}"\n    }}\n  }}\n#-}}\n')
    module = Parser(ctx, text).parse_module()
    (op,) = [o for o in module.walk() if isinstance(o, arith.ConstantOp)]
    return op.value


SPLAT_ONE = "0x040000000000803F"  # alignment 4, then 1.0f little-endian


def test_a_splat_blob_fills_a_small_tensor():
    assert np.array_equal(resource_array(_constant("2x3", SPLAT_ONE)), np.ones((2, 3), np.float32))


def test_a_splat_blob_for_a_huge_type_is_refused_before_allocation():
    need = 10**12 * 4
    assert need > MAX_RESOURCE_BYTES
    with pytest.raises(ResourceError, match=f"needs {need} bytes, more than the limit"):
        resource_array(_constant("1000000x1000000", SPLAT_ONE))


def _file(tmp_path, name: str, blob: str):
    path = tmp_path / name
    path.write_text("func.func @f() -> tensor<2xf32> {\n"
                    "  %c = arith.constant dense_resource<w> : tensor<2xf32>\n"
                    "  func.return %c : tensor<2xf32>\n}\n"
                    f'{{-#\n  dialect_resources: {{\n    builtin: {{\n      w: "{blob}"\n'
                    "    }\n  }\n#-}\n")
    return str(path)


def _values(module) -> list[float]:
    (op,) = [o for o in module.walk() if isinstance(o, arith.ConstantOp)]
    return list(op.value.get_values())


def test_a_later_file_with_the_same_weight_name_does_not_change_an_earlier_module(tmp_path):
    """torch-mlir names weights by shape, so two models share keys: each parsed
    module keeps its own values (they are materialized as `dense` at parse)."""
    from steplus.tools.loading import load_module

    a = load_module(_file(tmp_path, "a.mlir", "0x040000000000803F00000040"), None)  # 1.0, 2.0
    b = load_module(_file(tmp_path, "b.mlir", "0x040000000000404000008040"), None)  # 3.0, 4.0
    assert _values(a) == [1.0, 2.0] and _values(b) == [3.0, 4.0]
