"""Composition-of-Experts serving on an SN40L Node vs DGX A100 / H100 (the seed's §VI-B).

A CoE (Samba-CoE) is a router and `E` experts, all Llama2-7B, TP8 over a
node's 8 sockets / GPUs. A batch of `BS` prompts is served as the seed
describes: the router runs once on the batch (its weights and KV cache stay
in HBM), then each (prompt, expert) pair in turn — copy the expert into HBM
if it is not there, prefill its prompt, generate `tokens` tokens.

**SN40L Node** (`sn40l_costs`): all times come from simulations on the
`sn40l` preset —
- an expert token: the fused Llama2-7B decode layer (step-allocate-units,
  hardware-orchestrated, one kernel per layer) x 32 layers + 2 TP8
  all-reduces per layer on the assumed P2P network + the LM head read at the
  bandwidth the layer achieved;
- the router and an expert's prompt: the fused prefill layer over `BS x P`
  (router) or `P` (expert) tokens x 32 layers;
- a switch: one socket's 1/8 of the expert (13.5 GB / 8) copied DDR -> HBM
  by load (DDR tier) -> store (HBM) streams, simulated on the DDR channels
  (`copy_seconds`; the 8 sockets copy in parallel).
HBM (8 x 64 GiB) is an LRU cache of experts (`LRUCache`) next to the
router's weights and the KV caches; DDR (8 x 1.5 TiB) holds all experts.

**DGX A100 / H100** (`dgx_costs`): a documented roofline (`DGX` holds the
published figures: 8 x 80 GB HBM at 2.039 / 3.35 TB/s, 312 / 989 dense BF16
TFLOPS, 2 TB host memory, host-to-GPU 32 / 64 GB/s for the node as the seed
states): a kernel takes `max(bytes / (eff x BW), FLOPs / (eff x peak))`
with `eff = 0.6`, plus 2 us of launch/tail per kernel of the same decoder
layer cut at conventional fusion boundaries (`step-kernelize{mode=
conventional}`: the count is computed) and 10 us per NCCL all-reduce;
experts beyond HBM live in host memory (copied at the host link rate), and
beyond HBM + host memory the DGX is out of memory.

`serve(costs, experts, batch, tokens, routing)` replays a seeded request
trace through the LRU cache and returns the mean per-batch latency split
into switch / router / expert time; `footprint(platform, experts)` the
nodes needed to keep every expert in HBM (SN40L: DDR) at TP8 latency.

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

from steplus.examples.workloads.decoder import (
    LLAMA2_7B, collective_bytes, decoder_layer, layer_weight_bytes,
)

VOCAB = 32000
PROMPT = 512
"""Assumed prompt length (tokens); the seed does not give it."""
CONTEXT = 1024
"""Assumed KV length an expert token attends to (prompt + generated)."""
EXPERT_BYTES = LLAMA2_7B.params(VOCAB) * 2
"""One Llama2-7B expert in bf16 (13.5 GB)."""
KV_RESERVE = 0.02
"""Fraction of HBM kept for KV caches and activations (assumed)."""


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
    eff: float = 0.6  # achieved fraction of peak FLOPs and bandwidth (stated)
    kernel_us: float = 2.0  # launch + tail per kernel
    allreduce_us: float = 10.0  # fixed cost of one NCCL all-reduce


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
    return max(1, math.ceil((experts + 1) * EXPERT_BYTES / (costs.node_hbm_bytes
                                                             * (1 - KV_RESERVE))))


# -- the platforms ------------------------------------------------------------------


def _layer_counts():
    from xdsl.context import Context

    from steplus.passes.sn40l.kernelize import StepKernelizePass
    from steplus.passes.sn40l.kernels import kernel_groups

    m = decoder_layer(LLAMA2_7B, 1, CONTEXT)
    StepKernelizePass(mode="conventional").apply(Context(), m)
    return len(kernel_groups(m)[0])


def dgx_costs(d: DGX) -> Costs:
    """The roofline DGX (see module doc)."""
    tp = d.gpus
    bw, peak = d.eff * d.hbm_tbps * 1e12, d.eff * d.tflops * 1e12
    kernels = _layer_counts()
    hd = LLAMA2_7B.head_dim
    heads = LLAMA2_7B.heads // tp

    def layer(tokens: int, kv: int) -> float:
        wbytes = layer_weight_bytes(LLAMA2_7B, tp)
        kvbytes = 2 * kv * hd * heads * 2
        flops = 2 * tokens * wbytes / 2 + 4 * tokens * kv * hd * heads
        act = 2 * tokens * LLAMA2_7B.hidden * 2 * 6  # activations in/out of the kernels
        ar = 2 * (d.allreduce_us * 1e-6 + 2 * (tp - 1) / tp
                  * collective_bytes(LLAMA2_7B, tokens) / (d.nvlink_gbps * 1e9))
        return max((wbytes + kvbytes + act) / bw, flops / peak) + kernels * d.kernel_us * 1e-6 \
            + ar

    head = VOCAB * LLAMA2_7B.hidden * 2 / tp / bw
    token = LLAMA2_7B.layers * layer(1, CONTEXT) + head
    prefill = LLAMA2_7B.layers * layer(PROMPT, PROMPT) + head
    router = {b: LLAMA2_7B.layers * layer(b * PROMPT, PROMPT) + head for b in (1, 8)}
    hbm = d.gpus * d.hbm_gb * 1e9
    slots = int((hbm * (1 - KV_RESERVE) - EXPERT_BYTES) // EXPERT_BYTES)
    return Costs(d.name, token, prefill, router, EXPERT_BYTES / (d.host_gbps * 1e9), slots,
                 int(d.host_gb * 1e9 // EXPERT_BYTES), hbm, d.host_gbps)


def sn40l_costs() -> Costs:
    """The SN40L Node from simulations (see module doc)."""
    from steplus.examples.workloads.sn40l import simulate
    from steplus.dialects.target.sn40l import us_to_cycles, value
    from steplus.dialects.target.fabric import SN40L

    tp, clock = int(value("tp")), value("clock_ghz") * 1e9

    def allreduce(tokens: int) -> float:
        us = value("p2p_latency_us") + 2 * (tp - 1) / tp * collective_bytes(LLAMA2_7B, tokens) \
            / (value("p2p_gbps") * 1e9) * 1e6
        return 2 * us_to_cycles(us) / clock

    dec = simulate(decoder_layer(LLAMA2_7B, 1, CONTEXT, tp), "fused")
    head = VOCAB * LLAMA2_7B.hidden * 2 / tp / (dec.offchip / dec.kernel_cycles * clock)
    token = LLAMA2_7B.layers * (dec.cycles("ho") / clock + allreduce(1)) + head
    pre = {}
    for tokens in (PROMPT, 8 * PROMPT):
        r = simulate(decoder_layer(LLAMA2_7B, tokens, PROMPT, tp), "fused")
        pre[tokens] = LLAMA2_7B.layers * (r.cycles("ho") / clock + allreduce(tokens)) + head
    switch = copy_seconds(EXPERT_BYTES // tp)
    hbm = SN40L.hbm.capacity_bytes * tp
    slots = int((hbm * (1 - KV_RESERVE) - EXPERT_BYTES) // EXPERT_BYTES)
    ddr = SN40L.ddr.capacity_bytes * tp
    return Costs("sn40l", token, pre[PROMPT], {1: pre[PROMPT], 8: pre[8 * PROMPT]}, switch,
                 slots, int(ddr // EXPERT_BYTES), hbm, EXPERT_BYTES / switch / 1e9)


def copy_seconds(nbytes: int, tile: tuple[int, int] = (512, 1024)) -> float:
    """One socket copying `nbytes` DDR -> HBM: load (`sn40l.tier = "ddr"`, the
    CoE runtime keeps inactive experts in DDR) -> store (HBM) graphs, one per
    DDR channel, simulated."""
    from xdsl.dialects.builtin import StringAttr, bf16

    from steplus.dialects.step.builder import Graph
    from steplus.dialects.target.sn40l import value
    from steplus.passes.sn40l.kernels import kernel_groups
    from steplus.dialects.target.fabric import SN40L
    from steplus.runtime.fabric.ddr import TIER_ATTR
    from steplus.runtime.fabric.kernel_run import run_kernels

    tile_bytes = tile[0] * tile[1] * 2
    n = max(1, -(-nbytes // tile_bytes))
    streams = 4  # parallel copy streams, one per DDR channel
    g = Graph("expert_copy")
    for s in range(streams):
        k = n // streams + (1 if s < n % streams else 0)
        g.load(tile, bf16, [k], base_addr=s << 40, name=f"ddr{s}").store(
            base_addr=(s << 40) + (1 << 39))
    m = g.module()
    for op in m.walk():  # the expert lives in DDR (§V-B): loads read DDR, stores write HBM
        if op.name == "step.linear_offchip_load":
            op.attributes[TIER_ATTR] = StringAttr("ddr")
    res = run_kernels(kernel_groups(m)[0], SN40L, limits=False)
    return res.kernel_cycles / (value("clock_ghz") * 1e9)
