"""step-dynamic-tiling on the statically tiled MoE layer gives exactly the
dynamically tiled graph the workload builder writes by hand (reference spec
§8.2, step 7), op for op and type for type."""

from __future__ import annotations

import re
import sys
from io import StringIO

import pytest
from xdsl.context import Context
from xdsl.printer import Printer

from conftest import REPO
from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass

sys.path.insert(0, str(REPO / "examples" / "step"))
import workloads  # noqa: E402


def _canonical(module) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    text = re.sub(r"%[A-Za-z0-9_]+", "%v", out.getvalue())
    return re.sub(r'sym_name = "[^"]*"', "", text)


@pytest.mark.parametrize("tile_n", [16, 64])
def test_dynamic_tiling_of_the_static_moe_is_the_dynamic_moe(tile_n):
    model = workloads.MODELS["mixtral"]
    static = workloads.moe(model, tile_n)
    StepDynamicTilingPass().apply(Context(), static)
    static.verify()
    assert _canonical(static) == _canonical(workloads.moe(model, None))
