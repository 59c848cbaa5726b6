"""SN40L fusion experiment (issue 15 item 4, the seed's Fig. 10/11 and Table I).

    python bench/exp_fusion.py [--out bench/out/sn40l_fusion]

For each workload — the Llama2-7B decoder layer (prefill 4K, decode with a
4K KV cache), the Mistral-7B decoder layer (decode, 4K) and a
FlashFFTConv FFT convolution (eight 1M-point signals, the order-4 Monarch
decomposition 32^4 of examples/workloads/fftconv.py) — one
socket's graph (TP8 shard for the models) is simulated on the `sn40l`
preset three ways (examples/workloads/sn40l.py): unfused (one kernel per
operator), conventional fusion (GEMM + elementwise epilogue) and fused
(step-allocate-units' sections). One decoder layer is simulated and
multiplied by the 32 layers; its two TP8 all-reduces are `step.all_reduce`
ops of the graph on the assumed P2P network (one link per socket of
`p2p_gbps`, `p2p_latency_us` per collective), streamed and overlapped with
the layer by the simulator (in the unfused and conventional baselines each
all-reduce is a kernel of its own). Launch costs: unfused and
conventional are software-orchestrated (the seed's baseline), fused is
reported both SO and HO.

Every headline (fusion SO, fusion HO, HO/SO) is printed with its value at
the default assumptions and its range over the labeled assumptions
(`examples/workloads/sn40l_ranges.py`: software / hardware launch cost, P2P
bandwidth and latency), next to the seed's, with the assumption that alone
moves it most and a table of one-at-a-time ranges. The simulated kernel
cycles do not depend on these assumptions; they enter in closed form.

Also prints the seed's Table I beside the operational intensity per kernel
that step-metrics computes for the 1M-point FFT convolution at the three
fusion levels, per Monarch order (examples/workloads/sn40l_fft.py; the FFT's
speedup with its HBM-efficiency range: bench/exp_fft.py).

The decode headlines come first from the Llama2-7B / Mistral-7B decoder
layers written in PyTorch (examples/workloads/sn40l_llama.py) through the
project's route: `lower_exported` (torch's functional all-reduces to
`step.all_reduce` on the P2P network of the assumptions), chained into one
step graph per layer (examples/workloads/sn40l_route.py, attention included),
fused = step-allocate-units' sections of that graph, unfused = the phases
chained through memory and step-kernelize'd; one B = 4 decode step x 32
layers, value + range over the same assumptions, the builder's value as a
cross-check column; and a Llama2-7B prefill of 512 tokens through the route,
its range over the launch costs only (one simulation takes a minute).

The route's decode rows also place the 32 fused layers as one model
(`step-allocate-memory{layers=32}`: a copy of each layer's weights and KV
caches) and simulate each layer from the tier its copy is in
(`sn40l_route.simulate_layers`); `--hbm 2GiB` shrinks HBM so that the map
spills to DDR.

Writes `fusion.csv` (cycles, kernels, operational intensity, HBM bandwidth
used, speedups and their ranges), `fusion_route.csv` and `fusion.md`.
`--route-only` runs only the route's rows (~6 min: each decode layer on 9
P2P networks lowered and simulated fused and unfused, the prefill at the
default network, ~2 min); the whole run takes ~10 minutes.
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
from steplus.examples.workloads.fftconv import monarch_fftconv
from steplus.examples.workloads.sn40l import Run, simulate
from steplus.examples.workloads.sn40l_llama import LLAMA2_7B as TORCH_LLAMA
from steplus.examples.workloads.sn40l_llama import MISTRAL_7B as TORCH_MISTRAL
from steplus.examples.workloads.sn40l_llama import route_layer
from steplus.examples.workloads.sn40l_route import simulate_layers
from steplus.utils.sizes import parse_size
from steplus.lowering.linalg_to_step.collective import P2PNet
from steplus.examples.workloads.sn40l_fft import table_i
from steplus.examples.workloads.sn40l_ranges import (
    FUSION_ASSUMPTIONS, Range, allreduce_s, assumptions_table, defaults, model_seconds, p2p_of,
    sweep_all,
)
from steplus.dialects.target.fabric import SN40L as PRESET
from steplus.dialects.target.sn40l import value
from steplus.tools.sweep import SweepError, add_jobs_argument, run_sweep

SEED = {  # the seed's Fig. 10 / §VI-A statements, for the table
    "llama2-7b prefill 4K": "fusion 1.5-3x (prefill), HO <= 1.1x; kernels 11x fewer",
    "llama2-7b decode 4K": "fusion 1-13x (decode), HO 1.4-8x",
    "mistral-7b decode 4K": "fusion up to 13x (Mistral highest), HO 1.4-8x",
    "fftconv 8x1M": "fusion 13x, 1 kernel, HO = SO; Table I OI 39.5 -> 410.4",
}


def workloads():
    tp = int(value("tp"))
    yield ("llama2-7b prefill 4K", lambda p: decoder_layer(LLAMA2_7B, 4096, 4096, tp, p2p=p),
           LLAMA2_7B.layers, True)
    yield ("llama2-7b decode 4K", lambda p: decoder_layer(LLAMA2_7B, 1, 4096, tp, p2p=p),
           LLAMA2_7B.layers, True)
    yield ("mistral-7b decode 4K", lambda p: decoder_layer(MISTRAL_7B, 1, 4096, tp, p2p=p),
           MISTRAL_7B.layers, True)
    yield ("fftconv 8x1M", lambda p: monarch_fftconv((32, 32, 32, 32), 8)[0], 1, False)


_PROBE = Run("probe", 1, 1, 0, 0, 0, 0, PRESET)
"""What a dry run of the headlines reads (any positive cycles and kernels)."""


def needed(names, has_p2p: bool, modes: tuple[str, ...]) -> list[tuple]:
    """The `(mode, P2P GB/s, P2P latency us)` simulations `headlines` reads over the
    assumptions `names`, the defaults' first (a dry run; `(mode, d, d)` without P2P)."""
    d, keys = defaults(), {}

    def probe(mode: str, v: dict[str, float]) -> Run:
        keys[_sim_key(mode, v, has_p2p)] = None
        return _PROBE

    for m in modes:
        probe(m, d)
    headlines(probe, 1, names)
    return list(keys)


