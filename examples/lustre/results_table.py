"""Regenerate the per-program results table of examples/lustre/README.md.

    python examples/lustre/results_table.py [--corpus DIR] [--iree] [--write]
    python examples/lustre/results_table.py --corpus DIR --only set_subrange map_subtraction --write

For every `.lus` file of DIR (default: this folder; the full shared copy is
`../shared/data/lustre-kind2/` where a checkout has it) it imports the program
with the steplus Lustre frontend and its lus checks, and classifies it:

- `accepted`: every runnable node (no `const` parameter) runs 30 ticks on
  seeded random inputs (enum and subrange inputs within their types) on the
  lus interpreter, the sync interpreter and the modular target (with `--iree`
  IREE batched too), and the column says whether they agree; nodes with
  properties or a contract are also checked by the falsifier (step-run
  --check: 20 random runs of 30 ticks) and the column says `no violation` or
  the violated property;
- `construct missing`: rejected at an unsupported construct, named;
- `genuine error`: rejected by a type, clock, causality or initialization rule.

It prints the markdown table and the counts; `--write` replaces the table
between the `<!-- results -->` markers of README.md in this folder. With
`--only PROG...` only those programs are classified: their rows replace (or
join) the README's, the other rows are kept as they are, and the counts and
the summary are recomputed from all rows (a full run takes > 25 minutes).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.context import Context

from steplus.dialects import lus
from steplus.dialects.lus.input_ranges import input_ranges, observers
from steplus.lowering.lustre import free_consts
from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.ops import numpy_dtype
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.iree_run import run_node_iree
from steplus.tools.lus_check import falsify
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

HERE = Path(__file__).resolve().parent
TICKS = 30
BEGIN, END = "<!-- results -->", "<!-- /results -->"


def _inputs(node: lus.NodeOp, rng: np.random.Generator) -> dict[str, Sequence[object]]:
    ranges = input_ranges(node)
    out: dict[str, Sequence[object]] = {}
    for arg in node.input_args:
        name = arg.name_hint or ""
        dtype = numpy_dtype(arg.type)
        if name in ranges:
            lo, hi = ranges[name][1], ranges[name][2]
            out[name] = (np.clip(rng.integers(-20, 21, TICKS), lo, hi).astype(dtype)).tolist()
        elif dtype == np.bool_:
            out[name] = (rng.random(TICKS) < 0.5).tolist()
        elif np.issubdtype(dtype, np.integer):
            out[name] = (rng.integers(-20, 21, TICKS).astype(dtype)).tolist()
        else:
            out[name] = (rng.standard_normal(TICKS).astype(dtype)).tolist()
    return out


def _same(a: list, b: list) -> bool:
    return [[str(v) for v in c] for c in a] == [[str(v) for v in c] for c in b]


CONSTS = {"array_index_types.lus": ["N=3", "M=2"]}
"""Values of free constants that size arrays (`step-run --const N=3 --const M=2`):
without them the program is rejected at the array type, naming the option."""


def classify(path: Path, iree: bool) -> tuple[str, str, str]:
    """(result, nodes run, agreement) of one program."""
    try:
        with free_consts.bound(CONSTS.get(path.name)):
            module = translate(SourceFile(path.name, path.read_text()))
    except InputError as e:
        message = e.lines[0].split(": error: ", 1)[-1]
        where = e.lines[0].split(": error: ", 1)[0].removeprefix(f"{path.name}:")
        if message.startswith("unsupported construct: "):
            return f"construct missing ({where}): {message.removeprefix('unsupported construct: ')}", "—", "—"
        return f"genuine error ({where}): {message}", "—", "—"
    nodes = [op for op in module.body.block.ops if isinstance(op, lus.NodeOp)
             and "$" not in op.sym_name.data and op.num_static.value.data == 0]
    if not nodes:
        static = any(isinstance(op, lus.NodeOp) for op in module.body.block.ops)
        why = "`const` parameters" if static else "a `function rec` only, called nowhere"
        return "accepted", f"(no runnable node: {why})", "—"
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    agree, checked = True, []
    for node in nodes:
        name = node.sym_name.data
        inputs = _inputs(node, np.random.default_rng(len(name)))
        got = run_node(module, name, {k: np.asarray(v) for k, v in inputs.items()}, TICKS)
        others = [run_sync_node(lowered, name, inputs, TICKS),
                  run_node_modular(module, name, inputs, TICKS)]
        if iree:
            others.append(run_node_iree(module, name, inputs, TICKS))
        agree &= all(_same(got, o) for o in others)
        if any(op.sym_name.data == f"{name}$check" and observers(op)
               for op in module.body.block.ops if isinstance(op, lus.NodeOp)):
            report = falsify(module, name, TICKS, runs=20, seed=0)
            reached = sum(w is not None for w in report.reached.values())
            checked.append(f"`{name}`: " + ("no violation" if report.violation is None else
                                             f"violates '{report.violation.name}'")
                           + (f", reachable {reached} of {len(report.reached)} witnessed"
                              if report.reached else ""))
    paths = "lus = sync = modular" + (" = IREE" if iree else "")
    agreement = paths if agree else f"DISAGREE ({paths})"
    if checked:
        agreement += "; --check " + ", ".join(checked)
    given = "".join(f" --const {c}" for c in CONSTS.get(path.name, ()))
    return "accepted" + (f" (with{given})" if given else ""), \
        ", ".join(n.sym_name.data for n in nodes), agreement


HEADER = ["| program | result | nodes run | backends agree; properties |", "|---|---|---|---|"]
KINDS = ("accepted", "construct missing", "genuine error")

Row = tuple[str, str, str, str]  # program, result, nodes run, agreement (unescaped)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def row(path: Path, iree: bool) -> Row:
    """The table row of one program."""
    return (path.name, *classify(path, iree))


def parse_rows(block: str) -> list[Row]:
    """The rows of a table `render` wrote (its header and summary skipped)."""
    rows: list[Row] = []
    for line in block.splitlines():
        if not line.startswith("| ") or line in HEADER:
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 4:
            rows.append((cells[0], cells[1], cells[2], cells[3]))
    return rows


def render(rows: list[Row]) -> tuple[str, dict[str, int]]:
    """The markdown table of `rows` (sorted by program) and its summary."""
    lines = list(HEADER)
    counts = {k: 0 for k in KINDS}
    missing: dict[str, int] = {}
    for name, result, nodes, agreement in sorted(rows):
        counts[next(k for k in KINDS if result.startswith(k))] += 1
        lines.append(f"| {name} | {_cell(result)} | {nodes} | {_cell(agreement)} |")
        if result.startswith("construct missing"):
            what = re.sub(r" \('.*\)$", "", result.split("): ", 1)[1])
            missing[what] = missing.get(what, 0) + 1
    total = sum(counts.values())
    summary = (f"{total} programs: {counts['accepted']} accepted, "
               f"{counts['construct missing']} with a construct missing, "
               f"{counts['genuine error']} genuine errors; no crash.\n\n"
               "The first construct missing, by number of programs it stops: "
               + "; ".join(f"{w} {n}" for w, n in sorted(missing.items(),
                                                         key=lambda x: (-x[1], x[0]))) + ".")
    return "\n".join(lines) + "\n\n" + summary, counts


def table(corpus: Path, iree: bool) -> tuple[str, dict[str, int]]:
    return render([row(path, iree) for path in sorted(corpus.glob("*.lus"))])


def _readme_block(text: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} table to merge into")
    return text[start + len(BEGIN):end]


def merged(corpus: Path, only: list[str], iree: bool, readme: str) -> tuple[str, dict[str, int]]:
    """The README's table with the rows of the programs `only` (file names in
    `corpus`, `.lus` optional) classified anew, the others kept."""
    rows = {r[0]: r for r in parse_rows(_readme_block(readme))}
    paths = [corpus / (name if name.endswith(".lus") else name + ".lus") for name in only]
    for path in paths:  # all named programs exist before any is run
        if not path.is_file():
            raise SystemExit(f"{path}: no such program")
    for path in paths:
        rows[path.name] = row(path, iree)
    return render(list(rows.values()))


def main() -> None:
    p = argparse.ArgumentParser(description="the Lustre corpus results table")
    p.add_argument("--corpus", default=str(HERE), help="folder of .lus programs")
    p.add_argument("--iree", action="store_true", help="also run IREE (one compile per file)")
    p.add_argument("--write", action="store_true", help="update README.md beside this script")
    p.add_argument("--only", nargs="+", metavar="PROG", default=None,
                   help="classify only these programs (file names in --corpus) and keep the "
                        "README's other rows; the counts are recomputed from all rows")
    args = p.parse_args()
    readme = HERE / "README.md"
    if args.only:
        text, _ = merged(Path(args.corpus), args.only, args.iree, readme.read_text())
    else:
        text, _ = table(Path(args.corpus), args.iree)
    print(text)
    if args.write:
        old = readme.read_text()
        block = f"{BEGIN}\n{text}\n{END}"
        new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, old,
                     flags=re.S) if BEGIN in old else old.rstrip() + "\n\n" + block + "\n"
        readme.write_text(new)


if __name__ == "__main__":
    main()
