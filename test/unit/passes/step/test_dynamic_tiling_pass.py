"""step-dynamic-tiling on the statically tiled MoE layer gives exactly the
dynamically tiled graph the workload builder writes by hand (reference spec
§8.2, step 7), op for op and type for type."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from xdsl.context import Context
from xdsl.printer import Printer

from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass

from steplus.examples.workloads import graphs as workloads


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
