"""Where and how the step analysis passes write their reports.

mlir-opt convention: the IR goes to stdout (or `-o`), a report goes to stderr
or to a file a pass option names. `emit_report(pass_name, out, text)` does
exactly that; `step-metrics` and `step-print-dot` use it.

The metrics report has three formats (`report_format` picks one from a
`format=` option or the output file's extension):

- `text`: the per-graph table (`format_table`), the stderr default;
- `json`: `{"graphs": [{"name", "ops": [{"op", "offchip_bytes", ...}],
  "totals": {..., "flops", "flops_executed", ..., "flops_artifact",
  "operational_intensity"}}]}`; a value is
  a JSON integer when it is one, a float for a non-integer ratio, a string
  for a symbolic expression, `null` for an operational intensity without
  traffic or a graph without an artifact FLOP formula;
- `csv`: one row per operator and a `total` row per graph, columns
  `graph,op,offchip_bytes,onchip_bytes,flops,padded_flops,operational_intensity,flops_artifact`
  (the last two filled on the `total` row only).

Every format gives the graph's `flops_artifact` (the reference artifact's
FLOP formula, see `metrics`) next to its own `flops` count. The text and JSON
formats also name the FLOPs the simulated fabric executes (`flops_executed`,
what `step-run` prints): `flops` minus the accumulator adds the PCUs fuse into
the matmuls' multiply-adds; `fused_adds_note` words that difference for both
tools.

Numbers too large to print exactly (more than `MAX_EXACT_DIGITS` digits; e.g.
a product of dims of 10**18) print in scientific notation (`1.0e+4999`)
instead of hitting Python's int-to-str limit.

Example:

```python
emit_report("step-print-dot", "g.dot", "digraph g {}\\n")  # writes g.dot
report_format("", "m.json")                             # "json"
```
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import re
import sys
from typing import TYPE_CHECKING, cast

import sympy

from steplus.dialects.step.dims import dim_symbols, rename_symbols, to_expr
from steplus.utils.diagnostics import OpDiagnosticError

if TYPE_CHECKING:
    from steplus.passes.step.metrics import GraphMetrics

FORMATS = ("text", "json", "csv")
MAX_EXACT_DIGITS = 1000
"""Integers with more digits print as `mantissa e+exponent` (see module doc)."""

_MAX_EXACT_BITS = int(MAX_EXACT_DIGITS * 3.321928094887362)  # log2(10)
METRIC_KEYS = ("offchip_bytes", "onchip_bytes", "flops", "padded_flops")
_ATTRS = dict(zip(METRIC_KEYS, ("offchip", "onchip", "flops", "padded_flops")))
"""Report column -> `OpMetrics` attribute."""


def emit_report(pass_name: str, out: str, text: str) -> None:
    """Write a report to the file `out`, or to stderr when `out` is empty.

    The file is rewritten on each run of the pass (with `--split-input-file`,
    it holds the last chunk's report); an unwritable path is a located error."""
    if not out:
        sys.stderr.write(text)
        sys.stderr.flush()
        return
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise OpDiagnosticError(
            None, f"{pass_name}: cannot write report '{out}': {e.strerror or e}") from None


def report_format(fmt: str, out: str) -> str:
    """The format a `format=`/`out=` option pair asks for (ValueError if unknown)."""
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got '{fmt}'")
        return fmt
    suffix = out.rsplit(".", 1)[-1].lower() if "." in out else ""
    return suffix if suffix in ("json", "csv") else "text"


# -- numbers -------------------------------------------------------------------------


def _big_int_text(n: int) -> str:
    """`n` in scientific notation with 6 significant digits, never via str(n)."""
    sign = "-" if n < 0 else ""
    n = abs(n)
    exp = int((n.bit_length() - 1) * 0.30102999566398120)  # log10(2)
    while 10 ** (exp + 1) <= n:
        exp += 1
    while 10**exp > n:
        exp -= 1
    mantissa = n // 10 ** (exp - 5)  # 6 digits
    digits = f"{mantissa:d}"
    return f"{sign}{digits[0]}.{digits[1:]}e+{exp}"


def _is_big(n: int) -> bool:
    return abs(n).bit_length() > _MAX_EXACT_BITS


def _tame(e: sympy.Expr) -> sympy.Expr:
    """`e` with every integer/rational past the exact-printing limit as a Float."""
    big = {r: sympy.Float(r, 6) for r in e.atoms(sympy.Rational)
           if _is_big(int(r.p)) or _is_big(int(r.q))}
    return cast(sympy.Expr, e.xreplace(big)) if big else e


def metric_text(e: sympy.Expr | None) -> str:
    """The table/attribute text of a metric (`n/a` for None)."""
    if e is None:
        return "n/a"
    e = to_expr(e)
    if e.is_Integer:
        n = int(e)
        return _big_int_text(n) if _is_big(n) else str(n)
    symbols = dim_symbols(e)
    if len(symbols) == 1:
        return _one_symbol_text(e, next(iter(symbols)))
    return _text(e)


_STAND_IN = "zz_metric_symbol"
"""The name a metric's only symbol takes while its text is memoized."""


def _one_symbol_text(e: sympy.Expr, symbol: sympy.Symbol) -> str:
    """`_text(e)` for an expression of one symbol, memoized up to the
    symbol's name: the per-expert metrics of a graph are the same expressions
    in different symbols (`-768*B_0 + 12288*ceiling(B_0/16)`), and printing
    them was most of step-metrics' time. With a single symbol, renaming it
    cannot reorder terms or factors (they order by kind before names)."""
    if _STAND_IN in symbol.name:
        return _text(e)
    stand_in = type(symbol)(_STAND_IN, **symbol.assumptions0)
    text = _shape_text(rename_symbols(e, {symbol: stand_in}))
    word = f"(?<![A-Za-z0-9_?]){re.escape(sympy.sstr(stand_in))}(?![A-Za-z0-9_])"
    name = sympy.sstr(symbol)
    return re.sub(word, lambda _: name, text)


@functools.lru_cache(maxsize=4096)
def _shape_text(e: sympy.Expr) -> str:
    return _text(e)


def _text(e: sympy.Expr) -> str:
    if isinstance(e, sympy.Rational) and not e.is_Integer:
        if _is_big(int(e.p)) or _is_big(int(e.q)):
            return sympy.sstr(_tame(e))
        return f"{e} (~{float(e):.4g})"
    return sympy.sstr(_tame(e))


def metric_value(e: sympy.Expr | None) -> int | float | str | None:
    """A metric as a JSON value: int, float (non-integer ratio), str (symbolic) or None."""
    if e is None:
        return None
    e = to_expr(e)
    if e.is_Integer:
        return _big_int_text(int(e)) if _is_big(int(e)) else int(e)
    if e.is_Rational:
        f = float(_tame(e))
        return f if math.isfinite(f) else sympy.sstr(_tame(e))
    return sympy.sstr(_tame(e))


# -- the metrics report --------------------------------------------------------------


def fused_adds_note(other: str, count: object, fused: object) -> str:
    """Why the two FLOP totals of a graph differ, in the words both `step-run`
    and `step-metrics` print: `other` names the other tool's total `count`,
    `fused` is their difference.

    >>> fused_adds_note("step-metrics", 50757632, 131072)
    "(step-metrics: 50757632; the 131072 of accumulator adds are fused into the matmuls' multiply-adds)"
    """
    return (f"({other}: {count}; the {fused} of accumulator adds are fused into the "
            "matmuls' multiply-adds)")


def _totals(gm: GraphMetrics, executed: bool = False) -> dict[str, sympy.Expr | None]:
    run = {"flops_executed": gm.executed_flops} if executed else {}
    return {"offchip_bytes": gm.offchip, "onchip_bytes": gm.onchip, "flops": gm.flops,
            **run, "padded_flops": gm.padded_flops, "flops_artifact": gm.flops_artifact,
            "operational_intensity": gm.operational_intensity}


def _flops_line(gm: GraphMetrics) -> str:
    """`total flops = N`, with the fabric's executed count named beside it
    when the fused accumulator adds make the two differ."""
    line = f"total flops = {metric_text(gm.flops)}"
    fused = gm.fused_flops
    if fused == 0:
        return line
    executed = metric_text(gm.executed_flops)
    return f"{line}   {fused_adds_note('executed on the fabric', executed, metric_text(fused))}"


def format_table(gm: GraphMetrics) -> str:
    """The per-operator table and the totals, as text."""
    rows = [(m.label, *(metric_text(getattr(m, _ATTRS[k])) for k in METRIC_KEYS))
            for m in gm.ops if not m.is_zero()]
    head = ("op", *METRIC_KEYS)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    out = [f"step-metrics @{gm.name}", line(head), *map(line, rows)]
    omitted = len(gm.ops) - len(rows)
    if omitted:
        out.append(f"({omitted} operators without off-chip traffic, on-chip memory or FLOPs)")
    totals = _totals(gm)
    out += [_flops_line(gm) if k == "flops" else f"total {k} = {metric_text(totals[k])}"
            for k in METRIC_KEYS]
    out.append(f"total flops_artifact = {metric_text(totals['flops_artifact'])}")
    out.append(f"operational_intensity = {metric_text(totals['operational_intensity'])}")
    return "\n".join(out) + "\n"


def format_json(graphs: list[GraphMetrics]) -> str:
    """The metrics of `graphs` as JSON (see the module doc)."""
    doc = {"graphs": [{
        "name": gm.name,
        "ops": [{"op": m.label, **{k: metric_value(getattr(m, _ATTRS[k])) for k in METRIC_KEYS}}
                for m in gm.ops],
        "totals": {k: metric_value(v) for k, v in _totals(gm, executed=True).items()},
    } for gm in graphs]}
    return json.dumps(doc, indent=2) + "\n"


def format_csv(graphs: list[GraphMetrics]) -> str:
    """The metrics of `graphs` as CSV (see the module doc)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["graph", "op", *METRIC_KEYS, "operational_intensity", "flops_artifact"])
    for gm in graphs:
        for m in gm.ops:
            w.writerow([gm.name, m.label, *(metric_value(getattr(m, _ATTRS[k])) for k in METRIC_KEYS), "", ""])
        totals = _totals(gm)
        oi = metric_value(totals["operational_intensity"])
        art = metric_value(totals["flops_artifact"])
        w.writerow([gm.name, "total", *(metric_value(totals[k]) for k in METRIC_KEYS),
                    "" if oi is None else oi, "" if art is None else art])
    return buf.getvalue()


def format_metrics(graphs: list[GraphMetrics], fmt: str) -> str:
    """The report of `graphs` in format `fmt` (one of FORMATS)."""
    if fmt == "json":
        return format_json(graphs)
    if fmt == "csv":
        return format_csv(graphs)
    return "".join(format_table(gm) for gm in graphs)
