"""FlashFFTConv at 1M points on SN40L (issue 31 item 3; the seed's Table I and Fig. 10 FFT bar).

    python bench/exp_fft.py [--out bench/out/sn40l_fft] [--batch 8] [--orders 3,4]

1. Table I: step-metrics' FLOPs per off-chip byte of a 1M-point FFT
   convolution at the seed's three fusion levels, per Monarch order (one
   1024 x 1024 block; 128 x 128 x 64; 32^4 as FlashFFTConv), per kernel,
   beside the seed's, with the closed form checked; then the same graphs
   with complex bf16 data (closed form: the f32 stand-in's bytes, 4x the GEMM
   and 6x the element-wise FLOPs) and the order whose three levels are
   closest to the seed's (mean |log(ours / seed)|).
2. The fusion speedup: `batch` signals of 1M points through the order-3 and
   order-4 graphs, fused (one kernel, `step-allocate-units`) and unfused
   (`step-kernelize{mode=unfused}`, each kernel on the whole chip), simulated
   on the `sn40l` preset; value at the default assumptions and range over
   the labeled ones (launch costs, HBM efficiency), beside the seed's 13x.

Writes `fft.md` and `fft.csv`. Order 4 at batch 8 simulates ~2 minutes per
HBM-efficiency point with the pure-Python simulator (two points).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from steplus.examples.workloads.sn40l_fft import (
    FFT_ASSUMPTIONS, ORDERS, SEED_SPEEDUP, TABLE, fft_speedups, table_i,
)
from steplus.examples.workloads.sn40l_ranges import assumptions_table
from steplus.dialects.target.fabric import SN40L
from steplus.tools.progress import status


def speedups(orders: list[int], batch: int) -> tuple[str, list[dict]]:
    ghz = SN40L.clock_ghz
    lines = [f"Fusion speedup, {batch} signals of 1M points (simulated on the sn40l preset; "
             "value at the default assumptions [range], the assumption that moves it most):",
             "", "| order (factors) | kernels unfused/fused | kernel us unfused / fused | "
             "HBM GB/s unfused / fused | fusion x (SO) | fusion x (HO) | HO/SO | seed |",
             "|---|---|---|---|---|---|---|---|"]
    rows, ranges = [], {}
    for order in orders:
        f = ORDERS[order]
        t0 = time.time()
        with status("exp_fft", f"simulating order {order} ({'x'.join(map(str, f))}), "
                    f"{batch} signals, fused and unfused"):
            h, runs = fft_speedups(f, batch)
        ranges[order] = h
        u, fu = runs[("unfused", 1.0)], runs[("fused", 1.0)]
        lines.append(
            f"| {order} ({'x'.join(map(str, f))}) | {u.kernels}/{fu.kernels} | "
            f"{u.kernel_cycles / (ghz * 1e3):.0f} / {fu.kernel_cycles / (ghz * 1e3):.0f} | "
            f"{u.hbm_gbps():.0f} / {fu.hbm_gbps():.0f} | "
            f"{h['fusion_so'].text()} ({h['fusion_so'].dominant()}) | "
            f"{h['fusion_ho'].text()} ({h['fusion_ho'].dominant()}) | "
            f"{h['ho_over_so'].text('{:.2f}')} | {SEED_SPEEDUP:g}x, one kernel |")
        row = {"order": order, "factors": "x".join(map(str, f)), "batch": batch,
               "kernels_unfused": u.kernels, "kernels_fused": fu.kernels,
               "kernel_cycles_unfused": u.kernel_cycles, "kernel_cycles_fused": fu.kernel_cycles,
               "sim_seconds": round(time.time() - t0, 1)}
        for k, r in h.items():
            row[k], row[k + "_low"], row[k + "_high"] = (round(r.value, 2), round(r.low, 2),
                                                         round(r.high, 2))
            row[k + "_dominant"] = r.dominant()
        rows.append(row)
        print(f"order {order}: simulated in {row['sim_seconds']} s", file=sys.stderr)
    lines += ["", "One assumption at a time (fusion SO / HO at its low and high end):", "",
              "| order | " + " | ".join(FFT_ASSUMPTIONS) + " |",
              "|---|" + "---|" * len(FFT_ASSUMPTIONS)]
    for row in rows:
        h = ranges[row["order"]]
        lines.append(f"| {row['order']} | " + " | ".join(
            f"SO {h['fusion_so'].each[n][0]:.1f}-{h['fusion_so'].each[n][1]:.1f}, "
            f"HO {h['fusion_ho'].each[n][0]:.1f}-{h['fusion_ho'].each[n][1]:.1f}"
            for n in FFT_ASSUMPTIONS) + " |")
    lines += ["", "Assumptions (the seed states none of these):", "",
              assumptions_table(FFT_ASSUMPTIONS[:2]),
              f"| hbm_eff | sn40l | {TABLE['hbm_eff'].default:g} | {TABLE['hbm_eff'].low:g}-"
              f"{TABLE['hbm_eff'].high:g} | {TABLE['hbm_eff'].unit} | assumed | "
              f"{TABLE['hbm_eff'].why} |"]
    return "\n".join(lines), rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/out/sn40l_fft", help="output directory")
    p.add_argument("--batch", type=int, default=8, help="1M-point signals per run (1..64)")
    p.add_argument("--orders", default="3,4", help="Monarch orders to simulate (of 3, 4)")
    args = p.parse_args(argv)
    orders = [x.strip() for x in args.orders.split(",") if x.strip()]
    if not 1 <= args.batch <= 64 or any(o not in ("3", "4") for o in orders):
        p.error("--batch must be in 1..64 and --orders a list of 3 and 4")
    with status("exp_fft", "Table I: step-metrics per Monarch order"):
        text_i, rows_i = table_i()
    text_s, rows_s = speedups([int(o) for o in orders], args.batch)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("fft_table_i.csv", rows_i), ("fft.csv", rows_s)):
        if rows:
            with open(out / name, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
    text = text_i + "\n\n" + text_s
    (out / "fft.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
