"""SN40L fusion experiment (issue 15 item 4, the seed's Fig. 10/11 and Table I).

    python bench/exp_fusion.py [--out bench/out/sn40l_fusion]

For each workload — the Llama2-7B decoder layer (prefill 4K, decode with a
4K KV cache), the Mistral-7B decoder layer (decode, 4K) and a
Monarch/FlashFFTConv-like FFT convolution (8192 blocks of 32x32: eight 1M-point
sequences) — one
socket's graph (TP8 shard for the models) is simulated on the `sn40l`
preset three ways (examples/workloads/sn40l.py): unfused (one kernel per
operator), conventional fusion (GEMM + elementwise epilogue) and fused
(step-allocate-units' sections). One decoder layer is simulated and
multiplied by the 32 layers; each layer adds its two TP8 all-reduces on the
assumed P2P network (the same in every mode). Launch costs: unfused and
conventional are software-orchestrated (the seed's baseline), fused is
reported both SO and HO.

Writes `fusion.csv` (cycles, kernels, operational intensity, HBM bandwidth
used, speedups) and prints a table with the seed's claims beside ours.
Runs in about a minute (each mode at two stream rates).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from steplus.examples.workloads.decoder import (
    LLAMA2_7B, MISTRAL_7B, collective_bytes, decoder_layer,
)
from steplus.examples.workloads.fftconv import fftconv
from steplus.examples.workloads.sn40l import simulate
from steplus.dialects.target.sn40l import us_to_cycles, value

SEED = {  # the seed's Fig. 10 / §VI-A statements, for the table
    "llama2-7b prefill 4K": "fusion 1.5-3x (prefill), HO <= 1.1x; kernels 11x fewer",
    "llama2-7b decode 4K": "fusion 1-13x (decode), HO 1.4-8x",
    "mistral-7b decode 4K": "fusion up to 13x (Mistral highest), HO 1.4-8x",
    "fftconv 8x1M": "fusion 13x, 1 kernel, HO = SO; Table I OI 39.5 -> 410.4",
}


def allreduce_cycles(nbytes: int, tp: int) -> int:
    """A ring all-reduce over the assumed P2P network."""
    bw = value("p2p_gbps") * 1e9
    us = value("p2p_latency_us") + 2 * (tp - 1) / tp * nbytes / bw * 1e6
    return us_to_cycles(us)


def workloads():
    tp = int(value("tp"))
    yield ("llama2-7b prefill 4K", lambda: decoder_layer(LLAMA2_7B, 4096, 4096, tp),
           LLAMA2_7B.layers, 2 * allreduce_cycles(collective_bytes(LLAMA2_7B, 4096), tp))
    yield ("llama2-7b decode 4K", lambda: decoder_layer(LLAMA2_7B, 1, 4096, tp),
           LLAMA2_7B.layers, 2 * allreduce_cycles(collective_bytes(LLAMA2_7B, 1), tp))
    yield ("mistral-7b decode 4K", lambda: decoder_layer(MISTRAL_7B, 1, 4096, tp),
           MISTRAL_7B.layers, 2 * allreduce_cycles(collective_bytes(MISTRAL_7B, 1), tp))
    yield ("fftconv 8x1M", lambda: fftconv(32, 8192), 1, 0)


def run(out: Path) -> list[dict]:
    rows = []
    for name, build, layers, p2p in workloads():
        t0 = time.time()
        runs = {mode: simulate(build(), mode) for mode in ("unfused", "conventional", "fused")}
        u, c, f = runs["unfused"], runs["conventional"], runs["fused"]

        def total(r, orch):
            return layers * (r.cycles(orch) + p2p)

        row = {
            "workload": name, "layers": layers,
            "unfused_so": total(u, "so"), "conventional_so": total(c, "so"),
            "fused_so": total(f, "so"), "fused_ho": total(f, "ho"),
            "kernels_unfused": layers * u.kernels, "kernels_conventional": layers * c.kernels,
            "kernels_fused": layers * f.kernels,
            "oi_unfused": round(u.intensity, 1), "oi_conventional": round(c.intensity, 1),
            "oi_fused": round(f.intensity, 1),
            "hbm_gbps_unfused": round(u.hbm_gbps()), "hbm_gbps_fused": round(f.hbm_gbps()),
            "hbm_mib_unfused": round(u.hbm_bytes / 2**20, 1),
            "hbm_mib_fused": round(f.hbm_bytes / 2**20, 1),
            "p2p_cycles_per_layer": p2p,
            "sim_seconds": round(time.time() - t0, 1),
        }
        row["fusion_speedup_so"] = round(row["unfused_so"] / row["fused_so"], 2)
        row["fusion_speedup_ho"] = round(row["unfused_so"] / row["fused_ho"], 2)
        row["conventional_speedup_so"] = round(row["unfused_so"] / row["conventional_so"], 2)
        row["ho_over_so"] = round(row["fused_so"] / row["fused_ho"], 2)
        row["kernel_ratio"] = round(row["kernels_unfused"] / row["kernels_fused"], 1)
        rows.append(row)
        print(f"{name}: done in {row['sim_seconds']} s", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "fusion.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def table(rows: list[dict]) -> str:
    ghz = value("clock_ghz")
    lines = ["| workload | unfused SO (ms) | fused SO (ms) | fused HO (ms) | fusion x (SO) | "
             "fusion x (HO) | HO/SO | kernels unfused/fused | OI unfused -> fused | "
             "HBM GB/s fused | HBM MiB/socket unfused -> fused | seed |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = [r[k] / (ghz * 1e6) for k in ("unfused_so", "fused_so", "fused_ho")]
        lines.append(
            f"| {r['workload']} | {ms[0]:.2f} | {ms[1]:.2f} | {ms[2]:.2f} | "
            f"{r['fusion_speedup_so']} | {r['fusion_speedup_ho']} | {r['ho_over_so']} | "
            f"{r['kernels_unfused']}/{r['kernels_fused']} ({r['kernel_ratio']}x) | "
            f"{r['oi_unfused']} -> {r['oi_fused']} | {r['hbm_gbps_fused']} | "
            f"{r['hbm_mib_unfused']} -> {r['hbm_mib_fused']} | "
            f"{SEED[r['workload']]} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/out/sn40l_fusion", help="output directory")
    args = p.parse_args(argv)
    rows = run(Path(args.out))
    text = table(rows)
    (Path(args.out) / "fusion.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
