"""Dynamic patterns by recognition: a `torch.export` ATen graph -> MoE / attention step graphs.

torch-mlir cannot carry these layers to linalg on tensors: `torch.where`
gives data-dependent sizes (`aten.index.Tensor` of size `?` fails to
legalize) and `topk` is decomposed into a sort. So the recognizers read the
graph one level up, where `torch.export` leaves the layer's structure intact
(`aten.topk`, `aten.where`, `aten.index_select`, `aten.index_add`,
`aten.scaled_dot_product_attention`). The graph is duck-typed (fx nodes:
`op`, `target`, `args`, `kwargs`, `meta["val"]`, `meta["stack_trace"]`);
steplus does not import torch.

Recognized:

- **top-k MoE** (`moe_match.py`): a router `topk` (softmax before or after,
  renormalized or not), per expert `torch.where(idx == e)` or a `one_hot`
  expert mask, the tokens gathered (`index_select`, `x[tok]`), the SwiGLU
  expert of stacked `[E, ...]` weights or of an `nn.ModuleList` of
  `nn.Linear`s, the routing weight multiplied, `index_add(_)` into zeros —
  every expert once (`examples/workloads/moe.py`, HuggingFace's Mixtral block
  in `examples/torch_zoo/mixtral_moe.py`). Lowers to `moe_graph` (§8.2) with
  static (`tile_n`) or dynamic (`tile_n=None`) tiling. Its choices are the
  routing `select_gen`s (bind them with `step-specialize{routing=...}`), its
  weights the `[B, K]` tensor at 2 GiB. With `dense=...` the router itself is
  lowered too (`_router`: the logits matmul and the step library's row top-k
  functions, weights and indices stored: the indices are what
  `step-specialize{routing=...}` binds); without, a remark says it is not.
- **collectives** (`collective.py`, option `p2p`): torch's functional
  all-reduce (`_c10d_functional.all_reduce` and its `wait_tensor`) as a
  `step.all_reduce` on the given P2P network.
- **GQA decode attention** (`attention_match.py`): `scaled_dot_product_attention`
  with any scale, or the eager `matmul`-`softmax`-`matmul` with `repeat_kv`, one
  query row per head, keys/values `cat([cache, new], 2)` or without a cache.
  Lowers to `attention_graph` (§8.4): one request per (sequence, KV head),
  `Hq/Hkv` queries each, cached lengths from the cache shape or `kv_lengths`.
  An attention that is not such a decode step (a prefill, a mask, is_causal) is,
  with `dense=...`, lowered densely (`attention_dense.py`: a static graph over
  the (batch, head) pairs) with a remark saying why it is not the §8.4 graph.

With `dense="tile=... schedule=..."` the rest that linalg expresses —
projections, RMSNorm, residual adds, scalar scales (`glue.py`'s regions) —
is written as linalg functions and lowered by `convert-linalg-to-step`.

What does not match is a remark at the user's source line of the node at
fault (`file:line: remark: ...`, the innermost frame outside torch), and no
graph is built for it.

Example::

    ep = torch.export.export(TopKMoE(4, 2), moe_inputs(8, 4, 32, 64))
    low = lower_exported(ep, tile_n=4, tile_f=16)
    low.graphs[0].module      # the §8.2 graph, B and B_0..B_3 symbolic
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from steplus.lowering.linalg_to_step.attention_graph import (
    STRATEGIES, AttnShape, attention_graph,
)
from steplus.lowering.linalg_to_step.attention_dense import dense_attention_part
from steplus.lowering.linalg_to_step.attention_match import (
    SOFTMAX, AttnMatch, eager_pieces, match_eager, match_sdpa, sdpa_pieces,
)
from steplus.lowering.linalg_to_step.fx_graph import (  # noqa: F401  (re-exported: glue.py)
    BOOKKEEPING, MAX_NODES, NotRecognized, Remark, ancestors as _ancestors,
    is_op as _is, name_of, shape_of as _shape, where_of,
)
from steplus.lowering.linalg_to_step.collective import P2PNet, collective_part, is_collective
from steplus.lowering.linalg_to_step.moe_graph import MoEShape, moe_graph
from steplus.lowering.linalg_to_step.moe_match import MoEMatch
from steplus.utils.diagnostics import OpDiagnosticError


@dataclass
class LoweredPart:
    """One recognized layer: its kind, the step graph and what it was matched from."""

    kind: str  # "moe" | "attention" | "dense" | "collective"
    module: ModuleOp
    shape: MoEShape | AttnShape | None
    inputs: dict[str, str]  # role -> graph node name ("x", "w_gate", ..., "q", "k_cache", ...)
    batch: int
    seq_len: list[int] = field(default_factory=list)  # attention: KV tiles per request
    offset: list[int] = field(default_factory=list)  # attention: append row per request
    outputs: list[str] = field(default_factory=list)  # the graph nodes the part computes
    lowered: object = None  # dense: convert-linalg-to-step's `Lowered` (addresses, layouts)
    role: str = ""  # dense: "projection", "norm", "elementwise" or "router"
    out_shapes: list = field(default_factory=list)  # dense: the outputs' tensor shapes
    covered: set = field(default_factory=set, repr=False)  # the graph nodes it replaces
    # inputs the graph's layout reads that no node computes (stacked nn.Linear experts, a
    # cache without its last row): synthetic name -> function of the values by node name
    derive: dict = field(default_factory=dict, repr=False)


@dataclass
class Lowering:
    graphs: list[LoweredPart]
    remarks: list[Remark]


# -- driver ------------------------------------------------------------------------------
def lower_exported(ep, tile_n: int | None = 16, tile_f: int = 64,
                   strategy: str = "interleaved", kv_lengths=None,
                   name: str = "layer", dense: str | None = None,
                   p2p: P2PNet | None = None) -> Lowering:
    """Recognize the MoE layers and decode attentions of an exported program
    (`torch.export.ExportedProgram` or its `graph`) and build their step
    graphs; everything else is a remark. With `p2p`, torch's functional collectives
    (`_c10d_functional.all_reduce` + `wait_tensor`) become `step.all_reduce` parts on
    that network (`collective.py`). Raises ValueError for bad options."""
    if tile_n is not None and not 1 <= tile_n <= 1 << 20:
        raise ValueError(f"tile_n must be in 1..1048576 or None (dynamic), got {tile_n}")
    if not 1 <= tile_f <= 1 << 20:
        raise ValueError(f"tile_f must be in 1..1048576, got {tile_f}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got '{strategy}'")
    if kv_lengths is not None:
        kv_lengths = list(kv_lengths)
        if len(kv_lengths) > MAX_NODES or not all(
                int(x) == x and 0 <= x < 1 << 31 for x in kv_lengths):
            raise ValueError("kv_lengths must be at most 2^20 cached lengths in 0..2^31-1")
        kv_lengths = [int(x) for x in kv_lengths]
    graph = getattr(ep, "graph", ep)
    nodes = list(graph.nodes)
    if len(nodes) > MAX_NODES:
        raise ValueError(f"the graph has {len(nodes)} nodes, more than {MAX_NODES}")
    out = Lowering([], [])
    covered: set = set()
    moes: list = []
    for n in nodes:
        if n in covered:
            continue
        try:
            if _is(n, "aten.topk.default"):
                m = MoEMatch(n)
                shape, B, moe_out, inputs = m.run()
                if shape.inter % tile_f:
                    raise NotRecognized(n, f"top-k MoE: tile_f={tile_f} does not divide "
                                           f"F={shape.inter} (option tile_f)")
                j = sum(p.kind == "moe" for p in out.graphs)
                kind = "dyn" if tile_n is None else f"tn{tile_n}"
                module = moe_graph(shape, tile_n, tile_f, name=f"{name}_moe{j}_{kind}")
                out.graphs.append(LoweredPart("moe", module, shape, inputs, B,
                                              outputs=[moe_out.name], covered=set(m.covered),
                                              derive=dict(m.derive)))
                covered |= m.covered
                moes.append((m, len(out.remarks)))
                out.remarks.append(Remark(where_of(n), (
                    f"top-k MoE (E={shape.experts}, K={shape.top_k}, D={shape.hidden}, "
                    f"F={shape.inter}, B={B}) lowered to @{name}_moe{j}_{kind}; the router is "
                    "not lowered: its choices are the routing select_gens (bind B and "
                    "B_0.. with step-specialize{routing=...}), its weights the [B, K] tensor "
                    "at 2 GiB")))
            elif is_collective(n):
                if p2p is None:
                    raise NotRecognized(n, f"{name_of(n)}: a collective is lowered only on a "
                                           "network (option p2p)")
                j = sum(p.kind == "collective" for p in out.graphs)
                part = LoweredPart(**collective_part(n, p2p, f"{name}_collective{j}"))
                out.graphs.append(part)
                covered |= part.covered
            elif _is(n, "aten.scaled_dot_product_attention.default") or name_of(n) in SOFTMAX:
                j = sum(p.kind == "attention" for p in out.graphs)
                try:
                    a = (match_sdpa(n, kv_lengths, j) if name_of(n) not in SOFTMAX
                         else match_eager(n, kv_lengths, j))
                except NotRecognized as e:
                    if dense is None:
                        raise
                    part = _dense_attention(n, e, dense, name, out)
                    covered |= part.covered
                    continue
                if a is not None:
                    out.graphs.append(_attention_part(a, strategy, f"{name}_attention{j}"))
                    covered |= a.covered
        except NotRecognized as e:  # at the node at fault, or the anchor if it has no source
            where = where_of(e.node)
            out.remarks.append(Remark(where_of(n) if where.startswith("<") else where,
                                      e.message))
        except (IndexError, KeyError, TypeError, AttributeError) as e:  # a form not foreseen
            what = "top-k MoE" if _is(n, "aten.topk.default") else "GQA decode attention"
            out.remarks.append(Remark(where_of(n), f"{what} not recognized: unexpected "
                                                   f"argument form ({type(e).__name__})"))
    if dense is not None:
        for j, (m, r) in enumerate(moes):
            part = _router(m, dense, f"{name}_router{j}", out.remarks)
            if part is not None:
                out.graphs.append(part)
                covered |= part.covered
                out.remarks[r] = Remark(out.remarks[r].where, out.remarks[r].message.split(
                    "; the router is not lowered")[0] + f"; the router is lowered to "
                    f"@{name}_router{j} (its indices bind the routing select_gens: "
                    "step-specialize{routing=...})")
        for part in _dense(nodes, covered, dense, name, out.remarks):
            out.graphs.append(part)
            covered |= part.covered
    rest = [n for n in nodes if n.op == "call_function" and n not in covered
            and name_of(n) not in BOOKKEEPING]
    if rest:
        ops = sorted({name_of(n) for n in rest})
        out.remarks.append(Remark(where_of(rest[0]), (
            f"{len(rest)} op(s) outside the recognized layers are not lowered by the "
            f"recognizers{' nor by convert-linalg-to-step (option dense)' if dense else ''} "
            f"({', '.join(ops[:8])}{', ...' if len(ops) > 8 else ''})")))
    return out


def _attention_part(a: AttnMatch, strategy: str, gname: str) -> LoweredPart:
    """The §8.4 graph of a recognized attention (`NotRecognized` if the strategy does
    not fit its requests)."""
    try:
        module = attention_graph(a.shape, strategy, a.seq_len, a.offset,
                                 name=f"{gname}_{strategy}")
    except ValueError as e:
        raise NotRecognized(a.out, f"GQA decode attention: {e} (option strategy)") from None
    return LoweredPart("attention", module, a.shape, a.inputs, a.requests, a.seq_len,
                       a.offset, outputs=[a.out.name], covered=a.covered, derive=a.derive)


def _dense_attention(n, e: NotRecognized, dense: str, name: str, out: Lowering) -> LoweredPart:
    """An attention the decode recognizer refused (`e`), lowered densely (static) with a
    remark saying so; raises `NotRecognized` (both reasons) when that fails too."""
    k = sum(p.role == "attention" for p in out.graphs)
    fname = f"{name}_attention_dense{k}"
    try:
        p = eager_pieces(n) if name_of(n) in SOFTMAX else sdpa_pieces(n)
        if p is None:
            raise e
        tile, schedule = _dense_options(dense)
        part = LoweredPart(**dense_attention_part(p, tile, schedule, fname))
    except NotRecognized as d:
        if d is e or d.message == e.message:  # the same reason: say it once
            raise e from None
        raise NotRecognized(d.node, f"{e.message}; {d.message}") from None
    except (ValueError, OpDiagnosticError) as d:
        raise NotRecognized(n, f"{e.message}; not lowered densely either: "
                               f"{getattr(d, 'message', d)} (option dense)") from None
    where = where_of(e.node)
    out.remarks.append(Remark(where_of(n) if where.startswith("<") else where,
                              f"{e.message}; lowered densely (static) to @{fname}"))
    out.graphs.append(part)
    return part


_DENSE = re.compile(r"^\s*tile=(\S+)(?:\s+schedule=(\S+))?\s*$")


def _dense_options(options: str) -> tuple[str, str]:
    m = _DENSE.match(options)
    if not m:
        raise ValueError(f"dense: expected 'tile=MxN[xK] [schedule=S]', got '{options}'")
    return m.group(1), m.group(2) or "mn_mk"


def _dense(nodes, covered: set, options: str, name: str,
           remarks: list) -> Iterator[Any]:
    """What is left that the dense lowering expresses (`dense.py`: glue.py's regions,
    embeddings), each a `LoweredPart` (typed Any: the type checker reads this file as
    `lowering.linalg_to_step.aten` and dense.py's import of it as `steplus.lowering...`,
    two classes to it)."""
    from steplus.lowering.linalg_to_step.dense import dense_parts

    tile, schedule = _dense_options(options)
    yield from dense_parts(nodes, covered, tile, schedule, name, remarks)


def _router(m, options: str, fname: str, remarks: list):
    """The router of a recognized MoE (`m`, a `_MoE` after `run`): logits matmul + the
    step library's row top-k functions (see glue.py), or a remark and None."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import f32

    from steplus.lowering.linalg_to_step import glue, replace_with_graphs
    from steplus.lowering.linalg_to_step.linalg_region import region_func
    from steplus.lowering.linalg_to_step.emit import EmitOptions, emit_graph
    from steplus.lowering.linalg_to_step.options import parse_schedule, parse_tiles
    from steplus.lowering.linalg_to_step.recognize import Node, recognize

    tk = m.topk
    src = tk.args[0]
    soft = ("aten.softmax.int", "aten._softmax.default")
    form = None
    if name_of(src) in soft and src.args[1] in (-1, 1):
        form, mm = "qwen", src.args[0]
    else:
        mm = src
    w = m.weights
    if form == "qwen" and w is m.values:  # Qwen2-MoE's norm_topk_prob=False: not renormalized
        ok, fn = True, f"row_softmax_topk_raw[{m.k}]"
    elif form == "qwen":
        ok = (name_of(w) in ("aten.div.Tensor", "aten.div_.Tensor") and w.args[0] is m.values
              and _is(w.args[1], "aten.sum.dim_IntList") and w.args[1].args[0] is m.values)
        fn = f"row_softmax_topk[{m.k}]"
    else:
        ok = name_of(w) in soft and w.args[0] is m.values and w.args[1] in (-1, 1)
        form, fn = "mixtral", f"row_topk_softmax[{m.k}]"
    where = where_of(mm)
    if not (ok and name_of(mm) in glue.MATMUL and glue.lowerable(mm) and mm.args[0] is m.x):
        remarks.append(Remark(where, "router not lowered: expected x @ w_router, then "
                                     "softmax, topk and renormalization (Qwen3) or not "
                                     "(Qwen2-MoE) or topk and softmax (Mixtral)"))
        return None
    B, E = glue.static(mm)
    try:
        tile, schedule = _dense_options(options)
        t = region_func([mm], fname, {m.x} if m.x.op == "call_function" else set())
        module = t.module
        f = next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))
        rec = recognize(f)
        (logits,) = rec.results
        weights = Node("ewise", (B, m.k), f32, logits.op, [logits], fn=fn, bcast=["full"],
                       tensor=(B, m.k))
        index = Node("ewise", (B, m.k), f32, logits.op, [logits],
                     fn=f"row_topk_index[{m.k}]", bcast=["full"], tensor=(B, m.k))
        rec.nodes += [weights, index]
        rec.results = [weights, index]
        low = emit_graph(rec, EmitOptions(parse_tiles(glue.router_tile(tile, E)),
                                          parse_schedule(schedule), {}))
    except (ValueError, OpDiagnosticError) as e:
        remarks.append(Remark(where, f"router not lowered: {getattr(e, 'message', e)} "
                                     "(option dense)"))
        return None
    replace_with_graphs(module, {f: low.graph.module()})
    cov = {mm, tk, m.values, m.idx, m.weights} | (_ancestors(m.weights) - _ancestors(mm) - {mm})
    cov = {n for n in cov if n.op == "call_function"}
    if any(u not in cov for u in mm.users):  # the logits are used elsewhere (returned)
        cov.discard(mm)  # the rest of the lowering computes them too
    return LoweredPart("dense", module, None, {f"arg{i}": a.name for i, a in enumerate(t.inputs)}, B,
                       outputs=[m.weights.name, m.idx.name], lowered=low, role="router",
                       out_shapes=[(B, m.k), (B, m.k)], covered=cov)
