"""Where the CPU seconds of `step-run --backend ila` go, phase by phase (docs/guide/isel.md,
"`step-run --backend ila` on LSTM-WLM").

    python bench/ila_run_phases.py [MODEL.mlir] [--func forward] [--tokens 35] [--parse] [--quiet]

Runs what `step-run MODEL --backend ila --func @forward --input arg0=tokens.npy` runs, in
process, and prints the CPU seconds (`resource.getrusage`, user + system: the machine is
shared, wall time is noisy) of each phase: the imports step-run needs, parsing and verifying
the file, the clone the pipeline compiles, isel's own phases (term import, egglog lets,
saturation, extraction, rebuild and the LSTM fold, then the passes after isel), the float32
reference run in numpy and the ILA run.  Then the same for the module `step-opt` compiles
once (the precompiled run: parse, the passes after isel, the two runs).  The interpreter's
start is not in process; `/usr/bin/time` on the commands measures it (the guide's table).
The token ids are seeded (0); the default model is LSTM-WLM.

`--parse` also times xDSL's parse alone of the file as written (custom op formats) and
printed in generic form (`"linalg.generic"(...) <{...}>`), best of three each.

isel's phases are timed by wrapping its functions in this process (the bench's measurement
only; the product code is not changed).
"""

from __future__ import annotations

import argparse
import gc
import io
import resource
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported inside the timed imports, not before them
    from xdsl.dialects.builtin import ModuleOp

ROOT = Path(__file__).resolve().parents[1]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Phases:
    """CPU seconds by phase name, in first-seen order."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str):
        start = cpu()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + cpu() - start

    def wrap(self, owner, attr: str, name: str) -> None:
        """Time every call of `owner.attr` under `name` (not nested in another wrapped call)."""
        fn = getattr(owner, attr)

        def timed(*args, **kwargs):
            with self(name):
                return fn(*args, **kwargs)

        setattr(owner, attr, timed)


def _isel_phases(phases: Phases) -> None:
    import steplus.passes.isel as isel
    from steplus.passes.isel import terms, views

    phases.wrap(views.RealImporter, "run", "isel: term import")
    phases.wrap(isel, "let_shallow", "isel: egglog lets")
    phases.wrap(terms, "saturate", "isel: saturation")
    phases.wrap(isel, "extract_all", "isel: extraction")
    phases.wrap(isel, "fold_lstm_steps", "isel: LSTM fold")


def run(path: str, func: str, inputs, phases: Phases, compile_too: bool) -> tuple[list, ModuleOp | None]:
    """step-run's ILA path on `path`, phase by phase (`step_run_ila.run` without its printing)."""
    from xdsl.dialects import func as fn_dialect

    from steplus.runtime.ila.host import run_function
    from steplus.tools.loading import load_module
    from steplus.tools.step_run_ila import default_pipeline, fewer_collections

    with phases("parse + verify"):
        source = load_module(path)
    fns = [f for f in source.walk() if isinstance(f, fn_dialect.FuncOp) and f.sym_name.data == func]
    pipeline = default_pipeline(fns[0])
    with fewer_collections():
        with phases("clone"):
            clone = source.clone()
        start, before = cpu(), dict(phases.seconds)
        compiled = load_module(path, pipeline, parsed=clone)
        inner = sum(phases.seconds.get(k, 0.0) - before.get(k, 0.0) for k in phases.seconds)
        phases.seconds["pipeline: the rest (rebuild, passes after isel, verification)"] = \
            cpu() - start - inner
    with phases("float32 reference run (numpy)"):
        refs, _ = run_function(source, func, inputs, backend="reference")
    with phases("ILA run (vectorized)"):
        outs, stats = run_function(compiled, func, inputs, backend="ila")
    if compile_too:
        return [outs, refs], compiled
    return [outs, refs], None


def _parse_forms(path: str) -> None:
    from xdsl.printer import Printer

    from steplus.tools.loading import new_context
    from steplus.tools.source import LocatingParser, SourceFile

    text = Path(path).read_text()
    ctx = new_context()
    module = LocatingParser(ctx, SourceFile(path, text)).parse_module()
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    resources = text[text.find("{-#"):] if "{-#" in text else ""
    generic = out.getvalue() + "\n" + resources
    for label, body in (("as written (custom formats)", text), ("generic form", generic)):
        best = float("inf")
        for _ in range(3):
            start = cpu()
            LocatingParser(ctx, SourceFile(path, body)).parse_module()
            best = min(best, cpu() - start)
        print(f"xDSL parse, {label}: {len(body) / 1e6:.2f} MB, {best:.2f} CPU s (best of 3)")


def main() -> None:
    ap = argparse.ArgumentParser(description="CPU seconds of step-run --backend ila, phase by phase")
    ap.add_argument("model", nargs="?", default=str(ROOT / "examples/isel/models/lstm_wlm.mlir"))
    ap.add_argument("--func", default="forward")
    ap.add_argument("--tokens", type=int, default=35, help="token ids of the (tokens, 1) input")
    ap.add_argument("--vocabulary", type=int, default=256)
    ap.add_argument("--parse", action="store_true", help="also time the parse in custom and generic form")
    ap.add_argument("-q", "--quiet", action="store_true", help="no status line on stderr")
    args = ap.parse_args()
    sys.setrecursionlimit(20000)

    start = cpu()
    import numpy as np

    import steplus.passes.isel.terms  # noqa: F401  (isel's rule sets: imported by the pipeline)
    from steplus.tools import step_run  # noqa: F401  (the tool's own imports)
    from steplus.tools.step_run_ila import run as _  # noqa: F401
    imports = cpu() - start

    from steplus.tools.progress import status

    inputs = [np.random.default_rng(0).integers(0, args.vocabulary, (args.tokens, 1))]
    phases = Phases()
    _isel_phases(phases)
    total = cpu()
    with status("ila_run_phases", f"compiling and running {Path(args.model).name}", quiet=args.quiet):
        (outs, refs), compiled = run(args.model, args.func, inputs, phases, compile_too=True)
    total = cpu() - total
    print(f"{args.model}, end to end (in process, CPU s):")
    print(f"  imports (xDSL, numpy, egglog, isel's rule sets, step-run): {imports:.2f}")
    for name, seconds in phases.seconds.items():
        print(f"  {name}: {seconds:.2f}")
    print(f"  in all, imports included: {imports + total:.2f}")

    from xdsl.printer import Printer

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "compiled.mlir"
        text = io.StringIO()
        assert compiled is not None
        Printer(stream=text).print_op(compiled)  # as step-opt -o writes it
        pre.write_text(text.getvalue() + "\n")
        gc.collect()
        again = Phases()
        total = cpu()
        (outs2, _), _ = run(str(pre), args.func, inputs, again, compile_too=False)
        total = cpu() - total
    same = all(np.array_equal(a, b) for a, b in zip(outs, outs2))
    print(f"the compiled module (precompiled run; outputs {'identical' if same else 'DIFFERENT'}):")
    for name, seconds in again.seconds.items():
        print(f"  {name}: {seconds:.2f}")
    print(f"  in all, imports excluded: {total:.2f}")
    if args.parse:
        with status("ila_run_phases", "parsing in both forms", quiet=args.quiet):
            _parse_forms(args.model)


if __name__ == "__main__":
    main()
