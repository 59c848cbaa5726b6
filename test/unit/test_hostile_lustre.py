"""Hostile Lustre programs (HARDEN-4): work bounded by the program's size."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from steplus.dialects import lus
from steplus.lowering.lustre import LustreError, import_lustre
from steplus.passes.lus import initialization
from steplus.tools.loading import new_context

Depths = initialization._Depths  # pyright: ignore[reportPrivateUsage]


def _pre_chain(n: int) -> lus.NodeOp:
    """A node whose output is `pre pre ... pre x` (n pres), as lus ops."""
    lines = ["lus.node @top(%x: i32) -> (i32) {"]
    prev = "%x"
    for k in range(n):
        lines.append(f"  %p{k} = lus.pre {prev} : i32")
        prev = f"%p{k}"
    lines += [f"  lus.yield ({prev} : i32)", "}"]
    module = Parser(new_context(), "\n".join(lines)).parse_module()
    assert isinstance(module, ModuleOp)
    node = next(iter(module.ops))
    assert isinstance(node, lus.NodeOp)
    return node


@pytest.mark.parametrize("n", [50, 300])
def test_initialization_depths_of_a_pre_chain_take_one_sweep(n: int,
                                                             monkeypatch: pytest.MonkeyPatch):
    """The fixed point pops the ops in program order: a chain of n pres is n + 1
    rule evaluations, not ~n^2/2 (each pre re-queued once per pre before it:
    20 s at step-opt for 500 nested pres, 6 s now)."""
    node = _pre_chain(n)
    calls = 0
    rule = Depths._rule  # pyright: ignore[reportPrivateUsage]

    def counting(self: Depths, op: Operation):  # pyright: ignore[reportUnknownParameterType]
        nonlocal calls
        calls += 1
        return rule(self, op)  # pyright: ignore[reportUnknownVariableType]

    monkeypatch.setattr(Depths, "_rule", counting)
    depths = Depths(node)
    assert calls == n + 1  # every pre once, and the yield
    # the depth rule itself: the k-th pre of x is undefined in its first k cycles,
    # past CAP (256) in cycles no depth bounds (INF)
    pres = [op for op in node.body.block.ops if isinstance(op, lus.PreOp)]
    want = [min(k, initialization.INF) for k in range(1, n + 1)]
    assert [depths.of(p.results[0]) for p in pres] == want


@pytest.mark.parametrize("levels, message", [
    (13, "a value of more than 4096 scalars"),
    (40, "type nested too deeply (or recursive)"),
])
def test_nested_array_types_are_bounded_before_their_refinements(levels: int, message: str):
    """`y: int^2^...^2` (40 levels, 2^40 scalars) walked every element for its
    refinement predicates (2^32 calls, capped only by depth) before the size
    check: step-opt ran for minutes. The size is checked first now."""
    src = f"node top(x: int) returns (y: int{'^2' * levels});\nlet y = y; tel\n"
    with pytest.raises(LustreError) as info:
        import_lustre(src, "t.lus")
    assert info.value.message == message
    assert info.value.pos == src.index("int^")


def test_a_long_chain_of_distinct_contracts_is_no_self_import():
    """C0 imports C1 ... imports C40: past the nesting limit (32) the error said
    "contract 'C32' imports itself", naming a cycle there is none of."""
    src = "".join(f"contract C{i}(a: int) returns (b: int); let import C{i + 1}(a) returns (b); tel\n"
                  for i in range(40))
    src += "contract C40(a: int) returns (b: int); let guarantee b = a; tel\n"
    src += ("node top(x: int) returns (y: int); (*@contract import C0(x) returns (y); *) "
            "let y = x; tel\n")
    with pytest.raises(LustreError) as info:
        import_lustre(src, "t.lus")
    assert info.value.message == ("contract imports nest deeper than 32 (importing 'C32' "
                                  "from 'C0')")
