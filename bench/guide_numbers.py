"""Check (or rewrite) the numbers the guides quote against what the benches print.

    python bench/guide_numbers.py            # run the benches, fail on any drift (exit 1)
    python bench/guide_numbers.py --write    # rewrite the guides' tables from the benches
    python bench/guide_numbers.py --list     # the checked tables and their benches
    python bench/guide_numbers.py --slow     # also the minutes-long simulating benches
    python bench/guide_numbers.py --quiet    # no status line on stderr (drawn on a terminal only)

A table a bench regenerates is marked in its guide by a comment line right
above it, `<!-- guide-numbers: NAME -->`; NAME is a check below, which says
which bench to run, how to read its output and how to key the rows. A row of
the guide whose numbers differ from the bench's (or a row one side lacks) is
a drift: printed as `guide:line: NAME: row: column guide X, bench Y`, and the
exit code is 1. Numbers are compared exactly, thousands separators (spaces)
ignored. `test/unit/tools/test_guide_numbers.py` runs the check (slow: the
bench takes ~40 s) and tests the comparison on made-up tables.

Checks:

- `moe_metrics` (docs/guide/step-graphs.md): `bench/moe_metrics.py`'s off-chip
  bytes, on-chip bytes, FLOPs and padded FLOPs of the twelve MoE configurations.
- `exp_tiling` (with `--slow`, ~3-5 min): the dynamic-tiling speedup and Pareto
  improvement distance `bench/exp_tiling.py --simulate` prints, as the results
  table of docs/guide/step-graphs.md quotes them (these are not rewritten by
  `--write`: edit the guide's sentence).
- `exp_timemux` (with `--slow`, 14 simulations): every `G× at O % (R=r)` of the
  results table's two time-multiplexing rows against the row of degree r that
  `bench/exp_timemux.py --simulate` prints: G = utilization(r) / utilization(128)
  to two decimals, O = cycles(r) / cycles(128) - 1 in percent, at the guide's
  precision.
- `exp_attention` (with `--slow`, 81 simulations): the geomean speedups of
  dynamic parallelization (`bench/exp_attention.py --no-sweep`'s `all:` line).
  Without `--slow` the same line is computed from the pinned cycles
  (`test/unit/runtime/fabric/attention_cycles.json`, which `exp_attention.py
  --check` holds to the simulator), in well under a second: `exp_attention_pins`.
- `isel_table` (with `--slow`, minutes of isel saturation): the README's D2A
  table, ops and exact/flexible invocations per accelerator
  (`bench/isel_models.py --no-run`); the paper's bracketed numbers and the ILA
  accuracy column are not compared, and the table is not rewritten by `--write`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- guide-numbers: ([\w-]+) -->$")

Rows = dict[tuple[str, ...], list[str]]
"""Row key (e.g. model, B, tile_N) -> its numbers, as printed (no separators)."""


@dataclass(frozen=True)
class Check:
    """One guide table and the bench that regenerates it."""

    page: str  # the guide, relative to the repository
    command: list[str]  # the bench, run from the repository root
    columns: list[str]  # the table's number columns, in order
    key_width: int  # leading columns that key a row
    read_bench: Callable[[str], Rows]  # the bench's stdout -> rows
    cell: Callable[[str], str] | None = None  # a guide cell -> its compared number (default: as is)
    slow: bool = False  # only with --slow or by name
    writable: bool = True  # --write may rewrite the table

    def key_cells(self, key: tuple[str, ...]) -> list[str]:
        return [k.capitalize() if i == 0 else k for i, k in enumerate(key)]


def _moe_metrics(stdout: str) -> Rows:
    rows: Rows = {}
    for line in stdout.splitlines()[1:]:
        cells = line.split()
        if len(cells) >= 7 and cells[1].isdigit():
            rows[(cells[0].lower(), cells[1], cells[2])] = cells[3:7]
    return rows


ISEL_NAMES = {"efficientnet_b0": "efficientnet-b0", "lstm_wlm": "lstm-wlm", "mobilenetv2": "mobilenet-v2",
              "resmlp": "resmlp", "resnet20": "resnet-20", "transformer": "transformer"}
"""bench/isel_models.py's model names -> the README table's application names (lowercase)."""


def _isel_table(stdout: str) -> Rows:
    rows: Rows = {}
    for line in stdout.splitlines()[1:]:
        cells = line.split()
        if len(cells) >= 5 and cells[0] in ISEL_NAMES and cells[1].isdigit():
            rows[(ISEL_NAMES[cells[0]],)] = cells[1:5]
    return rows


def _ours(cell: str) -> str:
    """`0/1 (0/35)` -> `0/1`: our count, without the paper's in brackets."""
    return cell.split("(")[0].strip()