def _sim_key(mode: str, v: dict[str, float], has_p2p: bool) -> tuple:
    d = defaults()
    w = v if has_p2p else d
    return (mode, w["p2p_gbps"], w["p2p_latency_us"])


def simulations(results: dict, kind: str, name: str, has_p2p: bool):
    """`sim(mode, v)`: the workload's graph with its collectives on the P2P network of
    `v`, as simulated by the sweep (`results`, by `_key`)."""

    def sim(mode: str, v: dict[str, float]) -> Run:
        return results[(kind, name, *_sim_key(mode, v, has_p2p), False)]["run"]

    return sim


def headlines(sim, layers: int, names=FUSION_ASSUMPTIONS) -> dict[str, Range]:
    """Fusion SO, fusion HO and HO/SO of one workload: value at the default assumptions
    and range over the labeled ones. The launch costs enter in closed form
    (sn40l_ranges.model_seconds), the P2P network through the simulated graph."""
    ghz = value("clock_ghz")

    def t(mode: str, launch: str, v: dict[str, float]) -> float:
        r = sim(mode, v)
        return model_seconds(r.kernel_cycles, r.kernels, v[launch], layers, 0.0, ghz)

    return sweep_all(lambda v: {
        "fusion_so": t("unfused", "launch_so_us", v) / t("fused", "launch_so_us", v),
        "fusion_ho": t("unfused", "launch_so_us", v) / t("fused", "launch_ho_us", v),
        "ho_over_so": t("fused", "launch_so_us", v) / t("fused", "launch_ho_us", v),
    }, names)


