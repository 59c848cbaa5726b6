"""The falsifier (`step-run --check`, steplus.tools.lus_check) and the Lustre
observers it runs: Kind 2 contracts (assume, guarantee, ghost var/const,
modes and `::m`), `--%PROPERTY`, `check` and `assert`.

The shared Kind 2 success programs (Kind 2 proved their properties) show no
violation; mutants broken on purpose give a counterexample whose trace
violates the property by an independent Python model, and that replays from
the written files to the same tick."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO, run_tool
from steplus.dialects import lus
from steplus.dialects.lus.input_ranges import observers
from steplus.tools.cli import InputError
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile
from steplus.tools.step_run import main as step_run

CORPUS = REPO / "examples" / "lustre"
# The accepted corpus programs with properties or contracts: node -> number of
# properties and assumptions (counted by reading the files).
CHECKED = {
    # Kind 2 oracles (any, choose, free constants, imported nodes: an imported
    # node's guarantees are assumptions of the caller, its assumptions
    # properties), quantifiers, frame and if/when blocks (oracles.py, ...)
    "imported.lus": {"test": (3, 4)},
    "ghost_in_core.lus": {"top": (1, 3), "f": (0, 3)},
    "mult_two_polys.lus": {"check_s3": (1, 0)},
    "num_const_evaluation.lus": {"main": (5, 0)},
    "quantified_subrange_var.lus": {"N": (4, 0)},
    "forall_enum.lus": {"N": (1, 0)},
    "arraydef_bug.lus": {"N": (1, 0)},
    "nested_quantifiers.lus": {"P": (1, 0)},
    "quant_shadowing.lus": {"M": (1, 1)},
    "ref-ty-quant.lus": {"N": (1, 1)},
    "flatten_ref_types_contract_eqs.lus": {"Reproducer": (2, 1)},
    "ref_type_dep.lus": {"M": (1, 0)},
    "frame_last_any_array.lus": {"count1": (1, 1)},
    "block_guard_nondet.lus": {"nested_when": (1, 0)},
    "imperative_if_oracle2.lus": {"test": (2, 0)},
    "when_then_else.lus": {"N": (1, 0)},
    "choose_scalar_determinism.lus": {"main": (3, 3)},
    "frame_block_mult_assign3.lus": {"test": (8, 0)},
    "test_record_projection.lus": {"top1": (0, 1), "top2": (0, 1)},  # guarantees assumed
    "same_free_const_in_two_nodes.lus": {"uxas_env": (1, 0)},
    "const_in_contract.lus": {"x": (2, 0)},
    "contract_ordering.lus": {"abs": (2, 0), "has_been_true": (6, 0), "my_node": (5, 1)},
    "mode_reqs_by_idents.lus": {"abs": (2, 0), "has_been_true": (4, 0), "my_node": (5, 1)},
    "enum.lus": {"n": (2, 0)},
    "function_same_arg.lus": {"test": (1, 0)},
    # refinement types: inputs' predicates are assumptions, outputs' properties
    "expand_type_call_arg.lus": {"F1": (1, 1), "F2": (0, 1)},
    "ref_type_rec_project2.lus": {"M": (2, 1)},
    "array-pre-indexing.lus": {"array_pre": (3, 0)},
    "array-subrange-index.lus": {"N": (1, 0)},  # j's subrange: drawn within it
    "ind_var_shadowing.lus": {"M": (1, 0)},
    "ghost_var_mult_assign2.lus": {"main": (1, 0), "counter": (2, 0)},
    "merge_enum.lus": {"test": (1, 0)},
    "test-merge.lus": {"two_instances": (1, 0)},
    "test_enum_value_in_contract.lus": {"top": (1, 0)},
    "test_ghost_vars.lus": {"top": (1, 0), "top2": (3, 0)},
    # contract declarations and imports (test_namespaces.lus: see README.md)
    "contract_var_sets.lus": {"N": (1, 0)},
    "forward_refs.lus": {"one": (2, 2)},
    "node_subject_to_refinement_in_contract.lus": {"N": (1, 0), "M": (1, 0)},
    "subrange_in_contract_node.lus": {"N1": (3, 0)},  # y > x, check l > 0, y's subrange
}

# Kind 2 data types (adts.py, machine_ints.py, poly.py); an output of a
# subrange type (bv_to_int_index's r) is a property, a refinement of an output
# (polymorphism's y3) too
CHECKED.update({
    "adt_eq_diff_ctor_neq.lus": {"main": (1, 0)},
    "adt_nested_match.lus": {"main": (1, 0)},
    "adt_poly_contract.lus": {"main": (2, 0)},
    "adt_poly_ghost_var_in_contract.lus": {"main": (2, 0)},
    "bv-logical.lus": {"top": (1, 0)},
    "bv_to_int_index.lus": {"N": (1, 0)},
    "array-const.lus": {"look_up_table": (1, 0)},
    "struct_update.lus": {"N": (2, 0)},
    "mono_call_bug.lus": {"N": (1, 0)},
    "poly_multiple_type_vars.lus": {"M": (2, 0)},
    "polymorphism.lus": {"M": (7, 0)},
})


def _module(path_or_name, text: str | None = None):
    path = CORPUS / path_or_name if text is None else path_or_name
    return translate(SourceFile(str(path), text if text is not None else path.read_text()))


@pytest.mark.parametrize("name,node", [(f, n) for f, ns in CHECKED.items() for n in ns])
def test_kind2_success_programs_show_no_violation(name, node):
    report = falsify(_module(name), node, ticks=30, runs=40, seed=3)
    assert (report.properties, report.assumptions) == CHECKED[name][node]
    assert report.violation is None
    assert report.ticks > 0


def test_contract_items_become_named_observers():
    module = _module("contract_ordering.lus")
    check = next(op for op in module.walk() if isinstance(op, lus.NodeOp)
                 and op.sym_name.data == "has_been_true$check")
    assert [(k, n) for k, n, _ in observers(check)] == [
        ("property", "::false_so_far => not out"),
        ("property", "mode false_so_far"), ("property", "mode i_true"),
        ("property", "mode always_true"), ("property", "mode never_active"),
        ("property", "some mode is active (exhaustiveness)"),
    ]
    # the node itself is unchanged: one output, no observer
    node = next(op for op in module.walk() if isinstance(op, lus.NodeOp)
                and op.sym_name.data == "has_been_true")
    assert len(node.output_types) == 1 and not observers(node)


def _abs_outputs(i):
    return np.abs(np.asarray(i))


def _mutant(tmp_path, old: str, new: str):
    text = (CORPUS / "contract_ordering.lus").read_text()
    assert old in text
    path = tmp_path / "mutant.lus"
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_broken_guarantee_is_found_and_replays(tmp_path):
    # abs returns i - 1 for i >= 0: `out >= 0` fails where i = 0, the exact
    # specification (line 5) wherever i >= 0
    path = _mutant(tmp_path, "out = if i < 0 then -i else i ;",
                   "out = if i < 0 then -i else i - 1 ;")
    cex = tmp_path / "cex"
    res = run_tool(step_run, [str(path), "--node", "abs", "--check", "--ticks", "40",
                              "--seed", "7", "--cex", str(cex)])
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    tick = int(lines[0].split("at tick ")[1].split()[0])
    trace = np.loadtxt(cex / "i.csv", dtype=np.int64, ndmin=1)
    assert len(trace) == tick + 1
    out = np.where(trace < 0, -trace, trace - 1)  # the mutant, in Python
    p1, p2 = out >= 0, out == np.abs(trace)
    assert (p1 & p2)[:-1].all() and not (p1 & p2)[-1]  # the first violating tick
    which = ("4:15: error: property 'out >= 0'" if not p1[-1] else
             "5:17: error: property 'if i < 0 then (out = -i) else (out = i)'")
    assert lines[0] == (f"{path}:{which} of @abs is violated at tick {tick} "
                        "(run 1 of 100, seed 7)")
    assert lines[1] == "input trace, one line per tick: i"
    assert lines[2:2 + tick + 1] == [f"tick {t}: {v}" for t, v in enumerate(trace)]
    replay = lines[-1].removeprefix("replay: step-run ").split()
    assert replay[:5] == [str(path), "--node", "abs", "--check", "--ticks"]
    again = run_tool(step_run, replay)
    assert again.code == 1
    assert again.out.splitlines()[0] == f"{path}:{which} of @abs is violated at tick {tick}"


def test_a_broken_mode_is_found_on_given_inputs(tmp_path):
    # has_been_true never becomes true: mode i_true (require i; ensure out)
    # fails at the first tick where i holds (tick 2 of these inputs)
    path = _mutant(tmp_path, "out = i or (false -> pre out) ;",
                   "out = i and (false -> pre out) ;")
    (tmp_path / "i.csv").write_text("0\n0\n1\n1\n0\n")
    res = run_tool(step_run, [str(path), "--node", "has_been_true", "--check",
                              "--input", f"i={tmp_path / 'i.csv'}"])
    assert res.code == 1
    assert res.out.splitlines()[:5] == [
        f"{path}:17:3: error: property 'mode i_true' of @has_been_true is violated at tick 2",
        "input trace, one line per tick: i", "tick 0: false", "tick 1: false", "tick 2: true"]


def test_assumptions_restrict_the_random_inputs(tmp_path):
    # my_node assumes |i| < 10; guarantees out >= -10: holds within the
    # assumption (a tick's inputs that break it are drawn again, so every run
    # goes its 30 ticks), and the mutant without the assumption is caught.
    good = falsify(_module("contract_ordering.lus"), "my_node", ticks=30, runs=60, seed=1)
    assert good.violation is None and good.assumptions == 1
    assert (good.cut, good.ticks) == (0, 60 * 30)
    path = _mutant(tmp_path, "assume i_bounded ;", "assume true ;")
    bad = falsify(_module(path, path.read_text()), "my_node", ticks=30, runs=60, seed=1)
    assert bad.violation is not None
    assert bad.violation.name in ("out >= - bound", "mode i_neg")
    i = bad.violation.trace["i"]
    assert i[-1] < -10 or i[-1] < 0  # out = i < 0 breaks out >= -10 only below -10


def test_check_usage_errors(tmp_path):
    res = run_tool(step_run, [str(CORPUS / "inc.lus"), "--node", "abs", "--check"])
    assert res.code == 2
    assert "@abs has no property, assumption or contract to check" in res.err
    res = run_tool(step_run, [str(CORPUS / "contract_ordering.lus"), "--node", "abs",
                              "--check", "--runs", "0"])
    assert res.code == 2 and "--runs must be 1 to 100000" in res.err


@pytest.mark.parametrize("src, line, col, message", [
    ("node n(x: int) returns (y: int);\n(*@contract\n  import S(x) returns (y);\n*)\n"
     "let y = x; tel", 3, 10, "unknown contract 'S'"),
    ("node n(x: int) returns (y: int);\n(*@contract\n  guarantee y >= ;\n*)\n"
     "let y = x; tel", 3, 18, "syntax error: unexpected ';'"),
    ("node n(x: int) returns (y: int);\n(*@contract\n  ensure y;\n*)\nlet y = x; tel",
     3, 3, "syntax error in a contract: unexpected 'ensure'"),
    ("node n(x: int) returns (y: int);\nlet y = x;\n  --%PROPERTY y + 1;\ntel",
     3, 15, "the property 'y + 1' must be bool, not int"),
])
def test_contract_and_property_errors_are_located(src, line, col, message):
    with pytest.raises(InputError) as info:
        translate(SourceFile("t.lus", src))
    assert info.value.lines[0] == f"t.lus:{line}:{col}: error: {message}"


@pytest.mark.parametrize("name,node,slots,counts", [
    # P; the capacity of m (not of the frame's own locals m$init, m$last: set_capacity.py)
    ("when_clocked_call_hold.lus", "Main", 16, (2, 0)),
    ("when_clocked_call_hold.lus", "Collect", 16, (1, 0)),  # m's capacity
])
def test_when_block_calls_pass_check_within_their_capacity(name, node, slots, counts):
    """Node calls in Kind 2 `when` blocks (frames.py) with maps: no violation
    when the maps have room for every key a run can draw (16 ticks: at most 16
    keys, `--set-capacity 16`); with 8 slots the falsifier finds Collect's map
    overflowing (k is drawn from about 21 values)."""
    from steplus.lowering.lustre.sets import capacity

    with capacity(slots):
        module = _module(name)
    report = falsify(module, node, ticks=16, runs=5, seed=3)
    assert (report.properties, report.assumptions) == counts
    assert report.violation is None and report.ticks > 0
    if node == "Collect":
        small = falsify(_module(name), node, ticks=16, runs=5, seed=3).violation
        assert small is not None and small.name == "capacity of map 'm' (8 elements)"