@dataclass(frozen=True)
class ValueCheck:
    """Numbers quoted in a guide's prose or table cells: each a regex on the
    bench's stdout and one on the guide, both capturing the number as printed."""

    page: str
    command: list[str]
    values: list[tuple[str, str, str]]  # (label, bench regex, guide regex)
    slow: bool = True


CHECKS: dict[str, Check] = {
    "moe_metrics": Check(
        "docs/guide/step-graphs.md", [sys.executable, "bench/moe_metrics.py", "--quiet"],
        ["off-chip bytes", "on-chip bytes", "FLOPs", "padded FLOPs"], 3, _moe_metrics),
    # minutes: isel saturation of six exported models, per accelerator, exact and flexible
    "isel_table": Check(
        "README.md", [sys.executable, "bench/isel_models.py", "--no-run"],
        ["ops", "FlexASR", "HLSCNN", "VTA"], 1, _isel_table, cell=_ours, slow=True,
        writable=False),
}

_TIMEMUX = r"\| time-multiplexing, {} \|[^|]*\| "
_ATTENTION = r"\| dynamic parallelization, speedup \|[^|]*\|[^|]*?"

VALUE_CHECKS: dict[str, ValueCheck] = {
    # ~3-5 min: 24 MoE simulations
    "exp_tiling": ValueCheck(
        "docs/guide/step-graphs.md",
        [sys.executable, "bench/exp_tiling.py", "--simulate", "--out",
         str(Path(tempfile.gettempdir()) / "steplus-guide-numbers")],
        [("dynamic tiling speedup", r"speedup (\d+\.\d+)x",
          r"\| dynamic tiling, speedup \|[^|]*\| (\d+\.\d+)× over both models"),
         ("Pareto improvement distance", r"Pareto improvement distance (\d+\.\d+)x",
          r"\| dynamic tiling, Pareto improvement distance \|[^|]*\| (\d+\.\d+);")]),
    # 81 simulations (27 traces x 3 strategies)
    "exp_attention": ValueCheck(
        "docs/guide/step-graphs.md",
        [sys.executable, "bench/exp_attention.py", "--no-sweep", "--out",
         str(Path(tempfile.gettempdir()) / "steplus-guide-numbers")],
        [("dynamic vs either static (every ratio)", r"(?m)^all: [^\n]*vs either static \(all ratios\) (\d+\.\d+)x",
          _ATTENTION + r"(\d+\.\d+)× over every static/dynamic ratio"),
         ("dynamic vs the better static", r"(?m)^all: [^\n]*vs best static (\d+\.\d+)x",
          _ATTENTION + r"(\d+\.\d+)× over the better static"),
         ("dynamic vs coarse", r"(?m)^all: vs coarse (\d+\.\d+)x", _ATTENTION + r"(\d+\.\d+)× vs coarse"),
         ("dynamic vs interleaved", r"(?m)^all: [^\n]*vs interleaved (\d+\.\d+)x",
          _ATTENTION + r"(\d+\.\d+)× vs interleaved")]),
}

TIMEMUX_PAGE = "docs/guide/step-graphs.md"
TIMEMUX_COMMAND = [sys.executable, "bench/exp_timemux.py", "--simulate", "--out",
                   str(Path(tempfile.gettempdir()) / "steplus-guide-numbers")]
TIMEMUX_ROWS = {"32": "static tile 32", "dyn": "dynamic tiling"}
_QUOTE = re.compile(r"(\d+\.\d+)× at ([+\-−]\d+(?:\.\d+)?) % \(R=(\d+)\)")


