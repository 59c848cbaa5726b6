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


def test_a_splat_blob_is_a_view_not_an_allocation():
    """16384x32768 f32 is 2 GiB (exactly the limit): the array is one element broadcast."""
    arr = resource_array(_constant("16384x32768", SPLAT_ONE))
    assert arr.shape == (16384, 32768) and arr.strides == (0, 0)
    assert not arr.flags.writeable and arr[16383, 32767] == 1.0


def test_materialized_splat_stays_one_element_and_blobs_are_shared():
    """Two constants naming the same blob share one decoded copy; a splat holds one element."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    from steplus.dialects.resources import materialize_resources

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    text = ("%a = arith.constant dense_resource<s> : tensor<16384x32768xf32>\n"
            "%b = arith.constant dense_resource<v> : tensor<2xf32>\n"
            "%c = arith.constant dense_resource<v> : tensor<2xf32>\n"
            '{-#\n  dialect_resources: {\n    builtin: {\n'
            '      s: "0x040000000000803F",\n      v: "0x040000000000803F00000040"\n    }\n  }\n#-}\n')
    module = Parser(ctx, text).parse_module()
    assert materialize_resources(module) == 3
    a, b, c = (o.value for o in module.walk() if isinstance(o, arith.ConstantOp))
    assert isinstance(a, DenseIntOrFPElementsAttr) and a.get_values() == (1.0,)
    assert b.get_values() == (1.0, 2.0) and b.data.data is c.data.data


@pytest.mark.parametrize("blob, message", [
    ("0x04000000000080ZZ0000803F", "not hexadecimal"),
    ("0x040000000000803F0", "odd number of hex digits"),
    ("0x040000000000803F00", "the blob has 5 bytes, tensor<2x3xf32> needs 24"),
    ("0x00000000000080ZZ", "not hexadecimal"),
    ("0x000000000000803F", "alignment word is 0"),
    ("0x00000100" + "0000803F" * 6, None),  # 2**16 is the largest alignment allowed
    ("0x00000200" + "0000803F" * 6, "alignment word is 131072, not a power of two at most 65536"),
])
def test_a_malformed_blob_is_an_error(blob, message):
    if message is None:
        assert np.array_equal(resource_array(_constant("2x3", blob)), np.ones((2, 3), np.float32))
        return
    with pytest.raises(ResourceError, match=message):
        resource_array(_constant("2x3", blob))


def test_a_small_splat_blob_is_expanded_like_a_parsed_splat():
    """Below SPLAT_EXPAND_BYTES a splat holds every element, as xDSL's parser builds `dense<v>`."""
    from steplus.dialects.resources import SPLAT_EXPAND_BYTES, materialize_resources

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    text = ("%a = arith.constant dense_resource<s> : tensor<2x3xf32>\n"
            '{-#\n  dialect_resources: {\n    builtin: {\n      s: "0x040000000000803F"\n    }\n  }\n#-}\n')
    module = Parser(ctx, text).parse_module()
    assert materialize_resources(module) == 1
    (a,) = [o.value for o in module.walk() if isinstance(o, arith.ConstantOp)]
    assert a.get_values() == (1.0,) * 6 and 6 * 4 <= SPLAT_EXPAND_BYTES