def run(out: Path, results: dict) -> tuple[list[dict], dict[str, dict[str, Range]]]:
    rows, ranges = [], {}
    ghz = value("clock_ghz")
    d = defaults()
    for name, _build, layers, has_p2p in workloads():
        sim = simulations(results, "builder", name, has_p2p)
        u, c, f = (sim(mode, d) for mode in ("unfused", "conventional", "fused"))
        h = ranges[name] = headlines(sim, layers)
        # the layer without TP
        bare = results[("builder", name, *_sim_key("fused", d, False), True)]["run"] \
            if has_p2p else f
        serial = 2 * allreduce_s(collective_bytes(LLAMA2_7B, 4096 if "prefill" in name else 1),
                                 int(value("tp")), d) if has_p2p else 0.0

        def ms(r: Run, launch: str) -> float:
            return 1e3 * model_seconds(r.kernel_cycles, r.kernels, d[launch], layers, 0.0, ghz)

        row = {
            "workload": name, "layers": layers,
            "unfused_so_ms": ms(u, "launch_so_us"), "conventional_so_ms": ms(c, "launch_so_us"),
            "fused_so_ms": ms(f, "launch_so_us"), "fused_ho_ms": ms(f, "launch_ho_us"),
            "kernel_cycles_unfused": u.kernel_cycles, "kernel_cycles_fused": f.kernel_cycles,
            "kernels_unfused": layers * u.kernels, "kernels_conventional": layers * c.kernels,
            "kernels_fused": layers * f.kernels,
            "oi_unfused": round(u.intensity, 1), "oi_conventional": round(c.intensity, 1),
            "oi_fused": round(f.intensity, 1),
            "hbm_gbps_unfused": round(u.hbm_gbps()), "hbm_gbps_fused": round(f.hbm_gbps()),
            "hbm_mib_unfused": round(u.hbm_bytes / 2**20, 1),
            "hbm_mib_fused": round(f.hbm_bytes / 2**20, 1),
            # the all-reduces in the fused graph: what they add to the layer (overlapped)
            # against what two serial ring all-reduces would cost (the closed form)
            "allreduce_exposed_us_per_layer": round((f.kernel_cycles - bare.kernel_cycles)
                                                    / (ghz * 1e3), 1),
            "allreduce_serial_us_per_layer": round(serial * 1e6, 1),
            "sim_seconds": 0.0,
        }
        for k, r in h.items():
            row[k], row[k + "_low"], row[k + "_high"] = (round(r.value, 2), round(r.low, 2),
                                                         round(r.high, 2))
            row[k + "_dominant"] = r.dominant()
        row["sim_seconds"] = _seconds(results, "builder", name)
        row["conventional_speedup_so"] = round(row["unfused_so_ms"] / row["conventional_so_ms"],
                                               2)
        row["kernel_ratio"] = round(row["kernels_unfused"] / row["kernels_fused"], 1)
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "fusion.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows, ranges