def timemux_drifts(text: str, stdout: str) -> list[str]:
    """Each `G× at O % (R=r)` of the time-multiplexing rows against the bench's CSV rows."""
    lines = stdout.splitlines()
    head = next((i for i, line in enumerate(lines) if line.startswith("regions,")), None)
    bench: dict[tuple[str, int], tuple[float, float]] = {}
    if head is not None:
        cols = lines[head].split(",")
        for line in lines[head + 1:]:
            cells = dict(zip(cols, line.split(",")))
            try:
                bench[(cells["tile_n"], int(cells["regions"]))] = (
                    float(cells["cycles"]), float(cells["utilization_pct"]))
            except (KeyError, ValueError):
                continue
    out: list[str] = []
    for tile, row in TIMEMUX_ROWS.items():
        m = re.search(_TIMEMUX.format(re.escape(row) + ", utilization") + r"([^|]*)\|", text)
        if m is None:
            out.append(f"{TIMEMUX_PAGE}:1: exp_timemux: {row}: not found in the guide")
            continue
        line = text[:m.start()].count("\n") + 1
        base = bench.get((tile, 128))
        for q in _QUOTE.finditer(m.group(1)):
            gain, over, r = q.group(1), q.group(2).replace("−", "-"), int(q.group(3))
            got = bench.get((tile, r))
            if got is None or base is None:
                out.append(f"{TIMEMUX_PAGE}:{line}: exp_timemux: {row} R={r}: not printed by the bench")
                continue
            places = len(over.split(".")[1]) if "." in over else 0
            b_gain = f"{got[1] / base[1]:.2f}"
            b_over = f"{(got[0] / base[0] - 1) * 100:+.{places}f}"
            if (b_gain, b_over) != (gain, over if over[0] in "+-" else "+" + over):
                out.append(f"{TIMEMUX_PAGE}:{line}: exp_timemux: {row} R={r}: guide {gain}x at "
                           f"{over} %, bench {b_gain}x at {b_over} %")
    return out


PINNED = {"exp_attention_pins": "exp_attention"}
"""Fast checks: a value check's bench line computed from pinned simulation results."""


def attention_from_pins() -> str:
    """exp_attention.py's `all:` line from the pinned cycles of its 27 traces."""
    import json

    sys.path.insert(0, str(REPO / "bench"))
    import exp_attention

    pins = json.loads(exp_attention.PINS.read_text(encoding="utf-8"))["cycles"]
    rows = [dict(zip(exp_attention.COLUMN.values(), cycles)) for cycles in pins.values()]
    return "all: " + ", ".join(f"{k} {v:.2f}x" for k, v in exp_attention.summary(rows).items()) + "\n"


def value_drifts(name: str, check: ValueCheck, text: str, stdout: str) -> list[str]:
    """Every quoted value of `check` the guide `text` states differently from the bench."""
    out: list[str] = []
    for label, bench_re, guide_re in check.values:
        b = re.search(bench_re, stdout)
        g = re.search(guide_re, text)
        line = text[:g.start()].count("\n") + 1 if g else 1
        if b is None:
            out.append(f"{check.page}:{line}: {name}: {label}: not printed by the bench")
        elif g is None:
            out.append(f"{check.page}:{line}: {name}: {label}: not found in the guide")
        elif g.group(1) != b.group(1):
            out.append(f"{check.page}:{line}: {name}: {label}: guide {g.group(1)}, "
                       f"bench {b.group(1)}")
    return out


def table_after(lines: list[str], name: str) -> tuple[int, int]:
    """(first, end) line indices of the markdown table below `<!-- guide-numbers: name -->`
    (header and separator included); ValueError if the marker or table is missing."""
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if m and m.group(1) == name:
            start = i + 1
            while start < len(lines) and not lines[start].strip():
                start += 1
            end = start
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            if end - start < 3:
                raise ValueError(f"no table below the '{name}' marker")
            return start, end
    raise ValueError(f"no '<!-- guide-numbers: {name} -->' marker")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def guide_rows(lines: list[str], check: Check, name: str) -> dict[tuple[str, ...], tuple[int, list[str]]]:
    """Row key -> (line index, numbers without separators) of the guide's table."""
    start, end = table_after(lines, name)
    out: dict[tuple[str, ...], tuple[int, list[str]]] = {}
    for i in range(start + 2, end):
        cells = _cells(lines[i])
        key = tuple(c.lower() for c in cells[:check.key_width])
        out[key] = (i, [(check.cell or str)(c).replace(" ", "").replace("\u202f", "") for c in
                        cells[check.key_width:check.key_width + len(check.columns)]])
    return out


def drifts(page: str, lines: list[str], check: Check, name: str, bench: Rows) -> list[str]:
    """Every difference between the guide's table and the bench's rows."""
    guide = guide_rows(lines, check, name)
    out: list[str] = []
    for key, (i, values) in guide.items():
        label = " ".join(key)
        if key not in bench:
            out.append(f"{page}:{i + 1}: {name}: row {label}: not printed by the bench")
            continue
        for column, g, b in zip(check.columns, values, bench[key]):
            if g != b:
                out.append(f"{page}:{i + 1}: {name}: row {label}: {column} guide {g}, bench {b}")
    start, _ = table_after(lines, name)
    for key in bench:
        if key not in guide:
            out.append(f"{page}:{start + 1}: {name}: row {' '.join(key)}: "
                       "printed by the bench, missing in the guide")
    return out


