"""The dense parts' linalg functions are built as IR (`linalg_build.LinalgFunc`), not text.

Issue 25 item 3: `lowering/linalg_to_step` wrote MLIR text and parsed it back for
every dense region, conv, pool, recurrence, softmax and attention. Now each is
built with xDSL's `Builder`: the module docstring's example builds exactly the
function its MLIR spells (compared op for op with the parsed text, SSA names
aside) and lowers to a graph that computes numpy's row sum; the scalar ops of a
body are the MLIR ops their names say; and no module of the package parses text.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint

from steplus.lowering.linalg_to_step import linalg_build, lower_module
from steplus.lowering.linalg_to_step.linalg_build import LinalgFunc, Scalar, tensor_type
from steplus.tools.loading import new_context
from steplus.tools.step_run_linalg import run_function

PACKAGE = Path(linalg_build.__file__).parent


def _example() -> ModuleOp:
    fn = LinalgFunc("rows", [tensor_type((4, 8))])
    acc = fn.fill(fn.const(0.0), (4, 1))
    r = fn.generic([fn.args[0]], acc, ["d0, d1", "d0, 0"], "pr",
                   lambda s, a: s.add(a[0], a[1]))
    return fn.module([r])


def _anonymous(op) -> str:
    """`op` printed with every SSA name hint dropped (`%0`, `%1`, ... in order)."""
    c = op.clone()
    for o in c.walk():
        for v in o.results:
            v.name_hint = None
        for region in o.regions:
            for block in region.blocks:
                for a in block.args:
                    a.name_hint = None
    out = io.StringIO()
    Printer(stream=out).print_op(c)
    return out.getvalue()


def test_the_docstring_example_builds_what_its_mlir_spells():
    doc = linalg_build.__doc__
    assert doc is not None
    mlir = doc[doc.index("func.func @rows"):].strip()
    parsed = Parser(new_context(), mlir).parse_module()
    assert _anonymous(_example()) == _anonymous(parsed)
    _example().verify()


def test_the_docstring_example_lowers_to_a_row_sum():
    module = _example()
    (low,) = lower_module(module, tile="4x8")
    x = np.random.default_rng(25).standard_normal((4, 8)).astype(np.float32)
    (got,) = run_function(module, low, [x])
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=1, keepdims=True),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("name", "arity"), [
    ("arith.addf", 2), ("arith.subf", 2), ("arith.mulf", 2), ("arith.divf", 2),
    ("arith.maximumf", 2), ("arith.minimumf", 2), ("arith.negf", 1), ("math.exp", 1),
    ("math.tanh", 1), ("math.erf", 1), ("math.rsqrt", 1), ("math.powf", 2)])
def test_a_scalar_op_by_name_is_that_op(name: str, arity: int):
    block = Block(arg_types=[f32] * arity)
    s = Scalar(Builder(InsertPoint.at_end(block)))
    y = s.apply(name, *block.args)
    (op,) = block.ops
    assert op.name == name and y is op.results[0] and list(op.operands) == list(block.args)


def test_no_module_of_the_package_parses_mlir_text():
    """The frontend builds IR; parsing is the tools' business (user files)."""
    found = {p.name: m.group(0) for p in PACKAGE.glob("*.py")
             if (m := re.search(r"\bParser\(|parse_module\(|from xdsl\.parser import",
                                p.read_text(encoding="utf-8")))}
    assert found == {}
