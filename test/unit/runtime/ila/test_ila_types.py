"""The ILA runtime's type hints (issue 16) and the malformed inputs they made explicit errors."""

import ast

import numpy as np
import pytest
from xdsl.parser import Parser

from conftest import REPO
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.host import run_function
from steplus.tools.loading import new_context

ILA = REPO / "runtime" / "ila"


def _unannotated(path):
    """Functions of a module with a parameter (bar a method's self/cls) or the return unannotated."""
    missing = []

    def visit(node, in_class):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = ch.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in ch.decorator_list)
                if in_class and not static and params and params[0].arg in ("self", "cls"):
                    params = params[1:]
                params += [p for p in (a.vararg, a.kwarg) if p is not None]
                if ch.returns is None or any(p.annotation is None for p in params):
                    missing.append(f"{path.name}:{ch.lineno} {ch.name}")
                visit(ch, False)
            elif isinstance(ch, ast.ClassDef):
                visit(ch, True)
            else:
                visit(ch, in_class)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return missing


def test_unannotated_counts_what_it_should(tmp_path):
    src = ("def f(a, b: int) -> int: ...\nclass C:\n    def m(self, x: int): ...\n"
           "    @staticmethod\n    def s(self) -> None: ...\n    def ok(self, *a: int, **k: int) -> None: ...\n")
    path = tmp_path / "probe.py"
    path.write_text(src, encoding="utf-8")
    # f: `a` bare; m: no return; s: a static method's first parameter is an ordinary one; ok is complete
    assert [m.split()[1] for m in _unannotated(path)] == ["f", "m", "s"]


@pytest.mark.parametrize("path", sorted(p for p in ILA.glob("*.py") if p.name != "host.py"), ids=lambda p: p.name)
def test_every_ila_function_is_annotated(path):
    assert _unannotated(path) == []


def test_lstm_initial_h0_without_c0_is_an_ila_error():
    rng = np.random.default_rng(0)
    x, h0 = rng.standard_normal((1, 64)), rng.standard_normal(64)
    wi, wh, b = rng.standard_normal((256, 64)), rng.standard_normal((256, 64)), rng.standard_normal(256)
    with pytest.raises(IlaError, match="h0 needs its c0"):
        fd.run_lstm(x, wi, wh, b, h0=h0)


def _module(target, cmds, yielded="%a"):
    text = f"""func.func @f(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {{
  %y = ila.fragment "{target}"(%x) : (tensor<2x16xf32>) -> tensor<2x16xf32> {{
  ^bb0(%a: tensor<2x16xf32>):
{cmds}
    ila.yield {yielded} : tensor<2x16xf32>
  }}
  func.return %y : tensor<2x16xf32>
}}"""
    return Parser(new_context(), text).parse_module()


def test_mmio_op_outside_a_flexasr_fragment_is_an_ila_error():
    module = _module("vta", "    ila.write 0x33400010, 0x1")
    with pytest.raises(IlaError, match="'ila.write' needs a FlexASR fragment, not 'vta'"):
        run_function(module, "f", [np.zeros((2, 16), np.float32)])


def test_non_integer_command_attribute_is_an_ila_error():
    cmd = '    ila.cmd "store_act"(%a) {vector_offset = "zero", vectors = 1 : i64} : (tensor<2x16xf32>) -> ()'
    with pytest.raises(IlaError, match="attribute 'vector_offset' must be an integer"):
        run_function(_module("flexasr", cmd), "f", [np.zeros((2, 16), np.float32)])


def test_well_formed_fragment_still_runs():
    # store both timesteps' single vector, load them back: the identity on AdaptivFloat-exact values
    cmds = ('    ila.cmd "store_act"(%a) {vector_offset = 0 : i64, vectors = 1 : i64} : (tensor<2x16xf32>) -> ()\n'
            '    %r = ila.cmd "load_act"() {timesteps = 2 : i64, vectors = 1 : i64} : () -> tensor<2x16xf32>')
    module = _module("flexasr", cmds, yielded="%r")
    # powers of two (times 1.5) within one bias's range: AdaptivFloat<8,3> holds them exactly
    x = np.tile(np.array([0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 0.125, 0.0], np.float32), 4).reshape(2, 16)
    outs, stats = run_function(module, "f", [x])
    # one 16-byte write and one read per timestep
    assert np.array_equal(outs[0], x)
    assert stats.mmio["flexasr.writes"] == 2 and stats.mmio["flexasr.reads"] == 2
