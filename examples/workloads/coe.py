"""Composition-of-Experts serving on an SN40L Node vs DGX A100 / H100 (the seed's §VI-B).

A CoE (Samba-CoE) is a router and `E` experts, all Llama2-7B, TP8 over a
node's 8 sockets / GPUs. A batch of `BS` prompts is served as the seed
describes: the router runs once on the batch (its weights and KV cache stay
in HBM), then each (prompt, expert) pair in turn — copy the expert into HBM
if it is not there, prefill its prompt, generate `tokens` tokens.

**SN40L Node** (`sn40l_costs`): all times come from simulations on the
`sn40l` preset —
- an expert token: the whole Llama2-7B expert as step-allocate-memory
  placed it (`sn40l_expert.token_run`: embedding, 32 fused decode layers
  each with its 2 TP8 all-reduces in the graph on the assumed P2P network,
  LM head), simulated kernel after kernel, hardware-orchestrated;
- the router and an expert's prompt: the fused prefill layer over `BS x P`
  (router) or `P` (expert) tokens x 32 layers + the LM head read at the
  HBM peak;
- the expert's footprint and placement: `step-allocate-memory` over one
  socket's share of the whole model (`sn40l_expert.expert_map`: embedding,
  32 decode layers with their KV caches at the context length, LM head);
- a switch: the simulated DDR -> HBM copy of that map's weight segments
  (`sn40l_expert.switch_seconds`; the 8 sockets copy in parallel), divided
  by the assumed DDR efficiency.
HBM (64 GiB per socket) is an LRU cache of experts (`LRUCache`): its slots
are what is left beside the router (the same model's map), divided by the
expert's HBM footprint; DDR (1.5 TiB per socket) holds as many experts as
their DDR blocks (HBM segments + spills, §V-B) fit.

**DGX A100 / H100** (`dgx_costs`): a documented roofline (`DGX` holds the
published figures: 8 x 80 GB HBM at 2.039 / 3.35 TB/s, 312 / 989 dense BF16
TFLOPS, 2 TB host memory, host-to-GPU 32 / 64 GB/s for the node as the seed
states): a kernel takes `max(bytes / (eff x BW), FLOPs / (eff x peak))`
with the assumed `dgx_eff` (0.6), for each kernel of the same decoder layer
graph the SN40L side simulates, cut at conventional fusion boundaries
(`step-kernelize{mode=conventional}`), its bytes and FLOPs from step-metrics
(`_conventional`: weights, KV cache, the activations each kernel reads and
writes, the attention's scores as the graph materializes them; nothing
assumed), plus `dgx_kernel_us` (2 us) of launch/tail per kernel and
`dgx_allreduce_us` (10 us) per NCCL all-reduce;
an expert occupies in the DGX's HBM what step-allocate-memory found for the
same model (`expert_map`: weights, KV caches at the context length and
activations, times the 8 TP shares; no assumed reserve), experts beyond HBM
live in host memory (their weights, copied at the host link rate), and
beyond HBM + host memory the DGX is out of memory.

`serve(costs, experts, batch, tokens, routing)` replays a seeded request
trace through the LRU cache and returns the mean per-batch latency split
into switch / router / expert time; `footprint(platform, experts)` the
nodes needed to keep every expert in HBM (SN40L: DDR) at TP8 latency.

Every assumption (launch, P2P, DDR efficiency, the DGX constants, prompt
and context) is an entry of `sn40l_ranges.ASSUMPTIONS`; `sn40l_costs(v)` and
`dgx_costs(d, v)` take the values to use (default: the defaults).

Example:

```python
costs = sn40l_costs()                  # ~20 s of simulation
serve(costs, experts=100, batch=8, tokens=20, routing="uniform").total_ms
```
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context

from steplus.examples.workloads.decoder import (
    LLAMA2_7B, P2P, collective_bytes, decoder_layer,
)
from steplus.dialects.target.sn40l import value
from steplus.examples.workloads.sn40l import simulate
from steplus.examples.workloads.sn40l_expert import (
    VOCAB, SweepCache, expert_map, switch_seconds, token_run,
)
from steplus.examples.workloads.sn40l_ranges import defaults, p2p_of
from steplus.passes.sn40l.kernelize import StepKernelizePass
from steplus.passes.sn40l.kernels import bound, kernel_groups
from steplus.passes.step.metrics import compute_metrics

EXPERT_BYTES = LLAMA2_7B.params(VOCAB) * 2
"""One Llama2-7B expert's weights in bf16 (13.5 GB): what a DGX copies from host memory."""


