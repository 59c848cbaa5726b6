"""Hostile input against the round's new surfaces (HARDEN-5): Kind 2 sets and
maps, `function rec`, const-sized arrays, pass options, `#target` attributes,
step-run's ILA inputs. Each test fails before its fix."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as npformat

from conftest import run_tool
from steplus.lowering.lustre import LustreError, import_lustre
from steplus.tools.step_run import main as step_run

FIB = """function rec fib(n: int) returns (f: int);
let f = if n <= 1 then n else fib(n - 1) + fib(n - 2); tel
"""


def test_sets_nested_three_deep_are_refused_by_their_comparison_cost():
    """`{{{x}}}` of type set<set<set<int>>> (1169 scalars, under the 4096 bound)
    took minutes to lower: one equality of set<set<int>> elements is 16,384
    scalar comparisons, so inserting into the outer set 131,072, its equality
    2,097,152 (K^(2 * depth)). The type is refused where it is written."""
    src = "node N(s: set<set<set<int>>>) returns (b: bool);\nlet b = true; tel\n"
    with pytest.raises(LustreError) as info:
        import_lustre(src, "t.lus")
    assert info.value.pos == src.index("set<set<set")
    assert info.value.message.startswith("comparing two values of type set<")
    assert info.value.message.endswith("takes 2097152 scalar comparisons (more than 65536): "
                                       "sets nested too deeply")


def test_sets_nested_two_deep_still_lower():
    """set<set<int>> at K = 8: 2 * 8^2 * (2 * 8^2 * 1) = 16,384 comparisons, within the bound."""
    src = "node N(x: int) returns (s: set<set<int>>);\nlet s = {{x}, {1, 2}}; tel\n"
    module = import_lustre(src, "t.lus")
    assert [op.name for op in module.module.ops] == ["lus.node", "lus.node"]  # N, N$check


@pytest.mark.parametrize("src, at", [
    ("const C: real = 1.0e38 * 10.0;\nnode top(x: real) returns (y: real); let y = x + C; tel\n",
     "C; tel"),
    ("function rec s(n: real) returns (m: real);\nlet m = when n < 0.0 then 0.0 else "
     "s(n - 1.0); tel\nnode top(x: real) returns (y: real); let y = x + s(1.0e38 * 10.0); tel\n",
     "n < 0.0"),  # the parameter, a constant in the instance s$n_1e39
])
def test_a_folded_real_constant_past_f32_is_a_located_error(src: str, at: str):
    """A constant folded past f32's range (each literal fits) was 'internal error:
    OverflowError: float too large to pack with f format' (at 1:1)."""
    with pytest.raises(LustreError) as info:
        import_lustre(src, "t.lus")
    assert info.value.message == "real constant 1e+39 does not fit in real (32-bit float)"
    assert info.value.pos == src.index(at)


def test_modular_instance_limit_is_one_line_not_nested_tracebacks(tmp_path: Path):
    """fib(14) makes 1219 node instances (2 F(15) - 1), past the modular target's
    1000: the error was IREE's RuntimeError carrying one Python traceback per
    level of calls (tens of kilobytes on one line); now the runtime's own message."""
    prog = tmp_path / "p.lus"
    prog.write_text(FIB + "node top(x: int) returns (y: int);\nlet y = x + fib(14); tel\n")
    xs = tmp_path / "x.csv"
    xs.write_text("1\n")
    r = run_tool(step_run, [str(prog), "--node", "top", "--ticks", "1", "--input", f"x={xs}",
                            "--backend", "modular"])
    assert r.code == 1
    assert r.err.strip() == f"{prog}: error: more than 1000 node instances"


@pytest.mark.parametrize("backend", ["reactive", "sync"])
def test_doubly_recursive_rec_is_refused_before_its_instances_are_built(tmp_path: Path,
                                                                         backend: str):
    """fib(40) unrolls to 41 nodes (under the 64 per function) but to
    2 F(41) - 1 instances below top: the interpreters built a runner per
    instance until killed. Counted first: top + I(40), I(n) = 1 + I(n-1) + I(n-2),
    I(0) = I(1) = 1, so 2 F(41) = 331,160,282."""
    prog = tmp_path / "p.lus"
    prog.write_text(FIB + "node top(x: int) returns (y: int);\nlet y = x + fib(40); tel\n")
    xs = tmp_path / "x.csv"
    xs.write_text("1\n")
    r = run_tool(step_run, [str(prog), "--node", "top", "--ticks", "1", "--input", f"x={xs}",
                            "--backend", backend])
    assert r.code == 1
    assert r.err.strip() == (f"{prog}: error: @top would run 331160282 node instances (more "
                             "than 100000)")


