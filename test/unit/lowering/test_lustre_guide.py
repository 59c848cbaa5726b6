"""docs/guide/lustre.md's "Examples" commands, run as written from the
repository's root (a counter and an automaton in Heptagon, a Kind 2 contract
checked by the falsifier), with outputs from closed forms."""

from __future__ import annotations

import io
import os
import shlex
import sys

from conftest import REPO, run_tool
from steplus.tools.step_run import main as step_run


def _commands() -> list[list[str]]:
    text = (REPO / "docs" / "guide" / "lustre.md").read_text()
    section = text.split("## Examples: a counter, an automaton, an array iterator, a contract "
                         "checked by the falsifier", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_guide_examples_run_as_written(monkeypatch):
    monkeypatch.chdir(REPO)
    cmds = _commands()
    assert [c[0] for c in cmds] == ["step-run"] * 4
    stream = cmds[2]
    assert stream[-2] == "<"  # stdin from a file
    cmds[2] = stream[:-2]
    x = [int(v) for v in (REPO / "examples/lustre/heptagon/x.csv").read_text().split()]
    assert x == [0, 0, 0, 0, 0, 0, 1, 0]
    counter, updown = (run_tool(step_run, c[1:]) for c in cmds[:2])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        (REPO / stream[-1]).read_bytes())))
    sums = run_tool(step_run, cmds[2][1:])
    check = run_tool(step_run, cmds[3][1:])
    # fold<<add, 4>> then map<<scale, 4>> of the two lines a[0..3] k
    assert sums.code == 0, sums.err
    assert sums.out.splitlines() == ["tick 0: 10 10 20 30 40", "tick 1: 26 -5 -6 -7 -8"]
    # n = if reset then 0 else (0 fby n) + 1, reset never true in ticks 0..3
    assert counter.code == 0 and counter.out.splitlines() == [
        f"tick {t}: n={t + 1}" for t in range(4)]
    # up to 3, entered Down anew (0, -1), x at tick 6: back Up, reset (0, 1)
    assert updown.code == 0
    assert updown.out.splitlines() == [f"tick {t}: o={v}" for t, v in
                                       enumerate([0, 1, 2, 3, 0, -1, 0, 1])]
    assert check.code == 0, check.err
    assert check.out == ("@has_been_true: 6 properties, 0 assumption(s): no violation in "
                         "50 random run(s) of up to 30 ticks (seed 0); 1500 tick(s) within "
                         "the assumptions\n")
    assert os.path.exists(REPO / "examples/lustre/heptagon/README.md")


def _results_table():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "results_table", REPO / "examples" / "lustre" / "results_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_corpus_table_counts_agree_with_its_rows():
    """examples/lustre/README.md's table as results_table.py renders its own rows:
    the counts under it are those of the rows (`--only` merges keep them so)."""
    rt = _results_table()
    readme = (REPO / "examples" / "lustre" / "README.md").read_text()
    block = rt._readme_block(readme).strip("\n")
    rows = rt.parse_rows(block)
    table, counts = rt.render(rows)
    assert table == block
    assert sum(counts.values()) == len(rows) == len({r[0] for r in rows})


def test_results_table_only_merges_into_the_existing_rows(tmp_path):
    # one row re-classified (an automaton in a .lus file: construct missing at 4:3), one kept
    rt = _results_table()
    name = "automaton_in_lus.lus"
    (tmp_path / name).write_text("node N(x: int) returns (y: int);\nlet\n  y = x;\n"
                                 "  automaton\ntel\n")
    kept = ("a.lus", "accepted", "N", "lus = sync = modular")
    stale = (name, "accepted", "N", "lus = sync = modular")
    readme = f"{rt.BEGIN}\n{rt.render([kept, stale])[0]}\n{rt.END}\n"
    table, counts = rt.merged(tmp_path, [name.removesuffix(".lus")], False, readme)
    assert counts == {"accepted": 1, "construct missing": 1, "genuine error": 0}
    assert rt.parse_rows(table) == [kept, (name, "construct missing (4:3): automata (Heptagon, "
                                                 "in .ept files) ('automaton')", "—", "—")]
    assert "2 programs: 1 accepted, 1 with a construct missing, 0 genuine errors" in table
