"""Differential test: the registry's integer semantics (dialects/semantics, numpy) against real
IREE (llvm-cpu) on random operands, negative ones included, for every integer division,
remainder and shift op of `arith` (in a dispatch, as linalg.generic bodies, and on IREE's VM, as
scalars) and for `tosa.intdiv`.  Operands are where MLIR defines the result: no zero divisor,
no INT_MIN / -1, shift amounts below the width (steplus' choices there are tested against the
closed form in test_semantics_registry.py and on every Lustre backend in
test/unit/runtime/reactive/test_division_backends.py)."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.dialects.semantics import ArithSemantics, TensorSemantics, TypedNumpyDomain
from steplus.lowering.mlir_bridge import parse_xdsl

rt = pytest.importorskip("iree.runtime")

OPS = ["divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "shli", "shrsi", "shrui"]
N = 512


def _generic(op: str, t: str) -> str:
    return f"""
  func.func @{op}(%a: tensor<{N}x{t}>, %b: tensor<{N}x{t}>) -> tensor<{N}x{t}> {{
    %e = tensor.empty() : tensor<{N}x{t}>
    %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
        affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}}
        ins(%a, %b : tensor<{N}x{t}>, tensor<{N}x{t}>) outs(%e : tensor<{N}x{t}>) {{
    ^bb0(%x: {t}, %y: {t}, %o: {t}):
      %z = arith.{op} %x, %y : {t}
      linalg.yield %z : {t}
    }} -> tensor<{N}x{t}>
    func.return %r : tensor<{N}x{t}>
  }}
  func.func @{op}_scalar(%x: {t}, %y: {t}) -> {t} {{
    %z = arith.{op} %x, %y : {t}
    func.return %z : {t}
  }}"""


def _operands(op: str, dt: np.dtype, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dt)
    bits = dt.itemsize * 8
    a = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    a[:8] = [info.min, info.max, -7, 7, -1, 0, 1, -2]
    if op.startswith("sh"):
        return a, rng.integers(0, bits, N, dtype=dt)
    b = np.where(rng.random(N) < 0.5, rng.integers(-100, 100, N, dtype=dt),
                 rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)).astype(dt)
    b[:8] = [2, -2, 2, 2, 3, 5, -1, 7]
    b[b == 0] = 3
    b[(a == info.min) & (b == -1)] = 2  # poison in MLIR
    return a, b


@pytest.fixture(scope="module")
def iree_module():
    from steplus.tools.iree_run import compile_module

    text = "builtin.module {" + "".join(_generic(op, t).replace(f"@{op}", f"@{op}_{t}")
                                        for op in OPS for t in ("i32", "i64")) + "}"
    ctx = rt.SystemContext(config=rt.Config("local-sync"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, compile_module(parse_xdsl(text))))
    return ctx.modules.module


def _registry(op_name: str, a, b):
    """The registry's result for `arith.<op_name>` (the op found in the parsed function)."""
    fn = parse_xdsl("builtin.module {" + _generic(op_name, str(a.dtype).replace("int", "i")) + "}")
    op = next(o for o in fn.walk() if o.name == f"arith.{op_name}")
    return ArithSemantics(TypedNumpyDomain()).apply(op, [a, b])[0]


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("op", OPS)
def test_registry_agrees_with_iree_in_a_dispatch_and_on_the_vm(iree_module, op, bits):
    dt = np.dtype(f"int{bits}")
    a, b = _operands(op, dt, np.random.default_rng(bits * 100 + OPS.index(op)))
    want = np.asarray(_registry(op, a, b))
    name = f"{op}_i{bits}"
    got = np.asarray(iree_module[name](a, b).to_host())
    np.testing.assert_array_equal(got, want)
    for k in range(0, N, 37):  # scalars: IREE's VM ops, not the dispatch's LLVM code
        assert int(iree_module[f"{name}_scalar"](int(a[k]), int(b[k]))) == int(want[k]), (int(a[k]), int(b[k]))


def test_tosa_intdiv_agrees_with_iree():
    from steplus.tools.iree_run import compile_module

    text = f"""builtin.module {{
  func.func @intdiv(%a: tensor<{N}xi32>, %b: tensor<{N}xi32>) -> tensor<{N}xi32> {{
    %q = tosa.intdiv %a, %b : (tensor<{N}xi32>, tensor<{N}xi32>) -> tensor<{N}xi32>
    func.return %q : tensor<{N}xi32>
  }}
}}"""
    module = parse_xdsl(text)
    ctx = rt.SystemContext(config=rt.Config("local-sync"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, compile_module(module)))
    a, b = _operands("divsi", np.dtype(np.int32), np.random.default_rng(7))
    op = next(o for o in module.walk() if o.name == "tosa.intdiv")
    want = TensorSemantics(TypedNumpyDomain()).apply(op, [a, b])[0]
    assert want[2] == -3 and a[2] == -7 and b[2] == 2  # truncation, not floor
    np.testing.assert_array_equal(np.asarray(ctx.modules.module["intdiv"](a, b).to_host()), want)
