"""Analytical cost model of one temporal layer (Allspark seed, eqs. 12-15).

All branches of a temporal layer run in parallel on identical ``g x m``
sub-arrays, so the layer's time is that of one node of one sub-array:

    T_c  (eq. 15) = t_PM + N_bk * (t_LT + t_MSA + t_FFN + t_NC)
    T_t  (eq. 14) = [D_PM + N_bk * (D_K + D_V + D_MSA_FC + D_FFN + 2 D_LN)] / BW
    T_ws (eq. 13) = [W_PM + N_bk * (W_MSA + W_FC + W_FFN)] / BW

A GEMM ``(m x k) . (k x n)`` on the ``r x r`` PE array takes
``max(m * ceil(k/r) * ceil(n/r), bytes / dram_bw)`` cycles (compute or
DRAM bound; ``bytes`` reads both operands and writes the result once -- the
intra-node mapping the seed delegates to Timeloop, reduced to a roofline).
Non-linear work (softmax, two layernorms, GELU) runs on the ACU at
``acu_elems_per_cycle``.  ``BW`` is one flit per link and cycle.

Example::

    >>> from steplus.passes.allspark.vit import build
    >>> from steplus.dialects.target.pim import preset
    >>> st = build("swin-t", 224).stages[0]
    >>> layer_cost(st, Scheme(1, 1), preset("allspark-16x16")).transfer
    0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from steplus.passes.allspark.vit import BlockGroup, Stage
from steplus.dialects.target.pim import PimHardware
from steplus.passes.allspark.partition import (
    Scheme,
    block_traffic,
    block_weight_sharing,
    merge_traffic,
    merge_weight_sharing,
    node_slice,
)


@dataclass(frozen=True)
class Gemm:
    cycles: int
    macs: int
    dram_bytes: int


def gemm(hw: PimHardware, m: int, k: int, n: int) -> Gemm:
    """One GEMM on a node: roofline of PE-array cycles and DRAM bytes."""
    r = hw.pe
    mac_cycles = m * math.ceil(k / r) * math.ceil(n / r)
    nbytes = (m * k + k * n + m * n) * hw.bytes_per_elem
    mem_cycles = math.ceil(nbytes / hw.dram_bytes_per_cycle)
    return Gemm(max(mac_cycles, mem_cycles), m * k * n, nbytes)


def _sum(gs: list[Gemm], times: int = 1) -> Gemm:
    return Gemm(times * sum(x.cycles for x in gs), times * sum(x.macs for x in gs),
                times * sum(x.dram_bytes for x in gs))


def block_compute(stage: Stage, group: BlockGroup, scheme: Scheme, hw: PimHardware) -> Gemm:
    """t_LT + t_MSA + t_FFN + t_NC of one block on one node (eq. 15 bracket)."""
    sl = node_slice(stage, group, scheme)
    c, d, a1 = stage.channels, stage.head_dim, stage.mlp_ratio
    # the sl.b heads of a node cost the same: one head's GEMMs times sl.b (a loop over
    # the heads would take as long as the IR's head count says)
    parts = [_sum([gemm(hw, sl.p, c, 3 * d)], sl.b)]  # LT: Q, K, V per head
    if group.extra_macs_per_token:  # spatial-reduction linear (PVT, Twins GSA)
        parts.append(gemm(hw, sl.pk, c, sl.q))
    parts.append(_sum([gemm(hw, sl.p, d, group.kv_tokens),  # MSA: Q K^T and (scores) V
                       gemm(hw, sl.p, group.kv_tokens, d)], sl.b))  # per head
    parts += [
        gemm(hw, sl.p, c, sl.q),  # MSA projection (FC)
        gemm(hw, sl.p, c, a1 * sl.q),  # FFN FC1
        gemm(hw, sl.p, a1 * c, sl.q),  # FFN FC2
    ]
    acu_elems = sl.b * sl.p * group.kv_tokens + 2 * sl.p * sl.q + sl.p * a1 * sl.q
    nc = Gemm(math.ceil(acu_elems / hw.acu_elems_per_cycle), 0, 0)
    return _sum(parts + [nc])


def block_workspace(stage: Stage, group: BlockGroup, scheme: Scheme, hw: PimHardware,
                    batch: int = 1) -> int:
    """Workspace bytes per node: the largest of phases 2 (LT), 6 (MSA), 8 (FFN).

    Each phase holds its feature maps for every input of the batch and the weights
    fetched for the phase once (they serve the whole batch, Sec. VI-D).
    """
    sl = node_slice(stage, group, scheme)
    c, d, a1 = stage.channels, stage.head_dim, stage.mlp_ratio
    lt = (batch * (sl.p * c + 3 * sl.p * sl.q) + 3 * c * sl.q
          + group.extra_weight_params // scheme.g)
    msa = batch * (3 * sl.p * sl.q + 2 * group.kv_tokens * d + sl.p * group.kv_tokens)
    ffn = batch * (sl.p * c + sl.p * a1 * c) + a1 * c * sl.q
    return max(lt, msa, ffn) * hw.bytes_per_elem


@dataclass(frozen=True)
class LayerCost:
    """Cost of one temporal layer of a stage under one scheme (per node of a sub-array)."""

    scheme: Scheme
    compute: int  # T_c, cycles
    transfer: int  # T_t, cycles
    sharing: int  # T_ws, cycles
    macs: int  # per node
    dram_bytes: int  # per node
    vertical_bytes: int  # sent per node along the m (patch) rings
    horizontal_bytes: int  # sent per node along the g (head-group) rings
    workspace: int  # V_dyn bytes per node

    @property
    def total(self) -> int:
        return self.compute + self.transfer + self.sharing


def noc_cycles(hw: PimHardware, elems: int) -> int:
    """Cycles to stream ``elems`` elements over one link (BW = 1 flit/cycle)."""
    return math.ceil(elems * hw.bytes_per_elem / hw.link_bytes_per_cycle)


def layer_cost(stage: Stage, scheme: Scheme, hw: PimHardware, batch: int = 1) -> LayerCost:
    """T_c, T_t and T_ws of one temporal layer (eqs. 13-15), per node.

    With a batch of ``N_bt`` inputs (eq. 12) compute and feature-map transfer are
    paid per input and weight sharing once: ``N_bt (T_c + T_t) + T_ws``.
    """
    p = math.ceil(stage.tokens / scheme.m)
    q = math.ceil(stage.heads / scheme.g) * stage.head_dim
    pm = gemm(hw, p, stage.merge_in, q)
    comp = [pm]
    vert = horiz = share = 0
    workspace = 0
    for group in stage.groups:
        comp.append(_sum([block_compute(stage, group, scheme, hw)], group.blocks))
        t = block_traffic(stage, group, scheme)
        vert += group.blocks * (t.k + t.v)
        horiz += group.blocks * (t.msa_fc + t.ffn + 2 * t.ln)
        share += group.blocks * block_weight_sharing(stage, group, scheme)
        workspace = max(workspace, block_workspace(stage, group, scheme, hw, batch))
    horiz += merge_traffic(stage, scheme)
    share += merge_weight_sharing(stage, scheme)
    total = _sum(comp)
    bpe = hw.bytes_per_elem
    return LayerCost(
        scheme=scheme,
        compute=batch * total.cycles,
        transfer=batch * noc_cycles(hw, vert + horiz),
        sharing=noc_cycles(hw, share),
        macs=batch * total.macs,
        dram_bytes=batch * (total.dram_bytes + (vert + horiz) * bpe) + share * bpe,
        vertical_bytes=(batch * vert + share) * bpe,
        horizontal_bytes=batch * horiz * bpe,
        workspace=workspace,
    )


def ring_hops(n: int) -> float:
    """Average hops per message of a cyclic transfer over ``n`` nodes in a line."""
    return 0.0 if n <= 1 else 2.0 * (n - 1) / n


def layer_energy_pj(cost: LayerCost, branches: int, hw: PimHardware) -> dict[str, float]:
    """Energy of a temporal layer with ``branches`` active sub-arrays (pJ)."""
    nodes = branches * cost.scheme.nodes
    noc_bits_hops = 8 * (cost.vertical_bytes * ring_hops(cost.scheme.m)
                         + cost.horizontal_bytes * ring_hops(cost.scheme.g))
    return {
        "compute": nodes * cost.macs * hw.mac_pj,
        "dram": nodes * cost.dram_bytes * 8 * hw.dram_pj_per_bit,
        "noc": nodes * noc_bits_hops * hw.noc_pj_per_bit_hop,
    }


def stage_weight_bytes(stage: Stage, hw: PimHardware, merge: bool = True) -> int:
    """Bytes of a stage's weights: its blocks (12*C^2*N_bk in the seed) and merging."""
    params = stage.weight_params + (stage.merge_params if merge else 0)
    return params * hw.bytes_per_elem


def slice_bytes(total_bytes: int, scheme: Scheme, sharing: bool = True) -> int:
    """Whole bytes of a stage's weights one node of ``scheme`` stores.

    With sharing ``ceil(W / (g*m))``; without, its group's slice ``ceil(W / g)``.
    """
    share = scheme.g * (scheme.m if sharing else 1)
    return -(-total_bytes // share)


def weights_per_node(total_bytes: int, layers: list[Scheme], reuse: bool = True,
                     sharing: bool = True) -> int:
    """Weight bytes one node stores for a stage (eqs. 6-11).

    ``layers`` lists the scheme of every temporal layer.  With reuse, layers with
    the same scheme share one copy and a ``[1,1]`` layer (the node holds
    everything) covers all others (Term 1); without reuse every layer stores its
    own slice.  With sharing a node keeps ``W/(g*m)``; without, its group's whole
    slice ``W/g`` (whole bytes, :func:`slice_bytes`).
    """
    if reuse and Scheme(1, 1) in layers:
        return total_bytes
    kept = set(layers) if reuse else layers
    return sum(slice_bytes(total_bytes, s, sharing) for s in kept)
