"""Partition candidates of a computational branch (Allspark seed, Sec. V and VI-A).

A branch with ``h`` heads and ``N`` query patches runs on a ``g x m`` node
sub-array: its heads are split over ``g`` node groups (``b = ceil(h/g)`` heads,
``q = b*d`` columns each) and its patches over the ``m`` nodes of a group
(``p = ceil(N/m)`` patches each).  The seed's Table V writes the scheme as
``[g, m]``; its Sec. V calls the patch split ``u`` and Sec. VI calls the head
split ``u`` -- we use ``g``/``m`` to avoid the clash.

Candidates (Sec. VI-A): ``g`` in ``{1, ..., ceil(h/2), h}`` and ``m`` in
``{1, ..., ceil(P/2), P}`` with ``P = ceil(N/p_min)``, kept when the
``g x m`` rectangle (or its rotation) fits the mesh.

Per-node traffic of one block (elements, Sec. V-B)::

    D_K = D_V = (m-1) * ceil(M/m) * q        vertical cyclic rounds (keys/values)
    D_MSA_FC  = (g-1) * p * q                 horizontal rounds before the projection
    D_FFN     = (g-1) * p * q + (g-1) * p * a1 * q
    D_LN      = 2 * (g-1) * p
    D_PM      = (g-1) * p * ceil(merge_in/g)  once per temporal layer

Example::

    >>> s = Scheme(4, 2)
    >>> s.nodes, s.label
    (8, '[4,2]')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from steplus.passes.allspark.vit import BlockGroup, Stage
from steplus.dialects.target.pim import PimHardware


@dataclass(frozen=True, order=True)
class Scheme:
    """A ``g x m`` partition: ``g`` head groups, ``m`` patch chunks per group."""

    g: int
    m: int

    @property
    def nodes(self) -> int:
        return self.g * self.m

    @property
    def label(self) -> str:
        return f"[{self.g},{self.m}]"


@dataclass(frozen=True)
class Slice:
    """What one node of a ``g x m`` sub-array holds for one block group."""

    b: int  # heads per node
    q: int  # columns per node (b*d)
    p: int  # query patches per node
    pk: int  # key/value patches per node


def split_values(total: int, limit: int | None = None) -> list[int]:
    """The seed's candidate list ``{1, ..., ceil(total/2), total}``, only its values up to
    ``limit`` if given (so the list is as long as the mesh side, not as the workload)."""
    top = -(-total // 2) if limit is None else min(-(-total // 2), limit)
    out = list(range(1, top + 1))
    if total > top and (limit is None or total <= limit):
        out.append(total)
    return out


def fits(scheme: Scheme, hw: PimHardware) -> bool:
    a, b = scheme.m, scheme.g
    return (a <= hw.rows and b <= hw.cols) or (b <= hw.rows and a <= hw.cols)


def candidates(stage: Stage, hw: PimHardware) -> list[Scheme]:
    """All partition candidates of the stage's branches that fit the mesh."""
    patches = -(-stage.tokens // hw.p_min)
    side = max(hw.rows, hw.cols)  # no scheme with g or m above it fits
    out = []
    for g in split_values(stage.heads, side):
        for m in split_values(patches, side):
            s = Scheme(g, m)
            if fits(s, hw):
                out.append(s)
    return out


def node_slice(stage: Stage, group: BlockGroup, scheme: Scheme) -> Slice:
    b = -(-stage.heads // scheme.g)  # integer ceilings: exact for any size the IR holds
    return Slice(b, b * stage.head_dim, -(-stage.tokens // scheme.m),
                 -(-group.kv_tokens // scheme.m))


@dataclass(frozen=True)
class BlockTraffic:
    """Per-node elements moved over the NoC for one block (eq. 14 terms)."""

    k: int
    v: int
    msa_fc: int
    ffn: int
    ln: int

    @property
    def total(self) -> int:
        """D_K + D_V + D_MSA_FC + D_FFN + 2*D_LN, as in eq. 14."""
        return self.k + self.v + self.msa_fc + self.ffn + 2 * self.ln


def block_traffic(stage: Stage, group: BlockGroup, scheme: Scheme) -> BlockTraffic:
    sl = node_slice(stage, group, scheme)
    g1, m1 = scheme.g - 1, scheme.m - 1
    kv = m1 * sl.pk * sl.q
    return BlockTraffic(
        k=kv,
        v=kv,
        msa_fc=g1 * sl.p * sl.q,
        ffn=g1 * sl.p * sl.q + g1 * sl.p * stage.mlp_ratio * sl.q,
        ln=2 * g1 * sl.p,
    )


def merge_traffic(stage: Stage, scheme: Scheme) -> int:
    """D_PM: gathering the merged input across the ``g`` groups."""
    p = math.ceil(stage.tokens / scheme.m)
    return (scheme.g - 1) * p * math.ceil(stage.merge_in / scheme.g)


def _shared(group_elems: int, m: int) -> int:
    """Elements a node receives when a group's weights are spread over ``m`` nodes."""
    return (m - 1) * math.ceil(group_elems / m)


def block_weight_sharing(stage: Stage, group: BlockGroup, scheme: Scheme) -> int:
    """W_MSA + W_FC + W_FFN of eq. 13 for one block (elements per node)."""
    q, c, m = node_slice(stage, group, scheme).q, stage.channels, scheme.m
    extra = math.ceil(group.extra_weight_params / scheme.g)
    return (
        _shared(3 * c * q + extra, m)
        + _shared(c * q, m)
        + _shared(2 * stage.mlp_ratio * c * q, m)
    )


def merge_weight_sharing(stage: Stage, scheme: Scheme) -> int:
    q = math.ceil(stage.heads / scheme.g) * stage.head_dim
    return _shared(stage.merge_in * q, scheme.m)


@dataclass(frozen=True)
class RingPhase:
    """``rounds`` cyclic rounds of ``elems`` elements per node, over the patch
    nodes (``patch_ring``: K, V, shared weights) or the head groups (gathers)."""

    name: str
    patch_ring: bool
    rounds: int
    elems: int


def ring_phases(stage: Stage, scheme: Scheme) -> list[RingPhase]:
    """The cyclic dataflow phases of one temporal layer (Sec. V-B, VI-C).

    Their element sum equals the D and W terms of eqs. 13-14.
    """
    g1, m1, m = scheme.g - 1, scheme.m - 1, scheme.m
    p = math.ceil(stage.tokens / m)
    q = math.ceil(stage.heads / scheme.g) * stage.head_dim
    c, a1 = stage.channels, stage.mlp_ratio
    out = [RingPhase("pm", False, g1, p * math.ceil(stage.merge_in / scheme.g)),
           RingPhase("ws-pm", True, m1, math.ceil(stage.merge_in * q / m))]
    for grp in stage.groups:
        sl = node_slice(stage, grp, scheme)
        extra = math.ceil(grp.extra_weight_params / scheme.g)
        per_block = [
            RingPhase("ws-msa", True, m1, math.ceil((3 * c * sl.q + extra) / m)),
            RingPhase("k", True, m1, sl.pk * sl.q),
            RingPhase("v", True, m1, sl.pk * sl.q),
            RingPhase("ln1", False, g1, 2 * sl.p),
            RingPhase("ws-fc", True, m1, math.ceil(c * sl.q / m)),
            RingPhase("msa-fc", False, g1, sl.p * sl.q),
            RingPhase("ln2", False, g1, 2 * sl.p),
            RingPhase("ws-ffn", True, m1, math.ceil(2 * a1 * c * sl.q / m)),
            RingPhase("ffn1", False, g1, sl.p * sl.q),
            RingPhase("ffn2", False, g1, sl.p * a1 * sl.q),
        ]
        out += [RingPhase(ph.name, ph.patch_ring, ph.rounds * grp.blocks, ph.elems)
                for ph in per_block]
    return out