def _grouped(number: str) -> str:
    return f"{int(number):,}".replace(",", " ") if number.lstrip("-").isdigit() else number


def rewrite(lines: list[str], check: Check, name: str, bench: Rows) -> list[str]:
    """`lines` with the table's rows replaced by the bench's (same header)."""
    start, end = table_after(lines, name)
    order = [*guide_rows(lines, check, name), *bench]  # the guide's order, then new rows
    keys = [k for i, k in enumerate(order) if k in bench and k not in order[:i]]
    rows = ["| " + " | ".join([*check.key_cells(k), *(_grouped(v) for v in bench[k])]) + " |"
            for k in keys]
    return [*lines[:start + 2], *rows, *lines[end:]]


def _run(command: list[str], quiet: bool) -> subprocess.CompletedProcess[str]:
    """Run a bench from the repository root, a status line on stderr meanwhile (a terminal only)."""
    from steplus.tools.progress import status

    with status("guide_numbers", f"running {' '.join(command[1:])}", quiet=quiet):
        return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=3600)


def run_bench(check: Check, quiet: bool = False) -> Rows:
    proc = _run(check.command, quiet)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(check.command)} failed (exit {proc.returncode}):\n"
                         f"{proc.stderr[-2000:]}")
    return check.read_bench(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checks", nargs="*", help=f"checks to run (default: all: {', '.join(CHECKS)})")
    p.add_argument("--write", action="store_true", help="rewrite the guides' tables")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.add_argument("--quiet", action="store_true", help="no status line on stderr (it shows on a terminal only)")

    p.add_argument("--slow", action="store_true",
                   help="also the checks whose bench runs for minutes (exp_tiling, exp_timemux, "
                        "exp_attention, isel_table)")
    args = p.parse_args(argv)
    if args.list:
        for name, c in {**CHECKS, **VALUE_CHECKS}.items():
            print(f"{name}: {c.page} <- {' '.join(c.command[1:])}{' (--slow)' if c.slow else ''}")
        print(f"exp_timemux: {TIMEMUX_PAGE} <- {' '.join(TIMEMUX_COMMAND[1:])} (--slow)")
        for name, of in PINNED.items():
            print(f"{name}: {VALUE_CHECKS[of].page} <- {of}'s line from its pinned results")
        return 0
    everything = [*CHECKS, *VALUE_CHECKS, "exp_timemux", *PINNED]
    unknown = [n for n in args.checks if n not in everything]
    if unknown:
        p.error(f"unknown checks {unknown} (checks: {', '.join(everything)})")
    found: list[str] = []
    for name in args.checks or [n for n in everything if n in PINNED or args.slow
                                or (n != "exp_timemux" and not {**CHECKS, **VALUE_CHECKS}[n].slow)]:
        if name == "exp_timemux":
            proc = _run(TIMEMUX_COMMAND, args.quiet)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(TIMEMUX_COMMAND)} failed:\n{proc.stderr[-2000:]}")
            found += timemux_drifts((REPO / TIMEMUX_PAGE).read_text(encoding="utf-8"), proc.stdout)
            continue
        if name in PINNED:
            value_check = VALUE_CHECKS[PINNED[name]]
            text = (REPO / value_check.page).read_text(encoding="utf-8")
            found += value_drifts(name, value_check, text, attention_from_pins())
            continue
        if name in VALUE_CHECKS:
            value_check = VALUE_CHECKS[name]
            proc = _run(value_check.command, args.quiet)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(value_check.command)} failed:\n{proc.stderr[-2000:]}")
            text = (REPO / value_check.page).read_text(encoding="utf-8")
            found += value_drifts(name, value_check, text, proc.stdout)
            continue
        check = CHECKS[name]
        path = REPO / check.page
        lines = path.read_text(encoding="utf-8").splitlines()
        bench = run_bench(check, args.quiet)
        if args.write and check.writable:
            path.write_text("\n".join(rewrite(lines, check, name, bench)) + "\n", encoding="utf-8")
            print(f"rewrote {check.page} ({name})")
        else:
            found += drifts(check.page, lines, check, name, bench)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} numbers drifted; python bench/guide_numbers.py --write rewrites "
              "the tables", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
