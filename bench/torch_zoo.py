"""Benchmark: the torch zoo (examples/torch_zoo) from PyTorch to STeP graphs and cycles (issue 26 item 5).

For each zoo model: `torch.export`, `lower_exported` with the model's options
(recognized MoE / attention layers, the rest by the dense ATen path), the
fabric's functional mode on every lowered part (compared with torch: the
relative error: max |fabric - torch| / max |torch|), then each part on the fabric
simulator. Prints per model:

- ops: ATen ops lowered / ATen ops in the program that compute or move data
  (bookkeeping excluded); views: the ATen views torch runs between the parts
  (`view`, `reshape`, `contiguous`, eval-mode `dropout`, same-dtype `.to`, ... :
  harness.VIEW_OPS, no data moved), not counted in ops;
- layers: the recognized MoE / attention layers and the dense parts;
- cycles, off-chip bytes (read + written) and on-chip bytes (the parts' peaks
  added: configured at once), all parts as phases one after another;
- wall: export + lowering + functional run + simulation, seconds;
- for the MoE and attention models, the recognized part alone: static (as
  lowered: MoE tile_N=4, attention interleaved) vs dynamic (`step-dynamic-tiling`
  / `step-dynamic-parallelize{factor=4}`).

A model lowered in part prints its parts' figures (the ops torch runs between them cost
no cycles here) and, below, the ATen ops torch ran that compute data; a model that does
not run prints its first remark instead.

    python bench/torch_zoo.py [--models llama_mlp,mixtral_moe] [--csv bench/out/torch_zoo.csv]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))

from torch_zoo import ZOO  # noqa: E402
from torch_zoo.harness import (  # noqa: E402
    VIEW_OPS, dynamic_designs, export, is_view, lower, run_functional, simulate,
)

from steplus.lowering.linalg_to_step.fx_graph import BOOKKEEPING, name_of  # noqa: E402


def _first(x):
    return x[0] if isinstance(x, (tuple, list)) else x


def run(name: str) -> dict:
    z = ZOO[name]
    t0 = time.time()
    module, args, ep = export(z)
    low = lower(z, ep)
    aten = [n for n in ep.graph.nodes if n.op == "call_function"
            and name_of(n) not in BOOKKEEPING and name_of(n) != "getitem"]
    covered = set().union(*(p.covered for p in low.graphs)) if low.graphs else set()
    views = [n for n in aten if n not in covered and is_view(n)]
    row = {"model": name, "ops_lowered": sum(n in covered for n in aten),
           "ops": len(aten) - len(views), "views": len(views),
           "layers": ", ".join(p.kind if p.kind != "dense" else p.role for p in low.graphs)}
    try:
        out, ran, torch_ops, routing = run_functional(ep, low, args)
        data_ops = sorted({o for o in torch_ops if o not in VIEW_OPS
                           and "assert_tensor_metadata" not in o})
        if data_ops:  # lowered in part: the parts' figures, and what torch still computes
            row["torch_ran"] = ", ".join(o.removeprefix("aten.") for o in data_ops)
        want = _first(module(*args)).detach().numpy()
        got = _first(out).detach().numpy()
        row["max_rel_err"] = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        sim = simulate(low, routing)
        row.update(sim["total"])
        for p in low.graphs:
            if p.kind in ("moe", "attention"):
                d = dynamic_designs(p, routing)
                row.update({f"{k}_{m}": d[k][m] for k in ("static", "dynamic")
                            for m in ("cycles", "offchip_bytes", "onchip_bytes")})
    except Exception as e:  # a model that does not go end to end: say why
        first = next((str(r) for r in low.remarks if "not lowered" in r.message
                      or "not recognized" in r.message), f"{type(e).__name__}: {e}")
        row["note"] = first.replace(str(REPO) + "/", "")
    row["wall_s"] = round(time.time() - t0, 1)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(ZOO), help="comma-separated zoo names")
    ap.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    a = ap.parse_args(argv)
    names = [n for n in a.models.split(",") if n]
    bad = [n for n in names if n not in ZOO]
    if bad:
        print(f"torch_zoo: error: unknown model(s) {', '.join(bad)} (known: "
              f"{', '.join(ZOO)})", file=sys.stderr)
        return 2
    # a progress bar on stderr over the models (only on a terminal): each exports, lowers and runs
    rows = [run(n) for n in tqdm(names, desc="torch_zoo", unit="model", file=sys.stderr,
                                 disable=None, leave=False)]
    print(f"{'model':20} {'ops':>7} {'views':>5} {'cycles':>8} {'off-chip B':>11} "
          f"{'on-chip B':>10} {'rel err':>8} {'wall s':>6}  layers")
    for r in rows:
        if "cycles" in r:
            print(f"{r['model']:20} {r['ops_lowered']:>3}/{r['ops']:<3} {r['views']:>5} "
                  f"{r['cycles']:>8} "
                  f"{r['offchip_bytes']:>11} {r['onchip_bytes']:>10} {r['max_rel_err']:>8.1e} "
                  f"{r['wall_s']:>6}  {r['layers']}")
            if "torch_ran" in r:  # the cycles and bytes are the lowered parts' alone
                print(f"{'':20}   parts only; torch ran: {r['torch_ran']}")
        else:
            print(f"{r['model']:20} {r['ops_lowered']:>3}/{r['ops']:<3} {r['views']:>5} "
                  f"{'-':>8} {'-':>11} "
                  f"{'-':>10} {'-':>8} {r['wall_s']:>6}  {r['layers'] or '-'}\n"
                  f"{'':20}   {r['note'][:200]}")
    dyn = [r for r in rows if "static_cycles" in r]
    if dyn:
        print(f"\n{'model':20} {'design':8} {'cycles':>8} {'off-chip B':>11} {'on-chip B':>10}")
        for r in dyn:
            for k in ("static", "dynamic"):
                print(f"{r['model']:20} {k:8} {r[f'{k}_cycles']:>8} {r[f'{k}_offchip_bytes']:>11} "
                      f"{r[f'{k}_onchip_bytes']:>10}")
    if a.csv:
        Path(a.csv).parent.mkdir(parents=True, exist_ok=True)
        keys = sorted({k for r in rows for k in r})
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, keys)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