@dataclass(frozen=True)
class DGX:
    name: str
    tflops: float  # dense BF16 per GPU
    hbm_tbps: float  # per GPU
    hbm_gb: float  # per GPU
    host_gbps: float  # host-to-GPU for the node, as the seed states
    host_gb: float  # host memory
    nvlink_gbps: float  # per GPU
    gpus: int = 8
    # the achieved efficiency, the per-kernel and per-all-reduce costs are labeled
    # assumptions with ranges (sn40l_ranges: dgx_eff, dgx_kernel_us, dgx_allreduce_us)


DGX_A100 = DGX("dgx-a100", 312.0, 2.039, 80.0, 32.0, 2000.0, 600.0)
DGX_H100 = DGX("dgx-h100", 989.0, 3.35, 80.0, 64.0, 2000.0, 900.0)


@dataclass
class Costs:
    """Per-platform times in seconds and capacities in bytes."""

    name: str
    token_s: float  # one generated token of one expert (batch 1)
    prefill_s: float  # one expert's prompt
    router_s: dict[int, float]  # batch -> router time
    switch_s: float  # one expert into HBM from the backing tier
    hbm_slots: int  # experts HBM holds beside the router
    backing_experts: int  # experts the backing tier (DDR / host) holds
    node_hbm_bytes: float
    switch_gbps: float = 0.0
    expert_hbm_bytes: float = 0.0  # one expert's HBM footprint on the node (the allocator's)


class LRUCache:
    """HBM as an LRU cache of whole experts (the seed's CoE runtime, §V-B)."""

    def __init__(self, slots: int):
        if slots < 1:
            raise ValueError(f"the HBM cache holds {slots} experts: it must hold at least one "
                             f"expert of {EXPERT_BYTES / 1e9:.1f} GB")
        self.slots = slots
        self.lru: OrderedDict[int, None] = OrderedDict()
        self.misses = 0

    def touch(self, expert: int) -> bool:
        """Use `expert`; True if it had to be copied in (a miss)."""
        if expert in self.lru:
            self.lru.move_to_end(expert)
            return False
        self.misses += 1
        if len(self.lru) >= self.slots:
            self.lru.popitem(last=False)
        self.lru[expert] = None
        return True


def routing_trace(kind: str, experts: int, n: int, seed: int = 0) -> np.ndarray:
    """`n` expert choices: uniform, Zipf (s = 1.2, expert ranks shuffled) or the same."""
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.integers(0, experts, n)
    if kind == "zipf":
        w = 1.0 / np.arange(1, experts + 1) ** 1.2
        return rng.permutation(experts)[rng.choice(experts, n, p=w / w.sum())]
    if kind == "same":
        return np.zeros(n, dtype=np.int64)
    raise ValueError(f"unknown routing '{kind}' (choose from uniform, zipf, same)")


@dataclass
class Latency:
    switch_ms: float
    router_ms: float
    expert_ms: float
    oom: bool = False

    @property
    def total_ms(self) -> float:
        return self.switch_ms + self.router_ms + self.expert_ms


MAX_EXPERTS = 100_000
MAX_BATCHES = 10_000


def serve(costs: Costs, experts: int, batch: int, tokens: int, routing: str,
          batches: int = 100, warmup: int = 20, seed: int = 0) -> Latency:
    """Mean latency of a batch (see module doc); `oom` if the experts do not fit."""
    if not 1 <= experts <= MAX_EXPERTS or not 1 <= batches <= MAX_BATCHES or batch < 1:
        raise ValueError("experts, batch and batches must be positive (and bounded)")
    if experts > costs.hbm_slots + costs.backing_experts:
        return Latency(math.nan, math.nan, math.nan, oom=True)
    cache = LRUCache(costs.hbm_slots)
    trace = routing_trace(routing, experts, (warmup + batches) * batch, seed)
    sw = 0
    for i, e in enumerate(trace):
        missed = cache.touch(int(e))
        if i >= warmup * batch and missed:
            sw += 1
    per_pair = costs.prefill_s + tokens * costs.token_s
    return Latency(1e3 * sw * costs.switch_s / batches, 1e3 * costs.router_s[batch],
                   1e3 * batch * per_pair)


def footprint(costs: Costs, experts: int) -> int:
    """Nodes that keep `experts` (plus the router) resident: SN40L in DDR, DGX in HBM."""
    if costs.name == "sn40l":
        return max(1, math.ceil(experts / costs.backing_experts))
    return max(1, math.ceil((experts + 1) * costs.expert_hbm_bytes / costs.node_hbm_bytes))


# -- the platforms ------------------------------------------------------------------


