"""step-opt on Kind 2 programs: `--const NAME=VALUE` and `--set-capacity K` (the
checks lus-translate and step-run make, from one home: lus_translate.kind2_settings),
and the wording of an unknown name: a variable where a flow is meant, a constant
where a constant is."""

from __future__ import annotations

import pytest

from steplus.tools.cli import UsageError
from steplus.tools.lus_translate import kind2_settings

FREE = """\
type pos = subrange [1, *] of int;
const N: pos;
node Ramp(x: int) returns (A: int^N; s: int);
let
  A[i] = x + i;
  s = x;
tel
"""

SET = """\
node S(x: int) returns (s: set<int>);
let
  s = {x};
tel
"""


def _outputs(ir: str, node: str) -> str:
    """The result types of `lus.node @node` in printed IR."""
    line = next(ln for ln in ir.splitlines() if ln.lstrip().startswith(f"lus.node @{node}("))
    return line.split(" -> ", 1)[1].split(" attributes", 1)[0]


def test_const_sizes_the_array_of_a_free_constant(step_opt, tmp_path):
    prog = tmp_path / "free.lus"
    prog.write_text(FREE)
    for n in (1, 4):
        res = step_opt([str(prog), "--const", f"N={n}"])
        assert res.code == 0, res.err
        assert _outputs(res.out, "Ramp") == "(" + ", ".join(["i32"] * (n + 1)) + ")"
    res = step_opt([str(prog)])
    assert res.code == 1
    assert res.err.splitlines()[0] == (
        f"{prog}:3:35: error: unsupported construct: arrays sized by a free constant without "
        "a value (step-run --const NAME=VALUE gives one) or by an input ('N')")


def test_set_capacity_sets_the_slots(step_opt, tmp_path):
    prog = tmp_path / "set.lus"
    prog.write_text(SET)
    for k, given in ((8, []), (1, ["--set-capacity", "1"]), (3, ["--set-capacity", "3"])):
        res = step_opt([str(prog), *given])
        assert res.code == 0, res.err
        # the header, then a valid bit and an element per slot
        assert _outputs(res.out, "S") == "(" + ", ".join(["i32"] + ["i1", "i32"] * k) + ")"
        assert f"capacity of set 's' ({k} elements)" in res.out


@pytest.mark.parametrize("argv,message", [
    (["--set-capacity", "0"], "--set-capacity: the set capacity must be 1 to 64, not 0"),
    (["--set-capacity", "65"], "--set-capacity: the set capacity must be 1 to 64, not 65"),
    (["--set-capacity", "+4"], "argument --set-capacity: invalid integer value: '+4' "
                               "(expected decimal digits)"),
    (["--const", "=4"], "--const: '=4' is not NAME=VALUE"),
    (["--const", "N=4", "--const", "N=5"], "--const: N is given twice"),
    (["--const", "N=2147483648"], "--const: N: 2147483648 does not fit an int (32 bits)"),
])
def test_bad_values_are_usage_errors(step_opt, tmp_path, argv, message):
    prog = tmp_path / "set.lus"
    prog.write_text(SET)
    res = step_opt([str(prog), *argv])
    assert (res.code, res.out, res.err) == (2, "", f"step-opt: error: {message}\n")


def test_on_mlir_input_the_flags_are_usage_errors(step_opt, tmp_path):
    prog = tmp_path / "m.mlir"
    prog.write_text("builtin.module {}\n")
    lus = tmp_path / "set.lus"
    lus.write_text(SET)
    where = "only for Lustre input (a .lus or .ept file, or --format lustre, lustre-v6 or heptagon)"
    for argv, flag in (([str(prog), "--const", "N=1"], "--const"),
                       ([str(prog), "--set-capacity", "4"], "--set-capacity"),
                       ([str(lus), "--format", "mlir", "--set-capacity", "4"], "--set-capacity")):
        res = step_opt(argv)
        assert (res.code, res.out, res.err) == (2, "", f"step-opt: error: {flag}: {where}\n")
    res = step_opt([str(prog)])  # without them MLIR is read as before
    assert res.code == 0 and res.out == "builtin.module {\n}\n", res.err


def test_kind2_settings_checks_before_the_with():
    with pytest.raises(UsageError, match="^--const: 'N' is not NAME=VALUE$"):
        kind2_settings(None, ["N"])
    with pytest.raises(UsageError, match="^--set-capacity: the set capacity must be 1 to 64, "
                                         "not 99$"):
        kind2_settings(99, [])


UNKNOWN = """\
const M = 2;
node main(x: int) returns (y: int);
var a: int^3;
let
  a = x^3;
  y = BODY;
tel
"""


@pytest.mark.parametrize("body,col,message", [
    ("x + z", 11, "unknown variable 'z'"),      # a flow is meant
    ("a[z]", 9, "unknown variable 'z'"),        # a dynamic index is a flow too
    ("x + M + a[M]", 7, None),                  # constants are still read as constants
])
def test_an_unknown_name_in_an_expression_is_a_variable(step_opt, tmp_path, body, col,
                                                        message):
    prog = tmp_path / "u.lus"
    prog.write_text(UNKNOWN.replace("BODY", body))
    res = step_opt([str(prog)])
    if message is None:
        assert res.code == 0, res.err
    else:
        assert res.code == 1 and res.err.splitlines()[0] == f"{prog}:6:{col}: error: {message}"


def test_an_unknown_name_in_a_constant_keeps_the_constant_wording(step_opt, tmp_path):
    prog = tmp_path / "c.lus"
    prog.write_text(UNKNOWN.replace("const M = 2;", "const M = z + 1;").replace("BODY", "x + M"))
    res = step_opt([str(prog)])
    assert res.code == 1 and res.err.splitlines()[0] == f"{prog}:1:11: error: unknown constant 'z'"
