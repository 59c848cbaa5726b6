"""A CoE expert as the memory allocator places it: footprint, address map, switch copy.

The seed's CoE runtime (§V-B) asks each compiled model how much HBM and DDR
it needs, keeps every model in DDR and "activates" one by copying the
segments the compiler intended for HBM. Here the model is one socket's TP8
share of a whole Llama2-7B (`expert_module`): a kernel sequence of the
token embedding (a row of the `vocab / tp` x hidden table), the 32 decode
layers (`decoder.decoder_layer` at the KV length `context`, each layer
loading the hidden state the previous one stored) and the LM head (`hidden
x vocab / tp`). `step-allocate-memory` (one socket's 64 GiB / 1.5 TiB)
places its symbols by lifetime (`expert_map`):

- the expert's HBM footprint is the allocator's HBM peak (weights, the KV
  caches, the chained activations sharing addresses by lifetime), its DDR
  footprint the HBM segments plus its spills (the runtime stores the HBM
  segments in DDR too, §V-B);
- a generated token is that kernel sequence simulated kernel after kernel
  (`token_run`), the layers with their all-reduces in the graph;
- a switch copies the read-only HBM segments that hold weights (the
  allocator's `sn40l.readonly` symbols other than the KV cache and the
  layer input, which are per-request state) from DDR to the HBM offsets of
  the map (`switch_seconds`): one load (DDR tier) -> store (HBM) per
  contiguous run of the map, spread over the DDR channels, simulated.

Example:

```python
from steplus.examples.workloads.sn40l_expert import expert_map
m = expert_map(context=1024)
m.hbm_bytes, m.copy_bytes        # one socket's share
```
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, bf16, i64

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.step.builder import Graph
from steplus.examples.workloads.decoder import LLAMA2_7B, P2P, DecoderModel, decoder_layer
from steplus.dialects.target.fabric import SN40L
from steplus.dialects.target.sn40l import value
from steplus.passes.sn40l.allocate_memory import Symbol, annotate, plan, symbols
from steplus.passes.sn40l.allocate_units import StepAllocateUnitsPass
from steplus.dialects.sn40l_attrs import KERNEL, KERNELS, SOURCE, TIER
from steplus.passes.sn40l.kernels import kernel_groups
from steplus.runtime.fabric.kernel_run import run_kernels

R = TypeVar("R")


class SweepCache(Generic[R]):
    """`functools.cache` of a simulation whose entries a parallel sweep can set: the
    bench computes the distinct calls in worker processes (`steplus.tools.sweep`) and
    `prime`s this process's cache with their results, so what runs afterwards reads
    them as if it had simulated them itself. Keys are the arguments bound to the
    signature with its defaults (`f(1024)` and `f(1024, LLAMA2_7B, 8)` are one entry).

    Example: `token_run.prime((cycles, kernels), 1024, P2P(1, 200, 1000))`."""

    def __init__(self, fn: Callable[..., R]):
        self.fn, self.memo = fn, {}
        self.signature = inspect.signature(fn)
        functools.update_wrapper(self, fn)

    def key(self, *args: Any, **kwargs: Any) -> tuple:
        b = self.signature.bind(*args, **kwargs)
        b.apply_defaults()
        return tuple(b.arguments.values())

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        k = self.key(*args, **kwargs)
        if k not in self.memo:
            self.memo[k] = self.fn(*args, **kwargs)
        return self.memo[k]

    def prime(self, result: R, *args: Any, **kwargs: Any) -> None:
        """Set the entry of these arguments (a worker's result for them)."""
        self.memo[self.key(*args, **kwargs)] = result

    def cache_clear(self) -> None:
        self.memo.clear()


VOCAB = 32000
STATE = ("x", "k_cache", "v_cache")
"""Loads that read per-request state, not weights: not copied on a switch."""
LAYER_SPAN = 1 << 36
"""Address space of one layer's symbols before allocation (a layer uses < 1 GiB)."""


def _memory_ops(g: GraphOp):
    return [op for op in g.body.block.ops
            if isinstance(op, (so.LinearOffChipLoadOp, so.LinearOffChipStoreOp))]


def _shift(g: GraphOp, by: int) -> None:
    for op in _memory_ops(g):
        op.properties["base_addr"] = IntegerAttr(op.base_addr.value.data + by, i64)


def _single(module: ModuleOp) -> GraphOp:
    g = next(o for o in module.walk() if isinstance(o, GraphOp))
    g.detach()
    return g


def _embedding(model: DecoderModel, tp: int, out_addr: int) -> GraphOp:
    g = Graph("expert_embed")
    rows = VOCAB // tp
    g.load((1, model.hidden), bf16, [1], in_shape=[rows], stride=[1],
           base_addr=1 << 33, name="embed").store(base_addr=out_addr)
    return _single(g.module())


def _head(model: DecoderModel, tp: int, in_addr: int) -> GraphOp:
    g = Graph("expert_head")
    cols = VOCAB // tp
    n = next(k for k in range(1, cols + 1) if cols % k == 0 and cols // k <= 512)
    x = g.load((1, model.hidden), bf16, [1], base_addr=in_addr, name="x")
    w = g.load((model.hidden, cols // n), bf16, [1, n], in_shape=[1, n], stride=[0, 1],
               base_addr=(1 << 33) + (1 << 32), name="head_w")
    x.repeat(n, name="head_rep").map("matmul", w, dtype=bf16, name="logits").store(
        base_addr=(1 << 33) + (1 << 34))
    return _single(g.module())


def expert_module(context: int, model: DecoderModel = LLAMA2_7B, tp: int = 8,
                  p2p: P2P | None = None) -> ModuleOp:
    """One socket's share of a whole decode step of `model` as a kernel sequence
    (module doc), not yet allocated; with `p2p` each layer's all-reduces are in it."""
    layers = []
    for i in range(model.layers):
        g = _single(decoder_layer(model, 1, context, tp, name=f"expert_l{i}", p2p=p2p))
        _shift(g, (i + 1) * LAYER_SPAN)
        layers.append(g)
    for prev, nxt in zip(layers, layers[1:]):  # layer i+1 reads what layer i stored
        out = _memory_ops(prev)[-1]
        x = _memory_ops(nxt)[0]
        x.properties["base_addr"] = IntegerAttr(out.base_addr.value.data, i64)
    first_x = _memory_ops(layers[0])[0].base_addr.value.data
    last_out = _memory_ops(layers[-1])[-1].base_addr.value.data
    kernels = [_embedding(model, tp, first_x), *layers, _head(model, tp, last_out)]
    for k, g in enumerate(kernels):
        KERNEL.set(g, k)
        KERNELS.set(g, len(kernels))
        SOURCE.set(g, "expert")
    return ModuleOp(kernels)


@dataclass(frozen=True)
class ExpertMap:
    """One socket's share of an expert as step-allocate-memory placed it."""

    hbm_bytes: int  # the allocator's HBM peak
    ddr_bytes: int  # spills
    runs: tuple[tuple[int, int], ...]  # (HBM offset, bytes) copied on a switch, merged
    weight_bytes: int  # bytes of the copied symbols
    kernels: int

    @property
    def copy_bytes(self) -> int:
        return sum(n for _, n in self.runs)

    @property
    def resident_bytes(self) -> int:
        """What the CoE runtime keeps in DDR for the model (HBM segments and spills)."""
        return self.hbm_bytes + self.ddr_bytes


def _is_weight(s: Symbol) -> bool:
    names = {op.results[0].name_hint for op in s.ops if op.results}
    return s.readonly and s.tier == "hbm" and not names & set(STATE)


@SweepCache
def expert_map(context: int, model: DecoderModel = LLAMA2_7B, tp: int = 8) -> ExpertMap:
    """Allocate `expert_module(context)` as step-allocate-memory does (its symbols,
    plan and annotation, one socket's capacities) and read the map."""
    module = expert_module(context, model, tp)
    kernels = kernel_groups(module)[0]
    syms = symbols(kernels)
    p = plan(syms, int(value("hbm_bytes")), int(value("ddr_bytes")), kernels[0])
    annotate(p, kernels)
    weights = [s for s in p.symbols if _is_weight(s)]
    runs: list[list[int]] = []
    for s in sorted(weights, key=lambda s: s.offset):  # weights live together: disjoint
        if runs and runs[-1][0] + runs[-1][1] >= s.offset:
            runs[-1][1] = max(runs[-1][1], s.offset + s.size - runs[-1][0])
        else:
            runs.append([s.offset, s.size])
    return ExpertMap(p.hbm_peak, p.ddr_peak, tuple((a, n) for a, n in runs),
                     sum(s.size for s in weights), len(kernels))


TILE = (512, 1024)
"""A copy tile: 1 MiB of bf16."""
DDR_BASE = 1 << 40
"""Where the CoE runtime keeps the model's HBM segments in DDR (one block per model)."""


def copy_module(runs: tuple[tuple[int, int], ...], streams: int) -> ModuleOp:
    """Load (DDR tier) -> store (HBM) graphs copying `runs` (offset, bytes): the whole
    tiles of all runs dealt over `streams` streams (one per DDR channel), a run's
    remainder as one smaller tile."""
    g = Graph("expert_switch")
    tile_bytes = TILE[0] * TILE[1] * 2
    chunks: list[tuple[int, int]] = []  # (offset, tiles) of whole-tile pieces
    rests: list[tuple[int, int]] = []  # (offset, bytes)
    for off, n in runs:
        if n // tile_bytes:
            chunks.append((off, n // tile_bytes))
        if n % tile_bytes:
            rests.append((off + n // tile_bytes * tile_bytes, n % tile_bytes))
    total = sum(t for _, t in chunks)
    share = -(-total // streams) if total else 0
    pieces: list[tuple[int, int]] = []  # (offset, tiles), each at most `share` tiles
    for off, t in chunks:
        while t:
            k = min(t, share)
            pieces.append((off, k))
            off, t = off + k * tile_bytes, t - k
    for i, (off, t) in enumerate(pieces):
        g.load(TILE, bf16, [t], base_addr=DDR_BASE + off, name=f"ddr{i}").store(base_addr=off)
    for i, (off, n) in enumerate(rests):
        if n % 2:
            raise ValueError(f"a copied segment of {n} B is not whole bf16 elements")
        g.load((1, n // 2), bf16, [1], base_addr=DDR_BASE + off, name=f"rest{i}").store(
            base_addr=off)
    m = g.module()
    for op in m.walk():  # the inactive expert lives in DDR (§V-B)
        if isinstance(op, so.LinearOffChipLoadOp):
            TIER.set(op, "ddr")
        elif isinstance(op, so.LinearOffChipStoreOp):
            TIER.set(op, "hbm")
    return m


@SweepCache
def switch_seconds(context: int, model: DecoderModel = LLAMA2_7B, tp: int = 8) -> float:
    """One socket copying its share of the expert's map DDR -> HBM, simulated on the
    `sn40l` preset (the sockets copy in parallel: this is the node's switch time at the
    simulated DDR channel peak; `ddr_eff` scales it in the experiments)."""
    m = expert_map(context, model, tp)
    ddr = SN40L.ddr
    assert ddr is not None
    res = run_kernels(kernel_groups(copy_module(m.runs, ddr.channels))[0], SN40L, limits=False)
    return res.kernel_cycles / (value("clock_ghz") * 1e9)


@SweepCache
def token_run(context: int, p2p: P2P, model: DecoderModel = LLAMA2_7B,
              tp: int = 8) -> tuple[int, int]:
    """(kernel cycles, kernels) of one generated token: the whole expert's kernel sequence
    (embedding, the 32 layers with their all-reduces on `p2p`, the LM head) with units
    from step-allocate-units and addresses from step-allocate-memory, simulated kernel
    after kernel on the `sn40l` preset: the 32 layers as a simulated repetition whose
    weights stream from where the allocator put them."""
    module = expert_module(context, model, tp, p2p)
    StepAllocateUnitsPass().apply(Context(), module)
    kernels = kernel_groups(module)[0]
    p = plan(symbols(kernels), int(value("hbm_bytes")), int(value("ddr_bytes")), kernels[0])
    annotate(p, kernels)
    res = run_kernels(kernels, SN40L)
    return res.kernel_cycles, len(kernels)