def table(rows: list[dict], ranges: dict[str, dict[str, Range]]) -> str:
    lines = ["Headlines: value at the default assumptions [range over the labeled assumptions]; "
             "the assumption that alone moves it most.",
             "",
             "| workload | unfused SO (ms) | fused SO (ms) | fused HO (ms) | fusion x (SO) | "
             "fusion x (HO) | HO/SO | kernels unfused/fused | OI unfused -> fused | "
             "HBM GB/s fused | HBM MiB/socket unfused -> fused | all-reduces per layer: "
             "exposed in the fused graph / serial (us) | seed |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h = ranges[r["workload"]]
        lines.append(
            f"| {r['workload']} | {r['unfused_so_ms']:.2f} | {r['fused_so_ms']:.2f} | "
            f"{r['fused_ho_ms']:.2f} | {h['fusion_so'].text()} ({h['fusion_so'].dominant()}) | "
            f"{h['fusion_ho'].text()} ({h['fusion_ho'].dominant()}) | "
            f"{h['ho_over_so'].text('{:.2f}')} | "
            f"{r['kernels_unfused']}/{r['kernels_fused']} ({r['kernel_ratio']}x) | "
            f"{r['oi_unfused']} -> {r['oi_fused']} | {r['hbm_gbps_fused']} | "
            f"{r['hbm_mib_unfused']} -> {r['hbm_mib_fused']} | "
            f"{r['allreduce_exposed_us_per_layer']} / {r['allreduce_serial_us_per_layer']} | "
            f"{SEED[r['workload']]} |")
    lines += ["", "One assumption at a time (fusion SO / fusion HO at its low and high end):", "",
              "| workload | " + " | ".join(FUSION_ASSUMPTIONS) + " |",
              "|---|" + "---|" * len(FUSION_ASSUMPTIONS)]
    for r in rows:
        h = ranges[r["workload"]]
        cells = [f"SO {h['fusion_so'].each[n][0]:.1f}-{h['fusion_so'].each[n][1]:.1f}, "
                 f"HO {h['fusion_ho'].each[n][0]:.1f}-{h['fusion_ho'].each[n][1]:.1f}"
                 for n in FUSION_ASSUMPTIONS]
        lines.append(f"| {r['workload']} | " + " | ".join(cells) + " |")
    lines += ["", "Assumptions (the seed states none of these):", "",
              assumptions_table(FUSION_ASSUMPTIONS)]
    return "\n".join(lines)


ROUTE_PROMPT = 512
"""The route's prefill: one sequence of `prompt`'s default (512 tokens; the builder's row
is 4K). One simulation takes ~1 min, so only the launch costs are swept for it."""


ROUTE_SEED = {
    "llama2-7b decode B=4 4K": "fusion 1-13x (decode), HO 1.4-8x; one kernel per layer",
    "mistral-7b decode B=4 4K": "fusion up to 13x (Mistral highest), HO 1.4-8x",
    f"llama2-7b prefill {ROUTE_PROMPT}": "fusion 1.5-3x (prefill), HO <= 1.1x "
                                         "(range: launch costs only)",
}


def route_workloads():
    """The decoder layers written in PyTorch (examples/workloads/sn40l_llama.py) through the
    project's route, one step graph per layer (sn40l_route.layer_graph): one decode step of
    B = 4 requests with a 4K cache, TP8 shard, both all-reduces in the graph; and a
    Llama2-7B prefill of 512 tokens (its P2P network at the default only)."""
    yield ("llama2-7b decode B=4 4K", TORCH_LLAMA, "llama2-7b decode 4K", 0,
           FUSION_ASSUMPTIONS)
    yield ("mistral-7b decode B=4 4K", TORCH_MISTRAL, "mistral-7b decode 4K", 0,
           FUSION_ASSUMPTIONS)
    yield (f"llama2-7b prefill {ROUTE_PROMPT}", TORCH_LLAMA, "llama2-7b prefill 4K",
           ROUTE_PROMPT, ("launch_so_us", "launch_ho_us"))


def route_graph(cfg, prompt: int, v: dict[str, float], on_chip: bool):
    """The route's layer graph on the P2P network of `v`: fused = on-chip boundaries
    (then step-allocate-units' sections), unfused = every boundary in memory (then
    step-kernelize{mode=unfused})."""
    tp, net = int(value("tp")), p2p_of(v)
    return route_layer(cfg, tp=tp, p2p=P2PNet(tp, net.links, net.link_gbps, net.latency_ns),
                       on_chip=on_chip, prompt=prompt, batch=1 if prompt else 4)


def _key(c: dict) -> tuple:
    return (c["kind"], c["workload"], c["mode"], c["gbps"], c["lat"], c.get("bare", False))


def _task(c: dict) -> dict:
    """One simulation of the sweep (a worker process runs it; `run_sweep` keeps the
    order): a builder graph (`bare`: without its collectives), a route layer graph, or
    (`layers`) the route's 32 fused layers placed by step-allocate-memory."""
    t0 = time.perf_counter()
    v = {**defaults(), "p2p_gbps": c["gbps"], "p2p_latency_us": c["lat"]}
    out: dict = {}
    if c["kind"] == "builder":
        build, has_p2p = next((b, h) for n, b, _l, h in workloads() if n == c["workload"])
        out["run"] = simulate(build(p2p_of(v) if has_p2p and not c.get("bare") else None),
                              c["mode"])
    else:
        cfg, prompt = next((cf, pr) for n, cf, _t, pr, _n in route_workloads()
                           if n == c["workload"])
        lg = route_graph(cfg, prompt, v, c["mode"] != "unfused")
        if c["kind"] == "layers":
            out["layers"] = simulate_layers(lg.module, "fused", 32, hbm=c["hbm"])
        else:
            out["run"] = simulate(lg.module, c["mode"])
            out["onchip"], out["memory"] = lg.onchip, lg.memory
    out["seconds"] = time.perf_counter() - t0
    return out


def plan(route_only: bool, hbm: int | None) -> list[dict]:
    """Every independent simulation of the experiment (`_task`'s configurations)."""
    d, configs = defaults(), []

    def add(kind: str, name: str, key: tuple, **extra) -> None:
        mode, g, lat = key
        configs.append({"kind": kind, "workload": name, "mode": mode, "gbps": g, "lat": lat,
                        **extra})

    if not route_only:
        for name, _b, _l, has_p2p in workloads():
            for key in needed(FUSION_ASSUMPTIONS, has_p2p, ("unfused", "conventional",
                                                             "fused")):
                add("builder", name, key)
            if has_p2p:
                add("builder", name, _sim_key("fused", d, False), bare=True)
    for name, _cfg, _t, prompt, names in route_workloads():
        for key in needed(names, True, ("unfused", "fused")):
            add("route", name, key)
        if not prompt:
            add("layers", name, _sim_key("fused", d, True), hbm=hbm)
    return configs


def _seconds(results: dict, kind: str, name: str) -> float:
    """CPU seconds of a workload's simulations (summed over the sweep's tasks)."""
    return round(sum(r["seconds"] for k, r in results.items()
                     if k[1] == name and (k[0] == kind or kind == "route" and k[0] == "layers")),
                 1)


def from_route(builder: dict[str, dict[str, Range]],
               results: dict) -> tuple[str, list[dict]]:
    """The fusion headlines from the PyTorch route's layer graphs, with the builder's
    value for the same model (batch 1) as a cross-check. A decode row's fused 32 layers
    are also placed as one model by step-allocate-memory{layers=32} (HBM capacity `hbm`,
    default the target's) and each layer simulated from the tier its copy is in
    (`sn40l_route.simulate_layers`)."""
    d, ghz = defaults(), value("clock_ghz")
    rows = []
    lines = ["Headlines from the PyTorch route (sn40l_llama.py -> lower_exported -> one step "
             "graph per layer, sn40l_route.py; decode: B = 4, 4K cache; prefill: one "
             f"sequence of {ROUTE_PROMPT} tokens; TP8 shard, x 32 layers): value at the default assumptions [range over the labeled ones] "
             "(the assumption that alone moves it most).", "",
             "| workload | unfused SO (ms) | fused SO (ms) | fused HO (ms) | fusion x (SO) | "
             "fusion x (HO) | HO/SO | kernels per layer unfused/fused | boundaries on chip / "
             "in memory | HBM MiB/socket unfused -> fused | 32 layers from the allocator's map: "
             "fused SO / HO ms, HBM / DDR MiB | builder (B=1) fusion SO | seed |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, _cfg, twin, prompt, names in route_workloads():
        sim = simulations(results, "route", name, True)
        layers = 32
        u, f = sim("unfused", d), sim("fused", d)
        h = headlines(sim, layers, names)
        fused = results[("route", name, *_sim_key("fused", d, True), False)]

        def ms(r: Run, launch: str) -> float:
            return 1e3 * model_seconds(r.kernel_cycles, r.kernels, d[launch], layers, 0.0, ghz)

        row = {"workload": name + " (route)", "unfused_so_ms": round(ms(u, "launch_so_us"), 3),
               "fused_so_ms": round(ms(f, "launch_so_us"), 3),
               "fused_ho_ms": round(ms(f, "launch_ho_us"), 3),
               "kernels_unfused": u.kernels, "kernels_fused": f.kernels,
               "kernel_cycles_unfused": u.kernel_cycles, "kernel_cycles_fused": f.kernel_cycles,
               "onchip": fused["onchip"], "memory": fused["memory"],
               "hbm_mib_unfused": round(u.hbm_bytes / 2**20, 1),
               "hbm_mib_fused": round(f.hbm_bytes / 2**20, 1)}
        for k, r in h.items():
            row[k], row[k + "_low"], row[k + "_high"] = (round(r.value, 2), round(r.low, 2),
                                                         round(r.high, 2))
            row[k + "_dominant"] = r.dominant()
        mapped = "-"
        if not prompt:  # the decode model: 32 layers placed together, each from its tier
            m = results[("layers", name, *_sim_key("fused", d, True), False)]["layers"]
            row.update({"fused_so_ms_map": round(1e3 * m.seconds(d["launch_so_us"], ghz), 3),
                        "fused_ho_ms_map": round(1e3 * m.seconds(d["launch_ho_us"], ghz), 3),
                        "hbm_mib_map": round(m.hbm_bytes / 2**20, 1),
                        "ddr_mib_map": round(m.ddr_bytes / 2**20, 1),
                        "layers_with_ddr": sum(1 for b in m.layer_ddr_bytes if b)})
            mapped = (f"{row['fused_so_ms_map']:.2f} / {row['fused_ho_ms_map']:.2f}, "
                      f"{row['hbm_mib_map']} / {row['ddr_mib_map']}")
        row["sim_seconds"] = _seconds(results, "route", name)
        rows.append(row)
        b = builder.get(twin, {}).get("fusion_so")
        lines.append(
            f"| {name} | {row['unfused_so_ms']:.2f} | {row['fused_so_ms']:.2f} | "
            f"{row['fused_ho_ms']:.2f} | {h['fusion_so'].text()} ({h['fusion_so'].dominant()}) "
            f"| {h['fusion_ho'].text()} ({h['fusion_ho'].dominant()}) | "
            f"{h['ho_over_so'].text('{:.2f}')} | {u.kernels}/{f.kernels} | "
            f"{row['onchip']} / {row['memory']} | {row['hbm_mib_unfused']} -> {row['hbm_mib_fused']} | "
            f"{mapped} | {b.text() if b else '-'} | {ROUTE_SEED[name]} |")
    lines += ["", "The decode layer's one memory boundary (its cut into 2 sections; "
              "step-allocate-units' remark names every cut, section_cuts): the attention's "
              "output, written by per-region random stores and read whole by the output "
              "projection; none is a full chip. q, k, v and the roped q are re-laid out on "
              "chip (join_tiles, split_rows, split_tiles / regroup), RoPE's rotate_half is an "
              "on-chip tile map, and a tensor read several times (the residual; Mistral's "
              "normalized input) fans out on chip (one row deep, two when it has several "
              "rows: double-buffered). Launch costs enter in closed form; the P2P network is "
              "re-simulated."]
    return "\n".join(lines), rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "exp_fusion").splitlines()[0])
    p.add_argument("--out", default="bench/out/sn40l_fusion", help="output directory")
    p.add_argument("--route-only", action="store_true",
                   help="only the headlines from the PyTorch route (no builder, no FFT)")
    p.add_argument("--hbm", default="",
                   help="HBM capacity for the route's 32-layer memory map (e.g. 2GiB; "
                        "default the target's 64GiB)")
    add_jobs_argument(p)
    args = p.parse_args(argv)
    try:
        hbm = parse_size(args.hbm, "--hbm") if args.hbm else None
    except ValueError as e:
        p.error(str(e))
    out = Path(args.out)
    # every simulation is independent: a local process pool (--jobs, default one per
    # core; 1: serial, in this process), a progress bar on stderr (a terminal only); the
    # results are keyed by configuration, so the rows are those of a serial run
    configs = plan(args.route_only, hbm)
    try:
        done = run_sweep(_task, configs, workers=args.jobs, desc="exp_fusion")
    except SweepError as e:
        print(f"exp_fusion.py: error: {e}", file=sys.stderr)
        return 1
    results = {_key(c): r for c, r in zip(configs, done)}
    rows, ranges = ([], {}) if args.route_only else run(out, results)
    route_text, route_rows = from_route(ranges, results)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "fusion_route.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in route_rows
                                                             for k in r)))
        w.writeheader()
        w.writerows(route_rows)
    text = route_text if args.route_only else \
        route_text + "\n\n" + table(rows, ranges) + "\n\n" + table_i()[0]
    (Path(args.out) / "fusion.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