@SweepCache
def _conventional(tokens: int, kv: int) -> tuple[tuple[int, int], ...]:
    """(off-chip bytes, FLOPs) of each kernel of the Llama2-7B layer (one TP8 share,
    `tokens` rows over a KV length `kv`, the graph the SN40L side simulates) cut at
    conventional fusion boundaries (`step-kernelize{mode=conventional}`), from
    step-metrics: what a GPU running those kernels reads/writes and computes."""
    m = decoder_layer(LLAMA2_7B, tokens, kv)
    StepKernelizePass(mode="conventional").apply(Context(), m)
    out = []
    for g in kernel_groups(m)[0]:
        gm = compute_metrics(g)
        out.append((int(bound(gm.offchip, g)), int(bound(gm.flops, g))))
    return tuple(out)


def dgx_costs(d: DGX, v: dict[str, float] | None = None) -> Costs:
    """The roofline DGX (see module doc) under the assumptions `v` (default: defaults)."""
    v = defaults() if v is None else v
    tp = d.gpus
    prompt, context = int(v["prompt"]), int(v["context"])
    bw, peak = v["dgx_eff"] * d.hbm_tbps * 1e12, v["dgx_eff"] * d.tflops * 1e12

    def layer(tokens: int, kv: int) -> float:
        # the same layer graph the SN40L side runs, cut into conventionally fused
        # kernels; each kernel a roofline over its own bytes and FLOPs (step-metrics)
        kernels = _conventional(tokens, kv)
        ar = 2 * (v["dgx_allreduce_us"] * 1e-6 + 2 * (tp - 1) / tp
                  * collective_bytes(LLAMA2_7B, tokens) / (d.nvlink_gbps * 1e9))
        return sum(max(b / bw, f / peak) for b, f in kernels) \
            + len(kernels) * v["dgx_kernel_us"] * 1e-6 + ar

    head = VOCAB * LLAMA2_7B.hidden * 2 / tp / bw
    token = LLAMA2_7B.layers * layer(1, context) + head
    prefill = LLAMA2_7B.layers * layer(prompt, prompt) + head
    router = {b: LLAMA2_7B.layers * layer(b * prompt, prompt) + head for b in (1, 8)}
    hbm = d.gpus * d.hbm_gb * 1e9
    # an expert's HBM footprint: step-allocate-memory's map of the same model (one TP
    # share x the GPUs), beside the router (the same model)
    per_expert = expert_map(context, LLAMA2_7B, tp).hbm_bytes * tp
    slots = int((hbm - per_expert) // per_expert)
    return Costs(d.name, token, prefill, router, EXPERT_BYTES / (d.host_gbps * 1e9), slots,
                 int(d.host_gb * 1e9 // EXPERT_BYTES), hbm, d.host_gbps, per_expert)


@SweepCache
def _fused(tokens: int, kv: int, p2p: P2P) -> tuple[int, int]:
    """(kernel cycles, kernels) of the fused Llama2-7B layer with its two all-reduces in
    the graph on `p2p`, simulated."""
    r = simulate(decoder_layer(LLAMA2_7B, tokens, kv, int(value("tp")), p2p=p2p), "fused")
    return r.kernel_cycles, r.kernels


def sn40l_costs(v: dict[str, float] | None = None) -> Costs:
    """The SN40L Node from simulations (see module doc) under the assumptions `v`."""
    v = defaults() if v is None else v
    tp, clock = int(value("tp")), value("clock_ghz") * 1e9
    prompt, context = int(v["prompt"]), int(v["context"])
    net = p2p_of(v)

    def layer_s(tokens: int, kv: int) -> float:
        cycles, kernels = _fused(tokens, kv, net)
        return cycles / clock + kernels * v["launch_ho_us"] * 1e-6

    cycles, kernels = token_run(context, net)  # the whole expert, as allocated
    token = cycles / clock + kernels * v["launch_ho_us"] * 1e-6
    head = VOCAB * LLAMA2_7B.hidden * 2 / tp / (value("hbm_gbps") * 1e9)
    pre = {t: LLAMA2_7B.layers * layer_s(t, prompt) + head for t in (prompt, 8 * prompt)}
    # footprint and placement from step-allocate-memory (sn40l_expert): HBM slots beside
    # the router (the same model), DDR holds every expert's segments; a switch is the
    # simulated DDR -> HBM copy of the map at the DDR efficiency assumed
    m = expert_map(context)
    switch = switch_seconds(context) / v["ddr_eff"]
    hbm_socket, ddr_socket = int(value("hbm_bytes")), int(value("ddr_bytes"))
    slots = (hbm_socket - m.hbm_bytes) // m.hbm_bytes
    return Costs("sn40l", token, pre[prompt], {1: pre[prompt], 8: pre[8 * prompt]}, switch,
                 slots, ddr_socket // m.resident_bytes, hbm_socket * tp,
                 m.copy_bytes * tp / switch / 1e9, m.hbm_bytes * tp)
