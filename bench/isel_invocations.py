"""Accelerator invocations per model and target, exact vs flexible matching (D2A Table 1),
and the application-level error of the flexible, all-targets compilation.

    .venv/bin/python bench/isel_invocations.py [--no-run]
    .venv/bin/python bench/isel_invocations.py --egraph   # e-graph sizes and saturation times

Models: examples/isel/{resmlp,lstm_lm,resnet_block,mobilenet_block,encoder_layer}.mlir and
examples/isel/onnx/onnx_mlp.mlir (an ONNX model lowered by iree-import-onnx + iree-opt).
Each cell is `exact/flexible` invocations of that accelerator when isel targets it
alone; the `all` columns target all three at once.  The error column runs the
`all`/flexible program on the ILA simulators (random inputs, seed 0; parameters
scaled by 1/sqrt(fan_in)) against float32 numpy: ||ref - acc||_F / ||ref||_F of
the first output.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np

from steplus.runtime.ila.host import run_function
from steplus.tools.loading import load_module
from steplus.tools.progress import status

REPO = Path(__file__).resolve().parents[1]
MODELS = ["resmlp", "lstm_lm", "resnet_block", "mobilenet_block", "encoder_layer", "onnx/onnx_mlp"]
TARGETS = ["flexasr", "hlscnn", "vta"]


def invocations(path: str, targets: str, mode: str) -> Counter:
    m = load_module(path, f"isel{{targets={targets} mode={mode}}}")
    return Counter(op.callee.data.split(".")[0] for op in m.walk() if op.name == "ila.invoke")


def random_inputs(module, name, seed=0):
    from steplus.runtime.ila.host import random_arguments

    return random_arguments(module, name, seed)


def app_error(path: str, name: str) -> tuple[float, float]:
    src = load_module(path)
    inputs = random_inputs(src, name)
    compiled = load_module(path, "isel,ila-cancel-store-load,convert-ila-to-commands")
    t0 = time.perf_counter()
    (y, *_), _ = run_function(compiled, name, inputs, backend="ila")
    dt = time.perf_counter() - t0
    (r, *_), _ = run_function(src, name, inputs, backend="reference")
    return float(np.linalg.norm(r - y) / np.linalg.norm(r)), dt


def egraph_sizes() -> None:
    """Per model and mode (all targets): e-graph nodes, iterations and saturation time."""
    from xdsl.dialects import func

    from steplus.passes.isel import Limits, select_function

    print(f"{'model':<16}{'mode':<10}{'iterations':>11}{'e-nodes':>9}{'saturate':>10}{'isel':>8}  stopped by")
    for model in MODELS:
        for mode in ("exact", "flexible"):
            m = load_module(str(REPO / "examples" / "isel" / f"{model}.mlir"))
            fn = next(f for f in m.walk() if isinstance(f, func.FuncOp))
            rep = []
            t0 = time.perf_counter()
            with status("isel_invocations", f"isel on {model} ({mode})"):  # stderr, a terminal only
                select_function(fn, tuple(TARGETS), mode == "flexible", Limits(), rep)
            s = rep[0]
            print(f"{model:<16}{mode:<10}{s.iterations:>11}{s.nodes:>9}{s.seconds:>9.2f}s"
                  f"{time.perf_counter() - t0:>7.2f}s  {s.stopped or '- (saturated)'}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-run", action="store_true", help="skip the ILA execution (error column)")
    p.add_argument("--egraph", action="store_true", help="print e-graph sizes and saturation times instead")
    args = p.parse_args()
    if args.egraph:
        egraph_sizes()
        return
    head = "".join(f"{t:>10}" for t in TARGETS) + "".join(f"{'all:' + t:>13}" for t in TARGETS)
    print(f"{'model':<16}{'ops':>5}{head}{'app. err.':>11}{'sim. time':>10}")
    for model in MODELS:
        with status("isel_invocations", f"isel and the ILA run of {model}"):  # stderr, a terminal only
            line = _row(model, args.no_run)
        print(line, flush=True)


def _row(model: str, no_run: bool) -> str:
    """The table row of one model: invocations per target and mode, the application error."""
    path = str(REPO / "examples" / "isel" / f"{model}.mlir")
    src = load_module(path)
    fn = next(f for f in src.walk() if f.name == "func.func")
    n_ops = sum(1 for o in fn.body.blocks[0].ops if o.name not in (
        "func.return", "arith.constant", "tensor.empty", "tosa.const_shape", "tosa.const"))
    cells = []
    for t in TARGETS:
        e, f = invocations(path, t, "exact")[t], invocations(path, t, "flexible")[t]
        cells.append(f"{e}/{f}")
    ea, fa = invocations(path, ",".join(TARGETS), "exact"), invocations(path, ",".join(TARGETS), "flexible")
    cells += [f"{ea[t]}/{fa[t]}" for t in TARGETS]
    line = f"{model:<16}{n_ops:>5}" + "".join(f"{c:>10}" for c in cells[:3]) + "".join(f"{c:>13}" for c in cells[3:])
    if not no_run:
        e, dt = app_error(path, fn.sym_name.data)
        line += f"{100 * e:>10.2f}%{dt:>9.1f}s"
    return line


if __name__ == "__main__":
    main()
