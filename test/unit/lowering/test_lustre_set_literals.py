"""Set literals lowered in proportion to their size (`sets._literal`): the
distinct constant elements fill the slots at compile time, no comparison
emitted; other elements are inserted after them. Expected values follow from
Kind 2's set semantics (a set is its distinct elements), computed with Python
sets; the capacity (K slots) is exceeded exactly when there are more than K
distinct elements."""

from __future__ import annotations

import numpy as np
from xdsl.context import Context

from conftest import run_tool
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import import_lustre
from steplus.lowering.lustre.sets import CAPACITY, capacity
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_run import main as step_run_main

XS = np.array([3, -1, 4, 1, -5, 9, 7, 0], np.int32)
T = len(XS)


def _runs(src: str, node: str, inputs: dict[str, np.ndarray], slots: int | None = None
          ) -> list[list[int]]:
    """Outputs on the lus interpreter, equal on the sync interpreter (sets of
    `slots` slots, default K)."""
    with capacity(slots):
        module = translate(SourceFile("t.lus", src))
    got = [np.asarray(c, np.int64).tolist() for c in run_node(module, node, inputs, T)]
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    again = [np.asarray(c, np.int64).tolist()
             for c in run_sync_node(lowered, node, inputs, T)]
    assert again == got
    return got


def test_constants_duplicates_and_variables_mixed():
    """{3, 1, 3, x, 2, 1, x + 1}: membership of every value in -6..10, and the
    literal equal as a set to the same elements written once, in another order."""
    probes = list(range(-6, 11))
    outs = ", ".join(f"m{i}" for i in range(len(probes)))
    body = "; ".join(f"m{i} = ({v}) in s" for i, v in enumerate(probes))
    src = (f"node N(x: int) returns (eq: bool; {outs}: bool);\nvar s: set<int>;\nlet\n"
           f"  s = {{3, 1, 3, x, 2, 1, x + 1}};\n  eq = s = {{x + 1, 2, x, 1, 3}};\n"
           f"  {body};\ntel\n")
    eq, *members = _runs(src, "N", {"x": XS})
    assert eq == [1] * T
    for i, v in enumerate(probes):
        assert members[i] == [int(v in {3, 1, 2, int(x), int(x) + 1}) for x in XS], v


def test_nested_set_literals_compare_as_sets_not_slot_by_slot():
    """{{1, 2}, {2, 1}} is one element: equal to {{2, 1}}; {{1}, {2}} is two
    (3 slots: comparing sets of sets costs K^4)."""
    src = ("node N(x: int) returns (a, b, c: bool);\nlet\n"
           "  a = {{1, 2}, {2, 1}} = {{2, 1}};\n  b = {{1}, {2}} = {{2}};\n"
           "  c = {x} in {{1, 2}, {2, 1}, {x}};\ntel\n")
    a, b, c = _runs(src, "N", {"x": XS}, slots=3)
    assert a == [1] * T and b == [0] * T and c == [1] * T


def test_a_5000_element_literal_is_a_few_ops_and_overflows_past_k_distinct(tmp_path):
    """5000 constants, 1250 distinct: more than K, the capacity of the local
    stops a plain run at tick 0; the same 5000 with K distinct values (each
    625 times) fit, and `x in s` is 0 <= x < K. Lowered without per-element
    comparisons: the node is no larger than with a 1-element literal, but for
    the constants of the K slots."""
    def node(elements: list[int]) -> str:
        return ("node N(x: int) returns (b: bool);\nvar s: set<int>;\nlet\n"
                f"  s = {{{', '.join(map(str, elements))}}};\n  b = x in s;\ntel\n")

    def size(src: str) -> int:
        module = import_lustre(src, "t.lus").module
        n = next(op for op in module.ops if getattr(op, "sym_name").data == "N")
        return len(n.body.block.ops)

    many = [i % 1250 for i in range(5000)]
    fit = [i % CAPACITY for i in range(5000)]
    base = size(node([0]))
    assert size(node(many)) <= base + CAPACITY
    assert size(node(fit)) <= base + CAPACITY
    (b,) = _runs(node(fit), "N", {"x": XS})
    assert b == [int(0 <= x < CAPACITY) for x in XS]
    prog = tmp_path / "many.lus"
    prog.write_text(node(many))
    (tmp_path / "x.csv").write_text("3\n")
    res = run_tool(step_run_main, [str(prog), "--node", "N", "--ticks", "1",
                                   "--input", f"x={tmp_path / 'x.csv'}"])
    assert res.code == 1 and res.out == ""
    assert res.err.splitlines()[0] == (
        f"{prog}:2:5: error: set capacity {CAPACITY} exceeded at tick 0 ('s' would hold "
        f"more than {CAPACITY} elements)")