def _doubling_chain(n: int) -> str:
    """@n0 is the identity; @n<i> adds two instances of @n<i-1>."""
    lines = ["lus.node @n0(%x: i32) -> (i32) {", "  lus.yield (%x : i32)", "}"]
    for i in range(1, n + 1):
        lines += [f"lus.node @n{i}(%x: i32) -> (i32) {{",
                  f"  %a = lus.instance @n{i - 1}(%x) : (i32) -> (i32)",
                  f"  %b = lus.instance @n{i - 1}(%x) : (i32) -> (i32)",
                  "  %s = arith.addi %a, %b : i32",
                  "  lus.yield (%s : i32)", "}"]
    return "\n".join(lines) + "\n"


def test_inlining_a_doubling_chain_is_refused_before_copying(step_opt, tmp_path: Path):
    """21 nodes, each instantiating the previous twice: lus-inline-instances
    copied 2^20 bodies into @n20 (and 2^19 into @n19, ...). Counted per node as
    its ops (the node op and its body: 2 for @n0, 5 for the others) plus its
    callees' counts: s(i) = 7 * 2^i - 5, the module sum(s(0..20)) = 7 (2^21 - 1) - 5 * 21."""
    prog = tmp_path / "chain.mlir"
    prog.write_text(_doubling_chain(20))
    r = step_opt([str(prog), "-p", "lus-inline-instances"])
    assert r.code == 1
    total, top = 7 * (2**21 - 1) - 5 * 21, 7 * 2**20 - 5
    assert r.err.splitlines()[0] == (
        f"{prog}:{3 + 6 * 19 + 1}:1: error: inlining every instance would make {total} ops "
        f"(more than 1048576; @n20 alone {top})")


def test_inlining_a_short_doubling_chain_still_runs(step_opt, tmp_path: Path):
    prog = tmp_path / "chain.mlir"
    prog.write_text(_doubling_chain(4))
    r = step_opt([str(prog), "-p", "lus-inline-instances"])
    assert r.code == 0, r.err
    assert "lus.instance" not in r.out


def _npy_header(shape: tuple[int, ...]) -> bytes:
    out = io.BytesIO()
    npformat.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False,
                                          "shape": shape})
    return out.getvalue()


REAL_NODE = "node f(x: real) returns (y: real);\nlet y = x; tel\n"


@pytest.mark.parametrize("shape, declared", [((10**12,), 4 * 10**12), ((1, 8, 8, 2**40), 2**48)])
def test_npy_input_whose_header_declares_more_than_the_file_is_refused(
        tmp_path: Path, shape: tuple[int, ...], declared: int):
    """A .npy of 64 data bytes declaring 10^12 floats was 'internal error: MemoryError:
    Unable to allocate 3.64 TiB' (np.load allocates the declared size first)."""
    prog = tmp_path / "p.lus"
    prog.write_text(REAL_NODE)
    npy = tmp_path / "x.npy"
    npy.write_bytes(_npy_header(shape) + b"\0" * 64)
    r = run_tool(step_run, [str(prog), "--ticks", "2", "--input", f"x={npy}"])
    assert r.code == 1
    assert r.err.strip() == (f"{npy}: error: cannot read input 'x': truncated: its header "
                             f"declares shape {list(shape)} of float32 ({declared} bytes), "
                             "the file holds 64")


def test_npy_input_that_fits_its_header_still_reads(tmp_path: Path):
    prog = tmp_path / "p.lus"
    prog.write_text(REAL_NODE)
    npy = tmp_path / "x.npy"
    np.save(npy, np.array([1.5, -2.0], np.float32))
    r = run_tool(step_run, [str(prog), "--ticks", "2", "--input", f"x={npy}"])
    assert r.code == 0, r.err
    assert r.out.splitlines() == ["tick 0: y=1.5", "tick 1: y=-2."]


def test_npz_input_is_named_as_such(tmp_path: Path):
    """An .npz given as --input was read as CSV text: 'could not convert string
    'PK\\x03\\x04...' to float64'."""
    prog = tmp_path / "p.lus"
    prog.write_text(REAL_NODE)
    npz = tmp_path / "x.npz"
    np.savez(npz, x=np.zeros(2, np.float32))
    r = run_tool(step_run, [str(prog), "--ticks", "2", "--input", f"x={npz}"])
    assert r.code == 1
    assert r.err.strip() == (f"{npz}: error: cannot read input 'x': a .npz archive; an input "
                             "is one .npy array or a .csv file")
